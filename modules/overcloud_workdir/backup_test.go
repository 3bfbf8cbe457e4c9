package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// backup and restore as the playbooks call them: check mode writes
// nothing, a second run changes nothing, refusals name the parameter.
func TestBackupRestoreActions(t *testing.T) {
	t.Setenv("OS_CLOUD", "")
	base := t.TempDir()
	wd := filepath.Join(base, "home1", "overcloud-deploy", "overcloud")
	bdir := filepath.Join(base, "home1", "overcloud-backup")
	succeeded(t, wd)
	check := call(t, map[string]any{"action": "backup", "work_dir": wd, "backup_dir": bdir, "_ansible_check_mode": true, "_ansible_diff": true})
	if check["failed"] == true || check["changed"] != true || !strings.Contains(check["msg"].(string), "would write") {
		t.Fatalf("check backup: %v", check)
	}
	if d, ok := check["diff"].(map[string]any); !ok || !strings.Contains(d["after"].(string), "overcloud-passwords.yaml 0600") {
		t.Errorf("check backup diff: %v", check["diff"])
	}
	if _, err := os.Lstat(bdir); !os.IsNotExist(err) {
		t.Fatalf("check mode made backup_dir: %v", err)
	}
	first := call(t, map[string]any{"action": "backup", "work_dir": wd, "backup_dir": bdir})
	file, _ := first["backup_file"].(string)
	if first["failed"] == true || first["changed"] != true || file == "" {
		t.Fatalf("backup: %v", first)
	}
	if again := call(t, map[string]any{"action": "backup", "work_dir": wd, "backup_dir": bdir}); again["changed"] != false || again["backup_file"] != file {
		t.Errorf("second backup: %v", again)
	}
	if bad := call(t, map[string]any{"action": "backup", "work_dir": wd}); bad["failed"] != true || !strings.Contains(bad["msg"].(string), "backup_dir") {
		t.Errorf("backup without backup_dir: %v", bad)
	}
	if bad := call(t, map[string]any{"action": "status", "status": "DEPLOYING", "work_dir": wd, "backup_dir": bdir}); bad["failed"] != true {
		t.Errorf("backup_dir given to status: %v", bad)
	}

	target := filepath.Join(base, "home2", "overcloud-deploy", "overcloud")
	other := call(t, map[string]any{"action": "restore", "work_dir": target, "backup_file": file, "stack": "dcn0"})
	if other["failed"] != true || !strings.Contains(other["msg"].(string), "stack_name dcn0") {
		t.Errorf("restore of another stack: %v", other)
	}
	chk := call(t, map[string]any{"action": "restore", "work_dir": target, "backup_file": file, "_ansible_check_mode": true})
	if chk["failed"] == true || chk["changed"] != true || chk["stack"] != "overcloud" {
		t.Fatalf("check restore: %v", chk)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatalf("check mode made work_dir: %v", err)
	}
	r := call(t, map[string]any{"action": "restore", "work_dir": target, "backup_file": file, "stack": "overcloud"})
	if r["failed"] == true || r["changed"] != true || r["restored_from"] != wd {
		t.Fatalf("restore: %v", r)
	}
	want, _ := os.ReadFile(filepath.Join(wd, "overcloud-passwords.yaml"))
	if got, err := os.ReadFile(filepath.Join(target, "overcloud-passwords.yaml")); err != nil || string(got) != string(want) {
		t.Errorf("restored passwords differ: %v", err)
	}
	if again := call(t, map[string]any{"action": "restore", "work_dir": target, "backup_file": file}); again["failed"] == true || again["changed"] != false {
		t.Errorf("second restore: %v", again)
	}
	over := call(t, map[string]any{"action": "restore", "work_dir": wd, "backup_file": file})
	if over["failed"] != true || !strings.Contains(over["msg"].(string), "work_dir") {
		t.Errorf("restore over the deployment: %v", over)
	}
	// The restored working dir is ours: the next prepare keeps its passwords.
	if p := call(t, map[string]any{"action": "prepare", "work_dir": target}); p["failed"] == true || p["changed"] != false {
		t.Errorf("prepare on the restored working dir: %v", p)
	}
}

// succeeded makes wd the working dir of a deploy of stack overcloud that
// succeeded: its passwords and status, as the deploy playbook writes them.
func succeeded(t *testing.T, wd string) {
	t.Helper()
	for _, args := range []map[string]any{{"action": "prepare"}, {"action": "status", "status": "DEPLOY_SUCCESS"}} {
		args["work_dir"] = wd
		if r := call(t, args); r["failed"] == true {
			t.Fatalf("%v: %v", args, r["msg"])
		}
	}
}
