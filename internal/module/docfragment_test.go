package module

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A sidecar's options include those of the doc fragments it extends, with
// its own keys winning, as Ansible merges them.
func TestCheckSidecarWithFragments(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "modules"), 0o700)
	os.MkdirAll(filepath.Join(root, "doc_fragments"), 0o700)
	os.WriteFile(filepath.Join(root, "doc_fragments", "heat.py"), []byte(`
class ModuleDocFragment(object):
    DOCUMENTATION = r'''
options:
  heat_dir:
    description: where
    type: path
'''
    API = r'''
options:
  endpoint:
    description: url
    type: str
'''
`), 0o600)
	spec := &Spec{Name: "m", Params: []Param{{Name: "heat_dir", Type: Path, Required: true}, {Name: "endpoint"}}}
	sidecar := func(body string) string {
		p := filepath.Join(root, "modules", "m.yml")
		os.WriteFile(p, []byte("DOCUMENTATION:\n  module: m\n"+body+"EXAMPLES: x\nRETURN: {a: {description: b, returned: always, type: str}}\n"), 0o600)
		return p
	}
	tests := []struct {
		name, body, want string
	}{
		{"both fragments, required from the module", `  options:
    heat_dir: {required: true}
  extends_documentation_fragment: [ephemeral.heat.heat, ephemeral.heat.heat.api]
`, ""},
		{"fragment without the module's override", `  extends_documentation_fragment: [ephemeral.heat.heat, ephemeral.heat.heat.api]
`, "option heat_dir: documented required=false"},
		{"a fragment missing", `  options:
    heat_dir: {required: true}
  extends_documentation_fragment: ephemeral.heat.heat
`, "option endpoint is not documented"},
		{"unknown attribute", `  extends_documentation_fragment: [ephemeral.heat.heat.nope]
`, "has no NOPE"},
		{"foreign fragment", `  extends_documentation_fragment: [ansible.builtin.files]
`, "not one of this collection"},
	}
	for _, tc := range tests {
		err := CheckSidecar(spec, sidecar(tc.body))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
