package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/moduletest"
)

func TestDocumentationMatchesSpec(t *testing.T) {
	if err := module.CheckSidecar(spec, "../../collection/plugins/modules/heat_db_dump.yml"); err != nil {
		t.Fatal(err)
	}
}

// Every option is validated before anything runs: each bad value the spec
// implies (types, ranges, choices, empty or missing required values) is
// refused naming the option and what it allows.
func TestBoundaries(t *testing.T) {
	moduletest.Boundaries(t, spec, `{"heat_dir": "/tmp/hd"}`)
}

// heatDir makes a heat_dir whose heat.conf names a sqlite database holding
// one stack.
func heatDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "heat-launcher")
	d, err := heatdir.At(dir)
	if err == nil {
		_, err = d.Ensure()
	}
	if err != nil {
		t.Fatal(err)
	}
	path := d.File(heatdir.SQLiteFile)
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
	conf := fmt.Sprintf("[database]\nconnection = sqlite:///%s\n", path)
	if err := os.WriteFile(d.File(heatdir.HeatConf), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// With --diff, the result's diff holds the database and the dumps before
// and after; without it, none.
func TestDiff(t *testing.T) {
	tests := []struct {
		name        string
		args        map[string]any
		diff        bool
		dumpsBefore int
		wantAfter   func(dir string, res, after map[string]any) string // what is wrong
	}{
		{name: "check mode", args: map[string]any{"_ansible_check_mode": true}, diff: true,
			wantAfter: func(dir string, res, after map[string]any) string {
				dumps, _ := after["dumps"].(map[string]any)
				if len(dumps) != 1 || dumps[res["path"].(string)] != "(not written: check mode)" || after["database_state"] != "present" {
					return "want the dump check mode would write"
				}
				return ""
			}},
		{name: "dump and wipe", args: map[string]any{"wipe": true}, diff: true,
			wantAfter: func(dir string, res, after map[string]any) string {
				dumps, _ := after["dumps"].(map[string]any)
				if len(dumps) != 1 || dumps[res["path"].(string)] != res["sha256"] || after["database_state"] != "absent" {
					return "want the new dump with its sha256, the database wiped"
				}
				return ""
			}},
		{name: "no --diff", args: map[string]any{}, diff: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := heatDir(t)
			args := map[string]any{"heat_dir": dir, "_ansible_diff": tc.diff}
			for k, v := range tc.args {
				args[k] = v
			}
			res := moduletest.Call(t, spec, run, args)
			if res["failed"] == true || res["changed"] != true {
				t.Fatalf("result: %v", res)
			}
			d, ok := res["diff"].(map[string]any)
			if ok != tc.diff {
				t.Fatalf("diff %v, want one: %v", res["diff"], tc.diff)
			}
			if !tc.diff {
				return
			}
			before, _ := d["before"].(map[string]any)
			after, _ := d["after"].(map[string]any)
			db := filepath.Join(dir, heatdir.SQLiteFile)
			if before["database"] != db || before["database_state"] != "present" || len(before["dumps"].(map[string]any)) != 0 || after["database"] != db {
				t.Errorf("before: %v", before)
			}
			if msg := tc.wantAfter(dir, res, after); msg != "" {
				t.Errorf("after: %v: %s", after, msg)
			}
		})
	}
}
