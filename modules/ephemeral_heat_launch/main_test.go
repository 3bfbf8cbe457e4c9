package main

import (
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
)

func TestDocumentationMatchesSpec(t *testing.T) {
	if err := module.CheckSidecar(spec, "../../collection/plugins/modules/ephemeral_heat_launch.yml"); err != nil {
		t.Fatal(err)
	}
}
