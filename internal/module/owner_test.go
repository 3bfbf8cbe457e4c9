package module

import "testing"

func TestIsAnsible(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want bool
	}{
		{[]string{"/usr/bin/python3", "/usr/bin/ansible-playbook", "-i", "x", "site.yml"}, true},
		{[]string{"/usr/bin/ansible-playbook", "site.yml"}, true},
		{[]string{"python3.11", "/usr/local/bin/ansible", "all", "-m", "ping"}, true},
		{[]string{"/usr/bin/python3", "/root/.ansible/tmp/x/AnsiballZ_command.py"}, false},
		{[]string{"/bin/sh", "-c", "ansible-playbook site.yml"}, false},
		{[]string{"/usr/bin/python3", "-m", "ansible-playbook"}, false},
		{nil, false},
	} {
		if got := isAnsible(tc.argv); got != tc.want {
			t.Errorf("isAnsible(%q) = %v, want %v", tc.argv, got, tc.want)
		}
	}
}

// The owner is the playbook running the module: the main process above
// the worker that runs the task, not a playbook that ran that playbook
// from one of its own tasks.
func TestNearestAnsible(t *testing.T) {
	py, pb := "/usr/bin/python3", "/usr/bin/ansible-playbook"
	module := []string{"/root/.ansible/tmp/ansible-tmp-1/overcloud_workdir", "/root/.ansible/tmp/ansible-tmp-1/args"}
	sh := []string{"/bin/sh", "-c", "..."}
	worker, main := []string{py, pb, "-i", "inv", "site.yml"}, []string{py, pb, "-i", "inv", "site.yml"}
	command := []string{py, "/root/.ansible/tmp/ansible-tmp-2/AnsiballZ_command.py"}
	outerWorker, outerMain := []string{py, pb, "outer.yml"}, []string{py, pb, "outer.yml"}
	for _, tc := range []struct {
		name  string
		chain [][]string
		want  int
	}{
		{"a playbook", [][]string{module, sh, worker, main, {"bash"}, {"sshd"}}, 3},
		{"no shell between", [][]string{module, worker, main, {"systemd"}}, 2},
		{"run by a task of another playbook", [][]string{module, sh, worker, main, command, sh, outerWorker, outerMain, {"bash"}}, 3},
		{"ad hoc ansible", [][]string{module, sh, {py, "/usr/bin/ansible", "localhost", "-m", "x"}, {py, "/usr/bin/ansible", "localhost"}, {"bash"}}, 3},
		{"from a shell", [][]string{module, {"bash"}, {"sshd"}}, -1},
	} {
		if got := nearestAnsible(tc.chain); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
