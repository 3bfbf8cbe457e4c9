package realtht

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stack"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tripleocommon"
)

// removedNode is the node the scale-down step removes (Compute index 1 of
// three).
const removedNode = "overcloud-novacompute-1"

// stepScaleDown is issue 24's scale-down on the real THT stack, the
// TripleO wallaby way (tripleoclient's overcloud node delete touches no
// Heat):
//  1. the working dir gets what a deploy leaves: the saved stack with its
//     nodes (overcloud_workdir's Save) and config-download (ours);
//  2. ansible-playbook ephemeral.heat.scale_down --check shows the plan and
//     runs nothing; then without --check it runs THT's rendered
//     scale_playbook.yaml with --limit overcloud-novacompute-1 (tripleo-
//     ansible's plugins on the paths), and writes the scale-down
//     environment;
//  3. the next deploy, as TripleO makes it, creates the stack anew on an
//     empty database (a second Heat) from the same inputs plus the
//     environment the working dir adds (workdir's Prepare): its nodes and
//     its inventory hold compute-0 and compute-2 under their old names and
//     no compute-1.
//
// The nodes are this host: every host runs with ansible_connection=local
// (no traffic leaves 127.0.0.0/8), and the services' scale_tasks, all
// tagged "down" in THT (they call the overcloud's Nova and Neutron APIs and
// stop its containers, which this host does not have), are skipped with
// --skip-tags down. The create of the next deploy costs about one create
// of the suite; an update of the shared stack would cost as much (a no-op
// update of such a stack takes about as long as its create) and would not
// be the path a deploy takes. Leaves: the shared stack as it was; a second
// Heat, stopped at the end of the step.
func stepScaleDown(t *testing.T, s *Suite) {
	ctx := context.Background()
	root := tripleocommon.RepoRoot()
	coll := filepath.Join(root, ".collections")
	if _, err := os.Stat(filepath.Join(coll, "ansible_collections", "ephemeral", "heat", "plugins", "modules", "overcloud_workdir")); err != nil {
		t.Fatalf("the collection is not installed in %s: run make install first (%v)", coll, err)
	}
	l, err := workdir.New(s.Workload.WorkDir, s.Workload.StackName)
	if err != nil {
		t.Fatal(err)
	}

	// 1. What the deploy leaves in the working dir.
	saved, err := l.Save(ctx, s.Client, false)
	if err != nil {
		t.Fatalf("saving the stack: %v", err)
	}
	before := computeGroup(t, saved.Nodes)
	if got := hostnames(before.Members); !reflect.DeepEqual(got, []string{"overcloud-novacompute-0", "overcloud-novacompute-1", "overcloud-novacompute-2"}) {
		t.Fatalf("Compute members before: %v", got)
	}
	if before.CountParameter != "ComputeCount" || before.RemovalPoliciesParameter != "ComputeRemovalPolicies" {
		t.Fatalf("Compute group parameters: %+v", before)
	}
	cdStart := time.Now()
	if _, err := configdownload.Run(ctx, s.Client, configdownload.RunOptions{Stack: s.Workload.StackName, Dest: l.ConfigDownload()}); err != nil {
		t.Fatalf("config-download: %v", err)
	}
	t.Logf("saved and rendered in %s", time.Since(cdStart).Round(time.Millisecond))
	for _, f := range []string{"scale_playbook.yaml", "scale_steps_tasks.yaml", "common_deploy_steps_playbooks.yaml"} {
		if _, err := os.Stat(filepath.Join(l.ConfigDownload(), f)); err != nil {
			t.Fatalf("THT's scale playbook is not rendered: %v", err)
		}
	}

	// 2. The scale-down playbook, with tripleo-ansible's plugins for THT's
	// scale playbook.
	tmp := t.TempDir()
	ta, err := tripleocommon.ExtractTripleoAnsible(filepath.Join(tmp, "tripleo-ansible"))
	if err != nil {
		t.Fatal(err)
	}
	env, err := tripleocommon.AnsibleEnv(&ta, tmp)
	if err != nil {
		t.Fatal(err)
	}
	// tripleo_all_nodes_data imports (and never uses) ansible.netcommon's
	// ipaddr filter, which netcommon 4 (Debian's) moved to ansible.utils:
	// an empty module in a collection path searched first stands in for it.
	shim := filepath.Join(tmp, "shim")
	ipaddr := filepath.Join(shim, "ansible_collections", "ansible", "netcommon", "plugins", "filter", "ipaddr.py")
	if err := os.MkdirAll(filepath.Dir(ipaddr), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ipaddr, []byte("# stands in for netcommon < 4's ipaddr filter module (imported, unused)\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env = append(env, "ANSIBLE_COLLECTIONS_PATH="+shim+":"+coll, "ANSIBLE_CONFIG="+filepath.Join(root, "ansible.cfg"),
		"HOME="+tmp) // the fact cache of tripleo-common's ansible.cfg (~/.ansible/fact_cache)
	book := filepath.Join(root, "playbooks", "scale-down.yml")
	vars := map[string]any{
		"stack_name":       s.Workload.StackName,
		"work_dir":         l.Dir,
		"scale_down_hosts": []string{removedNode},
		"scale_down_extra_vars": map[string]any{
			"ansible_connection":         "local",
			"ansible_python_interpreter": "/usr/bin/python3",
		},
		"scale_down_skip_tags": []string{"down"},
	}
	run := func(args ...string) (string, error) {
		b, _ := json.Marshal(vars)
		cmd := exec.Command("ansible-playbook", append(args, "-e", string(b), book)...)
		cmd.Env, cmd.Dir = env, tmp
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	logPath := filepath.Join(l.ConfigDownload(), configdownload.AnsibleLogFile)

	out, err := run("--check", "--diff")
	if err != nil {
		t.Fatalf("scale-down --check: %v\n%s", err, out)
	}
	if !strings.Contains(out, "would remove "+removedNode+" (Compute index 1)") || !strings.Contains(out, "ComputeRemovalPolicies") {
		t.Errorf("check mode does not show the plan:\n%s", out)
	}
	if _, err := os.Stat(logPath); !os.IsNotExist(err) {
		t.Errorf("check mode ran a playbook (%s: %v)", logPath, err)
	}
	if _, err := os.Stat(l.ScaleDown()); !os.IsNotExist(err) {
		t.Errorf("check mode wrote %s (%v)", l.ScaleDown(), err)
	}

	start := time.Now()
	out, err = run()
	if err != nil {
		log, _ := os.ReadFile(logPath)
		t.Fatalf("scale-down: %v\n%s\nansible.log:\n%s", err, out, tail(string(log), 60))
	}
	t.Logf("scale-down (plan, scale_playbook.yaml on %s, environment): %s", removedNode, time.Since(start).Round(time.Millisecond))
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatalf("the scale playbook left no log: %v", err)
	}
	if !strings.Contains(string(log), "PLAY [Scaling]") {
		t.Errorf("%s does not show THT's Scaling play:\n%s", logPath, tail(string(log), 40))
	}
	if got := recapHosts(string(log)); !reflect.DeepEqual(got, []string{removedNode}) {
		t.Errorf("the scale playbook ran on %v, want [%s] alone:\n%s", got, removedNode, tail(string(log), 20))
	}
	cmdFile, _ := os.ReadFile(filepath.Join(l.ConfigDownload(), configdownload.AnsibleCommandFile))
	if !strings.Contains(string(cmdFile), "--limit "+removedNode+" ") {
		t.Errorf("the command kept does not limit to %s:\n%s", removedNode, cmdFile)
	}

	// 3. The next deploy: a new stack on an empty database, with the
	// environment the working dir adds.
	prep, err := l.Prepare(false, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(prep.EnvironmentsAfter, []string{l.ScaleDown()}) {
		t.Fatalf("the working dir adds %v, want the scale-down environment", prep.EnvironmentsAfter)
	}
	heat2 := heattest.Start(t, nil)
	c2, err := heatapi.NewNoAuth(heat2.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	o := s.StackOptions(t)
	o.EnvironmentFiles = append(append([]string{}, o.EnvironmentFiles...), prep.EnvironmentsAfter...)
	req, err := stack.Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	res, err := req.Run(ctx, c2)
	if err != nil || res.Stack == nil || res.Stack.Status != "CREATE_COMPLETE" {
		t.Fatalf("the next deploy's create: %v (%s; failures %v)", err, res.Msg, res.Failures)
	}
	t.Logf("the next deploy's create (fresh database): %s", time.Since(start).Round(time.Second))
	ref := heatapi.StackRef{Name: res.Stack.Name, ID: res.Stack.ID}
	nodes, _, err := workdir.FindNodes(ctx, c2, ref)
	if err != nil {
		t.Fatal(err)
	}
	after := computeGroup(t, nodes)
	wantMembers := []workdir.Member{{Index: "0", Hostname: "overcloud-novacompute-0"}, {Index: "2", Hostname: "overcloud-novacompute-2"}}
	if !reflect.DeepEqual(after.Members, wantMembers) || !reflect.DeepEqual(after.Removed, []string{"1"}) {
		t.Errorf("Compute after the scale-down: members %v removed %v, want %v and [1]", after.Members, after.Removed, wantMembers)
	}
	dest := filepath.Join(tmp, "config-download-next")
	if _, err := configdownload.Run(ctx, c2, configdownload.RunOptions{Stack: s.Workload.StackName, Dest: dest}); err != nil {
		t.Fatalf("config-download of the next deploy: %v", err)
	}
	invText, err := os.ReadFile(filepath.Join(dest, configdownload.InventoryFile))
	if err != nil {
		t.Fatal(err)
	}
	var inv map[string]struct {
		Hosts map[string]any `yaml:"hosts"`
	}
	if err := yaml.Unmarshal(invText, &inv); err != nil {
		t.Fatal(err)
	}
	group := s.Workload.StackName + "_Compute"
	var hosts []string
	for h := range inv[group].Hosts {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	if !reflect.DeepEqual(hosts, []string{"overcloud-novacompute-0", "overcloud-novacompute-2"}) {
		t.Errorf("inventory group %s: %v, want overcloud-novacompute-0 and -2", group, hosts)
	}
	if strings.Contains(string(invText), removedNode) {
		t.Errorf("the next deploy's inventory still names %s", removedNode)
	}
	for _, h := range []string{"overcloud-novacompute-0", "overcloud-novacompute-2"} {
		if _, err := os.Stat(filepath.Join(dest, "host_vars", h)); err != nil {
			t.Errorf("host %s: %v", h, err)
		}
	}
}

func computeGroup(t *testing.T, n *workdir.Nodes) workdir.Group {
	t.Helper()
	for _, g := range n.Groups {
		if g.Role == "Compute" {
			return g
		}
	}
	t.Fatalf("no Compute node group in %+v", n.Groups)
	return workdir.Group{}
}

func hostnames(ms []workdir.Member) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Hostname)
	}
	return out
}

// recapLine is a host's line of a PLAY RECAP in ansible.log (which
// prefixes each line with a time stamp and pid).
var recapLine = regexp.MustCompile(`(?m)^(?:.*\| )?(\S+)\s+: ok=\d+`)

func recapHosts(log string) []string {
	i := strings.LastIndex(log, "PLAY RECAP")
	if i < 0 {
		return nil
	}
	var hosts []string
	for _, m := range recapLine.FindAllStringSubmatch(log[i:], -1) {
		hosts = append(hosts, m[1])
	}
	sort.Strings(hosts)
	return hosts
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
