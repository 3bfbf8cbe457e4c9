package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// delete as the playbook calls it: its parameters, check mode and diff,
// the backup first, restorable, a second run with nothing to do.
func TestDeleteAction(t *testing.T) {
	t.Setenv("OS_CLOUD", "")
	base := t.TempDir()
	wd := filepath.Join(base, "overcloud-deploy", "overcloud")
	bdir := filepath.Join(base, "overcloud-backup")
	succeeded(t, wd)
	notDir := filepath.Join(base, "a-file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "needs backup_dir"},
		{map[string]any{"backup_dir": bdir, "skip_backup": true}, "not both"},
		// A backup that fails removes nothing.
		{map[string]any{"backup_dir": notDir}, "nothing was removed"},
	} {
		tc.args["action"], tc.args["work_dir"] = "delete", wd
		if r := call(t, tc.args); r["failed"] != true || !strings.Contains(r["msg"].(string), tc.want) {
			t.Errorf("delete %v: %v, want a failure with %q", tc.args, r, tc.want)
		}
	}
	if r := call(t, map[string]any{"action": "status", "status": "DEPLOYING", "work_dir": wd, "skip_backup": true}); r["failed"] != true {
		t.Errorf("skip_backup given to status: %v", r)
	}
	// A launch of Heat recorded in the heat_dir: refused before the backup;
	// check mode says it must be stopped first.
	rec := filepath.Join(wd, "heat-launcher", "launch.json")
	os.MkdirAll(filepath.Dir(rec), 0o700)
	os.WriteFile(rec, []byte(`{"version": 1, "state": "running", "launch_id": "x", "heat_type": "native", "endpoint": "http://127.0.0.1:1/v1/admin"}`), 0o600)
	if r := call(t, map[string]any{"action": "delete", "work_dir": wd, "backup_dir": bdir}); r["failed"] != true ||
		!strings.Contains(r["msg"].(string), "records a launch of Heat") || !strings.Contains(r["msg"].(string), "kill_heat") {
		t.Errorf("delete with a launch recorded: %v", r)
	}
	if r := call(t, map[string]any{"action": "delete", "work_dir": wd, "backup_dir": bdir, "_ansible_check_mode": true}); r["failed"] == true ||
		!strings.Contains(r["msg"].(string), "must be stopped first") || !strings.Contains(r["msg"].(string), "a backup would then be written in "+bdir) {
		t.Errorf("check delete with a launch recorded: %v", r)
	}
	if _, err := os.Lstat(bdir); !os.IsNotExist(err) {
		t.Errorf("a refused delete made backup_dir: %v", err)
	}
	os.RemoveAll(filepath.Dir(rec))

	chk := call(t, map[string]any{"action": "delete", "work_dir": wd, "backup_dir": bdir, "_ansible_check_mode": true, "_ansible_diff": true})
	if chk["failed"] == true || chk["changed"] != true || !strings.Contains(chk["msg"].(string), "would remove work_dir "+wd) ||
		!strings.Contains(chk["msg"].(string), "would be backed up in "+bdir) {
		t.Fatalf("check delete: %v", chk)
	}
	if d, ok := chk["diff"].(map[string]any); !ok || !strings.Contains(d["before"].(string), "overcloud-passwords.yaml\n") || d["after"] != "" {
		t.Errorf("check delete diff: %v", chk["diff"])
	}
	if _, err := os.Lstat(bdir); !os.IsNotExist(err) {
		t.Errorf("check mode made backup_dir: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(wd, "overcloud-passwords.yaml")); err != nil {
		t.Fatalf("check mode removed the passwords: %v", err)
	}
	want, _ := os.ReadFile(filepath.Join(wd, "overcloud-passwords.yaml"))

	r := call(t, map[string]any{"action": "delete", "work_dir": wd, "backup_dir": bdir})
	file, _ := r["backup_file"].(string)
	if r["failed"] == true || r["changed"] != true || file == "" {
		t.Fatalf("delete: %v", r)
	}
	if _, err := os.Lstat(wd); !os.IsNotExist(err) {
		t.Errorf("work_dir after delete: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(wd)); err != nil {
		t.Errorf("work_dir's parent after delete: %v", err)
	}
	again := call(t, map[string]any{"action": "delete", "work_dir": wd, "backup_dir": bdir})
	if again["failed"] == true || again["changed"] != false || !strings.Contains(again["msg"].(string), "nothing to delete") {
		t.Errorf("second delete: %v", again)
	}
	if _, err := os.Lstat(wd); !os.IsNotExist(err) {
		t.Errorf("the second delete made work_dir: %v", err)
	}
	// The backup brings it back.
	if rs := call(t, map[string]any{"action": "restore", "work_dir": wd, "backup_file": file}); rs["failed"] == true || rs["changed"] != true {
		t.Fatalf("restore of the deleted working dir: %v", rs)
	}
	if got, err := os.ReadFile(filepath.Join(wd, "overcloud-passwords.yaml")); err != nil || string(got) != string(want) {
		t.Errorf("restored passwords differ: %v", err)
	}

	// A working dir with no deployment in it: removed only without a backup.
	empty := filepath.Join(base, "overcloud-deploy", "other")
	if r := call(t, map[string]any{"action": "prepare", "work_dir": empty, "stack": "other", "passwords": false}); r["failed"] == true {
		t.Fatalf("prepare: %v", r)
	}
	os.WriteFile(filepath.Join(empty, "notes.txt"), []byte("x"), 0o600)
	if r := call(t, map[string]any{"action": "delete", "work_dir": empty, "stack": "other", "backup_dir": bdir}); r["failed"] != true ||
		!strings.Contains(r["msg"].(string), "holds no deployment of stack other") || !strings.Contains(r["msg"].(string), "notes.txt") {
		t.Errorf("delete of a working dir without a deployment, with a backup: %v", r)
	}
	if r := call(t, map[string]any{"action": "delete", "work_dir": empty, "stack": "other", "skip_backup": true}); r["failed"] == true || r["changed"] != true {
		t.Errorf("delete with skip_backup: %v", r)
	}
	if _, err := os.Lstat(empty); !os.IsNotExist(err) {
		t.Errorf("work_dir after delete with skip_backup: %v", err)
	}
}
