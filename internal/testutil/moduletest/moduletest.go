// Package moduletest holds what every module's tests share: the test that
// each bad value the spec implies is refused before anything runs, and a
// call of the module as Ansible makes it.
package moduletest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
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

// Call runs a module's handler as Ansible runs the module (its arguments in
// a file) and returns the JSON result.
func Call(t *testing.T, spec *module.Spec, h module.Handler, args map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "args.json")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	module.Run(spec, h, []string{f}, &out, &errb)
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%s: the result is not JSON: %v: %q (stderr %s)", spec.Name, err, out.String(), errb.String())
	}
	return res
}
