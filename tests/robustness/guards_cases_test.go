package robustness

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/fakeheat"
)

// The guards of issue 33 (items 5 and 6): a restore under a running Heat,
// one stack-name rule for every module that takes a stack, and secrets in
// no message. Their tests are named so that the suite's usual selection
// (-run 'TestHandCases|TestGeneratedBadInputs|TestControls') runs them.

// TestHandCasesGuards runs guardCases as TestHandCases runs handCases.
func TestHandCasesGuards(t *testing.T) {
	for _, c := range guardCases() {
		t.Run(c.name, func(t *testing.T) {
			counted.hand.Add(1)
			r := c.check(t)
			t.Logf("%s in %s, %d MiB: %s", c.module, r.elapsed.Round(time.Millisecond), r.rss>>20, truncate(r.msg(), 300))
		})
	}
}

// badStackNames are stack names heat_stack refuses, and what the refusal
// says of each besides the parameter's name.
var badStackNames = []struct {
	what, name string
	want       string
}{
	{"with a newline", "over\ncloud", "starts with a letter"},
	{"with a leading dash", "-overcloud", "starts with a letter"},
	{"with a semicolon", "a;touch x", "starts with a letter"},
	{"with a command substitution", "$(id)", "starts with a letter"},
	{"with one later", "a$(id)", "starts with a letter"},
	{"that is not ASCII", "clöud", "starts with a letter"},
	{"that is a number", "123", "starts with a letter"},
	{"of 300 characters", strings.Repeat("a", 300), "300 characters long"},
}

func guardCases() []badCase {
	cases := []badCase{
		// heat_db_dump state: restored under a running Heat: refused, the
		// database left as it is.
		{name: "restore while the heat_dir's Heat runs", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			hd := heatDir(s, "hd", 0)
			runningHeat(s, hd)
			dump := s.file("loose.sql", "CREATE TABLE stack (id VARCHAR(36) PRIMARY KEY, name VARCHAR(255), action VARCHAR(255), "+
				"status VARCHAR(255), owner_id VARCHAR(36), deleted_at DATETIME);\n", 0o600)
			return a{"heat_dir": hd, "state": "restored", "dest": dump, "verify": false}, ""
		}, want: []string{"state: restored refused", "heat_dir", "/hd is running", "pid ", "(sleep ", "ephemeral_heat_launch state: stopped", "kill_heat"}},
		{name: "check-mode restore while the heat_dir's Heat runs", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			hd := heatDir(s, "hd", 0)
			runningHeat(s, hd)
			dump := s.file("loose.sql", "CREATE TABLE stack (id VARCHAR(36) PRIMARY KEY, name VARCHAR(255), action VARCHAR(255), "+
				"status VARCHAR(255), owner_id VARCHAR(36), deleted_at DATETIME);\n", 0o600)
			return a{"heat_dir": hd, "state": "restored", "dest": dump, "verify": false, "_ansible_check_mode": true}, ""
		}, want: []string{"state: restored refused", "/hd is running"}},
	}
	for _, n := range badStackNames {
		n := n
		cases = append(cases,
			badCase{name: "overcloud_workdir stack " + n.what, module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
				return a{"work_dir": s.path("wd"), "stack": n.name, "action": "prepare"}, ""
			}, want: []string{`parameter "stack"`, n.want}},
			badCase{name: "config_download stack " + n.what, module: "config_download", setup: func(s *sandbox) (a, string) {
				return a{"stack": n.name, "dest": s.path("cd"), "endpoint": "http://127.0.0.1:9/v1/admin"}, ""
			}, want: []string{`parameter "stack"`, n.want}},
		)
	}
	return cases
}

// runningHeat records in heat_dir hd a launch whose Heat runs: a live
// `sleep` carrying the launch's tag, as heat-all would (the record of a
// native launch); it is killed when the case ends.
func runningHeat(s *sandbox, hd string) {
	s.t.Helper()
	const id = "0123456789abcdef0123456789abcdef"
	cmd := exec.Command("sleep", "300")
	cmd.Env = append(os.Environ(), proc.Tag(id))
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var info proc.Info
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var err error
		if info, err = proc.Inspect(cmd.Process.Pid); err == nil && len(info.Cmdline) > 0 && info.Cmdline[0] == "sleep" {
			break
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("sleep did not start: %v", err)
		}
	}
	port, err := proc.FreePort()
	if err != nil {
		s.t.Fatal(err)
	}
	d, err := heatdir.At(hd)
	if err != nil {
		s.t.Fatal(err)
	}
	rec := &heatdir.Record{State: heatdir.Running, LaunchID: id, HeatType: "native", BindHost: "127.0.0.1", APIPort: port,
		Endpoint: "http://127.0.0.1:" + strconv.Itoa(port) + "/v1/admin", StartedAt: time.Now().UTC(),
		Process: &proc.Record{PID: info.PID, PGID: info.PGID, StartTicks: info.StartTicks, BootID: proc.BootID(),
			Cmdline: info.Cmdline, Tag: proc.Tag(id)}}
	if err := d.WriteRecord(rec); err != nil {
		s.t.Fatal(err)
	}
}

// hiddenStack is a stack whose AdminPassword and Pin are hidden, as the fake
// Heat shows it.
func hiddenStack(refuse string) fakeheat.Stack {
	return fakeheat.Stack{Name: "overcloud", ID: "5e1f0c2a-0000-4000-8000-000000000001",
		Parameters: map[string]string{"AdminPassword": "******", "Pin": "******", "Visible": "old-value"},
		Template: map[string]any{"heat_template_version": "2021-04-16", "parameters": map[string]any{
			"AdminPassword": map[string]any{"type": "string", "hidden": true},
			"Pin":           map[string]any{"type": "number", "hidden": true},
			"Visible":       map[string]any{"type": "string"}}, "resources": map[string]any{}},
		RefusePreview: refuse}
}

// TestControlsGuards: a secret shows nowhere in what a module prints,
// however the run ends; and what must work does.
func TestControlsGuards(t *testing.T) {
	const secret, pin = "n3w-S3cret-Pa55word", 987654321
	hiddenArgs := func(endpoint string) a {
		return a{"name": "overcloud", "endpoint": endpoint, "existing": true, "_ansible_check_mode": true, "_ansible_diff": true,
			"parameters": a{"AdminPassword": secret, "Pin": pin, "Visible": "shown-value"}}
	}
	leaks := func(r run) []string {
		var out []string
		for _, s := range []string{secret, secret[:7], strconv.Itoa(pin)} {
			if strings.Contains(r.stdout+r.stderr, s) {
				out = append(out, s)
			}
		}
		return out
	}
	t.Run("hidden values with existing: true, check mode and diff", func(t *testing.T) {
		s := newSandbox(t)
		h := fakeheat.Start(t, hiddenStack(""))
		r := runModule(t, s, "heat_stack", hiddenArgs(h.Endpoint), "")
		if r.res["failed"] != false || r.res["changed"] != true {
			t.Fatalf("check mode: %s", r.stdout)
		}
		if l := leaks(r); len(l) > 0 {
			t.Errorf("%q shows: %s", l, r.stdout)
		}
		inv, _ := r.res["invocation"].(map[string]any)
		args, _ := inv["module_args"].(map[string]any)
		params, _ := args["parameters"].(map[string]any)
		if params["AdminPassword"] != "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER" || params["Pin"] != "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER" ||
			params["Visible"] != "shown-value" {
			t.Errorf("module_args parameters: %v", params)
		}
		if !strings.Contains(r.stdout, `"after":"shown-value"`) && !strings.Contains(r.stdout, "shown-value") {
			t.Errorf("the visible parameter's change is not shown: %s", r.stdout)
		}
	})
	t.Run("Heat refuses the update quoting a hidden value", func(t *testing.T) {
		s := newSandbox(t)
		h := fakeheat.Start(t, hiddenStack("Parameter 'AdminPassword' is invalid: '"+secret+"' does not match; given "+secret[:9]+"..."))
		r := runModule(t, s, "heat_stack", hiddenArgs(h.Endpoint), "")
		if r.res["failed"] != true || !strings.Contains(r.msg(), "Heat refuses this update") || !strings.Contains(r.msg(), "is invalid") {
			t.Fatalf("refused update: %s", r.stdout)
		}
		if l := leaks(r); len(l) > 0 {
			t.Errorf("%q shows: %s", l, r.stdout)
		}
	})
	t.Run("a progress_file gets no secret either", func(t *testing.T) {
		s := newSandbox(t)
		h := fakeheat.Start(t, hiddenStack("Parameter 'AdminPassword' is invalid: '"+secret+"'"))
		args := hiddenArgs(h.Endpoint)
		args["progress_file"] = s.path("progress.log")
		r := runModule(t, s, "heat_stack", args, "")
		b, err := os.ReadFile(s.path("progress.log"))
		if r.res["failed"] != true || err != nil || !strings.Contains(string(b), "is invalid") {
			t.Fatalf("progress_file: %v %q; %s", err, b, r.stdout)
		}
		if strings.Contains(string(b), secret[:7]) {
			t.Errorf("the progress file shows the secret: %s", b)
		}
	})
}
