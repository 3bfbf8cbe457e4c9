package module

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// PlaybookPID is the process of the Ansible command (ansible-playbook,
// ansible) that runs this module on this host: the outermost Ansible
// process among its ancestors, since a task runs in a worker the
// playbook's main process forks, and the worker ends with the task. It is
// 0 when no ancestor is one (a module run from a shell, or on a remote
// host through ssh).
func PlaybookPID() int {
	found := 0
	pid := os.Getpid()
	for i := 0; i < 64 && pid > 1; i++ {
		info, err := proc.Inspect(pid)
		if err != nil {
			break
		}
		if isAnsible(info.Cmdline) {
			found = pid
		}
		pid = info.PPID
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
