package heatapi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A clouds.yaml whose password sits where a section belongs is refused
// without quoting it: yaml.v3 quotes the start of the offending value.
func TestLoadCloudErrorQuotesNoValue(t *testing.T) {
	const secret = "s3cr3t-Pa55word-19"
	p := filepath.Join(t.TempDir(), "clouds.yaml")
	if err := os.WriteFile(p, []byte("clouds:\n  heat:\n    auth: "+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := LoadCloud("heat", p)
	if err == nil || strings.Contains(err.Error(), secret[:4]) || !strings.Contains(err.Error(), p+" is not a valid clouds.yaml") ||
		!strings.Contains(err.Error(), "line 3: cannot unmarshal !!str (a value) into") {
		t.Errorf("LoadCloud: %v", err)
	}
}
