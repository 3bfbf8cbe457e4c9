// Package stackname is the one rule for a stack name, Heat's own (heat's
// api/openstack/v1/stacks.py): it starts with an ASCII letter, holds only
// ASCII letters, digits, "_", "-" and ".", and has at most MaxLen
// characters. Every module that takes a stack name checks it here, with
// its own parameter's name in the message; a caller that makes files of the
// name (the working directory) gives a lower Limit, and says why.
package stackname

import (
	"errors"
	"fmt"
)

// MaxLen is the longest stack name Heat accepts.
const MaxLen = 255

// Rule is the rule, as messages and documentation state it.
const Rule = "a stack name starts with a letter and holds only letters, digits, _ . and -"

// Limit is the longest stack name a caller can use, and why it is below
// MaxLen when it is.
type Limit struct {
	Max int
	// Why says why Max is below MaxLen ("" for Heat's own limit).
	Why string
}

// Heat is Heat's own limit.
var Heat = Limit{Max: MaxLen}

// Check returns nil when name is a stack name within l, else an error that
// names param (the module's parameter: "name", "stack"), the value and the
// rule.
func Check(param, name string, l Limit) error {
	if err := Problem(name, l); err != nil {
		return fmt.Errorf("parameter %q %w", param, err)
	}
	return nil
}

// Checker is Check for a module.Param's Check, whose error follows the
// parameter's name in the module's message.
func Checker(l Limit) func(v any) error {
	return func(v any) error {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("is a %T; %s", v, Rule)
		}
		return Problem(s, l)
	}
}

// Problem says what is wrong with name, worded to follow a parameter's
// name ("is \"1st\"; a stack name starts with a letter ..."); nil when
// nothing is.
func Problem(name string, l Limit) error {
	max := l.Max
	if max <= 0 || max > MaxLen {
		max = MaxLen
	}
	if name == "" {
		return errors.New("is empty; " + Rule)
	}
	if len(name) > max {
		if l.Why != "" && max < MaxLen {
			return fmt.Errorf("is %d characters long; a stack name has at most %d characters here (%s)", len(name), max, l.Why)
		}
		return fmt.Errorf("is %d characters long; a stack name has at most %d characters", len(name), max)
	}
	if !valid(name) {
		return fmt.Errorf("is %q; %s (at most %d characters)", name, Rule, max)
	}
	return nil
}

// valid applies the character rule: an ASCII letter first, then ASCII
// letters, digits, "_", "-" and ".".
func valid(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		switch {
		case i == 0 && !letter:
			return false
		case !letter && !(c >= '0' && c <= '9') && c != '_' && c != '-' && c != '.':
			return false
		}
	}
	return true
}
