package stack

import (
	"fmt"
	"regexp"
)

// MaxTimeoutMinutes is the longest timeout heat_stack accepts: 30 days.
const MaxTimeoutMinutes = 43200

// nameRE is what Heat accepts as a stack name (heat/api/openstack/v1/stacks.py).
var nameRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_.-]*$`)

// CheckName refuses a stack name Heat would refuse: it starts with a
// letter, holds only letters, digits, "_", "." and "-", and is at most 255
// characters long.
func CheckName(v any) error {
	s, _ := v.(string)
	if len(s) > 255 || !nameRE.MatchString(s) {
		return fmt.Errorf("is %q; a stack name starts with a letter and holds only letters, digits, _ . and - (at most 255 characters)", truncate(s, 80))
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
