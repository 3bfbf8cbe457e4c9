// Package integration runs the built collection through ansible-playbook and
// ansible-doc, against real Heat.
package integration

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/changelog"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/ansibletest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
)

// repoRoot is the checkout (two levels up from this package).
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

// ansibleEnv points ansible at the collection `make install` installed.
func ansibleEnv(t *testing.T) []string {
	t.Helper()
	return ansibletest.Env(t, repoRoot(t))
}

// testdataDeploy are the deploy playbook's vars for stack name in the
// working dir work, its Heat API on port, the top template
// tests/integration/testdata/<template>.
func testdataDeploy(root, name, work string, port int, template string) map[string]any {
	return map[string]any{"stack_name": name, "work_dir": work, "heat_api_port": port,
		"template": filepath.Join(root, "tests", "integration", "testdata", template)}
}

// playbook runs a playbook and returns the recap's changed and failed counts.
func playbook(t *testing.T, env []string, book string, args ...string) (changed, failed int, out string) {
	t.Helper()
	changed, failed, out, _ = ansibletest.Playbook(t, env, "", append([]string{book}, args...)...)
	return changed, failed, out
}

func apiUp(endpoint string) bool {
	c := http.Client{Timeout: 5 * time.Second}
	r, err := c.Get(endpoint + "/stacks")
	if err != nil {
		return false
	}
	r.Body.Close()
	return r.StatusCode == 200
}

func TestLaunchThroughAnsible(t *testing.T) {
	heattest.RequireHeat(t)
	env := ansibleEnv(t)
	book := filepath.Join("playbooks", "launch.yml")
	dir := filepath.Join(t.TempDir(), "heat-launcher")
	port, _ := proc.FreePort()
	vars := []string{"-e", "heat_dir=" + dir, "-e", fmt.Sprintf("api_port=%d", port)}
	endpoint := fmt.Sprintf("http://127.0.0.1:%d/v1/admin", port)
	t.Cleanup(func() {
		playbook(t, env, book, append(vars, "-e", "heat_state=absent")...)
	})

	steps := []struct {
		name        string
		args        []string
		wantChanged int
		wantUp      bool
		wantDir     bool
	}{
		{"check mode on a fresh host changes nothing", []string{"--check"}, 1, false, false},
		{"launch", nil, 1, true, true},
		{"second launch is idempotent", nil, 0, true, true},
		{"check-mode stop leaves Heat running", []string{"--check", "-e", "heat_state=stopped"}, 1, true, true},
		{"stop", []string{"-e", "heat_state=stopped"}, 1, false, true},
		{"second stop is idempotent", []string{"-e", "heat_state=stopped"}, 0, false, true},
		{"relaunch", nil, 1, true, true},
		{"absent", []string{"-e", "heat_state=absent", "--diff"}, 1, false, true},
		{"second absent is idempotent", []string{"-e", "heat_state=absent"}, 0, false, true},
	}
	for _, s := range steps {
		changed, failed, out := playbook(t, env, book, append(append([]string{}, vars...), s.args...)...)
		if failed != 0 || changed != s.wantChanged {
			t.Fatalf("%s: changed=%d failed=%d, want changed=%d:\n%s", s.name, changed, failed, s.wantChanged, out)
		}
		if up := apiUp(endpoint); up != s.wantUp {
			t.Fatalf("%s: API up=%v, want %v", s.name, up, s.wantUp)
		}
		if _, err := os.Stat(dir); (err == nil) != s.wantDir {
			t.Fatalf("%s: heat_dir exists=%v, want %v", s.name, err == nil, s.wantDir)
		}
		if !s.wantUp {
			if ps := proc.FindByArg(filepath.Join(dir, heatdir.HeatConf)); len(ps) != 0 {
				t.Fatalf("%s: Heat processes left: %+v", s.name, ps)
			}
		}
	}
}

// module_defaults with the action group group/ephemeral.heat.heat sets
// heat_dir once for every module that takes it (meta/runtime.yml).
func TestModuleDefaultsGroup(t *testing.T) {
	heattest.RequireHeat(t)
	env := ansibleEnv(t)
	dir := filepath.Join(t.TempDir(), "heat-launcher")
	port, _ := proc.FreePort()
	vars := []string{"-e", "heat_dir=" + dir, "-e", fmt.Sprintf("api_port=%d", port),
		"-e", "template=" + filepath.Join(repoRoot(t), "tests", "integration", "testdata", "tiny.yaml"),
		"-e", "cd_dest=" + filepath.Join(t.TempDir(), "config-download")}
	t.Cleanup(func() {
		playbook(t, env, filepath.Join("playbooks", "launch.yml"), "-e", "heat_dir="+dir,
			"-e", fmt.Sprintf("api_port=%d", port), "-e", "heat_state=absent")
	})
	if _, failed, out := playbook(t, env, filepath.Join("playbooks", "module_defaults.yml"), vars...); failed != 0 {
		t.Fatalf("the play failed:\n%s", out)
	}
}

// module_defaults with heat_dir plus a task using cloud: a task's own
// location replaces a group default of another kind (the action plugins),
// and heat_stack's result reads as openstack.cloud.stack's
// (playbooks/module_defaults_cloud.yml asserts it).
func TestModuleDefaultsTaskCloud(t *testing.T) {
	heattest.RequireHeat(t)
	env := ansibleEnv(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "heat-launcher")
	port, _ := proc.FreePort()
	clouds := filepath.Join(tmp, "clouds.yaml")
	if err := os.WriteFile(clouds, []byte(fmt.Sprintf("clouds:\n  ours:\n    auth_type: none\n    auth:\n      endpoint: http://127.0.0.1:%d/v1/admin\n", port)), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		playbook(t, env, filepath.Join("playbooks", "launch.yml"), "-e", "heat_dir="+dir,
			"-e", fmt.Sprintf("api_port=%d", port), "-e", "heat_state=absent")
	})
	vars := []string{"-e", "heat_dir=" + dir, "-e", fmt.Sprintf("api_port=%d", port), "-e", "other_dir=" + filepath.Join(tmp, "nowhere"),
		"-e", "clouds_yaml=" + clouds, "-e", "template=" + filepath.Join(repoRoot(t), "tests", "integration", "testdata", "tiny.yaml"),
		"-e", "cd_dest=" + filepath.Join(tmp, "config-download"), "-e", "work_dir=" + filepath.Join(tmp, "work")}
	_, failed, out := playbook(t, env, filepath.Join("playbooks", "module_defaults_cloud.yml"), vars...)
	if failed != 0 || !strings.Contains(out, "All assertions passed") {
		t.Fatalf("the play failed:\n%s", out)
	}
}

func TestModuleFailureThroughAnsible(t *testing.T) {
	env := ansibleEnv(t)
	dir := filepath.Join(t.TempDir(), "heat-launcher")
	// An unknown parameter and a bad choice: the play fails with a message naming them.
	cmd := exec.Command("ansible", "localhost", "-i", "localhost,", "-c", "local", "-m", "ephemeral.heat.ephemeral_heat_launch",
		"-a", "heat_dir="+dir+" state=running colour=red")
	cmd.Env = env
	b, _ := cmd.CombinedOutput()
	out := string(b)
	for _, want := range []string{"FAILED", `unsupported parameter \"colour\"`, `parameter \"state\" is \"running\"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "MODULE FAILURE") {
		t.Errorf("module failure instead of a clean JSON failure:\n%s", out)
	}
}

// installedModules lists the modules of the installed collection by their
// sidecar docs, and fails unless each has its binary and each binary its docs.
func installedModules(t *testing.T) (dir string, names []string) {
	t.Helper()
	ansibleEnv(t) // fails with what to do when the collection is not installed
	dir = filepath.Join(repoRoot(t), ".collections", "ansible_collections", "ephemeral", "heat", "plugins", "modules")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	docs, bins := map[string]bool{}, map[string]bool{}
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".yml"); ok {
			docs[n] = true
			names = append(names, n)
		} else {
			bins[e.Name()] = true
		}
	}
	for n := range docs {
		if !bins[n] {
			t.Errorf("module %s is documented but has no binary in %s", n, dir)
		}
	}
	for n := range bins {
		if !docs[n] {
			t.Errorf("binary %s in %s has no sidecar documentation %s.yml", n, dir, n)
		}
	}
	if len(names) < 5 {
		t.Fatalf("only %d modules in %s: %v", len(names), dir, names)
	}
	return dir, names
}

// TestHelpMatchesDocs holds the --help of every installed module binary
// against its sidecar documentation: the same options, types, elements,
// required flags, defaults and choices.
func TestHelpMatchesDocs(t *testing.T) {
	dir, names := installedModules(t)
	for _, m := range names {
		out, err := exec.Command(filepath.Join(dir, m), "--help").Output()
		if err != nil {
			t.Errorf("%s --help: %v", m, err)
			continue
		}
		if err := module.CheckHelp(out, filepath.Join(dir, m+".yml")); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
}

func TestAnsibleDoc(t *testing.T) {
	env := ansibleEnv(t)
	_, names := installedModules(t)
	for _, m := range names {
		cmd := exec.Command("ansible-doc", "ephemeral.heat."+m)
		cmd.Env = append(env, "PAGER=cat")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("ansible-doc ephemeral.heat.%s: %v\n%s", m, err, b)
		}
		for _, want := range []string{"> EPHEMERAL.HEAT." + strings.ToUpper(m), "OPTIONS", "EXAMPLES", "RETURN VALUES"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("ansible-doc %s lacks %q", m, want)
			}
		}
	}
}

// checkoutEnv is the environment of a user running ansible from the
// checkout's root: its ansible.cfg decides where ephemeral.heat is (the
// checkout's link to collection/), not the installed copy `make` exports.
func checkoutEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "ANSIBLE_COLLECTIONS_PATH", "ANSIBLE_COLLECTIONS_PATHS", "ANSIBLE_CONFIG", "PAGER":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "ANSIBLE_NOCOLOR=1", "PAGER=cat")
}

// TestCheckoutIsTheCollection runs ansible-galaxy and ansible-doc in the
// checkout as a user does from its root: ephemeral.heat is listed from the
// checkout's ansible_collections with galaxy.yml's version, and every role
// of collection/roles has its documentation.
func TestCheckoutIsTheCollection(t *testing.T) {
	root := repoRoot(t)
	coll := filepath.Join(root, "collection")
	g, err := changelog.ReadGalaxy(changelog.GalaxyPath(coll))
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = root, checkoutEnv()
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, b)
		}
		return string(b)
	}

	out := run("ansible-galaxy", "collection", "list", "ephemeral.heat")
	// "# <root>/ansible_collections", a header, then "ephemeral.heat <version>".
	section, version := "", ""
	for _, l := range strings.Split(out, "\n") {
		if h, ok := strings.CutPrefix(l, "# "); ok {
			section = h
			continue
		}
		if f := strings.Fields(l); len(f) == 2 && f[0] == "ephemeral.heat" && section == filepath.Join(root, "ansible_collections") {
			version = f[1]
		}
	}
	if version != g.Version || strings.Contains(out, "cannot detect version") {
		t.Errorf("ansible-galaxy collection list in the checkout: ephemeral.heat %q under %s/ansible_collections, want galaxy.yml's %s:\n%s", version, root, g.Version, out)
	}

	roles, err := os.ReadDir(filepath.Join(coll, "roles"))
	if err != nil {
		t.Fatal(err)
	}
	if len(roles) < 3 {
		t.Fatalf("only %d roles in %s/roles", len(roles), coll)
	}
	for _, r := range roles {
		out := run("ansible-doc", "-t", "role", "ephemeral.heat."+r.Name())
		for _, want := range []string{
			"> EPHEMERAL.HEAT." + strings.ToUpper(r.Name()) + " ",
			"(" + filepath.Join(root, "ansible_collections", "ephemeral", "heat") + ")",
			"ENTRY POINT: main - ",
			"OPTIONS",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("ansible-doc -t role ephemeral.heat.%s in the checkout lacks %q:\n%s", r.Name(), want, out)
			}
		}
	}
}
