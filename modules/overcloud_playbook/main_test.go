package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/moduletest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
)

// project writes a config-download-like directory: an inventory of two
// local hosts and the playbooks the cases run.
func project(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"tripleo-ansible-inventory.yaml": "allovercloud:\n  hosts:\n    node-0: {ansible_connection: local, ansible_python_interpreter: /usr/bin/python3}\n" +
			"    node-1: {ansible_connection: local, ansible_python_interpreter: /usr/bin/python3}\n",
		"ok.yaml": `- hosts: allovercloud
  gather_facts: false
  tasks:
    - name: Step one
      ansible.builtin.command: "true"
      tags: [one]
    - name: Step two
      ansible.builtin.command: "true"
      tags: [two]
`,
		"later.yaml": `- hosts: allovercloud
  gather_facts: false
  tasks:
    - name: Step three
      ansible.builtin.command: "true"
`,
		"fail.yaml": `- hosts: allovercloud
  gather_facts: false
  tasks:
    - name: Break on node-1
      ansible.builtin.command: sh -c 'echo the disk is full >&2; exit 3'
      when: inventory_hostname == 'node-1'
`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// call runs the module as Ansible does (an arguments file) and returns its result.
func call(t *testing.T, args map[string]any) map[string]any {
	t.Helper()
	return moduletest.Call(t, spec, run, args)
}

func strs(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, e := range l {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

func TestRun(t *testing.T) {
	if _, err := os.Stat("/usr/bin/ansible-playbook"); err != nil {
		t.Fatal("ansible-playbook is missing: make deps (apt-get install ansible-core)")
	}
	tests := []struct {
		name         string
		args         map[string]any
		failed       bool // the task fails
		playbook     bool // failed_playbook
		msg          []string
		logHas       []string
		logHasNot    []string
		hosts        []string
		dirUntouched bool // check mode: nothing written into dir
		// in (and not in) the command line run
		command, commandNot []string
		warning             string // in the warnings
		absent              string // nowhere in the result
	}{
		{name: "ok", args: map[string]any{"playbook": "ok.yaml", "become": false},
			msg: []string{"ok.yaml: ok on 2 host(s); log: "}, logHas: []string{"Step one", "Step two"}, hosts: []string{"node-0", "node-1"}},
		{name: "limit and tags reach the playbook", args: map[string]any{"playbook": "ok.yaml", "become": false, "limit": "node-1", "tags": []string{"two"}},
			command: []string{"--limit node-1", "--tags two"}, commandNot: []string{"--check", "--diff"},
			logHas: []string{"Step two"}, logHasNot: []string{"Step one", "node-0"}, hosts: []string{"node-1"}},
		{name: "playbooks run in order in one run", args: map[string]any{"playbooks": []string{"ok.yaml", "later.yaml"}, "become": false},
			msg: []string{"tripleo-multi-playbook.yaml: ok on 2 host(s)"}, logHas: []string{"Step one", "Step three"}, hosts: []string{"node-0", "node-1"},
			command: []string{"tripleo-multi-playbook.yaml"}},
		{name: "playbook and playbooks together are refused", args: map[string]any{"playbook": "ok.yaml", "playbooks": []string{"later.yaml"}},
			failed: true, msg: []string{"give playbook or playbooks, not both"}},
		{name: "a missing one of playbooks is refused", args: map[string]any{"playbooks": []string{"ok.yaml", "nope.yaml"}},
			failed: true, msg: []string{"playbooks", "nope.yaml"}},
		{name: "skip_tags", args: map[string]any{"playbook": "ok.yaml", "become": false, "skip_tags": "one"},
			logHas: []string{"Step two"}, logHasNot: []string{"Step one"}, hosts: []string{"node-0", "node-1"}},
		{name: "a failure is summed up", args: map[string]any{"playbook": "fail.yaml", "become": false},
			failed: true, playbook: true,
			msg:    []string{"fail.yaml failed (ansible-playbook exit code 2) on 1 host(s); log: ", `node-1: task "Break on node-1" failed`, "rc 3", "the disk is full", "ansible-playbook-command.sh"},
			logHas: []string{"the disk is full"}, hosts: []string{"node-0", "node-1"}},
		{name: "fail_on_error false reports it", args: map[string]any{"playbook": "fail.yaml", "become": false, "fail_on_error": false},
			playbook: true, msg: []string{"node-1: task"}},
		{name: "check mode leaves dir alone, diff mode passes --diff", args: map[string]any{"playbook": "ok.yaml", "become": false, "_ansible_check_mode": true, "_ansible_diff": true},
			command: []string{"--check", "--diff"},
			logHas:  []string{"Step one"}, hosts: []string{"node-0", "node-1"}, dirUntouched: true},
		{name: "a missing playbook is a clear error", args: map[string]any{"playbook": "nope.yaml"},
			failed: true, msg: []string{"nope.yaml", "is nope.yaml rendered?"}},
		{name: "tags that select no task fail", args: map[string]any{"playbook": "ok.yaml", "become": false, "tags": []string{"nothing"}},
			failed: true, playbook: true, msg: []string{"ok.yaml ran nothing: tags nothing selected no task of ok.yaml", "allow_no_hosts: true accepts that"}},
		{name: "allow_no_hosts accepts a limit that selects no host", args: map[string]any{"playbook": "ok.yaml", "become": false, "limit": "nobody", "allow_no_hosts": true},
			msg: []string{"ok.yaml: ran nothing (allow_no_hosts): limit \"nobody\" matched no host"}, warning: "ran nothing"},
		{name: "a lock token outside a working dir is refused, and masked", args: map[string]any{"playbook": "ok.yaml", "become": false, "lock_token": "tok-secret-5150"},
			failed: true, msg: []string{"lock_token", "not the config-download directory of a working dir", "give no lock_token"}, absent: "tok-secret-5150"},
		{name: "a missing ansible_cfg is refused", args: map[string]any{"playbook": "ok.yaml", "ansible_cfg": "/nonexistent/my.cfg"},
			failed: true, msg: []string{"ansible_cfg /nonexistent/my.cfg", "no such file"}},
		{name: "negative timeout refused", args: map[string]any{"playbook": "ok.yaml", "timeout": -1},
			failed: true, msg: []string{`parameter "timeout" is -1; it must be between 0 and 10080`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := project(t)
			args := map[string]any{"dir": dir}
			for k, v := range tc.args {
				args[k] = v
			}
			res := call(t, args)
			if got := res["failed"] == true; got != tc.failed {
				t.Fatalf("failed=%v, want %v: %v", got, tc.failed, res["msg"])
			}
			if got := res["failed_playbook"] == true; got != tc.playbook {
				t.Errorf("failed_playbook=%v, want %v", got, tc.playbook)
			}
			msg, _ := res["msg"].(string)
			for _, w := range tc.msg {
				if !strings.Contains(msg, w) {
					t.Errorf("msg lacks %q:\n%s", w, msg)
				}
			}
			if w := strings.Join(strs(res["warnings"]), "\n"); !strings.Contains(w, tc.warning) {
				t.Errorf("warnings %q lack %q", w, tc.warning)
			}
			if b, _ := json.Marshal(res); tc.absent != "" && strings.Contains(string(b), tc.absent) {
				t.Errorf("the result shows %q: %s", tc.absent, b)
			}
			if tc.playbook && len(strs(res["summary"])) < 2 {
				t.Errorf("summary %v", res["summary"])
			}
			if tc.hosts != nil && strings.Join(strs(res["hosts"]), ",") != strings.Join(tc.hosts, ",") {
				t.Errorf("hosts %v, want %v", res["hosts"], tc.hosts)
			}
			cmdline := strings.Join(strs(res["command"]), " ")
			for _, w := range tc.command {
				if !strings.Contains(cmdline, w) {
					t.Errorf("command %q lacks %q", cmdline, w)
				}
			}
			for _, w := range tc.commandNot {
				if strings.Contains(cmdline, w) {
					t.Errorf("command %q has %q", cmdline, w)
				}
			}
			log, _ := res["log"].(string)
			if len(tc.logHas)+len(tc.logHasNot) > 0 {
				b, err := os.ReadFile(log)
				if err != nil {
					t.Fatal(err)
				}
				st, _ := os.Stat(log)
				if st.Mode().Perm() != 0o600 {
					t.Errorf("log mode %v", st.Mode().Perm())
				}
				for _, w := range tc.logHas {
					if !strings.Contains(string(b), w) {
						t.Errorf("log lacks %q", w)
					}
				}
				for _, w := range tc.logHasNot {
					if strings.Contains(string(b), w) {
						t.Errorf("log has %q", w)
					}
				}
			}
			inDir := filepath.Dir(log) == dir
			if tc.dirUntouched {
				if inDir {
					t.Errorf("check mode logged into dir: %s", log)
				}
				for _, n := range []string{"ansible.cfg", "ansible.log", "ansible-playbook-command.sh"} {
					if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
						t.Errorf("check mode wrote %s into dir", n)
					}
				}
				if ld, _ := res["log_dir"].(string); strings.HasPrefix(ld, os.TempDir()) {
					os.RemoveAll(ld)
				}
			} else if log != "" && !inDir {
				t.Errorf("log %s not in dir %s", log, dir)
			}
		})
	}
}

// Another run holding the directory: refused after lock_wait, naming it.
func TestLocked(t *testing.T) {
	dir := project(t)
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	res := call(t, map[string]any{"dir": dir, "playbook": "ok.yaml", "lock_wait": 1})
	msg, _ := res["msg"].(string)
	if res["failed"] != true || !strings.Contains(msg, "dir "+dir+": another run (overcloud_playbook)") || !strings.Contains(msg, "waited 1s") {
		t.Fatalf("%v", res)
	}
	if _, err := os.Lstat(filepath.Join(dir, "ansible.log")); err == nil {
		t.Error("a locked out run started a log")
	}
}

func TestDocumentationMatchesSpec(t *testing.T) {
	if err := module.CheckSidecar(spec, "../../collection/plugins/modules/overcloud_playbook.yml"); err != nil {
		t.Fatal(err)
	}
}

// Every option is validated before anything runs: each bad value the spec
// implies (types, ranges, choices, empty or missing required values) is
// refused naming the option and what it allows.
func TestBoundaries(t *testing.T) {
	moduletest.Boundaries(t, spec, `{"dir": "/tmp/cd"}`)
}

// A run in a working dir's config-download directory takes the working
// dir's lock: while another operation holds it, the run waits lock_wait,
// then fails naming the holder, and writes nothing.
func TestRunTakesTheWorkDirLock(t *testing.T) {
	src := project(t)
	l, err := workdir.New(filepath.Join(t.TempDir(), "overcloud-deploy", "overcloud"), "overcloud")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Ensure(); err != nil {
		t.Fatal(err)
	}
	cd := l.ConfigDownload()
	if err := os.MkdirAll(cd, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"tripleo-ansible-inventory.yaml", "ok.yaml"} {
		b, _ := os.ReadFile(filepath.Join(src, n))
		os.WriteFile(filepath.Join(cd, n), b, 0o600)
	}
	held, err := l.Lock(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	res := moduletest.Call(t, spec, run, map[string]any{"dir": cd, "playbook": "ok.yaml", "become": false, "lock_wait": 1})
	msg, _ := res["msg"].(string)
	if res["failed"] != true || !strings.Contains(msg, fmt.Sprintf("work_dir %s is in use by pid %d", l.Dir, os.Getpid())) {
		t.Errorf("a run while the working dir is locked: %v", res)
	}
	if _, err := os.Lstat(filepath.Join(cd, "ansible.log")); err == nil {
		t.Error("the refused run wrote its log")
	}
	held.Unlock()
	res = moduletest.Call(t, spec, run, map[string]any{"dir": cd, "playbook": "ok.yaml", "become": false, "lock_wait": 1})
	if res["failed"] == true {
		t.Errorf("a run once the lock is free: %v", res["msg"])
	}
}
