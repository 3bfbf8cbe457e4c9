package launch

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// stoppedHeatDir makes the heat_dir of a stopped native Heat: heat.conf
// naming its sqlite database, which holds a stack; with a record, the
// launch record of a Heat that died (a pid that is not running).
func stoppedHeatDir(t *testing.T, dir string, port int, record bool) {
	t.Helper()
	d, err := heatdir.At(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Ensure(); err != nil {
		t.Fatal(err)
	}
	path := d.File(heatdir.SQLiteFile)
	cfg := heatdir.Config{Dir: dir, BindHost: "127.0.0.1", APIPort: port, Now: time.Now(),
		Database: heatdb.DB{Kind: heatdb.SQLite, Path: path}}
	if err := d.WriteConfig(cfg); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range []string{
		"CREATE TABLE stack (id VARCHAR(36) PRIMARY KEY, name VARCHAR(255), action VARCHAR(255), status VARCHAR(255), owner_id VARCHAR(36), deleted_at DATETIME)",
		"INSERT INTO stack VALUES ('id-1', 'overcloud', 'CREATE', 'COMPLETE', NULL, NULL)",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	if record {
		rec := &heatdir.Record{State: heatdir.Running, LaunchID: "0123456789abcdef", HeatType: Native, Endpoint: cfg.Endpoint(),
			BindHost: "127.0.0.1", APIPort: port, Database: SQLite, Process: &proc.Record{PID: proc.MaxPID, StartTicks: 1}}
		if err := d.WriteRecord(rec); err != nil {
			t.Fatal(err)
		}
	}
}

// The diff's before and after of runs that start no Heat: check mode,
// and the teardown of a stopped Heat's heat_dir.
func TestDiffViews(t *testing.T) {
	requireHeat(t) // heat_type native checks heat-all before a start
	tests := []struct {
		name          string
		heatDir       string // "" none, stopped, stale (a record of a dead Heat)
		state         string
		check         bool
		changed       bool
		before, after map[string]any // %d: the api_port
	}{
		{name: "start a fresh heat_dir", state: Started, check: true, changed: true,
			before: map[string]any{"state": "absent"},
			after:  map[string]any{"state": "started", "heat_type": "native", "endpoint": "http://127.0.0.1:%d/v1/admin"}},
		{name: "start a stopped Heat", heatDir: "stopped", state: Started, check: true, changed: true,
			before: map[string]any{"state": "stopped", "database": "sqlite"},
			after:  map[string]any{"state": "started", "heat_type": "native", "endpoint": "http://127.0.0.1:%d/v1/admin"}},
		{name: "restart after a crash", heatDir: "stale", state: Started, check: true, changed: true,
			before: map[string]any{"state": "stopped", "database": "sqlite"},
			after:  map[string]any{"state": "started", "heat_type": "native", "endpoint": "http://127.0.0.1:%d/v1/admin"}},
		{name: "stop after a crash", heatDir: "stale", state: Stopped, check: true, changed: true,
			before: map[string]any{"state": "stopped", "database": "sqlite"},
			after:  map[string]any{"state": "stopped", "database": "sqlite"}},
		{name: "stop after a crash, for real", heatDir: "stale", state: Stopped, changed: true,
			before: map[string]any{"state": "stopped", "database": "sqlite"},
			after:  map[string]any{"state": "stopped", "database": "sqlite"}},
		{name: "remove a stopped Heat", heatDir: "stopped", state: Absent, check: true, changed: true,
			before: map[string]any{"state": "stopped", "database": "sqlite"},
			after:  map[string]any{"state": "absent"}},
		{name: "remove a stopped Heat, for real", heatDir: "stopped", state: Absent, changed: true,
			before: map[string]any{"state": "stopped", "database": "sqlite"},
			after:  map[string]any{"state": "absent"}},
		{name: "nothing to stop", heatDir: "stopped", state: Stopped, changed: false},
		{name: "nothing to remove", state: Absent, check: true, changed: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			port, err := proc.FreePort()
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "heat-launcher")
			if tc.heatDir != "" {
				stoppedHeatDir(t, dir, port, tc.heatDir == "stale")
			}
			out, err := Run(context.Background(), Options{State: tc.state, HeatDir: dir, APIPort: port, CheckMode: tc.check})
			if err != nil {
				t.Fatal(err)
			}
			if out.Changed != tc.changed {
				t.Fatalf("changed %v, want %v: %+v", out.Changed, tc.changed, out)
			}
			if !tc.changed {
				if out.Before != (View{}) || out.After != (View{}) {
					t.Errorf("no change, but a diff: %+v -> %+v", out.Before, out.After)
				}
				return
			}
			for _, c := range []struct {
				what      string
				got, want map[string]any
			}{{"before", out.Before.Map(), tc.before}, {"after", out.After.Map(), tc.after}} {
				want := map[string]any{}
				for k, v := range c.want {
					if s, ok := v.(string); ok && k == "endpoint" {
						v = fmt.Sprintf(s, port)
					}
					want[k] = v
				}
				if !reflect.DeepEqual(c.got, want) {
					t.Errorf("%s: %v, want %v", c.what, c.got, want)
				}
			}
		})
	}
}
