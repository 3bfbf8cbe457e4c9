package module

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var helpSpec = &Spec{
	Name:  "help_module",
	Short: "a module for the --help tests",
	Params: []Param{
		{Name: "name", Required: true, Help: "a name (with parentheses)"},
		{Name: "state", Default: "present", Choices: []string{"present", "absent"}, Help: "the state"},
		{Name: "count", Type: Int, Default: 3, Help: "how many"},
		{Name: "enabled", Type: Bool, Default: false, Help: "on or off"},
		{Name: "dir", Type: Path, Help: "a directory"},
		{Name: "files", Type: List, Elements: Path, Help: "files"},
		{Name: "checks", Type: List, Default: []string{"a", "b"}, Help: "checks"},
		{Name: "vars", Type: Dict, Help: "variables"},
		{Name: "empty", Default: "", Help: "empty by default"},
	},
}

// helpSidecar is helpSpec's documentation as a sidecar file would hold it.
const helpSidecar = `---
DOCUMENTATION:
  module: help_module
  attributes:
    check_mode: {description: c, support: full}
    diff_mode: {description: d, support: none}
    platform: {description: p, support: full, platforms: posix}
  options:
    name: {description: d, type: str, required: true}
    state: {description: d, type: str, default: present, choices: [present, absent]}
    count: {description: d, type: int, default: 3}
    enabled: {description: d, type: bool, default: false}
    dir: {description: d, type: path}
    files: {description: d, type: list, elements: path}
    checks: {description: d, type: list, elements: str, default: [a, b]}
    vars: {description: d, type: dict}
    empty: {description: d, type: str, default: ""}
EXAMPLES: |
  - name: x
RETURN:
  x: {description: x, returned: always, type: str}
`

func helpText(t *testing.T, spec *Spec) []byte {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Run(spec, echo, []string{"--help"}, &out, &errb); code != 0 {
		t.Fatalf("--help exited %d: %s", code, errb.String())
	}
	return out.Bytes()
}

func TestParseHelpReadsUsageBack(t *testing.T) {
	got, err := ParseHelp(helpText(t, helpSpec))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]HelpOption{
		"name":    {Type: "str", Required: true},
		"state":   {Type: "str", Default: "present", HasDefault: true, Choices: []string{"present", "absent"}},
		"count":   {Type: "int", Default: "3", HasDefault: true},
		"enabled": {Type: "bool", Default: "false", HasDefault: true},
		"dir":     {Type: "path"},
		"files":   {Type: "list", Elements: "path"},
		"checks":  {Type: "list", Elements: "str", Default: "a,b", HasDefault: true},
		"vars":    {Type: "dict"},
		"empty":   {Type: "str", Default: "", HasDefault: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseHelp:\n got %+v\nwant %+v", got, want)
	}
}

func TestCheckHelp(t *testing.T) {
	help := helpText(t, helpSpec)
	tests := []struct {
		name    string
		edit    func(string) string // applied to helpSidecar
		wantErr []string
	}{
		{"agree", func(s string) string { return s }, nil},
		{"type", func(s string) string {
			return strings.Replace(s, "count: {description: d, type: int", "count: {description: d, type: str", 1)
		},
			[]string{"option count: --help says type int, the docs str"}},
		{"elements", func(s string) string { return strings.Replace(s, "elements: path", "elements: str", 1) },
			[]string{"option files: --help says a list of path, the docs of str"}},
		{"required", func(s string) string { return strings.Replace(s, "required: true", "required: false", 1) },
			[]string{"option name: --help says required=true, the docs false"}},
		{"default", func(s string) string { return strings.Replace(s, "default: 3", "default: 4", 1) },
			[]string{`option count: --help says default "3", the docs "4"`}},
		{"list default", func(s string) string { return strings.Replace(s, "default: [a, b]", "default: [a]", 1) },
			[]string{`option checks: --help says default "a,b", the docs "a"`}},
		{"default dropped", func(s string) string { return strings.Replace(s, `, default: ""`, "", 1) },
			[]string{`option empty: --help says default "", the docs "(none)"`}},
		{"choices", func(s string) string { return strings.Replace(s, "[present, absent]", "[present, gone]", 1) },
			[]string{"option state: --help says choices [present absent], the docs [present gone]"}},
		{"documented only", func(s string) string {
			return strings.Replace(s, "    vars: {description: d, type: dict}\n", "    vars: {description: d, type: dict}\n    extra: {description: d, type: str}\n", 1)
		}, []string{"option extra is documented but --help lacks --extra"}},
		{"undocumented", func(s string) string { return strings.Replace(s, "    vars: {description: d, type: dict}\n", "", 1) },
			[]string{"--help lists --vars, which the docs do not document"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "help_module.yml")
			if err := os.WriteFile(p, []byte(tc.edit(helpSidecar)), 0o600); err != nil {
				t.Fatal(err)
			}
			err := CheckHelp(help, p)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("no disagreement found")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestParseHelpRefusesMalformed(t *testing.T) {
	for _, text := range []string{
		"no flags section\n",
		"Flags:\n  --name   a name without a type\n",
		"Flags:\n  --name   a name (str) [mandatory]\n",
		"Flags:\n  name   not a flag (str)\n",
		"Flags:\n  --name   x (str)\n  --name   y (str)\n",
	} {
		if _, err := ParseHelp([]byte(text)); err == nil {
			t.Errorf("ParseHelp(%q): no error", text)
		}
	}
}

// TestCheckSidecarFindsDrift: the spec side of the same comparison.
func TestCheckSidecarFindsDrift(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "help_module.yml")
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := CheckSidecar(helpSpec, write(helpSidecar)); err != nil {
		t.Fatalf("agreeing docs: %v", err)
	}
	for edit, want := range map[[2]string]string{
		{"elements: path", "elements: str"}: "option files: documented elements",
		{"dir: {description: d, type: path}", "dir: {description: d, type: path, no_log: true}"}:                    `options.dir has an unknown key "no_log"`,
		{"x: {description: x, returned: always, type: str}", "x: {description: x, type: str}"}:                      "RETURN.x lacks returned",
		{"x: {description: x, returned: always, type: str}", "x: {returned: always, type: str}"}:                    "RETURN.x lacks description",
		{"name: {description: d, type: str", "name: {type: str"}:                                                    "options.name lacks description",
		{"default: [a, b]", "default: [b, a]"}:                                                                      "option checks: documented default b,a, code a,b",
		{"vars: {description: d, type: dict}", "vars: {description: d, type: dict, elements: str}"}:                 "option vars: documents elements but is not a list",
		{"x: {description: x, returned: always, type: str}", "x: {description: x, y, returned: always, type: str}"}: `RETURN.x has an unknown key "y"`,
		{"dir: {description: d, type: path}", "dir: {description: a, b, type: path}"}:                               `options.dir has an unknown key "b"`,
	} {
		err := CheckSidecar(helpSpec, write(strings.Replace(helpSidecar, edit[0], edit[1], 1)))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s -> %s: error %v, want %q", edit[0], edit[1], err, want)
		}
	}
}
