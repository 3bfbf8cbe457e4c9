package heatdir

import "testing"

func TestPortable(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{".ephemeral-heat", true},
		{"heat-db-20261127T025953.650365Z.sql.gz", true},
		{"heat-db-20261127T025953.650365Z.sql.gz.sha256", true},
		{"log/heat-all.log", true},
		{"launch.json", false},
		{"launch.lock", false},
		{"heat.sqlite", false},
		{"heat.sqlite-wal", false},
		{"heat.conf", false},
		{"clouds.yaml", false},
		{"python/ephemeral_heat_engine.py", false},
		{"mysql/ibdata1", false},
		{"run/db_sync.done", false},
	}
	for _, tc := range tests {
		if got, why := Portable(tc.name); got != tc.want || (!got && why == "") {
			t.Errorf("Portable(%q) = %v, %q; want %v (with a reason when false)", tc.name, got, why, tc.want)
		}
	}
}
