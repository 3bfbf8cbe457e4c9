package robustness

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
)

// counted tallies the cases run, for the closing check of the suite's size.
var counted struct{ hand, generated atomic.Int64 }

// TestHandCases: the faults of the list, and paths, special files,
// encodings and sizes.
func TestHandCases(t *testing.T) {
	start := time.Now()
	for _, c := range handCases() {
		t.Run(c.name, func(t *testing.T) {
			counted.hand.Add(1)
			r := c.check(t)
			t.Logf("%s in %s, %d MiB: %s", c.module, r.elapsed.Round(time.Millisecond), r.rss>>20, truncate(r.msg(), 300))
		})
	}
	t.Logf("%d hand cases in %s", counted.hand.Load(), time.Since(start).Round(time.Second))
}

// bases are valid arguments of each module, on top of which one bad value
// is given (paths in the sandbox; validation refuses before they are used).
func bases(s *sandbox) map[string]map[string]any {
	return map[string]map[string]any{
		"ephemeral_heat_launch": {"heat_dir": s.path("hd")},
		"heat_stack":            {"name": "overcloud", "template": s.path("top.yaml"), "heat_dir": s.path("hd")},
		"heat_db_dump":          {"heat_dir": s.path("hd")},
		"config_download":       {"stack": "overcloud", "dest": s.path("cd"), "heat_dir": s.path("hd")},
		"overcloud_precheck":    {"environment_files": []any{s.path("env.yaml")}},
		"overcloud_playbook":    {"dir": s.path("cd")},
		"overcloud_workdir":     {"work_dir": s.path("wd"), "action": "status"},
	}
}

// TestGeneratedBadInputs: for every option of every module, the bad values
// its --help implies (wrong types, out of range, not a choice, empty or
// missing when required, unknown options), each run through the binary.
func TestGeneratedBadInputs(t *testing.T) {
	start := time.Now()
	probe := newSandbox(t)
	for _, m := range modules {
		help, err := exec.Command(filepath.Join(binDir, m), "--help").Output()
		if err != nil {
			t.Fatalf("%s --help: %v", m, err)
		}
		spec, err := module.SpecFromHelp(m, help)
		if err != nil {
			t.Fatal(err)
		}
		cases := module.BadInputs(spec, bases(probe)[m])
		for _, bi := range cases {
			bi := bi
			t.Run(m+"/"+bi.Name, func(t *testing.T) {
				counted.generated.Add(1)
				c := badCase{name: bi.Name, module: m, want: []string{`"` + bi.Param + `"`, bi.Want},
					setup: func(s *sandbox) (a, string) { return rebase(bi.Args, probe.root, s.root), "" }}
				c.check(t)
			})
		}
	}
	t.Logf("%d generated cases in %s", counted.generated.Load(), time.Since(start).Round(time.Second))
}

// rebase moves the sandbox paths of generated arguments into another sandbox.
func rebase(args map[string]any, from, to string) map[string]any {
	b, _ := json.Marshal(args)
	out := map[string]any{}
	json.Unmarshal([]byte(strings.ReplaceAll(string(b), from, to)), &out)
	return out
}

// TestSuiteSize: the suite covers the cases and 100+ generated bad
// inputs (it runs last in this file's order).
func TestSuiteSize(t *testing.T) {
	if n := counted.hand.Load(); n > 0 && n < 40 {
		t.Errorf("only %d hand cases ran", n)
	}
	if n := counted.generated.Load(); n > 0 && n < 100 {
		t.Errorf("only %d generated cases ran", n)
	}
}

// TestControls: what must work does, and leaves what it did not create as
// it was (no wrong refusals either).
func TestControls(t *testing.T) {
	t.Run("absent dumps the database first, then removes it", func(t *testing.T) {
		s := newSandbox(t)
		hd := heatDir(s, "hd", 0)
		r := runModule(t, s, "ephemeral_heat_launch", a{"heat_dir": hd, "state": "absent"}, "")
		dumped, _ := r.res["dumped"].(string)
		if r.res["failed"] != false || dumped == "" {
			t.Fatalf("absent: %s", r.stdout)
		}
		for _, p := range []string{dumped, dumped + ".sha256", dumped + ".manifest.json"} {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("the dump absent wrote: %v", err)
			}
		}
		if _, err := os.Stat(filepath.Join(hd, "heat.sqlite")); !os.IsNotExist(err) {
			t.Errorf("absent kept the database: %v", err)
		}
	})
	t.Run("absent with dump: false removes without a dump", func(t *testing.T) {
		s := newSandbox(t)
		hd := heatDir(s, "hd", 0)
		r := runModule(t, s, "ephemeral_heat_launch", a{"heat_dir": hd, "state": "absent", "dump": false}, "")
		if r.res["failed"] != false || r.res["dumped"] != nil {
			t.Fatalf("absent: %s", r.stdout)
		}
		if m, _ := filepath.Glob(filepath.Join(hd, "heat-db-*")); len(m) != 0 {
			t.Errorf("dump: false dumped: %v", m)
		}
	})
	t.Run("a dest in a sticky shared directory and in new directories", func(t *testing.T) {
		s := newSandbox(t)
		hd := heatDir(s, "hd", 0)
		shared := s.dir("tmp", 0o777)
		os.Chmod(shared, 0o777|os.ModeSticky)
		for _, dest := range []string{filepath.Join(shared, "x.sql.gz"), filepath.Join(shared, "new", "deeper", "x.sql.gz")} {
			r := runModule(t, s, "heat_db_dump", a{"heat_dir": hd, "dest": dest}, "")
			if r.res["failed"] != false || r.res["path"] != dest {
				t.Fatalf("dump to %s: %s", dest, r.stdout)
			}
		}
		if m := statMode(t, shared); m != 0o777|os.ModeSticky {
			t.Errorf("the shared directory's mode changed to %v", m)
		}
		if m := statMode(t, filepath.Join(shared, "new")); m != 0o700 {
			t.Errorf("a directory the dump created has mode %v, want 0700", m)
		}
		// Again to the same dest: our dump, unchanged database: no change.
		r := runModule(t, s, "heat_db_dump", a{"heat_dir": hd, "dest": filepath.Join(shared, "x.sql.gz")}, "")
		if r.res["failed"] != false || r.res["changed"] != false {
			t.Errorf("the same dump again: %s", r.stdout)
		}
	})
	t.Run("restore of an unverified dump with verify: false", func(t *testing.T) {
		s := newSandbox(t)
		hd := heatDir(s, "hd", 0)
		dump := s.file("loose.sql", "CREATE TABLE stack (id VARCHAR(36) PRIMARY KEY, name VARCHAR(255), action VARCHAR(255), "+
			"status VARCHAR(255), owner_id VARCHAR(36), deleted_at DATETIME);\n", 0o600)
		r := runModule(t, s, "heat_db_dump", a{"heat_dir": hd, "state": "restored", "dest": dump, "verify": false}, "")
		w, _ := json.Marshal(r.res["warnings"])
		if r.res["failed"] != false || !strings.Contains(string(w), "integrity cannot be checked") {
			t.Fatalf("restore with verify: false: %s", r.stdout)
		}
	})
	t.Run("hidden parameter values are masked", func(t *testing.T) {
		s := newSandbox(t)
		top := s.file("top.yaml", "heat_template_version: 2021-04-16\nparameters:\n  AdminPassword: {type: string, hidden: true}\n"+
			"  Visible: {type: string}\nresources: {}\n", 0o644)
		const secret = "s3cr3t-Pa55word-19"
		r := runModule(t, s, "heat_stack", a{"name": "overcloud", "template": top, "digest_only": true,
			"parameters": a{"AdminPassword": secret, "Visible": "shown"}}, "")
		if r.res["failed"] != false || strings.Contains(r.stdout+r.stderr, secret) || !strings.Contains(r.stdout, "shown") {
			t.Fatalf("hidden value in the result: %s", r.stdout)
		}
	})
}
