package main

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/moduletest"
)

func TestDocumentationMatchesSpec(t *testing.T) {
	if err := module.CheckSidecar(spec, "../../collection/plugins/modules/ephemeral_heat_launch.yml"); err != nil {
		t.Fatal(err)
	}
}

// Every option is validated before anything runs: each bad value the spec
// implies (types, ranges, choices, empty or missing required values) is
// refused naming the option and what it allows.
func TestBoundaries(t *testing.T) {
	moduletest.Boundaries(t, spec, `{"heat_dir": "/tmp/hd"}`)
}

// With --diff, a change's diff holds the heat_dir's Heat before and after
// (check mode: as predicted); without it, none.
func TestDiff(t *testing.T) {
	for _, withDiff := range []bool{true, false} {
		dir := filepath.Join(t.TempDir(), "heat-launcher")
		res := moduletest.Call(t, spec, run, map[string]any{"heat_dir": dir, "api_port": 18006,
			"_ansible_check_mode": true, "_ansible_diff": withDiff})
		if res["failed"] == true || res["changed"] != true {
			t.Fatalf("check mode: %v", res)
		}
		want := map[string]any{
			"before": map[string]any{"state": "absent"},
			"after":  map[string]any{"state": "started", "heat_type": "native", "endpoint": "http://127.0.0.1:18006/v1/admin"},
		}
		if got, ok := res["diff"]; withDiff && !reflect.DeepEqual(got, want) || !withDiff && ok {
			t.Errorf("--diff %v: diff %v, want %v", withDiff, got, want)
		}
	}
}
