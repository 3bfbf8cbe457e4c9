package realtht

import (
	"context"
	"encoding/json"
	"io/fs"
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
	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/ansibletest"
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
//  3. the next deploy, as TripleO makes it, is a run of the deploy
//     playbook (run_deploy=false) on the working dir: its own Heat, the
//     stack created anew on an empty database from the same inputs plus
//     the environment the working dir adds (workdir's Prepare) and an
//     environment of the test's own naming a provider template outside
//     the tree; its saved nodes and its inventory hold compute-0 and
//     compute-2 under their old names and no compute-1;
//  4. an identical re-run of the playbook (issue 24) starts no Heat (the
//     heat-launcher logs are untouched), writes no dump and reports
//     changed=0; its time is logged;
//  5. after an edit of that provider template the re-run deploys, and the
//     edit shows in the saved outputs and in config-download.
//
// The nodes are this host: every host runs with ansible_connection=local
// (no traffic leaves 127.0.0.0/8), and the services' scale_tasks, all
// tagged "down" in THT (they call the overcloud's Nova and Neutron APIs and
// stop its containers, which this host does not have), are skipped with
// --skip-tags down. The two deploys cost about a create of the suite each
// (the deploy creates anew, as TripleO does). Leaves: the shared stack as
// it was; the working dir as the last deploy left it (its Heat stopped).
func stepScaleDown(t *testing.T, s *Suite) {
	ctx := context.Background()
	root := tripleocommon.RepoRoot()
	// The deploy playbook runs as an operator runs it: this collection,
	// the checkout's ansible.cfg, the user's HOME.
	deployEnv := ansibletest.Env(t, root)
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
	env := tripleoAnsibleEnv(t, root, tmp)
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

	// 3. The next deploy, through the deploy playbook: a new stack on an
	// empty database, with the environment the working dir adds, and the
	// operator's own environment naming a provider template outside the
	// tree.
	prep, err := l.Prepare(workdir.PrepareOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(prep.EnvironmentsAfter, []string{l.ScaleDown()}) {
		t.Fatalf("the working dir adds %v, want the scale-down environment", prep.EnvironmentsAfter)
	}
	site := filepath.Join(tmp, "site")
	provider := filepath.Join(site, "custom", "chrony.yaml")
	chrony, err := os.ReadFile(filepath.Join(s.Workload.TemplateDir, "deployment", "timesync", "chrony-baremetal-ansible.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	siteEnv := filepath.Join(site, "env", "chrony.yaml")
	for p, b := range map[string][]byte{
		provider: chrony,
		siteEnv:  []byte("resource_registry:\n  OS::TripleO::Services::Chrony: ../custom/chrony.yaml\n"),
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	deployVars := map[string]any{
		"stack_name":        s.Workload.StackName,
		"work_dir":          l.Dir,
		"template":          s.Workload.Template,
		"environment_files": append(append([]string{}, s.Workload.EnvironmentFiles...), siteEnv),
		"parameters":        s.Workload.Parameters,
		"stack_timeout":     s.Workload.TimeoutMins,
		"heat_api_port":     port,
		"run_deploy":        false,
		// The workload's passwords file is already in its environments.
		"generate_passwords": false,
		// The nodes of the inventory are not reachable hosts.
		"deploy_node_checks": false,
	}
	deployBook := filepath.Join(root, "playbooks", "deploy-overcloud.yml")
	deploy := func(what string) (int, string) {
		t.Helper()
		b, _ := json.Marshal(deployVars)
		start := time.Now()
		changed, failed, out, err := ansibletest.Playbook(t, deployEnv, tmp, "-e", string(b), deployBook)
		if err != nil || failed != 0 {
			t.Fatalf("%s: deploy-overcloud.yml: %v\n%s", what, err, tail(out, 80))
		}
		t.Logf("%s: deploy-overcloud.yml in %s (changed=%d)", what, time.Since(start).Round(100*time.Millisecond), changed)
		return changed, out
	}

	if changed, _ := deploy("the next deploy"); changed == 0 {
		t.Fatal("the next deploy changed nothing")
	}
	after := computeGroup(t, readNodes(t, l))
	wantMembers := []workdir.Member{{Index: "0", Hostname: "overcloud-novacompute-0"}, {Index: "2", Hostname: "overcloud-novacompute-2"}}
	if !reflect.DeepEqual(after.Members, wantMembers) || !reflect.DeepEqual(after.Removed, []string{"1"}) {
		t.Errorf("Compute after the scale-down: members %v removed %v, want %v and [1]", after.Members, after.Removed, wantMembers)
	}
	invText, err := os.ReadFile(l.Inventory())
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
		if _, err := os.Stat(filepath.Join(l.ConfigDownload(), "host_vars", h)); err != nil {
			t.Errorf("host %s: %v", h, err)
		}
	}
	deployed, err := dumps.List(l.HeatDir())
	if err != nil || len(deployed) == 0 {
		t.Fatalf("the deploy saved no dump in %s: %v", l.HeatDir(), err)
	}

	// 4. An identical re-run of the playbook (issue 24): no Heat started,
	// nothing changed, no dump written.
	logsBefore := heattest.LogState(t, l.HeatDir())
	if changed, out := deploy("identical re-run"); changed != 0 {
		t.Errorf("the identical re-run changed %d things:\n%s", changed, tail(out, 60))
	}
	if got := heattest.LogState(t, l.HeatDir()); got != logsBefore {
		t.Errorf("the identical re-run started Heat (its logs changed):\nbefore %s\nafter  %s", logsBefore, got)
	}
	if again, _ := dumps.List(l.HeatDir()); len(again) != len(deployed) {
		t.Errorf("the identical re-run wrote a dump: %v, before %v", again, deployed)
	}

	// 5. The provider template outside the tree, named only by the
	// operator's environment, changes: the re-run deploys it.
	const anchor = "      ansible_group_vars:\n"
	const marker = "ephemeral_heat_test_site_edit"
	if !strings.Contains(string(chrony), anchor) {
		t.Fatalf("the chrony service template has no %q: the tree changed; pick another edit", anchor)
	}
	edited := strings.Replace(string(chrony), anchor, anchor+"        "+marker+": seen\n", 1)
	if err := os.WriteFile(provider, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if changed, _ := deploy("re-run after editing " + provider); changed == 0 {
		t.Fatal("the re-run after the edit changed nothing")
	}
	if saved, err := os.ReadFile(l.AllOutputs()); err != nil || !strings.Contains(string(saved), marker) {
		t.Errorf("the edit is not in the saved outputs %s: %v", l.AllOutputs(), err)
	}
	if !treeContains(t, l.ConfigDownload(), marker) {
		t.Errorf("the edit is not in config-download %s", l.ConfigDownload())
	}
	if again, _ := dumps.List(l.HeatDir()); len(again) != len(deployed)+1 {
		t.Errorf("the deploy after the edit saved no new dump: %v, before %v", again, deployed)
	}
}

// tripleoAnsibleEnv is the environment of ansible-playbook runs of THT's
// rendered playbooks: tripleo-ansible stable/wallaby on the roles, plugins
// and collections paths, this collection, the checkout's ansible.cfg, HOME
// in tmp (the fact cache of tripleo-common's ansible.cfg).
func tripleoAnsibleEnv(t *testing.T, root, tmp string) []string {
	t.Helper()
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
	return append(env, "ANSIBLE_COLLECTIONS_PATH="+shim+":"+filepath.Join(root, ".collections"),
		"ANSIBLE_CONFIG="+filepath.Join(root, "ansible.cfg"), "HOME="+tmp)
}

// readNodes reads the nodes the last deploy saved in the working dir.
func readNodes(t *testing.T, l workdir.Layout) *workdir.Nodes {
	t.Helper()
	n, err := l.ReadNodes()
	if err != nil {
		t.Fatalf("the deploy's saved nodes: %v", err)
	}
	return n
}

// treeContains reports whether a regular file under dir, outside its git
// repository, contains s.
func treeContains(t *testing.T, dir, s string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), s) {
			found = true
		}
		return err
	})
	if err != nil {
		t.Fatalf("reading %s: %v", dir, err)
	}
	return found
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
