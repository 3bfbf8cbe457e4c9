package main

import (
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
)

func TestDocumentationMatchesSpec(t *testing.T) {
	if err := module.CheckSidecar(spec, "../../collection/plugins/modules/config_download.yml"); err != nil {
		t.Fatal(err)
	}
}
