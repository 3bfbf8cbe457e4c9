// Package module implements the Ansible binary-module protocol shared by every
// module of the collection: reading the args file, validating parameters
// against a declarative spec, check and diff mode, masking of no_log values,
// panic recovery, and the command-line mode in which the same binary is run
// with flags by a person.
package module

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Type is the type of a parameter, with Ansible's names.
type Type string

// Parameter types, as Ansible names them.
const (
	Str  Type = "str"
	Bool Type = "bool"
	Int  Type = "int"
	Path Type = "path"
	List Type = "list"
	Dict Type = "dict"
	Raw  Type = "raw"
)

// Param declares one user parameter of a module.
type Param struct {
	Name     string
	Type     Type
	Required bool
	Default  any
	Choices  []string
	NoLog    bool
	// SecretKeys are, for a dict parameter, the keys whose values are
	// secrets: masked in results as a no_log value is (the other keys
	// of the dict are shown).
	SecretKeys []string
	// Elements is the type of list elements (Str when empty).
	Elements Type
	// Help is the one-line description shown by --help.
	Help string
	// Range bounds an int parameter (both ends included); every int
	// parameter of a module has one (CheckBoundaries).
	Range *Range
	// Check validates a given value once converted to its type (a
	// string's format, a list's elements ...); its error is reported
	// after the parameter's name, so it says what is allowed.
	Check func(v any) error
}

// Range is the inclusive range of an int parameter.
type Range struct{ Min, Max int }

// Between is the range min..max, both included.
func Between(min, max int) *Range { return &Range{Min: min, Max: max} }

// String is how --help and messages show the range.
func (r Range) String() string { return fmt.Sprintf("%d-%d", r.Min, r.Max) }

// Spec is the parameter specification of a module.
type Spec struct {
	Name   string // module name, e.g. ephemeral_heat_launch
	Short  string // one-line description for --help
	Params []Param
	// OneOf lists groups of parameters of which exactly one must be given.
	OneOf [][]string
}

func (s *Spec) param(name string) *Param {
	for i := range s.Params {
		if s.Params[i].Name == name {
			return &s.Params[i]
		}
	}
	return nil
}

func (s *Spec) names() []string {
	n := make([]string, 0, len(s.Params))
	for _, p := range s.Params {
		n = append(n, p.Name)
	}
	sort.Strings(n)
	return n
}

// Validate checks raw user parameters against the spec and returns them
// converted to their declared types, with defaults filled in. Every error names
// the parameter and what is allowed.
func (s *Spec) Validate(raw map[string]any) (Params, error) {
	var problems []string
	for k := range raw {
		if s.param(k) == nil {
			problems = append(problems, fmt.Sprintf("unsupported parameter %q (supported: %s)", k, strings.Join(s.names(), ", ")))
		}
	}
	sort.Strings(problems)
	out := Params{values: map[string]any{}, given: map[string]bool{}}
	for _, p := range s.Params {
		v, ok := raw[p.Name]
		if !ok || v == nil {
			if p.Required {
				problems = append(problems, fmt.Sprintf("missing required parameter %q", p.Name))
				continue
			}
			if p.Default == nil {
				out.values[p.Name] = nil
				continue
			}
			v = p.Default
		} else {
			out.given[p.Name] = true
		}
		cv, err := convert(p.Type, p.Elements, v)
		if err != nil {
			problems = append(problems, fmt.Sprintf("parameter %q: %v", p.Name, err))
			continue
		}
		if err := p.checkValue(cv); err != nil {
			problems = append(problems, fmt.Sprintf("parameter %q %v", p.Name, err))
			continue
		}
		if len(p.Choices) > 0 {
			sv := fmt.Sprint(cv)
			found := false
			for _, c := range p.Choices {
				if c == sv {
					found = true
				}
			}
			if !found {
				problems = append(problems, fmt.Sprintf("parameter %q is %q; it must be one of: %s", p.Name, sv, strings.Join(p.Choices, ", ")))
				continue
			}
		}
		out.values[p.Name] = cv
	}
	for _, group := range s.OneOf {
		var given []string
		for _, n := range group {
			if out.given[n] {
				given = append(given, n)
			}
		}
		if len(given) != 1 {
			what := "none was given"
			if len(given) > 1 {
				what = "got " + strings.Join(given, " and ")
			}
			problems = append(problems, fmt.Sprintf("exactly one of %s is required; %s", strings.Join(group, ", "), what))
		}
	}
	if len(problems) > 0 {
		return Params{}, &ParamError{Module: s.Name, Problems: problems}
	}
	return out, nil
}

// checkValue applies a converted value's bounds: an int's range, a required
// string's non-emptiness, and the parameter's own Check. Its error follows
// the parameter's name ("is 0; it must be between 1 and 65535").
func (p *Param) checkValue(v any) error {
	if n, ok := v.(int); ok && p.Range != nil && (n < p.Range.Min || n > p.Range.Max) {
		return fmt.Errorf("is %d; it must be between %d and %d", n, p.Range.Min, p.Range.Max)
	}
	if s, ok := v.(string); ok && p.Required && strings.TrimSpace(s) == "" {
		return errors.New("is empty; give a value")
	}
	if p.Check != nil && v != nil {
		if err := p.Check(v); err != nil {
			return err
		}
	}
	return nil
}

// ParamError reports every problem found in the parameters at once.
type ParamError struct {
	Module   string
	Problems []string
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("%s: invalid parameters: %s", e.Module, strings.Join(e.Problems, "; "))
}

func convert(t Type, elem Type, v any) (any, error) {
	switch t {
	case Str, "":
		switch x := v.(type) {
		case string:
			return x, nil
		case bool, float64, int, int64, json.Number:
			// Ansible converts scalars to strings for str parameters.
			return fmt.Sprint(x), nil
		}
		return nil, fmt.Errorf("expected a string, got %s", kind(v))
	case Path:
		s, err := convert(Str, "", v)
		if err != nil {
			return nil, err
		}
		return ExpandPath(s.(string))
	case Bool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "yes", "on", "1", "true", "y", "t":
				return true, nil
			case "no", "off", "0", "false", "n", "f", "":
				return false, nil
			}
			return nil, fmt.Errorf("%q is not a boolean (use true or false)", x)
		case float64:
			if x == 0 || x == 1 {
				return x == 1, nil
			}
		case int:
			if x == 0 || x == 1 {
				return x == 1, nil
			}
		}
		return nil, fmt.Errorf("expected a boolean, got %s", kind(v))
	case Int:
		switch x := v.(type) {
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) >= maxInt {
				return nil, fmt.Errorf("%v is too large a number", x)
			}
			if x != math.Trunc(x) {
				return nil, fmt.Errorf("%v is not a whole number", x)
			}
			return int(x), nil
		case int:
			return x, nil
		case int64:
			return int(x), nil
		case json.Number:
			n, err := x.Int64()
			if err != nil {
				return nil, fmt.Errorf("%s is not a whole number within ±%d", x, int64(maxInt))
			}
			return int(n), nil
		case string:
			n, err := strconv.Atoi(strings.TrimSpace(x))
			if errors.Is(err, strconv.ErrRange) {
				return nil, fmt.Errorf("%q is too large a number", x)
			}
			if err != nil {
				return nil, fmt.Errorf("%q is not a whole number", x)
			}
			return n, nil
		}
		return nil, fmt.Errorf("expected an integer, got %s", kind(v))
	case List:
		var items []any
		switch x := v.(type) {
		case []any:
			items = x
		case []string:
			for _, s := range x {
				items = append(items, s)
			}
		case string:
			// Ansible accepts a comma-separated string for a list.
			if strings.TrimSpace(x) != "" {
				for _, s := range strings.Split(x, ",") {
					items = append(items, strings.TrimSpace(s))
				}
			}
		default:
			return nil, fmt.Errorf("expected a list, got %s", kind(v))
		}
		if elem == Raw || elem == Dict {
			out := make([]any, 0, len(items))
			for i, it := range items {
				c, err := convert(elem, "", it)
				if err != nil {
					return nil, fmt.Errorf("element %d: %v", i, err)
				}
				out = append(out, c)
			}
			return out, nil
		}
		out := make([]string, 0, len(items))
		for i, it := range items {
			c, err := convert(elemOr(elem), "", it)
			if err != nil {
				return nil, fmt.Errorf("element %d: %v", i, err)
			}
			out = append(out, fmt.Sprint(c))
		}
		return out, nil
	case Dict:
		switch x := v.(type) {
		case map[string]any:
			return x, nil
		case string:
			m := map[string]any{}
			if strings.TrimSpace(x) == "" {
				return m, nil
			}
			if err := json.Unmarshal([]byte(x), &m); err == nil {
				return m, nil
			}
			// key=value pairs, as Ansible accepts them. The value is not
			// quoted in the error: it may hold a secret.
			for i, kv := range strings.Fields(x) {
				k, val, ok := strings.Cut(kv, "=")
				if !ok {
					return nil, fmt.Errorf("a string that is neither JSON nor key=value pairs (word %d has no \"=\")", i+1)
				}
				m[k] = val
			}
			return m, nil
		}
		return nil, fmt.Errorf("expected a dictionary, got %s", kind(v))
	case Raw:
		return v, nil
	}
	return nil, fmt.Errorf("unknown parameter type %q", t)
}

// maxInt bounds the magnitude of an int parameter given as a float: 2^53,
// beyond which a float no longer holds every whole number.
const maxInt = 1 << 53

func elemOr(t Type) Type {
	if t == "" {
		return Str
	}
	return t
}

func kind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int, int64, json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a dictionary"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// ExpandPath expands a leading ~ or ~user and makes the path absolute.
func ExpandPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	if strings.HasPrefix(p, "~") {
		name, rest, _ := strings.Cut(p[1:], "/")
		var home string
		if name == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("expanding %q: %w", p, err)
			}
			home = h
		} else {
			u, err := user.Lookup(name)
			if err != nil {
				return "", fmt.Errorf("expanding %q: %w", p, err)
			}
			home = u.HomeDir
		}
		p = filepath.Join(home, rest)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("making %q absolute: %w", p, err)
	}
	return abs, nil
}

// Params holds validated parameters.
type Params struct {
	values map[string]any
	given  map[string]bool
}

// Given reports whether the user gave the parameter (as opposed to a default).
func (p Params) Given(name string) bool { return p.given[name] }

// Str returns a str or path parameter ("" when unset).
func (p Params) Str(name string) string {
	s, _ := p.values[name].(string)
	return s
}

// Bool returns a bool parameter.
func (p Params) Bool(name string) bool {
	b, _ := p.values[name].(bool)
	return b
}

// Int returns an int parameter.
func (p Params) Int(name string) int {
	n, _ := p.values[name].(int)
	return n
}

// Strings returns a list parameter of strings.
func (p Params) Strings(name string) []string {
	s, _ := p.values[name].([]string)
	return s
}

// Dict returns a dict parameter.
func (p Params) Dict(name string) map[string]any {
	m, _ := p.values[name].(map[string]any)
	return m
}

// Raw returns a parameter as it was converted.
func (p Params) Raw(name string) any { return p.values[name] }

// All returns every parameter value (for the invocation record).
func (p Params) All() map[string]any { return p.values }
