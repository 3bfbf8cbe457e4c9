package ansiblerun

// The files a run reads (the playbook, the inventory, an ansible.cfg of
// the user's, the private key), checked before anything runs with fsutil's
// bounded reader: a regular file, read (so readable), not empty, of a sane
// size. A FIFO or a device given there would block ansible-playbook, or
// grow it until the OOM killer stops it.

import (
	"bytes"
	"fmt"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// Limits of the inputs of a run.
var (
	playbookLimit   = fsutil.Limit{Bytes: 64 << 20}
	inventoryLimit  = fsutil.Limit{Bytes: 64 << 20}
	ansibleCfgLimit = fsutil.Limit{Bytes: 1 << 20}
	privateKeyLimit = fsutil.Limit{Bytes: 1 << 20}
)

// checkInput reads an input of the run (param names it) with fsutil's
// bounded reader and refuses one with nothing but blanks in it; hint
// says what to do, after the problem.
func checkInput(param, path string, lim fsutil.Limit, hint string) error {
	b, err := fsutil.ReadInput(path, lim, param)
	if err != nil {
		if hint != "" {
			return fmt.Errorf("%w (%s)", err, hint)
		}
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return fmt.Errorf("%s %s is empty: give a file with content%s", param, path, paren(hint))
	}
	return nil
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
