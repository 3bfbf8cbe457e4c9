package module

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// collectionPrefix names this collection's doc fragments in
// extends_documentation_fragment.
const collectionPrefix = "ephemeral.heat."

// withFragments returns a sidecar's documentation with the options of the
// doc fragments it extends (extends_documentation_fragment) merged in as
// Ansible merges them: a key the module documents itself wins. The
// fragments are read from the collection's plugins/doc_fragments, beside
// the sidecar's plugins/modules.
func withFragments(sidecar string, b []byte) ([]byte, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", sidecar, err)
	}
	d, _ := doc["DOCUMENTATION"].(map[string]any)
	if d == nil {
		return b, nil
	}
	var names []string
	switch v := d["extends_documentation_fragment"].(type) {
	case nil:
		return b, nil
	case string:
		names = []string{v}
	case []any:
		for _, n := range v {
			names = append(names, fmt.Sprint(n))
		}
	}
	opts, _ := d["options"].(map[string]any)
	if opts == nil {
		opts = map[string]any{}
	}
	for _, name := range names {
		frag, err := fragmentOptions(filepath.Join(filepath.Dir(sidecar), "..", "doc_fragments"), name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sidecar, err)
		}
		for key, fo := range frag {
			merged := map[string]any{}
			if m, ok := fo.(map[string]any); ok {
				for k, v := range m {
					merged[k] = v
				}
			}
			if m, ok := opts[key].(map[string]any); ok {
				for k, v := range m {
					merged[k] = v
				}
			}
			opts[key] = merged
		}
	}
	d["options"] = opts
	return yaml.Marshal(doc)
}

// fragmentOptions reads the options of fragment name
// (ephemeral.heat.FILE[.ATTRIBUTE]) from dir/FILE.py: the YAML of the
// class attribute ATTRIBUTE (upper case; DOCUMENTATION by default).
func fragmentOptions(dir, name string) (map[string]any, error) {
	rest, ok := strings.CutPrefix(name, collectionPrefix)
	if !ok {
		return nil, fmt.Errorf("doc fragment %q is not one of this collection (%s*)", name, collectionPrefix)
	}
	file, attr, _ := strings.Cut(rest, ".")
	if attr == "" {
		attr = "DOCUMENTATION"
	}
	attr = strings.ToUpper(attr)
	p := filepath.Join(dir, file+".py")
	src, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("doc fragment %s: %w", name, err)
	}
	re := regexp.MustCompile(`(?ms)^\s*` + regexp.QuoteMeta(attr) + `\s*=\s*r?'''(.*?)'''`)
	m := re.FindSubmatch(src)
	if m == nil {
		return nil, fmt.Errorf("doc fragment %s: %s has no %s = r'''...'''", name, p, attr)
	}
	var frag struct {
		Options map[string]any `yaml:"options"`
	}
	if err := yaml.Unmarshal(m[1], &frag); err != nil {
		return nil, fmt.Errorf("doc fragment %s (%s): %w", name, p, err)
	}
	return frag.Options, nil
}
