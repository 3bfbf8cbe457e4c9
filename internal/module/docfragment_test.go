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
		os.WriteFile(p, []byte("DOCUMENTATION:\n  module: m\n"+testAttributes+body+"EXAMPLES: x\nRETURN: {a: {description: b, returned: always, type: str}}\n"), 0o600)
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

// testAttributes is a module's attributes block, complete.
const testAttributes = `  attributes:
    check_mode: {description: c, support: full}
    diff_mode: {description: d, support: none}
    platform: {description: p, support: full, platforms: posix}
`

// attributesFragment is a fragment like the collection's attributes.py.
const attributesFragment = `
class ModuleDocFragment(object):
    DOCUMENTATION = r'''
attributes:
  check_mode:
    description: c
  diff_mode:
    description: d
  platform:
    description: p
    support: full
    platforms: posix
'''
    READ_ONLY = r'''
attributes:
  check_mode:
    support: full
    details: reads
  diff_mode:
    support: N/A
notes:
  - It reads.
'''
`

// A module documents check_mode, diff_mode and platform, each with a
// description and a support level the schema knows (partial says what is
// left out in details), completed by the attributes fragments it extends
// as Ansible merges them; its own text uses only markup ansible-core 2.14
// renders.
func TestCheckSidecarAttributes(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "modules"), 0o700)
	os.MkdirAll(filepath.Join(root, "doc_fragments"), 0o700)
	os.WriteFile(filepath.Join(root, "doc_fragments", "attributes.py"), []byte(attributesFragment), 0o600)
	spec := &Spec{Name: "m", Params: []Param{{Name: "name"}}}
	sidecar := func(doc, ret string) string {
		p := filepath.Join(root, "modules", "m.yml")
		os.WriteFile(p, []byte("DOCUMENTATION:\n  module: m\n  description: [Does m.]\n  options:\n    name: {description: a name, type: str}\n"+
			doc+"EXAMPLES: x\nRETURN:\n  a: {description: "+ret+", returned: always, type: str}\n"), 0o600)
		return p
	}
	const base = "  extends_documentation_fragment: ephemeral.heat.attributes\n"
	const own = `  attributes:
    check_mode: {support: full}
    diff_mode: {support: partial, details: [only some]}
`
	tests := []struct {
		name, doc, ret string
		want           []string // in the error; none: no error
	}{
		{"inline, complete", testAttributes, "b", nil},
		{"the fragment's descriptions and platform, the module's support", own + base, "b", nil},
		{"the read-only fragment", "  extends_documentation_fragment: [ephemeral.heat.attributes, ephemeral.heat.attributes.read_only]\n", "b", nil},
		{"no attributes", "", "b", []string{"attributes are missing"}},
		{"the fragment without the module's support", base, "b",
			[]string{"attributes.check_mode lacks support", "attributes.diff_mode lacks support"}},
		{"one missing", `  attributes:
    check_mode: {description: c, support: full}
    platform: {description: p, support: full, platforms: posix}
`, "b", []string{"attributes.diff_mode is missing"}},
		{"partial without details", strings.Replace(own, ", details: [only some]", "", 1) + base, "b",
			[]string{"attributes.diff_mode: support partial needs details"}},
		{"an unknown support level", strings.Replace(own, "support: full", "support: yes", 1) + base, "b",
			[]string{"attributes.check_mode: support yes is not one of"}},
		{"an unknown key", strings.Replace(own, "support: full", "support: full, supports: full", 1) + base, "b",
			[]string{`attributes.check_mode has an unknown key "supports"`}},
		{"platform without platforms", strings.Replace(testAttributes, ", platforms: posix", "", 1), "b",
			[]string{"attributes.platform lacks platforms"}},
		{"markup 2.14 prints raw", testAttributes + "  notes: ['Set O(name) to V(x), or E(HOME).']\n", "as RV(a) says", []string{
			"DOCUMENTATION.notes[0] uses markup ansible-core 2.14 prints raw: O(name) V(x) E(HOME)",
			"RETURN.a.description uses markup ansible-core 2.14 prints raw: RV(a)"}},
		{"markup 2.14 renders", testAttributes + "  notes: ['Set C(name) (see M(ansible.builtin.copy)), I(x), B(y); NO(t) or TOP(s).']\n", "b", nil},
	}
	for _, tc := range tests {
		err := CheckSidecar(spec, sidecar(tc.doc, tc.ret))
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want %q", tc.name, err, w)
			}
		}
	}
}

// CheckFragment holds a doc fragment file to what ansible-core accepts
// of each section, and to markup 2.14 renders.
func TestCheckFragment(t *testing.T) {
	section := func(name, yaml string) string {
		return "    " + name + " = r'''\n" + yaml + "'''\n"
	}
	tests := []struct {
		name, src string
		want      []string
	}{
		{"the attributes fragment", attributesFragment, nil},
		{"options and notes", "class ModuleDocFragment(object):\n" + section("DOCUMENTATION", "options:\n  x: {description: C(x), type: str}\nnotes: [See C(x).]\n"), nil},
		{"no section", "class ModuleDocFragment(object):\n    pass\n", []string{"has no DOCUMENTATION"}},
		{"neither options nor attributes", "class ModuleDocFragment(object):\n" + section("API", "notes: [a]\n"), []string{"API has neither options nor attributes"}},
		{"markup 2.14 prints raw", "class ModuleDocFragment(object):\n" + section("DOCUMENTATION", "options:\n  x: {description: Not with O(y)., type: str}\nnotes: [V(a) or P(b#c)]\n"), []string{
			"DOCUMENTATION.options.x.description uses markup ansible-core 2.14 prints raw: O(y)",
			"DOCUMENTATION.notes[0] uses markup ansible-core 2.14 prints raw: V(a) P(b#c)"}},
		{"a bad attribute", "class ModuleDocFragment(object):\n" + section("DOCUMENTATION", "attributes:\n  check_mode: {description: c, support: maybe}\n"),
			[]string{"DOCUMENTATION.attributes.check_mode: support maybe is not one of"}},
		{"an option without description", "class ModuleDocFragment(object):\n" + section("DOCUMENTATION", "options:\n  x: {type: str}\n"),
			[]string{"DOCUMENTATION.options.x lacks description"}},
	}
	for _, tc := range tests {
		p := filepath.Join(t.TempDir(), "f.py")
		os.WriteFile(p, []byte(tc.src), 0o600)
		err := CheckFragment(p)
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want %q", tc.name, err, w)
			}
		}
	}
}
