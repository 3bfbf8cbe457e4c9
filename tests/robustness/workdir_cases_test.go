package robustness

import (
	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The working dir's inputs (issue 33): the nodes file, the scale-down
// environment and the passwords file as overcloud_workdir reads them, and
// the host names an operator gives a scale-down.

// wdNodes is a nodes file as a deploy saves it: three Computes, one
// Controller.
const wdNodes = `stack: overcloud
groups:
  - resource: Compute
    role: Compute
    count_parameter: ComputeCount
    removal_policies_parameter: ComputeRemovalPolicies
    removed: []
    members:
      - {index: "0", hostname: overcloud-novacompute-0}
      - {index: "1", hostname: overcloud-novacompute-1}
      - {index: "2", hostname: overcloud-novacompute-2}
  - resource: Controller
    role: Controller
    count_parameter: ControllerCount
    removal_policies_parameter: ControllerRemovalPolicies
    removed: []
    members:
      - {index: "0", hostname: overcloud-controller-0}
complete: true
`

// wdInventory is the config-download inventory of wdNodes.
const wdInventory = `Compute:
  hosts:
    overcloud-novacompute-0: {}
    overcloud-novacompute-1: {}
    overcloud-novacompute-2: {}
Controller:
  hosts:
    overcloud-controller-0: {}
overcloud:
  children: {Compute: {}, Controller: {}}
`

// workDir makes a working dir (0700) in the sandbox with the nodes file
// nodes (none when ""), the config-download inventory, and the files of
// extra (path in the working dir: content), and returns its path.
func workDir(s *sandbox, nodes string, extra map[string]string) string {
	s.t.Helper()
	wd := s.dir("wd", 0o700)
	s.dir("wd/outputs", 0o700)
	s.dir("wd/config-download/overcloud", 0o700)
	if nodes != "" {
		s.file("wd/outputs/overcloud-nodes.yaml", nodes, 0o600)
	}
	s.file("wd/config-download/overcloud/tripleo-ansible-inventory.yaml", wdInventory, 0o600)
	for p, c := range extra {
		s.file(filepath.Join("wd", p), c, 0o600)
	}
	// As a deploy leaves it: marked ours, its lock file made.
	if err := pathguard.WriteMarker(wd, pathguard.KindWorkDir); err != nil {
		s.t.Fatal(err)
	}
	s.file("wd/workdir.lock", "", 0o600)
	return wd
}

// scaleDown returns a setup of a scale-down of hosts on a working dir whose
// nodes file is nodes, after prep (which may replace files) ran.
func scaleDown(nodes string, hosts []any, prep func(s *sandbox, wd string)) func(*sandbox) (a, string) {
	return func(s *sandbox) (a, string) {
		wd := workDir(s, nodes, nil)
		if prep != nil {
			prep(s, wd)
		}
		return a{"work_dir": wd, "action": "scale_down", "hosts": hosts}, ""
	}
}

// workdirCases are the bad inputs of the working dir.
func workdirCases() []badCase {
	one := []any{"overcloud-novacompute-1"}
	nodesPath := "wd/outputs/overcloud-nodes.yaml"
	redeploy := "redeploy overcloud to rewrite it"
	return []badCase{
		{name: "nodes file with a host listed twice", module: "overcloud_workdir",
			setup: scaleDown(strings.Replace(wdNodes, "hostname: overcloud-novacompute-2", "hostname: overcloud-novacompute-0", 1), one, nil),
			want:  []string{nodesPath, "groups[0]", "members[2]", `"overcloud-novacompute-0" is also the host name of groups[0].members[0]`, redeploy}},
		{name: "nodes file with a host in two groups", module: "overcloud_workdir",
			setup: scaleDown(strings.Replace(wdNodes, "hostname: overcloud-controller-0", "hostname: overcloud-novacompute-1", 1), one, nil),
			want:  []string{nodesPath, "groups[1] (Controller", `"overcloud-novacompute-1" is also the host name of groups[0].members[1]`, redeploy}},
		{name: "nodes file cut off mid-way", module: "overcloud_workdir",
			setup: scaleDown(wdNodes[:strings.Index(wdNodes, "  - resource: Controller")], one, nil),
			want:  []string{nodesPath, "does not end with complete: true", "cut off", redeploy}},
		{name: "nodes file cut off in a value", module: "overcloud_workdir",
			setup: scaleDown(wdNodes[:strings.Index(wdNodes, "novacompute-2}")+4], one, nil),
			want:  []string{nodesPath, "not valid YAML", redeploy}},
		{name: "nodes file with a non-integer index", module: "overcloud_workdir",
			setup: scaleDown(strings.Replace(wdNodes, `{index: "1",`, `{index: "one",`, 1), one, nil),
			want:  []string{nodesPath, "groups[0].members[1].index", `"one" is not a member index`, redeploy}},
		{name: "nodes file with a pattern as a host name", module: "overcloud_workdir",
			setup: scaleDown(strings.Replace(wdNodes, "hostname: overcloud-novacompute-2", `hostname: "overcloud-*,all"`, 1), one, nil),
			want:  []string{nodesPath, "groups[0].members[2].hostname", `"overcloud-*,all" is not a host name`, redeploy}},
		{name: "nodes file is a FIFO", module: "overcloud_workdir",
			setup: scaleDown("", one, func(s *sandbox, wd string) { s.fifo(nodesPath) }),
			want:  []string{"nodes file", nodesPath, "is a FIFO"}},
		{name: "nodes file is a symlink to /dev/zero", module: "overcloud_workdir",
			setup: scaleDown("", one, func(s *sandbox, wd string) { s.symlink(nodesPath, "/dev/zero") }),
			want:  []string{"nodes file", nodesPath, "is a symbolic link"}},
		{name: "scale-down environment is a FIFO", module: "overcloud_workdir",
			setup: scaleDown(wdNodes, one, func(s *sandbox, wd string) { s.fifo("wd/overcloud-scale-down.yaml") }),
			want:  []string{"scale-down environment", "overcloud-scale-down.yaml", "is a FIFO"}},
		{name: "scale-down environment with a negative count", module: "overcloud_workdir",
			setup: scaleDown(wdNodes, one, func(s *sandbox, wd string) {
				s.file("wd/overcloud-scale-down.yaml", "parameters:\n  ComputeCount: -1\n", 0o600)
			}),
			want: []string{"scale-down environment", "overcloud-scale-down.yaml", "parameters.ComputeCount (line 2) is negative"}},
		{name: "scale-down environment with removals that are no indices", module: "overcloud_workdir",
			setup: scaleDown(wdNodes, one, func(s *sandbox, wd string) {
				s.file("wd/overcloud-scale-down.yaml", "parameter_defaults:\n  ComputeRemovalPolicies: [{resource_list: [one]}]\n", 0o600)
			}),
			want: []string{"scale-down environment", "parameter_defaults.ComputeRemovalPolicies", "resource_list[0] (line 2) is not a member index"}},
		{name: "config-download inventory is a FIFO", module: "overcloud_workdir",
			setup: scaleDown(wdNodes, one, func(s *sandbox, wd string) {
				p := "wd/config-download/overcloud/tripleo-ansible-inventory.yaml"
				os.Remove(s.path(p))
				s.fifo(p)
			}),
			want: []string{"config-download inventory", "tripleo-ansible-inventory.yaml", "is a FIFO"}},
		{name: "passwords file is a FIFO", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			wd := workDir(s, wdNodes, nil)
			s.fifo("wd/overcloud-passwords.yaml")
			return a{"work_dir": wd, "action": "prepare"}, ""
		}, want: []string{"passwords file", "overcloud-passwords.yaml", "is a FIFO"}},
		{name: "passwords file whose error would quote a password", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			wd := workDir(s, wdNodes, map[string]string{"overcloud-passwords.yaml": "parameter_defaults:\n  AdminPassword: !!int s3cr3t-Pa55\n"})
			return a{"work_dir": wd, "action": "prepare"}, ""
		}, want: []string{"passwords file", "overcloud-passwords.yaml", "line 2: parameter_defaults.AdminPassword"}},
		{name: "removing the last Controller", module: "overcloud_workdir",
			setup: scaleDown(wdNodes, []any{"overcloud-controller-0"}, nil),
			want:  []string{"removing overcloud-controller-0 leaves group Controller", "allow_empty_group: true", "nothing was run"}},
		{name: "host name all", module: "overcloud_workdir",
			setup: scaleDown(wdNodes, []any{"all"}, nil), want: []string{`unknown node(s) "all"`, "overcloud-controller-0"}},
		{name: "host name x:y", module: "overcloud_workdir",
			setup: scaleDown(wdNodes, []any{"x:y"}, nil), want: []string{"hosts", `"x:y" is not a host name`}},
		{name: "host name a,b", module: "overcloud_workdir",
			setup: scaleDown(wdNodes, []any{"overcloud-novacompute-0,overcloud-controller-0"}, nil),
			want:  []string{"hosts", `"overcloud-novacompute-0,overcloud-controller-0" is not a host name`}},
		{name: "host name *", module: "overcloud_workdir",
			setup: scaleDown(wdNodes, []any{"*"}, nil), want: []string{"hosts", `"*" is not a host name`}},
		{name: "empty host name", module: "overcloud_workdir",
			setup: scaleDown(wdNodes, []any{"overcloud-novacompute-0", ""}, nil), want: []string{"hosts[1] is empty"}},
	}
}

// TestHandCasesWorkdir runs workdirCases with the hand cases (the suite's
// -run TestHandCases selects it).
func TestHandCasesWorkdir(t *testing.T) {
	start := time.Now()
	for _, c := range workdirCases() {
		t.Run(c.name, func(t *testing.T) {
			counted.hand.Add(1)
			r := c.check(t)
			if strings.Contains(r.stdout+r.stderr, "s3cr3t") {
				t.Errorf("a password value in the output: %s", truncate(r.stdout, 600))
			}
			t.Logf("%s in %s, %d MiB: %s", c.module, r.elapsed.Round(time.Millisecond), r.rss>>20, truncate(r.msg(), 300))
		})
	}
	t.Logf("%d working dir cases in %s", len(workdirCases()), time.Since(start).Round(time.Second))
}

// readYAML reads a file of the sandbox as YAML.
func readYAML(t *testing.T, p string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestControlsWorkdir: what the operator wrote under parameters: is kept.
func TestControlsWorkdir(t *testing.T) {
	t.Run("passwords file with parameters: keeps the value", func(t *testing.T) {
		s := newSandbox(t)
		const secret = "operator-s3cr3t-value"
		wd := workDir(s, "", map[string]string{"overcloud-passwords.yaml": "parameters:\n  AdminPassword: " + secret + "\n"})
		r := runModule(t, s, "overcloud_workdir", a{"work_dir": wd, "action": "prepare"}, "")
		if r.res["failed"] != false || strings.Contains(r.stdout+r.stderr, secret) {
			t.Fatalf("prepare: %s", truncate(r.stdout, 600))
		}
		if gen, _ := r.res["passwords_generated"].([]any); len(gen) == 0 || strings.Contains(r.stdout, `"passwords_generated":["AdminPassword"`) {
			t.Errorf("generated %v", gen)
		}
		doc := readYAML(t, filepath.Join(wd, "overcloud-passwords.yaml"))
		params, _ := doc["parameters"].(map[string]any)
		defaults, _ := doc["parameter_defaults"].(map[string]any)
		if params["AdminPassword"] != secret || defaults["AdminPassword"] != nil || defaults["RabbitPassword"] == nil {
			t.Errorf("the passwords file: parameters %v, parameter_defaults has AdminPassword %v, RabbitPassword %v",
				params, defaults["AdminPassword"] != nil, defaults["RabbitPassword"] != nil)
		}
		// The export takes the operator's value too.
		r = runModule(t, s, "overcloud_workdir", a{"work_dir": wd, "action": "export"}, "")
		if r.res["failed"] != false {
			t.Fatalf("export: %s", truncate(r.stdout, 600))
		}
		exp := readYAML(t, filepath.Join(wd, "overcloud-export.yaml"))
		pd, _ := exp["parameter_defaults"].(map[string]any)
		if pw, _ := pd["AdminPassword"]; pw != secret {
			t.Errorf("the export's AdminPassword is not the operator's")
		}
	})
	t.Run("scale-down environment with removals under parameters: keeps them", func(t *testing.T) {
		s := newSandbox(t)
		wd := workDir(s, wdNodes, map[string]string{"overcloud-scale-down.yaml": "parameters:\n  ComputeCount: 2\n" +
			"  ComputeRemovalPolicies: [{resource_list: [1]}]\n"})
		r := runModule(t, s, "overcloud_workdir", a{"work_dir": wd, "action": "scale_down", "hosts": []any{"overcloud-novacompute-2"}}, "")
		if r.res["failed"] != false || r.res["changed"] != true {
			t.Fatalf("scale_down: %s", truncate(r.stdout, 600))
		}
		if l, _ := r.res["limit"].([]any); len(l) != 1 || l[0] != "overcloud-novacompute-2" {
			t.Errorf("limit %v", r.res["limit"])
		}
		doc := readYAML(t, filepath.Join(wd, "overcloud-scale-down.yaml"))
		params, _ := doc["parameters"].(map[string]any)
		want := []any{map[string]any{"resource_list": []any{1, 2}}}
		if params["ComputeCount"] != 1 || !equalJSON(params["ComputeRemovalPolicies"], want) {
			t.Errorf("the environment: %v", doc)
		}
	})
}

func equalJSON(x, y any) bool {
	bx, _ := yaml.Marshal(x)
	by, _ := yaml.Marshal(y)
	return string(bx) == string(by)
}
