// Package moduletest holds the test every module's spec gets: each bad
// value the spec implies is refused before anything runs.
package moduletest

import (
	"encoding/json"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
)

// Boundaries checks that every option of spec is validated before anything
// runs: base (module arguments as JSON) is accepted, and each bad value the
// spec implies (types, ranges, choices, empty or missing required values,
// module.BadInputs) is refused naming the option and what it allows.
func Boundaries(t *testing.T, spec *module.Spec, base string) {
	t.Helper()
	if err := module.CheckBoundaries(spec); err != nil {
		t.Fatal(err)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(base), &args); err != nil {
		t.Fatal(err)
	}
	if _, err := spec.Validate(args); err != nil {
		t.Fatalf("the base arguments are refused: %v", err)
	}
	cases := module.BadInputs(spec, args)
	if len(cases) < 2*len(spec.Params) {
		t.Fatalf("only %d bad inputs for %d options", len(cases), len(spec.Params))
	}
	for _, bi := range cases {
		t.Run(bi.Name, func(t *testing.T) {
			if err := module.Refused(spec, bi); err != nil {
				t.Error(err)
			}
		})
	}
}
