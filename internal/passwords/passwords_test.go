package passwords

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
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
