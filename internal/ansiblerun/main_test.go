package ansiblerun

import (
	"fmt"
	"os"
	"testing"
)

// TestMain gives the package's tests, and the ansible-playbook runs they
// start, a TMPDIR of their own, removed at the end: check mode's temporary
// log directories (kept after a run, as documented) and the module
// payloads that a killed task leaves (the guard tests kill `sleep 300`).
func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "ansiblerun-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("TMPDIR", tmp)
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}
