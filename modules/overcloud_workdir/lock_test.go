package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dirlock"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// The test binary is the lock holder too (/proc/self/exe), as the module is.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == dirlock.HoldArg {
		os.Exit(dirlock.RunHolder(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// playbook starts a process that stands for an ansible-playbook.
func playbook(t *testing.T) *exec.Cmd {
	t.Helper()
	c := exec.Command("sleep", "600")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c
}

// The lock a playbook takes: its modules act under the token at once,
// anything else waits lock_wait and is told who holds it, unlock lets go,
// and a playbook that dies lets go too.
func TestLockForAPlaybook(t *testing.T) {
	wd := filepath.Join(t.TempDir(), "overcloud")
	pb := playbook(t)
	res := call(t, map[string]any{"work_dir": wd, "action": "lock", "owner_pid": pb.Process.Pid})
	tok, _ := res["lock_token"].(string)
	if res["failed"] == true || res["changed"] != false || len(tok) != 32 {
		t.Fatalf("lock: %v", res)
	}
	holder := int(res["holder_pid"].(float64))
	t.Cleanup(func() {
		if info, err := proc.Inspect(holder); err == nil && !info.Zombie() {
			kill(holder)
		}
	})
	if st, err := os.Stat(filepath.Join(wd, ".ephemeral-heat")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("lock did not mark the new working dir as ours: %v", err)
	}
	start := time.Now()
	res = call(t, map[string]any{"work_dir": wd, "action": "status", "status": "DEPLOYING", "lock_token": tok})
	if res["failed"] == true || time.Since(start) > 5*time.Second {
		t.Fatalf("status under the token: %v", res)
	}
	if strings.Contains(fmt.Sprint(res), tok) {
		t.Errorf("the token is printed in the result: %v", res)
	}
	// Another operation on the working dir, without the token: waits, fails, names the playbook.
	res = call(t, map[string]any{"work_dir": wd, "action": "status", "status": "DEPLOY_FAILED", "lock_wait": 1})
	msg, _ := res["msg"].(string)
	if res["failed"] != true || !strings.Contains(msg, fmt.Sprintf("is in use by pid %d", pb.Process.Pid)) || !strings.Contains(msg, "waited 1s") {
		t.Errorf("a second operation: %v", res)
	}
	// Another playbook's lock too.
	pb2 := playbook(t)
	res = call(t, map[string]any{"work_dir": wd, "action": "lock", "owner_pid": pb2.Process.Pid, "lock_wait": 1})
	if res["failed"] != true || !strings.Contains(fmt.Sprint(res["msg"]), "in use by") {
		t.Errorf("a second playbook's lock: %v", res)
	}
	b, _ := os.ReadFile(filepath.Join(wd, "overcloud-deployment_status.yaml"))
	if !strings.Contains(string(b), "DEPLOYING") {
		t.Errorf("the refused status was written: %s", b)
	}
	// Lock again under the same token: nothing changes.
	res = call(t, map[string]any{"work_dir": wd, "action": "lock", "lock_token": tok})
	if res["failed"] == true || res["changed"] != false {
		t.Errorf("lock under its own token: %v", res)
	}
	res = call(t, map[string]any{"work_dir": wd, "action": "unlock", "lock_token": tok})
	if res["failed"] == true || res["released"] != true {
		t.Fatalf("unlock: %v", res)
	}
	res = call(t, map[string]any{"work_dir": wd, "action": "status", "status": "DEPLOY_SUCCESS", "lock_wait": 0})
	if res["failed"] == true {
		t.Fatalf("status after unlock: %v", res)
	}
	res = call(t, map[string]any{"work_dir": wd, "action": "status", "status": "DEPLOY_SUCCESS", "lock_token": tok})
	if res["failed"] != true || !strings.Contains(fmt.Sprint(res["msg"]), "lock_token") {
		t.Errorf("a released token: %v", res)
	}

	// A playbook that dies lets go: the next one takes the lock at once.
	res = call(t, map[string]any{"work_dir": wd, "action": "lock", "owner_pid": pb2.Process.Pid})
	if res["failed"] == true {
		t.Fatalf("lock for the second playbook: %v", res)
	}
	pb2.Process.Kill()
	pb2.Wait()
	pb3 := playbook(t)
	res = call(t, map[string]any{"work_dir": wd, "action": "lock", "owner_pid": pb3.Process.Pid, "lock_wait": 5})
	if res["failed"] == true {
		t.Fatalf("the lock of a dead playbook was not taken over: %v", res)
	}
	call(t, map[string]any{"work_dir": wd, "action": "unlock", "lock_token": res["lock_token"]})
}

// A working dir that is not ours is refused before anything is written or
// locked, and never chmodded.
func TestWorkDirGuard(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "target")
	os.Mkdir(target, 0o755)
	link := filepath.Join(root, "link")
	os.Symlink(target, link)
	shared := filepath.Join(root, "shared")
	os.Mkdir(shared, 0o777)
	os.Chmod(shared, 0o777|os.ModeSticky)
	full := filepath.Join(root, "full")
	os.Mkdir(full, 0o700)
	os.WriteFile(filepath.Join(full, "precious"), []byte("x"), 0o600)
	for _, tc := range []struct {
		name, dir, want string
	}{
		{"a symlink", link, "is a symlink"},
		{"writable by others", shared, "writable by other users"},
		{"someone else's files", full, "is not empty and is not a work_dir"},
	} {
		for _, action := range []string{"prepare", "status", "lock", "export", "archive"} {
			t.Run(tc.name+"/"+action, func(t *testing.T) {
				args := map[string]any{"work_dir": tc.dir, "action": action}
				switch action {
				case "status":
					args["status"] = "DEPLOYING"
				case "lock":
					args["owner_pid"] = os.Getpid()
				}
				res := call(t, args)
				msg, _ := res["msg"].(string)
				if res["failed"] != true || !strings.Contains(msg, "work_dir") || !strings.Contains(msg, tc.want) {
					t.Errorf("%v", res)
				}
			})
		}
	}
	if st, _ := os.Stat(shared); st.Mode()&os.ModePerm != 0o777 {
		t.Errorf("the shared directory was chmodded: %v", st.Mode())
	}
	if ents, _ := os.ReadDir(target); len(ents) != 0 {
		t.Errorf("written through the symlink: %v", ents)
	}
	if ents, _ := os.ReadDir(full); len(ents) != 1 {
		t.Errorf("written into someone else's directory: %v", ents)
	}
}

func kill(pid int) { p, _ := os.FindProcess(pid); p.Kill() }
