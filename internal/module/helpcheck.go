package module

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// HelpOption is one parameter as --help shows it (see Usage).
type HelpOption struct {
	Type       string
	Elements   string // of a list
	Required   bool
	Default    string // "" when there is none; HasDefault tells an empty default apart
	HasDefault bool
	Choices    []string
	Range      string // "MIN-MAX" of an int, "" when unbounded
}

// commonFlags are the flags of every module that are not parameters.
var commonFlags = map[string]bool{"--check": true, "--diff": true, "--json": true, "--help": true}

// ParseHelp reads the parameters back from a module's --help text, keyed by
// parameter name (--heat-dir is heat_dir).
func ParseHelp(text []byte) (map[string]HelpOption, error) {
	out := map[string]HelpOption{}
	inFlags := false
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if line == "Flags:" {
			inFlags = true
			continue
		}
		if !inFlags || strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.Fields(line)
		flag := fields[0]
		if !strings.HasPrefix(flag, "--") {
			return nil, fmt.Errorf("--help line %q does not start with a flag", line)
		}
		if commonFlags[flag] {
			continue
		}
		rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), flag))
		var o HelpOption
		if strings.HasSuffix(rest, "]") {
			k := strings.LastIndex(rest, ") [")
			if k < 0 {
				return nil, fmt.Errorf("--help line of %s: notes without a type before them: %q", flag, line)
			}
			for _, n := range strings.Split(rest[k+3:len(rest)-1], "; ") {
				switch {
				case n == "required":
					o.Required = true
				case strings.HasPrefix(n, "default "):
					o.Default, o.HasDefault = strings.TrimPrefix(n, "default "), true
				case strings.HasPrefix(n, "one of "):
					o.Choices = strings.Split(strings.TrimPrefix(n, "one of "), "|")
				case strings.HasPrefix(n, "range "):
					o.Range = strings.TrimPrefix(n, "range ")
				default:
					return nil, fmt.Errorf("--help line of %s: unknown note %q", flag, n)
				}
			}
			rest = rest[:k+1]
		}
		k := strings.LastIndex(rest, " (")
		if k < 0 || !strings.HasSuffix(rest, ")") {
			return nil, fmt.Errorf("--help line of %s names no type: %q", flag, line)
		}
		typ, _, _ := strings.Cut(rest[k+2:len(rest)-1], ":")
		o.Type, o.Elements, _ = strings.Cut(typ, " of ")
		name := strings.ReplaceAll(strings.TrimPrefix(flag, "--"), "-", "_")
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--help lists %s twice", flag)
		}
		out[name] = o
	}
	if !inFlags {
		return nil, fmt.Errorf("--help has no Flags: section")
	}
	return out, sc.Err()
}

// CheckHelp holds a module's --help text against its sidecar documentation:
// the same options, each with the same type (and list elements), required
// flag, default and choices.
func CheckHelp(help []byte, sidecar string) error {
	opts, err := ParseHelp(help)
	if err != nil {
		return err
	}
	doc, err := loadSidecar(sidecar)
	if err != nil {
		return err
	}
	var problems []string
	for name, d := range doc.Documentation.Options {
		h, ok := opts[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("option %s is documented but --help lacks %s", name, flagName(name)))
			continue
		}
		if dt := typeName(Type(d.Type)); h.Type != dt {
			problems = append(problems, fmt.Sprintf("option %s: --help says type %s, the docs %s", name, h.Type, dt))
		}
		if d.Type == string(List) {
			if de := typeName(Type(d.Elements)); h.Elements != de {
				problems = append(problems, fmt.Sprintf("option %s: --help says a list of %s, the docs of %s", name, h.Elements, de))
			}
		}
		if h.Required != d.Required {
			problems = append(problems, fmt.Sprintf("option %s: --help says required=%v, the docs %v", name, h.Required, d.Required))
		}
		if dd := d.Default != nil; h.HasDefault != dd || (dd && h.Default != formatDefault(d.Default)) {
			problems = append(problems, fmt.Sprintf("option %s: --help says default %q, the docs %q", name, h.Default, defaultOrNone(d.Default)))
		}
		if a, b := sortedCopy(h.Choices), sortedCopy(d.Choices); strings.Join(a, "|") != strings.Join(b, "|") {
			problems = append(problems, fmt.Sprintf("option %s: --help says choices %v, the docs %v", name, h.Choices, d.Choices))
		}
		if h.Range != "" && !strings.Contains(d.text(), h.Range) {
			problems = append(problems, fmt.Sprintf("option %s: --help says range %s, which its description in the docs does not state", name, h.Range))
		}
	}
	for name := range opts {
		if _, ok := doc.Documentation.Options[name]; !ok {
			problems = append(problems, fmt.Sprintf("--help lists %s, which the docs do not document", flagName(name)))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("--help and %s disagree: %s", sidecar, strings.Join(problems, "; "))
	}
	return nil
}

func defaultOrNone(v any) string {
	if v == nil {
		return "(none)"
	}
	return formatDefault(v)
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

// SpecFromHelp rebuilds a module's spec from its --help text (names,
// types, required flags, defaults, choices and ranges), so that the bad
// inputs a spec implies (BadInputs) can be generated for a built binary.
func SpecFromHelp(name string, help []byte) (*Spec, error) {
	opts, err := ParseHelp(help)
	if err != nil {
		return nil, err
	}
	spec := &Spec{Name: name}
	for _, n := range sortedKeysOf(opts) {
		o := opts[n]
		p := Param{Name: n, Type: Type(o.Type), Elements: Type(o.Elements), Required: o.Required, Choices: o.Choices}
		if o.Range != "" {
			var r Range
			if _, err := fmt.Sscanf(o.Range, "%d-%d", &r.Min, &r.Max); err != nil {
				return nil, fmt.Errorf("--help of %s: range %q of %s: %w", name, o.Range, n, err)
			}
			p.Range = &r
		}
		spec.Params = append(spec.Params, p)
	}
	return spec, nil
}
