package main

import (
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
)

func TestDocumentationMatchesSpec(t *testing.T) {
	if err := module.CheckSidecar(spec, "../../collection/plugins/modules/heat_db_dump.yml"); err != nil {
		t.Fatal(err)
	}
}
