package changelog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// Scan lists what the collection tree at dir holds, with the one-line
// description the changelog gives each: modules (sidecar docs
// plugins/modules/NAME.yml, short_description, and version_added), roles
// (roles/NAME/meta/argument_specs.yml, main's short_description) and
// playbooks (playbooks/NAME.yml: the first line of its leading comment,
// else the name of its first play).
func Scan(dir string) (Objects, error) {
	out := Objects{}
	mods, err := filepath.Glob(filepath.Join(dir, "plugins", "modules", "*.yml"))
	if err != nil {
		return nil, err
	}
	for _, p := range mods {
		var doc struct {
			Documentation struct {
				Short        string `yaml:"short_description"`
				VersionAdded string `yaml:"version_added"`
			} `yaml:"DOCUMENTATION"`
		}
		if err := readYAML(p, &doc); err != nil {
			return nil, err
		}
		o := object(p, ".yml", doc.Documentation.Short)
		o.VersionAdded = doc.Documentation.VersionAdded
		out["module"] = append(out["module"], o)
	}
	roles, err := filepath.Glob(filepath.Join(dir, "roles", "*", "meta", "argument_specs.yml"))
	if err != nil {
		return nil, err
	}
	for _, p := range roles {
		var spec struct {
			ArgumentSpecs map[string]struct {
				Short string `yaml:"short_description"`
			} `yaml:"argument_specs"`
		}
		if err := readYAML(p, &spec); err != nil {
			return nil, err
		}
		name := filepath.Base(filepath.Dir(filepath.Dir(p)))
		out[KindRole] = append(out[KindRole], Object{Name: name, Description: spec.ArgumentSpecs["main"].Short})
	}
	books, err := filepath.Glob(filepath.Join(dir, "playbooks", "*.yml"))
	if err != nil {
		return nil, err
	}
	for _, p := range books {
		var plays []struct {
			Name string `yaml:"name"`
		}
		if err := readYAML(p, &plays); err != nil {
			return nil, err
		}
		desc, err := leadingComment(p)
		if err != nil {
			return nil, err
		}
		if desc == "" && len(plays) > 0 {
			desc = plays[0].Name
		}
		out[KindPlaybook] = append(out[KindPlaybook], object(p, ".yml", desc))
	}
	for kind, list := range out {
		for _, o := range list {
			if strings.TrimSpace(o.Description) == "" {
				return nil, fmt.Errorf("%s %s has no description (module: short_description; role: argument_specs.main.short_description; playbook: its leading comment or first play's name)", kind, o.Name)
			}
		}
	}
	return out, nil
}

// leadingComment is the first sentence of the comment that opens a YAML
// file (after "---"): its first paragraph (the comment lines up to an empty
// or indented one, joined) up to the first ". " or ": ", without a final
// "." or ":", with single backquotes doubled (RST literals).
func leadingComment(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	var para []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if len(para) == 0 && (l == "---" || l == "") {
			continue
		}
		text, ok := strings.CutPrefix(l, "#")
		if !ok || strings.TrimSpace(text) == "" || strings.HasPrefix(text, "  ") {
			break
		}
		para = append(para, strings.TrimSpace(text))
	}
	s := strings.Join(para, " ")
	for _, end := range []string{". ", ": "} {
		if i := strings.Index(s, end); i >= 0 {
			s = s[:i]
		}
	}
	s = strings.TrimRight(s, ".:")
	if !strings.Contains(s, "``") {
		// A comment's `code` is RST's ``code`` in the changelog.
		s = strings.ReplaceAll(s, "`", "``")
	}
	return s, nil
}

func object(path, ext, desc string) Object {
	return Object{Name: strings.TrimSuffix(filepath.Base(path), ext), Description: strings.TrimSpace(desc)}
}

func readYAML(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: not the expected YAML: %w", path, err)
	}
	return nil
}

// GalaxyPath is the galaxy.yml of the collection tree at dir: it lives in
// the tree, so that a checkout linking the tree as
// ansible_collections/NAMESPACE/NAME is the collection with its version.
func GalaxyPath(dir string) string { return filepath.Join(dir, "galaxy.yml") }

// Galaxy is what the changelog needs of galaxy.yml.
type Galaxy struct {
	// Path is the file it was read from.
	Path      string `yaml:"-"`
	Namespace string `yaml:"namespace"`
	Name      string `yaml:"name"`
	Version   string `yaml:"version"`
}

// ReadGalaxy reads galaxy.yml.
func ReadGalaxy(path string) (Galaxy, error) {
	g := Galaxy{Path: path}
	if err := readYAML(path, &g); err != nil {
		return g, err
	}
	if g.Namespace == "" || g.Name == "" || g.Version == "" {
		return g, fmt.Errorf("%s: namespace, name and version are required", path)
	}
	if _, err := parseVersion(g.Version); err != nil {
		return g, fmt.Errorf("%s: version %q: %w", path, g.Version, err)
	}
	return g, nil
}
