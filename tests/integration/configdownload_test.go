package integration

import (
	"context"
	"encoding/json"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/ansibletest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stack"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tripleocommon"
)

// deploySample creates or updates a stack of the sample overcloud
// (tripleocommon.DeploySample).
func deploySample(t *testing.T, c *heatapi.Client, name string, envs []string, params map[string]any) {
	t.Helper()
	if err := tripleocommon.DeploySample(context.Background(), c, name, envs, params, t.Logf); err != nil {
		t.Fatal(err)
	}
}

type cdResult struct {
	Changed      bool     `json:"changed"`
	Failed       bool     `json:"failed"`
	Msg          string   `json:"msg"`
	Roles        []string `json:"roles"`
	Hosts        []string `json:"hosts"`
	Inventory    string   `json:"inventory"`
	Commit       string   `json:"commit"`
	Warnings     []string `json:"warnings"`
	APICalls     int      `json:"api_calls"`
	Lookup       string   `json:"deployment_lookup"`
	ChangedFiles struct {
		Added, Modified, Removed []string
	} `json:"changed_files"`
	Diff any `json:"diff"`
}

// configDownload runs the module through ansible-playbook.
func configDownload(t *testing.T, env []string, endpoint, name, dest string, args ...string) (cdResult, string) {
	t.Helper()
	resFile := filepath.Join(t.TempDir(), "result.json")
	_, failed, out := playbook(t, env, filepath.Join("playbooks", "config_download.yml"),
		append(jsonVars(t, map[string]any{"stack": name, "endpoint": endpoint, "dest": dest, "result_file": resFile}), args...)...)
	if failed != 0 || strings.Contains(out, "MODULE FAILURE") {
		t.Fatalf("config_download failed:\n%s", out)
	}
	var r cdResult
	b, err := os.ReadFile(resFile)
	if err != nil {
		t.Fatalf("no result: %v\n%s", err, out)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r, out
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	b, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, b)
	}
	return strings.TrimSpace(string(b))
}

func runIn(t *testing.T, env []string, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v in %s: %v\n%s", name, args, dir, err, b)
	}
	return string(b)
}

func TestConfigDownloadThroughAnsible(t *testing.T) {
	env := ansibleEnv(t)
	h := heattest.Start(t, nil)
	c, err := heatapi.NewNoAuth(h.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	deploySample(t, c, "overcloud", []string{"environments/network-isolation.yaml", "environments/ceph.yaml"}, nil)
	dest := filepath.Join(t.TempDir(), "overcloud-deploy", "overcloud", "config-download", "overcloud")

	// Check mode first: nothing is written.
	r, out := configDownload(t, env, h.Endpoint, "overcloud", dest, "--check", "--diff")
	if !r.Changed || len(r.ChangedFiles.Added) == 0 || !strings.Contains(out, "+ tripleo-ansible-inventory.yaml") {
		t.Fatalf("check mode: %+v\n%s", r, out)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatalf("check mode wrote %s", dest)
	}

	r, _ = configDownload(t, env, h.Endpoint, "overcloud", dest)
	if !r.Changed || r.Commit == "" {
		t.Fatalf("first download: %+v", r)
	}
	// The one warning tripleo-common gives too: the script deployment's
	// members are named by index.
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "Determining grandparent resource name") {
		t.Errorf("warnings %q", r.Warnings)
	}
	if !reflect.DeepEqual(r.Roles, []string{"Compute", "Controller"}) ||
		!reflect.DeepEqual(r.Hosts, []string{"overcloud-controller-0", "overcloud-novacompute-0", "overcloud-novacompute-1", "overcloud-novacompute-2"}) ||
		r.Inventory != filepath.Join(dest, configdownload.InventoryFile) {
		t.Errorf("result: %+v", r)
	}
	// 2 (stack) + 1 (environment) + 1 (deployments) + 5 configs (4 nodes'
	// hiera, the Controller's post-deploy script) + the TripleODeployment
	// resources without the nested listing: 1 (the stacks) + 8 (the
	// resources of the stacks on the way: the top stack, the two role
	// groups, the four nodes, the script's group) + 5 (each deployment's
	// TripleODeployment) + 6 to name the script's deployment after its
	// group (its members are named by index) + 1 (the Controller's network
	// config).
	if r.APICalls != 30 || r.Lookup != configdownload.LookupStacks {
		t.Errorf("%d API calls, lookup %q; want 30, %q", r.APICalls, r.Lookup, configdownload.LookupStacks)
	}

	// The layout.
	for _, role := range []string{"Controller", "Compute"} {
		for _, f := range []string{"service_names.yaml", "config_settings.yaml", "deploy_steps_tasks.yaml", "host_prep_tasks.yaml"} {
			mustExist(t, filepath.Join(dest, role, f))
		}
		for s := 0; s < 6; s++ {
			mustExist(t, filepath.Join(dest, role, "deploy_steps_tasks_step"+string(rune('0'+s))+".yaml"))
		}
		mustExist(t, filepath.Join(dest, "group_vars", role))
	}
	for _, f := range []string{"deploy_steps_playbook.yaml", "global_vars.yaml", ".git", ".gitignore",
		"Controller/overcloud-controller-0/ControllerDeployment", "Compute/overcloud-novacompute-2/ComputeDeployment",
		"Controller/overcloud-controller-0/ControllerExtraConfigPost", "Controller/NetworkConfig", "Compute/NetworkConfig",
		"deployments.yaml", "templates/heat-config.j2", "host_vars/overcloud-controller-0", "host_vars/overcloud-novacompute-1"} {
		mustExist(t, filepath.Join(dest, f))
	}
	step1 := readFile(t, filepath.Join(dest, "Compute", "deploy_steps_tasks_step1.yaml"))
	if !strings.Contains(step1, "Write the step 1 marker") || strings.Contains(step1, "Write the step 2 marker") ||
		!strings.Contains(step1, "Report the deploy step") {
		t.Errorf("Compute step 1 tasks:\n%s", step1)
	}
	if st, _ := os.Stat(filepath.Join(dest, "global_vars.yaml")); st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v", st.Mode().Perm())
	}
	if st, _ := os.Stat(filepath.Join(dest, "Compute")); st.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v", st.Mode().Perm())
	}

	// What Ansible makes of the inventory.
	invOut := runIn(t, env, dest, "ansible-inventory", "-i", configdownload.InventoryFile, "--list")
	var inv struct {
		Meta struct {
			Hostvars map[string]map[string]any `json:"hostvars"`
		} `json:"_meta"`
		Groups map[string]any `json:"-"`
	}
	var groups map[string]json.RawMessage
	if err := json.Unmarshal([]byte(invOut), &inv); err != nil {
		t.Fatalf("ansible-inventory: %v\n%s", err, invOut)
	}
	json.Unmarshal([]byte(invOut), &groups)
	groupHosts := func(g string) []string {
		var v struct{ Hosts []string }
		json.Unmarshal(groups[g], &v)
		sort.Strings(v.Hosts)
		return v.Hosts
	}
	// tripleo-common's wallaby inventory: the plan's groups are prefixed
	// with its name, each under a group of its own name.
	if got := groupHosts("overcloud_Controller"); !reflect.DeepEqual(got, []string{"overcloud-controller-0"}) {
		t.Errorf("overcloud_Controller hosts %v", got)
	}
	if got := groupHosts("overcloud_Compute"); !reflect.DeepEqual(got, []string{"overcloud-novacompute-0", "overcloud-novacompute-1", "overcloud-novacompute-2"}) {
		t.Errorf("overcloud_Compute hosts %v", got)
	}
	if got := groupHosts("Undercloud"); !reflect.DeepEqual(got, []string{"undercloud"}) {
		t.Errorf("Undercloud hosts %v", got)
	}
	hv := inv.Meta.Hostvars["overcloud-novacompute-1"]
	for k, want := range map[string]any{"ansible_host": "192.168.24.21", "ctlplane_ip": "192.168.24.21", "internal_api_ip": "172.16.2.21",
		"storage_ip": "172.16.1.21", "tenant_ip": "172.16.0.21", "internal_api_hostname": "overcloud-novacompute-1.internalapi.localdomain",
		"ansible_ssh_user": "tripleo-admin", "tripleo_role_name": "Compute", "ceph_fsid": precheckFSID, "internal_api_vip": "172.16.2.5"} {
		if hv[k] != want {
			t.Errorf("overcloud-novacompute-1: %s = %v, want %v", k, hv[k], want)
		}
	}
	if id, _ := hv["deploy_server_id"].(string); len(id) != 36 {
		t.Errorf("deploy_server_id %v", hv["deploy_server_id"])
	}
	// Per-host deployment lists under tripleo-common's per-role names.
	hv0 := inv.Meta.Hostvars["overcloud-controller-0"]
	if !reflect.DeepEqual(hv0["pre_deployments_Controller"], []any{"ControllerDeployment"}) ||
		!reflect.DeepEqual(hv0["post_deployments_Controller"], []any{"ControllerExtraConfigPost"}) {
		t.Errorf("deployment lists of overcloud-controller-0: pre %v post %v", hv0["pre_deployments_Controller"], hv0["post_deployments_Controller"])
	}
	for _, g := range []string{"overcloud", "allovercloud", "Undercloud", "sample_marker", "sample_motd", "ceph_client",
		"clients", "excluded_overcloud", "overcloud_overcloud", "overcloud_allovercloud"} {
		if groups[g] == nil {
			t.Errorf("no group %s in %s", g, invOut)
		}
	}
	runIn(t, env, dest, "ansible-playbook", "-i", configdownload.InventoryFile, "--syntax-check", "deploy_steps_playbook.yaml")

	// An identical download changes nothing.
	head := gitIn(t, dest, "rev-parse", "HEAD")
	r, _ = configDownload(t, env, h.Endpoint, "overcloud", dest)
	if r.Changed || r.Commit != "" || gitIn(t, dest, "rev-parse", "HEAD") != head {
		t.Fatalf("second download: %+v", r)
	}

	// A stack update that changes the Compute tasks: one commit with just that.
	deploySample(t, c, "overcloud", []string{"environments/network-isolation.yaml", "environments/ceph.yaml"},
		map[string]any{"ComputeParameters": map[string]any{"SampleMarkerMessage": "updated compute marker"}})
	r, _ = configDownload(t, env, h.Endpoint, "overcloud", dest, "--diff")
	if !r.Changed || r.Commit == "" {
		t.Fatalf("download after update: %+v", r)
	}
	want := []string{"Compute/deploy_steps_tasks.yaml", "Compute/deploy_steps_tasks_step2.yaml"}
	if !reflect.DeepEqual(r.ChangedFiles.Modified, want) || len(r.ChangedFiles.Added)+len(r.ChangedFiles.Removed) != 0 {
		t.Errorf("changed files %+v, want %v", r.ChangedFiles, want)
	}
	if n := gitIn(t, dest, "rev-list", "--count", "HEAD"); n != "2" {
		t.Errorf("%s commits, want 2", n)
	}
	if got := gitIn(t, dest, "diff", "--name-only", head, "HEAD"); got != strings.Join(want, "\n") {
		t.Errorf("the commit changes %q", got)
	}
	patch := gitIn(t, dest, "show", "HEAD")
	if !strings.Contains(patch, "+      updated compute marker") || !strings.Contains(patch, "config-download of overcloud at ") {
		t.Errorf("the commit:\n%s", patch)
	}
}

// installHeatAgent installs the heat-config hook runner fixture on this
// host (tests/heatagent: the demo host's stand-in for heat-agents).
func installHeatAgent(t *testing.T) {
	t.Helper()
	ansibletest.InstallHeatAgent(t, repoRoot(t))
}

// forgetDeployments removes what applying the deployments of a
// config-download tree left under /var/lib/heat-config (their ids are
// unique to this test's stack).
func forgetDeployments(t *testing.T, dest string) {
	t.Helper()
	ids := regexp.MustCompile(`(?m)^  id: (\S+)$`)
	files, _ := filepath.Glob(filepath.Join(dest, "*", "*", "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, m := range ids.FindAllStringSubmatch(string(b), -1) {
			id := m[1]
			for _, p := range []string{"deployed/" + id + ".json", "deployed/" + id + ".notify.json",
				"heat-config-script/" + id, "tripleo-config-download/" + filepath.Base(f) + "-" + id,
				"tripleo-config-download/" + filepath.Base(f) + "-" + id + ".rendered"} {
				os.Remove(filepath.Join("/var/lib/heat-config", p))
			}
		}
	}
}

func TestConfigDownloadStandaloneRunsOnLocalhost(t *testing.T) {
	env := ansibleEnv(t)
	installHeatAgent(t)
	h := heattest.Start(t, nil)
	c, err := heatapi.NewNoAuth(h.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	markers := filepath.Join(t.TempDir(), "markers")
	hostname := "cd-standalone-node"
	deploySample(t, c, "standalone", []string{"environments/standalone.yaml"},
		map[string]any{"SampleMarkerDir": markers, "ControllerHostnameFormat": hostname})
	dest := filepath.Join(t.TempDir(), "config-download", "standalone")
	r, _ := configDownload(t, env, h.Endpoint, "standalone", dest)
	if !r.Changed || !reflect.DeepEqual(r.Hosts, []string{hostname}) || !reflect.DeepEqual(r.Roles, []string{"Compute", "Controller"}) {
		t.Fatalf("download: %+v", r)
	}
	t.Cleanup(func() { forgetDeployments(t, dest) })
	inv := readFile(t, filepath.Join(dest, configdownload.InventoryFile))
	if !strings.Contains(inv, "ansible_host: 127.0.0.1") {
		t.Errorf("inventory:\n%s", inv)
	}
	if gv := readFile(t, filepath.Join(dest, "group_vars", "Controller")); !strings.Contains(gv, "ansible_connection: local") {
		t.Errorf("group_vars/Controller:\n%s", gv)
	}
	start := time.Now()
	out := runIn(t, env, dest, "ansible-playbook", "-i", configdownload.InventoryFile, "deploy_steps_playbook.yaml")
	t.Logf("deploy_steps_playbook.yaml: %s", time.Since(start).Round(time.Millisecond))
	if !recapFor(hostname).MatchString(out) {
		t.Errorf("no clean recap for %s:\n%s", hostname, out)
	}
	for f, want := range map[string]string{
		hostname + ".step1": "Controller step 1\n",
		hostname + ".step2": "deployed by ephemeral.heat\n",
		hostname + ".motd":  hostname + " is a Controller of standalone\n",
		// The post-deploy script, applied by the hook runner, with its
		// "$$ inventory_hostname $$" input rendered by Ansible.
		hostname + ".post-config": "applied by the heat-config script hook\n",
		hostname + ".ceph.conf":   "",
	} {
		b, err := os.ReadFile(filepath.Join(markers, f))
		if want == "" {
			if err == nil {
				t.Errorf("%s exists without the ceph environment", f)
			}
			continue
		}
		if err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want %q\n%s", f, b, err, want, out)
		}
	}
	// The runner recorded both deployments as successful, with the script's output.
	for _, name := range []string{"ControllerDeployment", "ControllerExtraConfigPost"} {
		dep := readFile(t, filepath.Join(dest, "Controller", hostname, name))
		id := regexp.MustCompile(`(?m)^  id: (\S+)$`).FindStringSubmatch(dep)
		if id == nil {
			t.Fatalf("%s has no id:\n%s", name, dep)
		}
		var notify map[string]any
		b, err := os.ReadFile(filepath.Join("/var/lib/heat-config/deployed", id[1]+".notify.json"))
		if err == nil {
			err = json.Unmarshal(b, &notify)
		}
		if err != nil || notify["deploy_status_code"] != float64(0) {
			t.Errorf("%s: notify %v %v", name, notify, err)
		}
		if name == "ControllerExtraConfigPost" && notify["result"] != "wrote "+filepath.Join(markers, hostname+".post-config") {
			t.Errorf("%s: output result %v", name, notify["result"])
		}
	}
	// Applied deployments are not applied again: the script does not run
	// (its marker, removed, stays away).
	post := filepath.Join(markers, hostname+".post-config")
	if err := os.Remove(post); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	out = runIn(t, env, dest, "ansible-playbook", "-i", configdownload.InventoryFile, "deploy_steps_playbook.yaml", "--tags", "pre_deploy_steps,post_deploy_steps")
	t.Logf("second run of the deployments: %s", time.Since(start).Round(time.Millisecond))
	if !recapFor(hostname).MatchString(out) || !strings.Contains(out, "Skipping config") {
		t.Errorf("second run:\n%s", out)
	}
	if _, err := os.Stat(post); err == nil {
		t.Errorf("the post-deploy script ran again")
	}
}

func TestConfigDownloadPlainStack(t *testing.T) {
	env := ansibleEnv(t)
	h := heattest.Start(t, nil)
	c, err := heatapi.NewNoAuth(h.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	tpl := filepath.Join(t.TempDir(), "plain.yaml")
	os.WriteFile(tpl, []byte("heat_template_version: wallaby\nresources:\n  v:\n    type: OS::Heat::Value\n    properties: {value: 1}\n"+
		"outputs:\n  answer: {value: {get_attr: [v, value]}}\n  RoleData: {value: {Weird: [not, a, map]}}\n"), 0o644)
	req, err := stack.Prepare(stack.Options{Name: "plain", Template: tpl, Timeout: 5, Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := req.Run(context.Background(), c); err != nil || out.Failed {
		t.Fatalf("%v %+v", err, out)
	}
	dest := filepath.Join(t.TempDir(), "plain")
	r, out := configDownload(t, env, h.Endpoint, "plain", dest)
	if !r.Changed || r.Commit == "" || len(r.Hosts) != 0 {
		t.Fatalf("%+v", r)
	}
	joined := strings.Join(r.Warnings, "\n")
	if !strings.Contains(joined, "lacks the output(s) RoleConfig, RoleGroupVars") || !strings.Contains(out, "[WARNING]") {
		t.Errorf("warnings %q\n%s", joined, out)
	}
	mustExist(t, filepath.Join(dest, configdownload.InventoryFile))
	runIn(t, env, dest, "ansible-inventory", "-i", configdownload.InventoryFile, "--list")

	// A stack that does not exist is a clean failure.
	resFile := filepath.Join(t.TempDir(), "r.json")
	_, failed, out := playbook(t, env, filepath.Join("playbooks", "config_download.yml"),
		jsonVars(t, map[string]any{"stack": "nope", "endpoint": h.Endpoint, "dest": dest, "result_file": resFile})...)
	if failed != 1 || !strings.Contains(out, "stack nope not found") || strings.Contains(out, "MODULE FAILURE") {
		t.Errorf("missing stack:\n%s", out)
	}
}

func mustExist(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Stat(p); err != nil {
		t.Errorf("%v", err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// recapFor matches a host's play recap line with no failures.
func recapFor(host string) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(host) + `\s+: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=0`)
}
