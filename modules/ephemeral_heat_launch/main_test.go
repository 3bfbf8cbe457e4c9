package main

import (
	"encoding/json"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
)

func TestDocumentationMatchesSpec(t *testing.T) {
	if err := module.CheckSidecar(spec, "../../collection/plugins/modules/ephemeral_heat_launch.yml"); err != nil {
		t.Fatal(err)
	}
}

// Every option is validated before anything runs: each bad value the spec
// implies (types, ranges, choices, empty or missing required values) is
// refused naming the option and what it allows.
func TestBoundaries(t *testing.T) {
	if err := module.CheckBoundaries(spec); err != nil {
		t.Fatal(err)
	}
	var base map[string]any
	if err := json.Unmarshal([]byte(`{"heat_dir": "/tmp/hd"}`), &base); err != nil {
		t.Fatal(err)
	}
	if _, err := spec.Validate(base); err != nil {
		t.Fatalf("the base arguments are refused: %v", err)
	}
	cases := module.BadInputs(spec, base)
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
