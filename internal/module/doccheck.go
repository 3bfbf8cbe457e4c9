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
	// raw is the whole document, for the key checks.
	raw map[string]any
}

type sidecarOption struct {
	Type     string   `yaml:"type"`
	Required bool     `yaml:"required"`
	Default  any      `yaml:"default"`
	Choices  []string `yaml:"choices"`
	NoLog    bool     `yaml:"no_log"`
	Elements string   `yaml:"elements"`
}

func loadSidecar(path string) (*sidecarDoc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the module documentation: %w", err)
	}
	var doc sidecarDoc
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := yaml.Unmarshal(b, &doc.raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &doc, nil
}

// The keys an option and a return value may have (ansible-test
// validate-modules' schema, which does not read binary modules' docs).
var (
	optionKeys = keySet("description", "type", "required", "default", "choices", "elements", "no_log",
		"aliases", "version_added", "suboptions", "options", "apply_defaults", "mutually_exclusive")
	returnKeys = keySet("description", "returned", "type", "elements", "sample", "contains", "version_added")
)

func keySet(keys ...string) map[string]bool {
	m := map[string]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// badKeys lists the entries of a map of options (or return values), and of
// their suboptions (contains), that have a key outside allowed: the usual
// cause is an unquoted comma in a flow mapping ({description: a, b, type: str}).
func badKeys(where string, entries any, allowed map[string]bool, nested string) []string {
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
			if !allowed[k] {
				out = append(out, fmt.Sprintf("%s.%s has an unknown key %q (an unquoted comma or colon in a flow mapping?)", where, name, k))
			}
		}
		out = append(out, badKeys(where+"."+name+"."+nested, e[nested], allowed, nested)...)
	}
	return out
}

func sortedKeysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CheckSidecar compares a module's sidecar documentation (plugins/modules/NAME.yml)
// with its spec, so the docs stay true to the code: the same options, types,
// list elements, required flags, defaults, choices and no_log.
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
		problems = append(problems, badKeys("options", d["options"], optionKeys, "suboptions")...)
	}
	problems = append(problems, badKeys("RETURN", doc.raw["RETURN"], returnKeys, "contains")...)
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
		if o.NoLog != p.NoLog {
			problems = append(problems, fmt.Sprintf("option %s: documented no_log=%v, code %v", p.Name, o.NoLog, p.NoLog))
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
