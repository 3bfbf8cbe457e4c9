package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
)

// The documentation states the longest stack name the working directory
// takes, as workdir works it out from its file names.
func TestDocumentedStackLimit(t *testing.T) {
	b, err := os.ReadFile("../../collection/plugins/modules/overcloud_workdir.yml")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("at most %d characters", workdir.StackLimit.Max); !strings.Contains(string(b), want) {
		t.Errorf("overcloud_workdir.yml does not say %q", want)
	}
}
