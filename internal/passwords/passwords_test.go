package passwords

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The passwords file is generated once, mode 0600, and reused: a second
// Ensure keeps every value and writes nothing; a name missing from the file
// is generated alone; a name not asked is dropped (tripleoclient saves
// exactly generate_passwords' result); Plan writes nothing.
func TestEnsureGeneratesOnceAndReuses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "overcloud-passwords.yaml")
	names := []string{"AdminPassword", "MysqlRootPassword", "KeystoneFernetKeys", "CephClusterFSID"}

	p, err := Plan(path, names)
	if err != nil || !p.Changed || len(p.Generated) != 4 {
		t.Fatalf("plan on nothing: %+v %v", p, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("Plan wrote %s", path)
	}

	first, err := Ensure(path, names)
	if err != nil || !first.Changed || len(first.Generated) != 4 {
		t.Fatalf("first: %+v %v", first, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", st.Mode().Perm(), err)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), "parameter_defaults:\n") {
		t.Errorf("not a parameter_defaults environment:\n%s", b)
	}
	if s, _ := first.Values["MysqlRootPassword"].(string); !regexp.MustCompile(`^[0-9A-Za-z]{10}$`).MatchString(s) {
		t.Errorf("MysqlRootPassword %q", s)
	}
	if m, _ := first.Values["KeystoneFernetKeys"].(map[string]any); len(m) != 2 {
		t.Errorf("KeystoneFernetKeys %v", first.Values["KeystoneFernetKeys"])
	}

	again, err := Ensure(path, names)
	if err != nil || again.Changed || len(again.Kept) != 4 || !reflect.DeepEqual(again.Values, first.Values) {
		t.Fatalf("second: %+v %v", again, err)
	}
	if b2, _ := os.ReadFile(path); string(b2) != string(b) {
		t.Errorf("an unchanged file was rewritten")
	}

	// A file laid out otherwise (PyYAML), same values: left alone.
	other := "parameter_defaults:\n    AdminPassword: " + first.Values["AdminPassword"].(string) + "\n"
	os.WriteFile(path, []byte(other), 0o600)
	s, err := Ensure(path, []string{"AdminPassword"})
	if err != nil || s.Changed {
		t.Fatalf("a file of the same passwords: %+v %v", s, err)
	}

	// One name more, one less.
	s, err = Ensure(path, []string{"AdminPassword", "RabbitCookie"})
	if err != nil || !s.Changed || !reflect.DeepEqual(s.Generated, []string{"RabbitCookie"}) ||
		!reflect.DeepEqual(s.Kept, []string{"AdminPassword"}) || s.Values["AdminPassword"] != first.Values["AdminPassword"] {
		t.Fatalf("a missing name: %+v %v", s, err)
	}
	s, err = Ensure(path, []string{"AdminPassword"})
	if err != nil || !reflect.DeepEqual(s.Dropped, []string{"RabbitCookie"}) {
		t.Fatalf("a name not asked: %+v %v", s, err)
	}

	// A loose mode is tightened.
	os.Chmod(path, 0o644)
	if s, err = Ensure(path, []string{"AdminPassword"}); err != nil || !s.Changed {
		t.Fatalf("mode 0644: %+v %v", s, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
}

func TestReadRefusesWhatIsNotAnEnvironment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(path, []byte("- a list\n"), 0o600)
	if _, err := Ensure(path, Names); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "- a list\n" {
		t.Errorf("the bad file was overwritten")
	}
}

// Every name of Names gets a value, no two alike.
func TestGenerateEveryName(t *testing.T) {
	seen := map[string]string{}
	for _, n := range Names {
		v, err := Generate(n)
		if err != nil || v == nil {
			t.Fatalf("%s: %v %v", n, v, err)
		}
		if s, ok := v.(string); ok {
			if o, dup := seen[s]; dup {
				t.Errorf("%s and %s alike", n, o)
			}
			seen[s] = n
		}
	}
	if len(Names) != 59 {
		t.Errorf("%d names; stable/wallaby has 59", len(Names))
	}
}

// A passwords file holding parameters: (instead of, or beside,
// parameter_defaults:) keeps the operator's values: parameters wins, as in
// Heat; when the file is written for a generated password, its parameters
// section stays as it was (comments too) and every parameter_defaults value
// asked stays, even one parameters hides; nothing is dropped unsaid.
func TestParametersAreKept(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, file string
		names      []string
		values     map[string]any // of the names asked
		generated  []string
		dropped    []string
		// sections of the file afterwards (nil: not checked)
		params, defaults map[string]any
		changed          bool
	}{
		{name: "parameters only, a name missing",
			file:  "parameters:\n  # the operator's own\n  AdminPassword: operator-value\n",
			names: []string{"AdminPassword", "RabbitCookie"}, values: map[string]any{"AdminPassword": "operator-value"},
			generated: []string{"RabbitCookie"}, dropped: []string{}, changed: true,
			params: map[string]any{"AdminPassword": "operator-value"}},
		{name: "parameters only, nothing missing",
			file:  "parameters:\n  AdminPassword: operator-value\n",
			names: []string{"AdminPassword"}, values: map[string]any{"AdminPassword": "operator-value"},
			generated: []string{}, dropped: []string{}, changed: false},
		{name: "both, parameters wins",
			file:  "parameter_defaults:\n  AdminPassword: default-value\n  NotAsked: x\nparameters:\n  AdminPassword: operator-value\n  Other: y\n",
			names: []string{"AdminPassword", "RabbitCookie"}, values: map[string]any{"AdminPassword": "operator-value"},
			generated: []string{"RabbitCookie"}, dropped: []string{"NotAsked"}, changed: true,
			params: map[string]any{"AdminPassword": "operator-value", "Other": "y"}},
		{name: "a null in parameters gives no value",
			file:  "parameters:\n  AdminPassword: null\n",
			names: []string{"AdminPassword"}, generated: []string{"AdminPassword"}, dropped: []string{}, changed: true,
			params: map[string]any{"AdminPassword": nil}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".yaml")
			os.WriteFile(path, []byte(c.file), 0o600)
			s, err := Ensure(path, c.names)
			if err != nil {
				t.Fatal(err)
			}
			for n, v := range c.values {
				if s.Values[n] != v {
					t.Errorf("%s = %v, want %v", n, s.Values[n], v)
				}
			}
			if !reflect.DeepEqual(s.Generated, c.generated) || !reflect.DeepEqual(s.Dropped, c.dropped) || s.Changed != c.changed {
				t.Errorf("generated %v dropped %v changed %v", s.Generated, s.Dropped, s.Changed)
			}
			b, _ := os.ReadFile(path)
			if !c.changed && string(b) != c.file {
				t.Errorf("an unchanged file was rewritten:\n%s", b)
			}
			if c.params != nil {
				if !strings.Contains(string(b), strings.SplitN(c.file, "parameters:", 2)[1]) && !strings.HasPrefix(c.file, "parameter_defaults") {
					t.Errorf("the parameters section changed:\n%s", b)
				}
				var doc struct {
					P  map[string]any `yaml:"parameters"`
					PD map[string]any `yaml:"parameter_defaults"`
				}
				if err := yaml.Unmarshal(b, &doc); err != nil || !reflect.DeepEqual(doc.P, c.params) {
					t.Errorf("parameters %v, want %v (%v)\n%s", doc.P, c.params, err, b)
				}
				for _, g := range c.generated {
					if doc.PD[g] == nil || doc.PD[g] != s.Values[g] {
						t.Errorf("generated %s not in parameter_defaults:\n%s", g, b)
					}
				}
				if c.name == "both, parameters wins" && (doc.PD["AdminPassword"] != "default-value" || doc.PD["NotAsked"] != nil) {
					t.Errorf("parameter_defaults %v", doc.PD)
				}
				if strings.Contains(c.file, "# the operator's own") && !strings.Contains(string(b), "# the operator's own") {
					t.Errorf("the comment went:\n%s", b)
				}
			}
			// What the file gives Heat, and the export, is what was kept.
			if got, err := Read(path); err != nil || (c.values["AdminPassword"] != nil && got["AdminPassword"] != c.values["AdminPassword"]) {
				t.Errorf("Read: %v %v", got, err)
			}
			again, err := Ensure(path, c.names)
			if err != nil || again.Changed || len(again.Generated) != 0 || !reflect.DeepEqual(again.Values, s.Values) {
				t.Errorf("again: %+v %v", again, err)
			}
		})
	}
}

// A refused passwords file is named, with the line and the key, and no
// part of any value: the values are secrets. It is left as it was.
func TestErrorsShowNoValue(t *testing.T) {
	const secret = "s3cr3t"
	dir := t.TempDir()
	for i, c := range []struct{ file, want string }{
		{"parameter_defaults: s3cr3t-value\n", "line 1: parameter_defaults is a string, not a mapping"},
		{"parameters: [s3cr3t-value]\n", "line 1: parameters is a list, not a mapping"},
		{"- s3cr3t-value\n", "line 1: the file is a list, not a mapping"},
		{"s3cr3t-value\n", "line 1: the file is a string, not a mapping"},
		{"parameter_defaults:\n  AdminPassword: 's3cr3t-value\n", "it is not valid YAML (line 2"},
		{"parameter_defaults:\n  AdminPassword: \"s3cr3t-value\n", "it is not valid YAML"},
		{"parameter_defaults:\n  AdminPassword: s3cr3t: value\n", "it is not valid YAML (line 2"},
		{"parameter_defaults:\n  AdminPassword: !!int s3cr3t-value\n", "line 2: parameter_defaults.AdminPassword: "},
		{"parameter_defaults:\n  AdminPassword: !!binary s3cr3t-value\n", "line 2: parameter_defaults.AdminPassword: "},
		{"parameter_defaults:\n  AdminPassword: *s3cr3t\n", "it is not valid YAML"},
		{"parameter_defaults:\n  AdminPassword: a\n  AdminPassword: s3cr3t-value\n", "line 3: parameter_defaults.AdminPassword is there twice (line 2 too)"},
		{"parameter_defaults:\n  ? [s3cr3t-value]\n  : x\n", "line 2: a key of parameter_defaults is a list"},
		{"parameter_defaults: {AdminPassword: s3cr3t-value\n", "did not find expected ',' or '}'"},
	} {
		path := filepath.Join(dir, fmt.Sprintf("p%d.yaml", i))
		os.WriteFile(path, []byte(c.file), 0o600)
		_, err := Ensure(path, []string{"AdminPassword"})
		if err == nil {
			t.Errorf("%q accepted", c.file)
			continue
		}
		t.Log(err)
		if strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v (want %q, and no value)", c.file, err, c.want)
		}
		if b, _ := os.ReadFile(path); string(b) != c.file {
			t.Errorf("%q: the refused file changed", c.file)
		}
	}
}

// A passwords file that is a FIFO, a device (through a symlink) or huge is
// refused by its type or size, never read.
func TestPasswordsFileIsBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.yaml")
	os.Symlink("/dev/zero", zero)
	huge := filepath.Join(dir, "huge.yaml")
	os.WriteFile(huge, nil, 0o600)
	os.Truncate(huge, 1<<30)
	for path, want := range map[string]string{fifo: "is a FIFO", zero: "is a symbolic link", huge: "over the limit"} {
		done := make(chan error, 1)
		go func() { _, err := Ensure(path, []string{"AdminPassword"}); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want %q", path, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still reading after 10s", path)
		}
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v", err)
	}
}
