package robustness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// overcloud_playbook's cases (issue 33): the log directory and the files
// it writes there, its inputs, runs that select nothing, a signal. Their
// names start with the suite's (TestHandCases..., TestControls...) so the
// suite's usual -run pattern runs them.

// playbookProject makes a config-download-like directory "cd" in the
// sandbox: an inventory of two hosts run locally (ansible_connection
// local) and the playbooks the cases run.
func playbookProject(s *sandbox) string {
	s.t.Helper()
	dir := s.dir("cd", 0o700)
	host := "{ansible_connection: local, ansible_python_interpreter: /usr/bin/python3}"
	s.file("cd/tripleo-ansible-inventory.yaml", "allovercloud:\n  hosts:\n    node-0: "+host+"\n    node-1: "+host+"\n", 0o600)
	s.file("cd/ok.yaml", `- hosts: allovercloud
  gather_facts: false
  tasks:
    - name: Step one
      ansible.builtin.command: "true"
      tags: [one]
`, 0o600)
	s.file("cd/sleep.yaml", `- hosts: node-0
  gather_facts: false
  tasks:
    - name: Sleep
      ansible.builtin.command: sleep 300
`, 0o600)
	return dir
}

// playbookArgs returns a setup that makes the project and gives the
// playbook ok.yaml with more arguments, set by mk (which may make files).
func playbookArgs(mk func(s *sandbox, cd string) a) func(*sandbox) (a, string) {
	return func(s *sandbox) (a, string) {
		cd := playbookProject(s)
		args := a{"dir": cd, "playbook": "ok.yaml", "become": false}
		if mk != nil {
			for k, v := range mk(s, cd) {
				args[k] = v
			}
		}
		return args, ""
	}
}

func playbookCases() []badCase {
	return []badCase{
		// log_dir (and dir as the log dir): refused, never chmodded or written through.
		{name: "playbook log_dir is a symlink", module: "overcloud_playbook", setup: playbookArgs(func(s *sandbox, cd string) a {
			return a{"log_dir": s.symlink("logs", s.dir("real-logs", 0o700))}
		}), want: []string{"log_dir", "logs is a symlink (to ", "real-logs"}},
		{name: "playbook log_dir is another user's", module: "overcloud_playbook", setup: playbookArgs(func(s *sandbox, cd string) a {
			d := s.dir("logs", 0o700)
			if err := os.Chown(d, 65534, 65534); err != nil {
				s.t.Fatal(err)
			}
			return a{"log_dir": d}
		}), want: []string{"log_dir", "owned by uid 65534", "another user's directory"}},
		{name: "playbook log_dir is sticky 1777", module: "overcloud_playbook", setup: playbookArgs(func(s *sandbox, cd string) a {
			d := s.dir("logs", 0o777)
			os.Chmod(d, 0o777|os.ModeSticky)
			return a{"log_dir": d}
		}), want: []string{"log_dir", "mode 0777", "writable by other users"}},
		{name: "playbook log_dir is group-writable", module: "overcloud_playbook", setup: playbookArgs(func(s *sandbox, cd string) a {
			return a{"log_dir": s.dir("logs", 0o770)}
		}), want: []string{"log_dir", "mode 0770"}},
		{name: "playbook dir, the log dir, is a symlink", module: "overcloud_playbook", setup: func(s *sandbox) (a, string) {
			playbookProject(s)
			return a{"dir": s.symlink("cd-link", s.path("cd")), "playbook": "ok.yaml"}, ""
		}, want: []string{"dir ", "cd-link is a symlink"}},
		{name: "playbook dangling ansible.log symlink", module: "overcloud_playbook", setup: playbookArgs(func(s *sandbox, cd string) a {
			s.symlink("cd/ansible.log", s.path("victim.log"))
			return nil
		}), want: []string{"dir ", "ansible.log, a symlink (to ", "victim.log", "refusing to write through it"}},
		{name: "playbook ansible.cfg symlink to a file", module: "overcloud_playbook", setup: playbookArgs(func(s *sandbox, cd string) a {
			s.symlink("cd/ansible.cfg", s.file("precious.cfg", "[defaults]\n", 0o644))
			return nil
		}), want: []string{"dir ", "ansible.cfg, a symlink (to ", "precious.cfg"}},
		{name: "playbook another run holds the log dir", module: "overcloud_playbook", setup: playbookArgs(func(s *sandbox, cd string) a {
			fd, err := unix.Open(cd, unix.O_RDONLY|unix.O_DIRECTORY, 0)
			if err == nil {
				err = unix.Flock(fd, unix.LOCK_EX)
			}
			if err != nil {
				s.t.Fatal(err)
			}
			s.t.Cleanup(func() { unix.Close(fd) })
			return a{"lock_wait": 1}
		}), want: []string{"dir ", "another run (overcloud_playbook)", "waited 1s", "lock_wait"}},

		// Inputs: refused by their type before anything runs.
		{name: "playbook inventory is a FIFO", module: "overcloud_playbook", setup: playbookArgs(func(s *sandbox, cd string) a {
			return a{"inventory": s.fifo("inv.yaml")}
		}), want: []string{"inventory", "inv.yaml is a FIFO"}},
		{name: "playbook inventory is /dev/zero", module: "overcloud_playbook", setup: playbookArgs(func(s *sandbox, cd string) a {
			return a{"inventory": "/dev/zero"}
		}), want: []string{"inventory /dev/zero is a character device"}},
		{name: "playbook inventory is empty", module: "overcloud_playbook", setup: playbookArgs(func(s *sandbox, cd string) a {
			return a{"inventory": s.file("inv.yaml", "", 0o600)}
		}), want: []string{"inventory", "inv.yaml is empty"}},
		{name: "playbook inventory is a directory", module: "overcloud_playbook", setup: playbookArgs(func(s *sandbox, cd string) a {
			return a{"inventory": s.dir("inventory.d", 0o700)}
		}), want: []string{"inventory", "inventory.d is a directory"}},
		{name: "playbook ansible_cfg is missing", module: "overcloud_playbook", setup: playbookArgs(func(s *sandbox, cd string) a {
			return a{"ansible_cfg": s.path("nope.cfg")}
		}), want: []string{"ansible_cfg", "nope.cfg", "no such file"}},
		{name: "playbook ansible_cfg is a FIFO", module: "overcloud_playbook", setup: playbookArgs(func(s *sandbox, cd string) a {
			return a{"ansible_cfg": s.fifo("my.cfg")}
		}), want: []string{"ansible_cfg", "my.cfg is a FIFO"}},
		{name: "playbook playbook is a FIFO", module: "overcloud_playbook", setup: playbookArgs(func(s *sandbox, cd string) a {
			return a{"playbook": s.fifo("book.yaml")}
		}), want: []string{"playbook", "book.yaml is a FIFO"}},
		{name: "playbook private_key is a device", module: "overcloud_playbook", setup: playbookArgs(func(s *sandbox, cd string) a {
			return a{"private_key": s.device("key")}
		}), want: []string{"private_key", "is a character device"}},

		// Runs that select nothing, and a configuration ansible cannot read.
		{name: "playbook limit matching nothing", module: "overcloud_playbook", writes: true, setup: playbookArgs(func(s *sandbox, cd string) a {
			return a{"limit": "nobody"}
		}), want: []string{"ok.yaml ran nothing", `limit "nobody" matched no host`, "allow_no_hosts: true"}},
		{name: "playbook tags matching nothing", module: "overcloud_playbook", writes: true, setup: playbookArgs(func(s *sandbox, cd string) a {
			return a{"tags": []any{"nothing"}}
		}), want: []string{"ok.yaml ran nothing", "tags nothing selected no task of ok.yaml"}},
		{name: "playbook inventory of no host", module: "overcloud_playbook", writes: true, setup: playbookArgs(func(s *sandbox, cd string) a {
			return a{"inventory": s.file("inv.yaml", "# no host\n", 0o600)}
		}), want: []string{"ok.yaml ran nothing", "inv.yaml holds no host"}},
		{name: "playbook malformed ansible_cfg", module: "overcloud_playbook", writes: true, setup: playbookArgs(func(s *sandbox, cd string) a {
			return a{"ansible_cfg": s.file("my.cfg", "[defaults\nforks = 2\n", 0o600)}
		}), want: []string{"exit code 5", "ansible_cfg", "my.cfg: ansible-playbook cannot read it", "no section headers"}},
	}
}

// TestHandCasesPlaybook: overcloud_playbook's bad inputs and faults.
func TestHandCasesPlaybook(t *testing.T) {
	for _, c := range playbookCases() {
		t.Run(c.name, func(t *testing.T) {
			counted.hand.Add(1)
			r := c.check(t)
			t.Logf("%s in %s, %d MiB: %s", c.module, r.elapsed.Round(time.Millisecond), r.rss>>20, truncate(r.msg(), 300))
		})
	}
}

// TestControlsPlaybookInterrupt: SIGTERM to the module stops every process
// of its run (ansible-playbook, its workers, the task's sleep) and still
// prints one JSON result, failed, naming the signal and the log.
func TestControlsPlaybookInterrupt(t *testing.T) {
	s := newSandbox(t)
	cd := playbookProject(s)
	argsFile := filepath.Join(t.TempDir(), "args.json")
	b, _ := json.Marshal(a{"dir": cd, "playbook": "sleep.yaml", "become": false})
	os.WriteFile(argsFile, b, 0o600)
	mark := fmt.Sprintf("ROBUSTNESS_PLAYBOOK_MARK=%d-%d", os.Getpid(), time.Now().UnixNano())
	cmd := exec.Command(filepath.Join(binDir, "overcloud_playbook"), argsFile)
	cmd.Dir = s.root
	cmd.Env = s.environ(cleanEnv(), mark)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		// Whatever happened, nothing of this test outlives it.
		for _, p := range withEnv(mark) {
			syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}()
	var started bool
	for end := time.Now().Add(45 * time.Second); time.Now().Before(end) && !started; time.Sleep(100 * time.Millisecond) {
		for _, p := range withEnv(mark) {
			started = started || p.cmdline == "sleep 300"
		}
	}
	if !started {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("the task's sleep did not start: %s %s", out.String(), errb.String())
	}
	start := time.Now()
	syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(caseTimeout):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("HANG: the module did not end %s after SIGTERM", caseTimeout)
	}
	t.Logf("ended %s after SIGTERM", time.Since(start).Round(time.Millisecond))
	if left := withEnv(mark); len(left) > 0 {
		t.Errorf("LEAK: processes of the run left: %v", left)
	}
	if left := processesIn(s.root); len(left) > 0 {
		t.Errorf("LEAK: processes left in the sandbox: %v", left)
	}
	trimmed := strings.TrimSpace(out.String())
	var res map[string]any
	if strings.Contains(trimmed, "\n") || json.Unmarshal([]byte(trimmed), &res) != nil {
		t.Fatalf("not one JSON result: %q (stderr %q)", out.String(), errb.String())
	}
	msg, _ := res["msg"].(string)
	log, _ := res["log"].(string)
	if res["failed"] != true || res["interrupted"] != "SIGTERM" || !strings.Contains(msg, "sleep.yaml interrupted by SIGTERM") ||
		log == "" || !strings.Contains(msg, "log: "+log) {
		t.Fatalf("result: %s", trimmed)
	}
	if b, err := os.ReadFile(log); err != nil || !strings.Contains(string(b), "interrupted by SIGTERM") || !strings.Contains(string(b), "TASK [Sleep]") {
		t.Errorf("the log %s: %v\n%s", log, err, b)
	}
}

// TestControlsPlaybookLogs: two runs at once on one directory both
// succeed, one after the other (the lock), each result naming its own log,
// kept, with ansible.log linking to the later one; allow_no_hosts makes
// a run that selects nothing a success with a warning; log_dir is created
// 0700 when missing.
func TestControlsPlaybookLogs(t *testing.T) {
	s := newSandbox(t)
	cd := playbookProject(s)
	var wg sync.WaitGroup
	runs := make([]run, 2)
	for i := range runs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			runs[i] = runModule(t, s, "overcloud_playbook", a{"dir": cd, "playbook": "ok.yaml", "become": false}, "")
		}(i)
	}
	wg.Wait()
	logs := map[string]bool{}
	for _, r := range runs {
		log, _ := r.res["log"].(string)
		if r.res["failed"] != false || log == "" || !strings.Contains(r.msg(), "ok on 2 host(s); log: "+log) {
			t.Fatalf("a run of two at once: %s", r.stdout)
		}
		b, err := os.ReadFile(log)
		if err != nil || strings.Count(string(b), "PLAY RECAP") != 1 {
			t.Errorf("the log %s holds %d runs: %v", log, strings.Count(string(b), "PLAY RECAP"), err)
		}
		logs[log] = true
	}
	if len(logs) != 2 {
		t.Fatalf("both runs named the same log: %v", logs)
	}
	linked := 0
	latest, _ := os.Stat(filepath.Join(cd, "ansible.log"))
	for log := range logs {
		if st, err := os.Stat(log); err == nil && latest != nil && os.SameFile(st, latest) {
			linked++
		}
	}
	if linked != 1 {
		t.Errorf("ansible.log links to %d of the runs' logs, want 1", linked)
	}

	r := runModule(t, s, "overcloud_playbook", a{"dir": cd, "playbook": "ok.yaml", "become": false, "tags": []any{"nothing"},
		"allow_no_hosts": true, "log_dir": s.path("new", "logs")}, "")
	w, _ := json.Marshal(r.res["warnings"])
	if r.res["failed"] != false || !strings.Contains(r.msg(), "ran nothing (allow_no_hosts): tags nothing selected no task") ||
		!strings.Contains(string(w), "ran nothing") {
		t.Fatalf("allow_no_hosts: %s", r.stdout)
	}
	for _, d := range []string{s.path("new"), s.path("new", "logs")} {
		if m := statMode(t, d); m != 0o700 {
			t.Errorf("%s created with mode %v", d, m)
		}
	}
}

// runProc is a process found by withEnv.
type runProc struct {
	pid     int
	cmdline string
}

func (p runProc) String() string { return fmt.Sprintf("pid %d (%s)", p.pid, p.cmdline) }

// withEnv lists the live processes whose environment holds kv.
func withEnv(kv string) []runProc {
	var out []runProc
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append(append([]byte{0}, env...), 0), []byte("\x00"+kv+"\x00")) {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && bytes.HasPrefix(stat[i+1:], []byte(" Z")) {
			continue // gone, not yet reaped
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		out = append(out, runProc{pid: pid, cmdline: strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))})
	}
	return out
}
