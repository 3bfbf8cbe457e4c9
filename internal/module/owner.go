package module

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// PlaybookPID is the process of the Ansible command (ansible-playbook,
// ansible) that runs this module on this host: among its ancestors, the
// nearest Ansible process and, above it, the Ansible processes it descends
// from directly (a task runs in a worker that the playbook's main process
// forks, and the worker ends with the task), the outermost of those. A
// playbook run by a task of another playbook is its own: the chain stops
// at the first ancestor that is no Ansible process. It is 0 when no
// ancestor is one (a module run from a shell, or on a remote host through
// ssh).
func PlaybookPID() int {
	var chain [][]string
	var pids []int
	pid := os.Getpid()
	for i := 0; i < 64 && pid > 1; i++ {
		info, err := proc.Inspect(pid)
		if err != nil {
			break
		}
		chain, pids = append(chain, info.Cmdline), append(pids, pid)
		pid = info.PPID
	}
	if i := nearestAnsible(chain); i >= 0 {
		return pids[i]
	}
	return 0
}

// nearestAnsible returns the index, in chain (command lines from a
// process up through its ancestors), of the outermost of the first run of
// Ansible processes; -1 when there is none.
func nearestAnsible(chain [][]string) int {
	found := -1
	for i, argv := range chain {
		if isAnsible(argv) {
			found = i
		} else if found >= 0 {
			break
		}
	}
	return found
}

// isAnsible tells an Ansible command's command line: ansible-playbook or
// ansible, run directly or by its interpreter.
func isAnsible(argv []string) bool {
	for i, a := range argv {
		if i > 1 {
			break
		}
		switch filepath.Base(a) {
		case "ansible-playbook", "ansible":
			return true
		}
		if i == 0 && !strings.HasPrefix(filepath.Base(a), "python") {
			break
		}
	}
	return false
}
