package realtht

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/lifecycle"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/templates"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/ansibletest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tripleocommon"
)

// lifecyclePlaybooks are the playbooks THT's common/deploy-steps.j2
// renders for the update and upgrade commands.
var lifecyclePlaybooks = []string{"update_steps_playbook.yaml", "external_update_steps_playbook.yaml",
	"upgrade_steps_playbook.yaml", "post_upgrade_steps_playbook.yaml", "external_upgrade_steps_playbook.yaml",
	"deploy_steps_playbook.yaml"}

// stepLifecycle (issue 29): update prepare, then upgrade prepare, through
// this collection's playbooks on the working dir the scale-down left, with
// THT's own lifecycle environments (templates_dir: the rendered tree). Each
// creates a fresh stack (its own Heat) whose environment holds exactly the
// lifecycle environment's parameters but where the operator's environment
// or parameters override them, as tripleoclient's order makes them win;
// config-download then holds every lifecycle playbook; each passes
// ansible-playbook --syntax-check with tripleo-ansible stable/wallaby, and
// the run playbooks list their tasks for one Compute. The status records
// the stage; a run of the wrong kind is refused. Leaves the working dir at
// the upgrade prepare.
func stepLifecycle(t *testing.T, s *Suite) {
	root := tripleocommon.RepoRoot()
	deployEnv := ansibletest.Env(t, root)
	l, err := workdir.New(s.Workload.WorkDir, s.Workload.StackName)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	// The operator's own environment sets a parameter both lifecycle
	// environments set (it comes after them: it wins); `parameters` (Heat's
	// top-level parameters: THT's lifecycle environments set none of them)
	// still reach the stack.
	operatorEnv := filepath.Join(tmp, "operator.yaml")
	operatorStreams := []any{map[string]any{"module": "container-tools", "stream": "operator", "distribution_version": "8"}}
	if err := os.WriteFile(operatorEnv, []byte("parameter_defaults:\n  DnfStreams: [{module: container-tools, stream: operator, distribution_version: '8'}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	declared := declaredParameters(t, s.Workload.Template,
		append(append([]string{filepath.Join(s.Workload.TemplateDir, lifecycle.Environment(lifecycle.UpgradePrepare))}, s.Workload.EnvironmentFiles...), operatorEnv))
	const operatorCloud = "overcloud-lifecycle.example.com"
	params := map[string]any{"CloudName": operatorCloud}
	for k, v := range s.Workload.Parameters {
		params[k] = v
	}
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{
		"stack_name":         s.Workload.StackName,
		"work_dir":           l.Dir,
		"template":           s.Workload.Template,
		"templates_dir":      s.Workload.TemplateDir,
		"environment_files":  append(append([]string{}, s.Workload.EnvironmentFiles...), operatorEnv),
		"parameters":         params,
		"stack_timeout":      s.Workload.TimeoutMins,
		"heat_api_port":      port,
		"generate_passwords": false,
		"deploy_node_checks": false,
	}
	play := func(book string, extra map[string]any) (int, int, string) {
		t.Helper()
		v := map[string]any{}
		for k, x := range vars {
			v[k] = x
		}
		for k, x := range extra {
			v[k] = x
		}
		b, _ := json.Marshal(v)
		start := time.Now()
		changed, failed, out, _ := ansibletest.Playbook(t, deployEnv, tmp, "-e", string(b), filepath.Join(root, "playbooks", book))
		t.Logf("%s in %s (changed=%d failed=%d)", book, time.Since(start).Round(100*time.Millisecond), changed, failed)
		return changed, failed, out
	}

	for _, c := range []struct{ book, stage string }{
		{"update-prepare.yml", lifecycle.UpdatePrepare},
		{"upgrade-prepare.yml", lifecycle.UpgradePrepare},
	} {
		changed, failed, out := play(c.book, nil)
		if failed != 0 || changed == 0 {
			t.Fatalf("%s: changed=%d failed=%d\n%s", c.book, changed, failed, tail(out, 80))
		}
		st, err := l.ReadStatus()
		if err != nil || st == nil || st.Status != workdir.StatusSuccess || st.Stage != c.stage {
			t.Fatalf("%s: deployment status %+v %v", c.book, st, err)
		}
		checkLifecycleEnvironment(t, l, filepath.Join(s.Workload.TemplateDir, lifecycle.Environment(c.stage)), declared, operatorStreams, operatorCloud)
		for _, b := range lifecyclePlaybooks {
			if _, err := os.Stat(filepath.Join(l.ConfigDownload(), b)); err != nil {
				t.Errorf("%s: config-download lacks %s: %v", c.book, b, err)
			}
		}
	}

	// A run of the other kind is refused, naming the stage, before anything runs.
	if _, failed, out := play("update-run.yml", map[string]any{"limit": "overcloud-novacompute-0"}); failed == 0 ||
		!strings.Contains(out, "update_run needs an update prepare") || !strings.Contains(out, "the last deploy was an upgrade prepare") {
		t.Errorf("an update run after the upgrade prepare:\n%s", tail(out, 30))
	}

	// THT's lifecycle playbooks against tripleo-ansible stable/wallaby.
	env := tripleoAnsibleEnv(t, root, tmp)
	ansible := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("ansible-playbook", append([]string{"-i", l.Inventory()}, args...)...)
		cmd.Env, cmd.Dir = env, l.ConfigDownload()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("ansible-playbook %s: %v\n%s", strings.Join(args, " "), err, tail(string(out), 40))
		}
		return string(out)
	}
	for _, b := range lifecyclePlaybooks {
		ansible("--syntax-check", b)
	}
	const compute = "overcloud-novacompute-0"
	for _, c := range []struct{ book, want string }{
		{"update_steps_playbook.yaml", "(Compute): Run update"},
		{"upgrade_steps_playbook.yaml", "upgrade_steps"},
	} {
		out := ansible("--list-tasks", "--limit", compute, c.book)
		if !strings.Contains(out, "TAGS: [") || !strings.Contains(out, c.want) {
			t.Errorf("%s --list-tasks --limit %s lists no %s task:\n%s", c.book, compute, c.want, tail(out, 40))
		}
	}
}

// checkLifecycleEnvironment checks the environment Heat merged for the
// stack (saved in the working dir) against the lifecycle environment at
// path: each of its parameter_defaults that a template of the tree
// declares is there with its value, but DnfStreams, which the operator's
// environment sets after it (Heat keeps no later environment's value of a
// parameter no template declares); each of its resource_registry entries
// is there; the operator's `parameters` are there.
func checkLifecycleEnvironment(t *testing.T, l workdir.Layout, path string, declared map[string]bool, operatorStreams []any, operatorCloud string) {
	t.Helper()
	var lifeEnv, saved struct {
		ParameterDefaults map[string]any `yaml:"parameter_defaults"`
		Parameters        map[string]any `yaml:"parameters"`
		ResourceRegistry  map[string]any `yaml:"resource_registry"`
	}
	for p, v := range map[string]any{path: &lifeEnv, l.Environment(): &saved} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if len(lifeEnv.ParameterDefaults) == 0 {
		t.Fatalf("%s has no parameter_defaults: the tree changed", path)
	}
	checked := 0
	for k, want := range lifeEnv.ParameterDefaults {
		if !declared[k] {
			continue
		}
		checked++
		if k == "DnfStreams" {
			want = operatorStreams // the operator's environment comes after it
		}
		if got := saved.ParameterDefaults[k]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the stack's parameter_defaults %s = %#v, want %#v", filepath.Base(path), k, got, want)
		}
	}
	for k, want := range lifeEnv.ResourceRegistry {
		if got := saved.ResourceRegistry[k]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the stack's resource_registry %s = %#v, want %#v", filepath.Base(path), k, got, want)
		}
	}
	if checked < 1 || !declared["DnfStreams"] {
		t.Errorf("%s: only %d of its parameters are declared by a template of the tree (DnfStreams: %v): the tree changed", filepath.Base(path), checked, declared["DnfStreams"])
	}
	if got := saved.Parameters["CloudName"]; got != operatorCloud {
		t.Errorf("the stack's parameters CloudName = %#v, want the operator's %q", got, operatorCloud)
	}
}

// declaredParameters lists the parameters Heat knows a schema of for the
// stack: those of every template among the files the stack is sent (as
// heat_stack processes the template and environments; Heat's
// Template.all_param_schemata). Heat merges a later environment's value
// of those only.
func declaredParameters(t *testing.T, template string, envs []string) map[string]bool {
	t.Helper()
	b, err := templates.Process(template, envs)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, content := range append([]string{mustJSON(t, b.Template)}, values(b.Files)...) {
		var tpl struct {
			Version    any            `yaml:"heat_template_version"`
			Parameters map[string]any `yaml:"parameters"`
		}
		if yaml.Unmarshal([]byte(content), &tpl) == nil && tpl.Version != nil {
			for k := range tpl.Parameters {
				out[k] = true
			}
		}
	}
	return out
}

func values(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
