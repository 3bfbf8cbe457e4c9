// Package ansibletest runs this checkout's playbooks in tests as an
// operator runs them: ansible-playbook with the collection `make install`
// put in .collections and the checkout's ansible.cfg, and reads the play
// recap.
package ansibletest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// Env is the environment of ansible-playbook for the checkout at root: the
// installed collection, the checkout's ansible.cfg, no colours, and a
// TMPDIR of the test's own, removed when it ends (the module payloads a
// killed task leaves, check mode's temporary log directories). It fails
// the test, saying what to run, when the collection is not installed or
// ansible-playbook is missing (Environ).
func Env(t testing.TB, root string) []string {
	t.Helper()
	env, err := Environ(root)
	if err != nil {
		t.Fatal(err)
	}
	return append(env, "TMPDIR="+t.TempDir())
}

// Environ is Env for a program (the benchmarks): the error says what to
// run.
func Environ(root string) ([]string, error) {
	coll := filepath.Join(root, ".collections")
	bin := filepath.Join(coll, "ansible_collections", "ephemeral", "heat", "plugins", "modules", "ephemeral_heat_launch")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("the built collection is not installed in %s: run 'make install' (or 'make test') first", coll)
	}
	if _, err := exec.LookPath("ansible-playbook"); err != nil {
		return nil, errors.New("ansible-playbook is not installed: apt-get install -y ansible-core (or make deps)")
	}
	return append(os.Environ(), "ANSIBLE_COLLECTIONS_PATH="+coll, "ANSIBLE_CONFIG="+filepath.Join(root, "ansible.cfg"),
		"ANSIBLE_NOCOLOR=1", "ANSIBLE_FORCE_COLOR=0"), nil
}

var recapRe = regexp.MustCompile(`localhost\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)`)

// Playbook runs `ansible-playbook -i localhost, args...` with env in dir
// ("": the test's own) and returns localhost's changed and failed counts
// from the play recap, the output, and the command's error (a non-zero
// exit). No recap fails the test with the output.
func Playbook(t testing.TB, env []string, dir string, args ...string) (changed, failed int, out string, err error) {
	t.Helper()
	cmd := exec.Command("ansible-playbook", append([]string{"-i", "localhost,"}, args...)...)
	cmd.Env, cmd.Dir = env, dir
	b, err := cmd.CombinedOutput()
	out = string(b)
	m := recapRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no play recap in ansible-playbook output (%v):\n%s", err, out)
	}
	changed, _ = strconv.Atoi(m[2])
	failed, _ = strconv.Atoi(m[4])
	return changed, failed, out, err
}

// InstallHeatAgent installs tests/heatagent's hook runner fixture on this
// host (its install.sh; idempotent, serialised by its own lock), which the
// sample's software deployments need to be applied here.
func InstallHeatAgent(t testing.TB, root string) {
	t.Helper()
	if _, err := exec.LookPath("sudo"); err != nil {
		t.Fatal("sudo is not installed (deployments.yaml becomes root as TripleO's does): apt-get install -y sudo (or make deps)")
	}
	cmd := exec.Command(filepath.Join(root, "tests", "heatagent", "install.sh"))
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tests/heatagent/install.sh: %v\n%s", err, out)
	}
}
