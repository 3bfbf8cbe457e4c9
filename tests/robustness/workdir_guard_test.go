package robustness

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
)

// ourWorkDir makes a working dir of ours (marker) at name in the sandbox.
func ourWorkDir(s *sandbox, name string) string {
	s.t.Helper()
	dir := s.dir(name, 0o700)
	if err := pathguard.WriteMarker(dir, pathguard.KindWorkDir); err != nil {
		s.t.Fatal(err)
	}
	return dir
}

// workDirGuardCases: overcloud_workdir holds work_dir to heat_dir's policy
// (issue 33 item 1): refused, never chmodded, followed or written through;
// files inside read as regular files only; the lock and its token. A case
// that "writes" may create the working dir's lock file before it refuses.
func workDirGuardCases() []badCase {
	return []badCase{
		{name: "work_dir is a symlink", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			return a{"work_dir": s.symlink("wd", s.dir("target", 0o755)), "action": "prepare"}, ""
		}, want: []string{"work_dir", "is a symlink"}},
		{name: "work_dir is another user's", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			wd := s.dir("wd", 0o700)
			if err := os.Chown(wd, 65534, 65534); err != nil {
				s.t.Fatal(err)
			}
			return a{"work_dir": wd, "action": "status", "status": "DEPLOYING"}, ""
		}, want: []string{"work_dir", "owned by uid 65534"}},
		{name: "work_dir is group-writable", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			return a{"work_dir": s.dir("wd", 0o775), "action": "status", "status": "DEPLOYING"}, ""
		}, want: []string{"work_dir", "writable by other users"}},
		{name: "work_dir is a sticky shared directory", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			wd := s.dir("wd", 0o777)
			os.Chmod(wd, 0o777|os.ModeSticky)
			return a{"work_dir": wd, "action": "archive"}, ""
		}, want: []string{"work_dir", "writable by other users"}},
		{name: "work_dir holds someone else's files", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			s.file("home/docs/notes.txt", "mine\n", 0o600)
			return a{"work_dir": s.path("home/docs"), "action": "prepare"}, ""
		}, want: []string{"work_dir", "is not empty and is not a work_dir"}},
		{name: "work_dir is a FIFO", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			return a{"work_dir": s.fifo("wd"), "action": "export"}, ""
		}, want: []string{"work_dir", "is a FIFO"}},
		{name: "work_dir inside a directory others may write to", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			return a{"work_dir": filepath.Join(s.dir("shared", 0o777), "wd"), "action": "prepare"}, ""
		}, want: []string{"work_dir", "without the sticky bit"}},
		{name: "a saved output is a FIFO", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			wd := ourWorkDir(s, "wd")
			s.dir("wd/outputs", 0o700)
			s.fifo("wd/outputs/KeystoneURL")
			return a{"work_dir": wd, "action": "export"}, ""
		}, want: []string{"saved output", "KeystoneURL", "is a FIFO"}, writes: true},
		{name: "a saved output is a symlink to /dev/zero", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			wd := ourWorkDir(s, "wd")
			s.dir("wd/outputs", 0o700)
			s.symlink("wd/outputs/EndpointMap", "/dev/zero")
			return a{"work_dir": wd, "action": "export"}, ""
		}, want: []string{"saved output", "EndpointMap", "is a symbolic link"}, writes: true},
		{name: "the deploy fingerprint is a FIFO", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			wd := ourWorkDir(s, "wd")
			s.fifo("wd/deploy-inputs.sha256")
			return a{"work_dir": wd, "action": "prepare", "passwords": false}, ""
		}, want: []string{"deploy inputs fingerprint", "is a FIFO"}, writes: true},
		{name: "the deployment status is /dev/zero", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			wd := ourWorkDir(s, "wd")
			s.device("wd/overcloud-deployment_status.yaml")
			return a{"work_dir": wd, "action": "archive", "_ansible_check_mode": true, "lock_wait": 0}, ""
		}, want: nil, writes: true},
		{name: "the lock file is a symlink", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			wd := ourWorkDir(s, "wd")
			s.symlink("wd/workdir.lock", s.file("victim", "precious\n", 0o644))
			return a{"work_dir": wd, "action": "status", "status": "DEPLOYING"}, ""
		}, want: []string{"lock", "workdir.lock", "is a symlink"}},
		{name: "a lock_token nobody holds", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			return a{"work_dir": ourWorkDir(s, "wd"), "action": "status", "status": "DEPLOYING", "lock_token": "0123456789abcdef0123456789abcdef"}, ""
		}, want: []string{"lock_token", "take the lock first"}, writes: true},
		{name: "a fingerprint that is not a sha256", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			return a{"work_dir": ourWorkDir(s, "wd"), "action": "fingerprint", "fingerprint": "../../etc/passwd"}, ""
		}, want: []string{"fingerprint", "is not a sha256"}, writes: true},
		{name: "lock for a process that does not run", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			return a{"work_dir": ourWorkDir(s, "wd"), "action": "lock", "owner_pid": 4194303}, ""
		}, want: []string{"owner_pid 4194303 is not a running process"}, writes: true},
	}
}

func TestWorkDirGuardCases(t *testing.T) {
	start := time.Now()
	for _, c := range workDirGuardCases() {
		if c.want == nil {
			continue // a control, below
		}
		t.Run(c.name, func(t *testing.T) {
			counted.hand.Add(1)
			r := c.check(t)
			t.Logf("%s in %s: %s", c.module, r.elapsed.Round(time.Millisecond), truncate(r.msg(), 300))
		})
	}
	// Check mode reads nothing it need not: an archive preview with a
	// device where the status file is neither blocks nor fails.
	t.Run("check mode archive beside a device", func(t *testing.T) {
		s := newSandbox(t)
		wd := ourWorkDir(s, "wd")
		s.device("wd/overcloud-deployment_status.yaml")
		r := runModule(t, s, "overcloud_workdir", a{"work_dir": wd, "action": "archive", "_ansible_check_mode": true}, "")
		if r.timedOut || r.res["failed"] == true {
			t.Fatalf("%s %s", r.stdout, r.stderr)
		}
	})
	t.Logf("work_dir cases in %s", time.Since(start).Round(time.Second))
}
