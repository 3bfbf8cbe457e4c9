package module

import (
	"fmt"
	"sort"
	"strings"
)

// BadInput is one invalid parameter value given on top of otherwise valid
// arguments: the module must refuse it before doing anything, naming the
// parameter (Param) and what is allowed (Want, a substring of the message).
type BadInput struct {
	Name  string // what is wrong, for test names
	Param string
	Args  map[string]any
	Want  string
}

// BadInputs generates, from a module's spec, invalid values for every one
// of its parameters, each on top of base (valid arguments): values of the
// wrong type, ints outside their range, too large or not whole, strings
// outside their choices, empty required values, a missing required
// parameter, and an unknown parameter. Tests of every module (and the
// robustness suite, which runs the built binaries) go through them.
func BadInputs(spec *Spec, base map[string]any) []BadInput {
	var out []BadInput
	add := func(p *Param, what string, v any, want string) {
		args := make(map[string]any, len(base)+1)
		for k, x := range base {
			args[k] = x
		}
		if v == nil {
			delete(args, p.Name)
		} else {
			args[p.Name] = v
		}
		out = append(out, BadInput{Name: p.Name + " " + what, Param: p.Name, Args: args, Want: want})
	}
	for i := range spec.Params {
		p := &spec.Params[i]
		if p.Required {
			add(p, "missing", nil, "missing required parameter")
		}
		switch p.Type {
		case Int:
			if p.Range != nil {
				want := fmt.Sprintf("between %d and %d", p.Range.Min, p.Range.Max)
				add(p, "below its range", p.Range.Min-1, want)
				add(p, "above its range", p.Range.Max+1, want)
				add(p, "as a string below its range", fmt.Sprint(p.Range.Min-1), want)
			}
			add(p, "not whole", 1.5, "not a whole number")
			add(p, "a word", "ten", "not a whole number")
			add(p, "huge", 1e300, "too large")
			add(p, "huge as a string", "99999999999999999999999", "too large")
			add(p, "a list", []any{1}, "expected an integer")
			add(p, "a boolean", true, "expected an integer")
		case Bool:
			add(p, "not a boolean", "maybe", "not a boolean")
			add(p, "a number", 2, "expected a boolean")
			add(p, "a list", []any{true}, "expected a boolean")
		case Str, "", Path:
			if len(p.Choices) > 0 {
				add(p, "not a choice", "bogus-choice", "must be one of: "+strings.Join(p.Choices, ", "))
			}
			if p.Required {
				add(p, "empty", "", "is empty")
			}
			add(p, "a list", []any{"list-element"}, "expected a string")
			add(p, "a dictionary", map[string]any{"some-key": "some-value"}, "expected a string")
		case List:
			add(p, "a number", 42, "expected a list")
			add(p, "a dictionary", map[string]any{"some-key": "some-value"}, "expected a list")
			if p.Elements != Raw && p.Elements != Dict {
				add(p, "with a list element", []any{[]any{"x"}}, "element 0")
			}
		case Dict:
			add(p, "a number", 42, "expected a dictionary")
			add(p, "a list", []any{"list-element"}, "expected a dictionary")
			add(p, "neither JSON nor key=value", "not a mapping", "neither JSON nor key=value")
		}
	}
	unknown := make(map[string]any, len(base)+1)
	for k, x := range base {
		unknown[k] = x
	}
	unknown["no_such_option"] = 1
	out = append(out, BadInput{Name: "unknown option", Param: "no_such_option", Args: unknown, Want: "supported: "})
	return out
}

// CheckBoundaries checks that a spec bounds what it can: every int
// parameter has a range (the module refuses values outside it, and --help
// and the docs state it).
func CheckBoundaries(spec *Spec) error {
	var problems []string
	for _, p := range spec.Params {
		if p.Type == Int && p.Range == nil {
			problems = append(problems, fmt.Sprintf("int parameter %s has no Range", p.Name))
		}
		if p.Type == Int && p.Range != nil && p.Default != nil {
			if d, ok := p.Default.(int); ok && (d < p.Range.Min || d > p.Range.Max) {
				problems = append(problems, fmt.Sprintf("parameter %s: default %d is outside its range %s", p.Name, d, p.Range))
			}
		}
	}
	sort.Strings(problems)
	if len(problems) > 0 {
		return fmt.Errorf("%s: %s", spec.Name, strings.Join(problems, "; "))
	}
	return nil
}

// Refused checks that the spec refuses b (Validate fails), with a message
// naming b.Param and holding b.Want; it returns what is wrong, or nil.
func Refused(spec *Spec, b BadInput) error {
	_, err := spec.Validate(b.Args)
	if err == nil {
		return fmt.Errorf("%s: %s was accepted", spec.Name, b.Name)
	}
	if msg := err.Error(); !strings.Contains(msg, `"`+b.Param+`"`) || !strings.Contains(msg, b.Want) {
		return fmt.Errorf("%s: %s: the message %q does not name %q with %q", spec.Name, b.Name, msg, b.Param, b.Want)
	}
	return nil
}
