package module

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// ModuleAttributes are the attributes every module documents (its
// DOCUMENTATION's attributes, usually completed by the doc fragment
// ephemeral.heat.attributes): what check mode does, what --diff returns,
// and where it runs.
var ModuleAttributes = []string{"check_mode", "diff_mode", "platform"}

// supportLevels are the values of an attribute's support (ansible-core's
// module documentation schema).
var supportLevels = map[string]bool{"full": true, "partial": true, "none": true, "N/A": true}

// attributeKeys are the keys of an attribute, true for those it must have,
// and the keys some attributes add (the schema of ansible-core 2.14's
// validate-modules).
var (
	attributeKeys = map[string]bool{"description": true, "support": true, "details": false,
		"version_added": false, "version_added_collection": false}
	attributeExtra = map[string]string{"platform": "platforms", "action_group": "membership",
		"forced_action_plugin": "action_plugin"}
)

// badAttributes lists what is wrong with an attributes block: an entry
// that is not a mapping, lacks a required key (unless partial: a fragment
// gives the keys the module does not) or has an unknown one, a support
// level the schema does not know, support partial without details saying
// what is left out; for a module (required), each of ModuleAttributes
// missing.
func badAttributes(where string, attrs any, required bool) []string {
	m, ok := attrs.(map[string]any)
	if !ok {
		if attrs == nil && required {
			return []string{fmt.Sprintf("%s are missing: document %s (extends_documentation_fragment ephemeral.heat.attributes gives their descriptions)",
				where, strings.Join(ModuleAttributes, ", "))}
		}
		return []string{fmt.Sprintf("%s is not a mapping", where)}
	}
	var out []string
	if required {
		for _, name := range ModuleAttributes {
			if _, ok := m[name]; !ok {
				out = append(out, fmt.Sprintf("%s.%s is missing", where, name))
			}
		}
	}
	for _, name := range sortedKeysOf(m) {
		at := where + "." + name
		e, ok := m[name].(map[string]any)
		if !ok {
			out = append(out, fmt.Sprintf("%s is not a mapping", at))
			continue
		}
		extra := attributeExtra[name]
		for _, k := range sortedKeysOf(e) {
			if _, ok := attributeKeys[k]; !ok && k != extra {
				out = append(out, fmt.Sprintf("%s has an unknown key %q", at, k))
			}
		}
		if required {
			for _, k := range sortedKeysOf(attributeKeys) {
				if _, ok := e[k]; !ok && attributeKeys[k] {
					out = append(out, fmt.Sprintf("%s lacks %s", at, k))
				}
			}
			if _, ok := e[extra]; extra != "" && !ok {
				out = append(out, fmt.Sprintf("%s lacks %s", at, extra))
			}
		}
		if s, ok := e["support"]; ok {
			level, _ := s.(string)
			if !supportLevels[level] {
				out = append(out, fmt.Sprintf("%s: support %v is not one of full, partial, none, N/A", at, s))
			}
			if level == "partial" && isEmptyText(e["details"]) {
				out = append(out, fmt.Sprintf("%s: support partial needs details saying what is not supported", at))
			}
		}
	}
	return out
}

func isEmptyText(v any) bool {
	switch t := v.(type) {
	case string:
		return strings.TrimSpace(t) == ""
	case []any:
		return len(t) == 0
	}
	return true
}

// newMarkupRe finds the markup ansible-core 2.15 introduced (O(), V(),
// RV(), E(), P()), which ansible-doc 2.14, this collection's minimum,
// prints raw. Use C() for option names, values, return values and
// environment variables, M() for modules.
var newMarkupRe = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])((?:RV|O|V|E|P)\([^)]*\)?)`)

// rawMarkup lists the places in v (a documentation tree) that use markup
// ansible-core 2.14 does not render, by their path.
func rawMarkup(where string, v any) []string {
	var out []string
	switch t := v.(type) {
	case string:
		if ms := newMarkupRe.FindAllStringSubmatch(t, -1); ms != nil {
			found := make([]string, len(ms))
			for i, m := range ms {
				found[i] = m[1]
			}
			out = append(out, fmt.Sprintf("%s uses markup ansible-core 2.14 prints raw: %s (write C() or M())", where, strings.Join(found, " ")))
		}
	case []any:
		for i, x := range t {
			out = append(out, rawMarkup(fmt.Sprintf("%s[%d]", where, i), x)...)
		}
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, rawMarkup(where+"."+k, t[k])...)
		}
	}
	return out
}
