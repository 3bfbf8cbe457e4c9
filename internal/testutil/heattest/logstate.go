package heattest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
)

// LogState lists the names, sizes and modification times of the files in
// heatDir's log directory: a Heat launched on heatDir changes it, so two
// equal states around a run say that the run started no Heat there.
func LogState(t testing.TB, heatDir string) string {
	t.Helper()
	dir := filepath.Join(heatDir, heatdir.LogDir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("reading %s: %v", dir, err)
	}
	var b strings.Builder
	for _, e := range ents {
		if info, err := e.Info(); err == nil {
			fmt.Fprintf(&b, "%s %d %s; ", e.Name(), info.Size(), info.ModTime())
		}
	}
	return b.String()
}
