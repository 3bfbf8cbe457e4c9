package ansiblerun

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// TestParse reads what ansible-core 2.14's default callback prints.
func TestParse(t *testing.T) {
	for _, c := range []struct {
		name     string
		lines    []string
		failures []Failure
		recap    map[string]Recap
		errors   int
	}{
		{
			name: "a failed task, then the recap",
			lines: []string{
				"PLAY [Overcloud deploy step tasks for 1] ****",
				"TASK [Write the step 1 marker] ****",
				`fatal: [overcloud-controller-0]: FAILED! => {"changed": false, "msg": "Destination directory /nope does not exist"}`,
				"PLAY RECAP ****",
				"overcloud-controller-0     : ok=3    changed=1    unreachable=0    failed=1    skipped=2    rescued=0    ignored=0",
			},
			failures: []Failure{{Host: "overcloud-controller-0", Task: "Write the step 1 marker", Msg: "Destination directory /nope does not exist"}},
			recap:    map[string]Recap{"overcloud-controller-0": {OK: 3, Changed: 1, Failed: 1, Skipped: 2}},
		},
		{
			name: "a command: msg, rc and the end of stderr; a delegated host",
			lines: []string{
				"TASK [tripleo_nova : Get nova-compute service ID] ***",
				`fatal: [compute-1 -> undercloud]: FAILED! => {"changed": true, "cmd": ["false"], "msg": "non-zero return code", "rc": 3, "stderr": "a\nb\nc\nd", "stdout": ""}`,
				"PLAY RECAP ***",
				"compute-1 : ok=0 changed=0 unreachable=0 failed=1 skipped=0 rescued=0 ignored=0",
			},
			failures: []Failure{{Host: "compute-1", Task: "tripleo_nova : Get nova-compute service ID", Msg: "non-zero return code; rc 3; stderr: b / c / d"}},
			recap:    map[string]Recap{"compute-1": {Failed: 1}},
		},
		{
			name: "ignored and rescued failures are not failures; an item and an unreachable host are",
			lines: []string{
				"TASK [ignored] ***",
				`fatal: [a]: FAILED! => {"msg": "ignored"}`,
				"...ignoring",
				"TASK [rescued] ***",
				`fatal: [b]: FAILED! => {"msg": "rescued"}`,
				"TASK [loop] ***",
				`failed: [a] (item=x) => {"ansible_loop_var": "item", "item": "x", "msg": "item x broke"}`,
				"TASK [Gathering Facts] ***",
				`fatal: [c]: UNREACHABLE! => {"changed": false, "msg": "Failed to connect to the host via ssh: refused", "unreachable": true}`,
				"PLAY RECAP ***",
				"a : ok=1 changed=0 unreachable=0 failed=1 skipped=0 rescued=0 ignored=1",
				"b : ok=1 changed=0 unreachable=0 failed=0 skipped=0 rescued=1 ignored=0",
				"c : ok=0 changed=0 unreachable=1 failed=0 skipped=0 rescued=0 ignored=0",
			},
			failures: []Failure{{Host: "a", Task: "loop", Item: "x", Msg: "item x broke"},
				{Host: "c", Task: "Gathering Facts", Unreachable: true, Msg: "Failed to connect to the host via ssh: refused"}},
			recap: map[string]Recap{"a": {OK: 1, Failed: 1, Ignored: 1}, "b": {OK: 1, Rescued: 1}, "c": {Unreachable: 1}},
		},
		{
			name:     "an error before any task",
			lines:    []string{"ERROR! the playbook: /x/deploy.yaml could not be found", ""},
			failures: []Failure{},
			recap:    map[string]Recap{},
			errors:   1,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newParser()
			if err := p.read(strings.NewReader(strings.Join(c.lines, "\n") + "\n")); err != nil {
				t.Fatal(err)
			}
			res := &Result{Failures: []Failure{}}
			p.finish(res)
			if !reflect.DeepEqual(res.Failures, c.failures) {
				t.Errorf("failures\n got %+v\nwant %+v", res.Failures, c.failures)
			}
			if !reflect.DeepEqual(res.Recap, c.recap) {
				t.Errorf("recap\n got %+v\nwant %+v", res.Recap, c.recap)
			}
			if len(res.Errors) != c.errors {
				t.Errorf("errors %q, want %d", res.Errors, c.errors)
			}
		})
	}
}

// A long result line is cut, not fatal, and the next lines are read.
func TestParseLongLine(t *testing.T) {
	p := newParser()
	long := `fatal: [h]: FAILED! => {"msg": "` + strings.Repeat("x", 3*maxLine) + `"}`
	if err := p.read(strings.NewReader("TASK [t] ***\n" + long + "\nPLAY RECAP ***\nh : ok=0 changed=0 unreachable=0 failed=1\n")); err != nil {
		t.Fatal(err)
	}
	res := &Result{}
	p.finish(res)
	if len(res.Failures) != 1 || len([]rune(res.Failures[0].Msg)) > maxMsg || res.Recap["h"].Failed != 1 {
		t.Fatalf("%+v", res)
	}
}

// project writes a config-download-like directory: an inventory of hosts
// run locally and a playbook whose tasks say what ran.
func project(t *testing.T, hosts ...string) (dir, marks string) {
	t.Helper()
	if _, err := exec.LookPath("ansible-playbook"); err != nil {
		t.Fatal("ansible-playbook is needed: apt-get install ansible-core (make deps)")
	}
	dir = filepath.Join(t.TempDir(), "config-download", "overcloud")
	marks = filepath.Join(t.TempDir(), "marks")
	os.MkdirAll(dir, 0o700)
	os.MkdirAll(marks, 0o700)
	inv := "all:\n  hosts:\n"
	for _, h := range hosts {
		inv += "    " + h + ":\n      ansible_connection: local\n      ansible_python_interpreter: /usr/bin/python3\n"
	}
	book := `- hosts: all
  gather_facts: false
  become: false
  tasks:
    - name: Mark the step
      ansible.builtin.copy:
        dest: "` + marks + `/{{ inventory_hostname }}.step"
        content: "step\n"
        mode: "0600"
      tags: [step]
    - name: Mark the other
      ansible.builtin.copy:
        dest: "` + marks + `/{{ inventory_hostname }}.other"
        content: "other\n"
        mode: "0600"
      tags: [other]
    - name: Break on the host told to
      ansible.builtin.command: sh -c 'echo first >&2; echo "it broke on {{ inventory_hostname }}" >&2; exit 3'
      when: inventory_hostname == (break_on | default(''))
      changed_when: false
      tags: [step]
`
	if err := os.WriteFile(filepath.Join(dir, configdownload.InventoryFile), []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "deploy_steps_playbook.yaml"), []byte(book), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, marks
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	sa, err := os.Lstat(a)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := os.Lstat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(sa, sb)
}

func marked(t *testing.T, marks string) []string {
	t.Helper()
	ents, _ := os.ReadDir(marks)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
		os.Remove(filepath.Join(marks, e.Name()))
	}
	return out
}

// TestRunAgainstAnsible runs real ansible-playbook: the log, the
// configuration and the command are where TripleO keeps them, a failure is
// summed up with its host, task and message, and --limit, --tags,
// --skip-tags and --check reach the playbook.
func TestRunAgainstAnsible(t *testing.T) {
	dir, marks := project(t, "node-0", "node-1")
	now := time.Date(2024, 5, 6, 7, 8, 9, 0, time.Local)
	o := Options{Dir: dir, Playbook: "deploy_steps_playbook.yaml", Now: func() time.Time { return now },
		ExtraVars: map[string]any{"break_on": "node-1"}}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Failed || res.RC != 2 || len(res.Failures) != 1 {
		t.Fatalf("a failing run: %+v", res)
	}
	f := res.Failures[0]
	if f.Host != "node-1" || f.Task != "Break on the host told to" || !strings.Contains(f.Msg, "rc 3") || !strings.Contains(f.Msg, "it broke on node-1") {
		t.Errorf("failure %+v", f)
	}
	// The run's own log, named by its UTC start, and ansible.log a hard
	// link to it.
	firstLog := filepath.Join(dir, "ansible.log-"+now.UTC().Format(LogRotationLayout))
	if res.Log != firstLog {
		t.Errorf("log %s, want %s", res.Log, firstLog)
	}
	if !sameFile(t, res.Log, filepath.Join(dir, "ansible.log")) {
		t.Errorf("ansible.log is not a link to %s", res.Log)
	}
	joined := strings.Join(res.Summary, "\n")
	for _, want := range []string{"deploy_steps_playbook.yaml failed", "on 1 host(s)", "log: " + firstLog,
		`node-1: task "Break on the host told to" failed`, "it broke on node-1", filepath.Join(dir, "ansible-playbook-command.sh")} {
		if !strings.Contains(joined, want) {
			t.Errorf("summary lacks %q:\n%s", want, joined)
		}
	}
	if len(joined) > 1500 {
		t.Errorf("summary of %d bytes", len(joined))
	}
	log, err := os.ReadFile(res.Log)
	if err != nil || !strings.Contains(string(log), "TASK [Break on the host told to]") || !strings.Contains(string(log), "it broke on node-1") {
		t.Fatalf("the log %s does not hold the run: %v\n%s", res.Log, err, log)
	}
	for _, f := range []string{res.Log, filepath.Join(dir, "ansible.cfg")} {
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, st.Mode().Perm(), err)
		}
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, "ansible.cfg"))
	for _, want := range []string{"log_path = " + res.Log, "control_path_dir = " + filepath.Join(dir, "ansible-ssh"),
		"gather_subset = !all,min", "roles_path = " + dir + "/roles:"} {
		if !strings.Contains(string(cfg), want) {
			t.Errorf("ansible.cfg lacks %q", want)
		}
	}
	cmdFile, _ := os.ReadFile(res.CommandFile)
	if !strings.Contains(string(cmdFile), "export ANSIBLE_LOG_PATH="+res.Log+"\n") || strings.Contains(string(cmdFile), markerVar) {
		t.Errorf("command file:\n%s", cmdFile)
	}
	if got := marked(t, marks); !reflect.DeepEqual(got, []string{"node-0.other", "node-0.step", "node-1.other", "node-1.step"}) {
		t.Errorf("marks %v", got)
	}

	// The command file runs the same thing again by hand.
	out, err := exec.Command("bash", res.CommandFile, "--list-hosts").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "node-0") {
		t.Errorf("%s --list-hosts: %v\n%s", res.CommandFile, err, out)
	}

	// --limit and --tags reach it; the earlier log is kept by its time.
	o.Limit, o.Tags = "node-0", []string{"step"}
	if res, err = Run(context.Background(), o); err != nil || res.Failed {
		t.Fatalf("limited run: %+v %v", res, err)
	}
	if got := marked(t, marks); !reflect.DeepEqual(got, []string{"node-0.step"}) {
		t.Errorf("--limit node-0 --tags step marked %v", got)
	}
	if !reflect.DeepEqual(res.Hosts(), []string{"node-0"}) {
		t.Errorf("recap hosts %v", res.Hosts())
	}
	// A second run at the same second: a log of its own, ansible.log
	// moved to it, the first run's log as it was.
	if want := firstLog + ".1"; res.Log != want || !sameFile(t, res.Log, filepath.Join(dir, "ansible.log")) {
		t.Errorf("second log %s, want %s linked from ansible.log", res.Log, want)
	}
	// (the command file run by hand above appended to it, as it names it)
	if again, _ := os.ReadFile(firstLog); !strings.HasPrefix(string(again), string(log)) || !strings.Contains(string(again), "play #1") {
		t.Errorf("the first run's log lost what it held")
	}
	// --skip-tags, then --check, which changes nothing.
	o.Limit, o.Tags, o.SkipTags = "", nil, []string{"step"}
	if res, err = Run(context.Background(), o); err != nil || res.Failed {
		t.Fatalf("--skip-tags run: %+v %v", res, err)
	}
	if got := marked(t, marks); !reflect.DeepEqual(got, []string{"node-0.other", "node-1.other"}) {
		t.Errorf("--skip-tags step marked %v", got)
	}
	o.SkipTags, o.Check = nil, true
	// (the breaking command is skipped in check mode: nothing fails)
	if res, err = Run(context.Background(), o); err != nil || res.Failed || res.Recap["node-1"].Skipped != 1 {
		t.Fatalf("--check run: %+v %v", res, err)
	}
	if got := marked(t, marks); len(got) != 0 {
		t.Errorf("--check wrote %v", got)
	}
	if !strings.Contains(strings.Join(res.Command, " "), "--check") {
		t.Errorf("command %v", res.Command)
	}
}

// An unreachable node fails a run unless IgnoreUnreachable (tripleoclient's
// node delete); a missing playbook is an error before anything runs.
func TestRunUnreachable(t *testing.T) {
	dir, _ := project(t, "node-0")
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	inv := "all:\n  hosts:\n    gone:\n      ansible_host: 127.0.0.1\n      ansible_port: " + strconv.Itoa(port) + "\n      ansible_user: nobody\n"
	os.WriteFile(filepath.Join(dir, configdownload.InventoryFile), []byte(inv), 0o600)
	os.WriteFile(filepath.Join(dir, "scale_playbook.yaml"), []byte("- hosts: all\n  gather_facts: true\n  tasks:\n    - ansible.builtin.ping:\n"), 0o600)
	o := Options{Dir: dir, Playbook: "scale_playbook.yaml", Env: []string{"ANSIBLE_SSH_RETRIES=0", "ANSIBLE_TIMEOUT=5"}}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Failed || res.RC != 4 || len(res.Failures) != 1 || !res.Failures[0].Unreachable {
		t.Fatalf("unreachable: %+v", res)
	}
	o.IgnoreUnreachable = true
	if res, err = Run(context.Background(), o); err != nil || res.Failed || res.RC != 4 {
		t.Fatalf("ignored unreachable: %+v %v", res, err)
	}
	if _, err := Run(context.Background(), Options{Dir: dir, Playbook: "nope.yaml"}); err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("missing playbook: %v", err)
	}
}

// TestParseSeen: warnings wrapped at 80 columns are read whole, an
// "ERROR:" (an ansible.cfg ansible cannot read) is an error, and plays,
// plays of no host and tasks (fact gathering left out) are counted.
func TestParseSeen(t *testing.T) {
	p := newParser()
	out := strings.Join([]string{
		"ERROR: Error reading config file (/x/my.cfg): File contains no section headers.",
		"file: '<string>', line: 1",
		"",
		"[WARNING]: provided hosts list is empty, only localhost is available. Note that",
		"the implicit localhost does not match 'all'",
		"[WARNING]: Could not match supplied host pattern, ignoring: ghost",
		"",
		"PLAY [ghost] ****",
		"skipping: no hosts matched",
		"PLAY [all] ****",
		"TASK [Gathering Facts] ****",
		"ok: [a]",
		"TASK [one] ****",
		"ok: [a]",
		"RUNNING HANDLER [restart] ****",
		"changed: [a]",
		"PLAY RECAP ****",
		"a : ok=3 changed=1 unreachable=0 failed=0 skipped=0 rescued=0 ignored=0",
	}, "\n")
	if err := p.read(strings.NewReader(out)); err != nil {
		t.Fatal(err)
	}
	res := &Result{}
	p.finish(res)
	if len(res.Errors) != 1 || res.Errors[0] != "Error reading config file (/x/my.cfg): File contains no section headers.\nfile: '<string>', line: 1" {
		t.Errorf("errors %q", res.Errors)
	}
	if want := []string{"provided hosts list is empty, only localhost is available. Note that the implicit localhost does not match 'all'",
		"Could not match supplied host pattern, ignoring: ghost"}; !reflect.DeepEqual(res.Warnings, want) {
		t.Errorf("warnings %q", res.Warnings)
	}
	if want := (seen{plays: 2, noHostPlays: 1, tasks: 2, recap: true}); res.seen != want {
		t.Errorf("seen %+v, want %+v", res.seen, want)
	}
	if len(res.tail) != maxTail || res.tail[maxTail-1] != "a : ok=3 changed=1 unreachable=0 failed=0 skipped=0 rescued=0 ignored=0" {
		t.Errorf("tail %q", res.tail)
	}
}
