package module

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// CheckSidecar compares a module's sidecar documentation (plugins/modules/NAME.yml)
// with its spec, so the docs stay true to the code: the same options, types,
// required flags, defaults, choices and no_log.
func CheckSidecar(spec *Spec, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading the module documentation: %w", err)
	}
	if b, err = withFragments(path, b); err != nil {
		return err
	}
	var doc struct {
		Documentation struct {
			Module  string `yaml:"module"`
			Options map[string]struct {
				Type     string   `yaml:"type"`
				Required bool     `yaml:"required"`
				Default  any      `yaml:"default"`
				Choices  []string `yaml:"choices"`
				NoLog    bool     `yaml:"no_log"`
				Elements string   `yaml:"elements"`
			} `yaml:"options"`
		} `yaml:"DOCUMENTATION"`
		Examples string         `yaml:"EXAMPLES"`
		Return   map[string]any `yaml:"RETURN"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var problems []string
	if doc.Documentation.Module != spec.Name {
		problems = append(problems, fmt.Sprintf("module is %q, want %q", doc.Documentation.Module, spec.Name))
	}
	if strings.TrimSpace(doc.Examples) == "" || len(doc.Return) == 0 {
		problems = append(problems, "EXAMPLES or RETURN is empty")
	}
	seen := map[string]bool{}
	for _, p := range spec.Params {
		seen[p.Name] = true
		o, ok := doc.Documentation.Options[p.Name]
		if !ok {
			problems = append(problems, fmt.Sprintf("option %s is not documented", p.Name))
			continue
		}
		typ := string(p.Type)
		if typ == "" {
			typ = "str"
		}
		if o.Type != typ {
			problems = append(problems, fmt.Sprintf("option %s: documented type %q, code %q", p.Name, o.Type, typ))
		}
		if o.Required != p.Required {
			problems = append(problems, fmt.Sprintf("option %s: documented required=%v, code %v", p.Name, o.Required, p.Required))
		}
		if fmt.Sprint(o.Default) != fmt.Sprint(p.Default) && !(o.Default == nil && p.Default == nil) {
			problems = append(problems, fmt.Sprintf("option %s: documented default %v, code %v", p.Name, o.Default, p.Default))
		}
		a, c := append([]string(nil), o.Choices...), append([]string(nil), p.Choices...)
		sort.Strings(a)
		sort.Strings(c)
		if strings.Join(a, ",") != strings.Join(c, ",") {
			problems = append(problems, fmt.Sprintf("option %s: documented choices %v, code %v", p.Name, o.Choices, p.Choices))
		}
	}
	for name := range doc.Documentation.Options {
		if !seen[name] {
			problems = append(problems, fmt.Sprintf("option %s is documented but the module does not take it", name))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("%s disagrees with the module: %s", path, strings.Join(problems, "; "))
	}
	return nil
}
