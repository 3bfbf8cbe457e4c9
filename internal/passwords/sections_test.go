package passwords

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// Sections returns parameter_defaults as written (a null kept) and
// parameters; a missing file is fs.ErrNotExist.
func TestSections(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content    string
		defaults, params map[string]any
	}{
		{"both", "parameters:\n  AdminPassword: p\nparameter_defaults:\n  AdminPassword: d\n  NovaPassword: null\n",
			map[string]any{"AdminPassword": "d", "NovaPassword": nil}, map[string]any{"AdminPassword": "p"}},
		{"defaults only", "parameter_defaults:\n  AdminPassword: d\n", map[string]any{"AdminPassword": "d"}, nil},
		{"empty", "", map[string]any{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name+".yaml")
			if err := os.WriteFile(p, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			d, pr, err := Sections(p)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(d, tc.defaults) || !reflect.DeepEqual(pr, tc.params) {
				t.Errorf("defaults %v params %v", d, pr)
			}
		})
	}
	if _, _, err := Sections(filepath.Join(dir, "missing.yaml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
