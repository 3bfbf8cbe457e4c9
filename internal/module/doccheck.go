package module

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// sidecarDoc is what the checks read of a sidecar documentation file.
type sidecarDoc struct {
	Documentation struct {
		Module  string                   `yaml:"module"`
		Options map[string]sidecarOption `yaml:"options"`
	} `yaml:"DOCUMENTATION"`
	Examples string         `yaml:"EXAMPLES"`
	Return   map[string]any `yaml:"RETURN"`
	// raw is the whole document, for the key checks; own is the file as
	// written, without the doc fragments' additions.
	raw, own map[string]any
}

type sidecarOption struct {
	Description any      `yaml:"description"`
	Type        string   `yaml:"type"`
	Required    bool     `yaml:"required"`
	Default     any      `yaml:"default"`
	Choices     []string `yaml:"choices"`
	Elements    string   `yaml:"elements"`
}

// text is the option's description as one string (it may be a list).
func (o sidecarOption) text() string {
	switch d := o.Description.(type) {
	case string:
		return d
	case []any:
		parts := make([]string, len(d))
		for i, x := range d {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, " ")
	}
	return ""
}

func loadSidecar(path string) (*sidecarDoc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the module documentation: %w", err)
	}
	var own map[string]any
	if err := yaml.Unmarshal(b, &own); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if b, err = withFragments(path, b); err != nil {
		return nil, err
	}
	var doc sidecarDoc
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := yaml.Unmarshal(b, &doc.raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	doc.own = own
	return &doc, nil
}

// docKeys are the keys an option or a return value may have, true for those
// it must have: ansible-core 2.14's validate-modules schema for modules
// (which that test applies to Python modules only, not to binary ones).
type docKeys struct {
	allowed  map[string]bool
	nested   string // suboptions, contains
	topLevel string // a key required at the top level only
}

var (
	optionKeys = docKeys{allowed: map[string]bool{"description": true, "required": false, "choices": false,
		"aliases": false, "version_added": false, "version_added_collection": false, "default": false,
		"type": false, "elements": false, "suboptions": false}, nested: "suboptions"}
	returnKeys = docKeys{allowed: map[string]bool{"description": true, "returned": false, "version_added": false,
		"version_added_collection": false, "sample": false, "example": false, "elements": false,
		"choices": false, "type": true, "contains": false}, nested: "contains", topLevel: "returned"}
)

// badKeys lists the entries of a map of options (or return values), and of
// their suboptions (contains), that lack a required key or have one the
// schema does not know: the usual cause is an unquoted comma in a flow
// mapping ({description: a, b, type: str}).
func badKeys(where string, entries any, keys docKeys, top bool) []string {
	m, ok := entries.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	for _, name := range sortedKeysOf(m) {
		e, ok := m[name].(map[string]any)
		if !ok {
			out = append(out, fmt.Sprintf("%s.%s is not a mapping", where, name))
			continue
		}
		for _, k := range sortedKeysOf(e) {
			if _, ok := keys.allowed[k]; !ok {
				out = append(out, fmt.Sprintf("%s.%s has an unknown key %q (an unquoted comma or colon in a flow mapping?)", where, name, k))
			}
		}
		for _, k := range sortedKeysOf(keys.allowed) {
			if _, ok := e[k]; !ok && (keys.allowed[k] || (top && k == keys.topLevel)) {
				out = append(out, fmt.Sprintf("%s.%s lacks %s", where, name, k))
			}
		}
		out = append(out, badKeys(where+"."+name+"."+keys.nested, e[keys.nested], keys, false)...)
	}
	return out
}

func sortedKeysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CheckSidecar compares a module's sidecar documentation (plugins/modules/NAME.yml)
// with its spec, so the docs stay true to the code: the same options, types,
// list elements, required flags, defaults and choices; and that every option
// and return value has the keys the module documentation schema requires and
// no others; that the module documents its attributes (ModuleAttributes,
// with their support level), and that its own text (DOCUMENTATION and
// RETURN) uses only markup ansible-core 2.14 renders. The doc fragments'
// text is CheckFragment's.
func CheckSidecar(spec *Spec, path string) error {
	doc, err := loadSidecar(path)
	if err != nil {
		return err
	}
	var problems []string
	if doc.Documentation.Module != spec.Name {
		problems = append(problems, fmt.Sprintf("module is %q, want %q", doc.Documentation.Module, spec.Name))
	}
	if strings.TrimSpace(doc.Examples) == "" || len(doc.Return) == 0 {
		problems = append(problems, "EXAMPLES or RETURN is empty")
	}
	if d, ok := doc.raw["DOCUMENTATION"].(map[string]any); ok {
		problems = append(problems, badKeys("options", d["options"], optionKeys, true)...)
		problems = append(problems, badAttributes("attributes", d["attributes"], true)...)
	}
	problems = append(problems, rawMarkup("DOCUMENTATION", doc.own["DOCUMENTATION"])...)
	problems = append(problems, rawMarkup("RETURN", doc.own["RETURN"])...)
	problems = append(problems, badKeys("RETURN", doc.raw["RETURN"], returnKeys, true)...)
	seen := map[string]bool{}
	for _, p := range spec.Params {
		seen[p.Name] = true
		o, ok := doc.Documentation.Options[p.Name]
		if !ok {
			problems = append(problems, fmt.Sprintf("option %s is not documented", p.Name))
			continue
		}
		if typ := typeName(p.Type); o.Type != typ {
			problems = append(problems, fmt.Sprintf("option %s: documented type %q, code %q", p.Name, o.Type, typ))
		}
		if p.Type == List {
			if e := typeName(p.Elements); o.Elements != e {
				problems = append(problems, fmt.Sprintf("option %s: documented elements %q, code %q", p.Name, o.Elements, e))
			}
		} else if o.Elements != "" {
			problems = append(problems, fmt.Sprintf("option %s: documents elements but is not a list", p.Name))
		}
		if o.Required != p.Required {
			problems = append(problems, fmt.Sprintf("option %s: documented required=%v, code %v", p.Name, o.Required, p.Required))
		}
		if (o.Default == nil) != (p.Default == nil) || (o.Default != nil && formatDefault(o.Default) != formatDefault(p.Default)) {
			problems = append(problems, fmt.Sprintf("option %s: documented default %s, code %s", p.Name, defaultOrNone(o.Default), defaultOrNone(p.Default)))
		}
		if a, c := sortedCopy(o.Choices), sortedCopy(p.Choices); strings.Join(a, ",") != strings.Join(c, ",") {
			problems = append(problems, fmt.Sprintf("option %s: documented choices %v, code %v", p.Name, o.Choices, p.Choices))
		}
		if p.Range != nil && !strings.Contains(o.text(), p.Range.String()) {
			problems = append(problems, fmt.Sprintf("option %s: its description must state its range %s (the module refuses other values)", p.Name, p.Range))
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
