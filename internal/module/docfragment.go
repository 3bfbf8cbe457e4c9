package module

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// collectionPrefix names this collection's doc fragments in
// extends_documentation_fragment.
const collectionPrefix = "ephemeral.heat."

// fragment is what a doc fragment's section adds to the documentation of
// a module that extends it.
type fragment struct {
	Options    map[string]any `yaml:"options"`
	Attributes map[string]any `yaml:"attributes"`
	Notes      []any          `yaml:"notes"`
}

// withFragments returns a sidecar's documentation with the options,
// attributes and notes of the doc fragments it extends
// (extends_documentation_fragment) merged in as ansible-core merges them:
// an option or attribute the module documents itself keeps its own keys
// and gains the fragment's others; the fragment's notes follow the
// module's. The fragments are read from the collection's
// plugins/doc_fragments, beside the sidecar's plugins/modules.
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
	for _, name := range names {
		frag, err := readFragment(filepath.Join(filepath.Dir(sidecar), "..", "doc_fragments"), name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sidecar, err)
		}
		mergeEntries(d, "options", frag.Options)
		mergeEntries(d, "attributes", frag.Attributes)
		if len(frag.Notes) > 0 {
			notes, _ := d["notes"].([]any)
			d["notes"] = append(notes, frag.Notes...)
		}
	}
	return yaml.Marshal(doc)
}

// mergeEntries merges a fragment's entries (options or attributes) into
// d[key]: an entry the module has keeps its keys and gains the fragment's
// others.
func mergeEntries(d map[string]any, key string, frag map[string]any) {
	if frag == nil {
		return
	}
	own, _ := d[key].(map[string]any)
	if own == nil {
		own = map[string]any{}
	}
	for name, fe := range frag {
		merged := map[string]any{}
		if m, ok := fe.(map[string]any); ok {
			for k, v := range m {
				merged[k] = v
			}
		}
		if m, ok := own[name].(map[string]any); ok {
			for k, v := range m {
				merged[k] = v
			}
		}
		own[name] = merged
	}
	d[key] = own
}

// sectionRe finds the class attributes of a doc fragment: NAME = r”'...”'.
var sectionRe = regexp.MustCompile(`(?ms)^\s*([A-Z][A-Z0-9_]*)\s*=\s*r?'''(.*?)'''`)

// fragmentSections returns the YAML of every section of a doc fragment
// file, by attribute name (DOCUMENTATION, API, ...).
func fragmentSections(path string) (map[string]string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the doc fragment: %w", err)
	}
	out := map[string]string{}
	for _, m := range sectionRe.FindAllSubmatch(src, -1) {
		out[string(m[1])] = string(m[2])
	}
	return out, nil
}

// readFragment reads fragment name (ephemeral.heat.FILE[.SECTION]) from
// dir/FILE.py: the YAML of the class attribute SECTION (upper case;
// DOCUMENTATION by default). Like ansible-core, it refuses a section with
// neither options nor attributes.
func readFragment(dir, name string) (fragment, error) {
	rest, ok := strings.CutPrefix(name, collectionPrefix)
	if !ok {
		return fragment{}, fmt.Errorf("doc fragment %q is not one of this collection (%s*)", name, collectionPrefix)
	}
	file, attr, _ := strings.Cut(rest, ".")
	if attr == "" {
		attr = "DOCUMENTATION"
	}
	attr = strings.ToUpper(attr)
	p := filepath.Join(dir, file+".py")
	sections, err := fragmentSections(p)
	if err != nil {
		return fragment{}, fmt.Errorf("doc fragment %s: %w", name, err)
	}
	text, ok := sections[attr]
	if !ok {
		return fragment{}, fmt.Errorf("doc fragment %s: %s has no %s = r'''...'''", name, p, attr)
	}
	var frag fragment
	if err := yaml.Unmarshal([]byte(text), &frag); err != nil {
		return fragment{}, fmt.Errorf("doc fragment %s (%s): %w", name, p, err)
	}
	if frag.Options == nil && frag.Attributes == nil {
		return fragment{}, fmt.Errorf("doc fragment %s (%s): %s has neither options nor attributes (ansible-doc refuses it)", name, p, attr)
	}
	return frag, nil
}

// CheckFragment checks a doc fragment file (plugins/doc_fragments/NAME.py):
// every section is YAML with options or attributes, its attributes have
// the keys ansible-core's schema allows, and its text uses no markup that
// ansible-core 2.14 prints raw (see rawMarkup).
func CheckFragment(path string) error {
	sections, err := fragmentSections(path)
	if err != nil {
		return err
	}
	if len(sections) == 0 {
		return fmt.Errorf("%s has no DOCUMENTATION = r'''...''' section", path)
	}
	var problems []string
	for _, name := range sortedKeysOf(sections) {
		var raw map[string]any
		if err := yaml.Unmarshal([]byte(sections[name]), &raw); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		if raw["options"] == nil && raw["attributes"] == nil {
			problems = append(problems, fmt.Sprintf("%s has neither options nor attributes", name))
		}
		problems = append(problems, badKeys(name+".options", raw["options"], optionKeys, true)...)
		if a, ok := raw["attributes"]; ok {
			problems = append(problems, badAttributes(name+".attributes", a, false)...)
		}
		problems = append(problems, rawMarkup(name, raw)...)
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("%s: %s", path, strings.Join(problems, "; "))
	}
	return nil
}
