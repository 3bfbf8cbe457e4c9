package workdir

import (
	"archive/tar"
	"compress/bzip2"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The names are python-tripleoclient stable/wallaby's (commit f3599d06631e):
// constants.PASSWORDS_ENV_FORMAT '{}-passwords.yaml', utils.get_status_yaml
// '%s-deployment_status.yaml', overcloud_deploy.py _export_stack
// "%s-export.yaml" and "%s-cell-export.yaml", workflows/deployment.py
// create_overcloudrc '%src', utils.save_stack outputs/<key> and
// environment/constants.STACK_ENV_FILE_NAME 'tripleo-{}-environment.yaml',
// utils.archive_deploy_artifacts '%s-install-%s.tar.bzip2' with
// utcnow().strftime('%Y%m%d%H%M%S'), heat-launcher/ and
// config-download/<stack> (setup_ephemeral_heat, config_download).
func TestLayoutNamesAreTripleoclients(t *testing.T) {
	l, err := New("/home/stack/overcloud-deploy/overcloud", "overcloud")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2024, 3, 4, 5, 6, 7, 0, time.UTC)
	for got, want := range map[string]string{
		l.Passwords():           "overcloud-passwords.yaml",
		l.Status():              "overcloud-deployment_status.yaml",
		l.Export():              "overcloud-export.yaml",
		l.CellExport():          "overcloud-cell-export.yaml",
		l.RC():                  "overcloudrc",
		l.Output("KeystoneURL"): "outputs/KeystoneURL",
		l.Environment():         "environment/tripleo-overcloud-environment.yaml",
		l.Archive(at):           "overcloud-install-20240304050607.tar.bzip2",
		l.HeatDir():             "heat-launcher",
		l.ConfigDownload():      "config-download/overcloud",
		l.Inventory():           "config-download/overcloud/tripleo-ansible-inventory.yaml",
	} {
		if got != filepath.Join(l.Dir, want) {
			t.Errorf("%s, want %s", got, filepath.Join(l.Dir, want))
		}
	}
	// constants.STACK_OUTPUTS
	if len(StackOutputs) != 13 || StackOutputs[0] != "BlacklistedHostnames" || StackOutputs[12] != "GlobalConfig" {
		t.Errorf("StackOutputs %v", StackOutputs)
	}
	for _, bad := range []string{"", "a/b", "..", "."} {
		if _, err := New("/w", bad); err == nil {
			t.Errorf("stack name %q accepted", bad)
		}
	}
}

// The status file is tripleoclient's {deployment_status: STATUS} (what
// workflows/deployment.py get_deployment_status reads), with our phase.
func TestStatus(t *testing.T) {
	l, _ := New(filepath.Join(t.TempDir(), "w"), "overcloud")
	if s, err := l.ReadStatus(); s != nil || err != nil {
		t.Fatalf("no file: %v %v", s, err)
	}
	if ch, err := l.WriteStatus(Status{Status: StatusDeploying, Phase: "stack"}, true); !ch || err != nil {
		t.Fatalf("check: %v %v", ch, err)
	}
	if _, err := os.Stat(l.Status()); !os.IsNotExist(err) {
		t.Fatalf("check mode wrote the status")
	}
	if ch, err := l.WriteStatus(Status{Status: StatusDeploying, Phase: "stack"}, false); !ch || err != nil {
		t.Fatalf("write: %v %v", ch, err)
	}
	if ch, err := l.WriteStatus(Status{Status: StatusDeploying, Phase: "stack"}, false); ch || err != nil {
		t.Fatalf("same again: %v %v", ch, err)
	}
	var doc map[string]any
	b, _ := os.ReadFile(l.Status())
	yaml.Unmarshal(b, &doc)
	if doc["deployment_status"] != "DEPLOYING" || doc["deployment_phase"] != "stack" {
		t.Errorf("status file %s", b)
	}
	if st, _ := os.Stat(l.Status()); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	if _, err := l.WriteStatus(Status{Status: "DONE"}, false); err == nil {
		t.Errorf("an unknown status was written")
	}
}

// nodesFixture writes a nodes file: Compute (THT-shaped, 3 members) and a
// group whose removal_policies is not a parameter.
func nodesFixture(t *testing.T) Layout {
	t.Helper()
	l, _ := New(filepath.Join(t.TempDir(), "w"), "overcloud")
	n := Nodes{Stack: "overcloud", Groups: []Group{
		{Resource: "Compute", Role: "Compute", CountParameter: "ComputeCount", RemovalPoliciesParameter: "ComputeRemovalPolicies",
			Removed: []string{}, Members: []Member{{"0", "overcloud-novacompute-0"}, {"1", "overcloud-novacompute-1"}, {"2", "overcloud-novacompute-2"}}},
		{Resource: "Controller", Role: "Controller", CountParameter: "ControllerCount", RemovalPoliciesParameter: "ControllerRemovalPolicies",
			Removed: []string{}, Members: []Member{{"0", "overcloud-controller-0"}}},
		{Resource: "Plain", Role: "Plain", CountParameter: "PlainCount", Removed: []string{}, Members: []Member{{"0", "plain-0"}}},
	}}
	os.MkdirAll(filepath.Dir(l.Nodes()), 0o700)
	if err := os.WriteFile(l.Nodes(), yamlOf(n), 0o600); err != nil {
		t.Fatal(err)
	}
	writeInventory(t, l, testInventory)
	return l
}

// testInventory is a config-download inventory of nodesFixture's nodes,
// laid out as tripleo-common's (role groups of hosts, service groups of
// children, overcloud and allovercloud of the roles).
const testInventory = `Undercloud:
  hosts:
    undercloud: {ansible_connection: local}
Compute:
  hosts:
    overcloud-novacompute-0: {ansible_host: 192.0.2.10}
    overcloud-novacompute-1: {ansible_host: 192.0.2.11}
    overcloud-novacompute-2: {ansible_host: 192.0.2.12}
  vars: {tripleo_role_name: Compute}
Controller:
  hosts:
    overcloud-controller-0: {ansible_host: 192.0.2.5}
overcloud:
  children:
    Compute: {}
    Controller: {}
nova_compute:
  children:
    Compute: {}
`

func writeInventory(t *testing.T, l Layout, content string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(l.Inventory()), 0o700)
	if err := os.WriteFile(l.Inventory(), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func scaleDownEnv(t *testing.T, l Layout) map[string]any {
	t.Helper()
	b, err := os.ReadFile(l.ScaleDown())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		PD map[string]any `yaml:"parameter_defaults"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.PD
}

// A scale-down maps host names to role and index, and leaves the
// environment tripleo-ansible's baremetal_deploy would: <Role>Count lowered
// and <Role>RemovalPolicies [{resource_list: [indices]}], accumulated over
// scale-downs; a node already removed is not removed again.
func TestScaleDownPlan(t *testing.T) {
	l := nodesFixture(t)
	p, err := l.PlanScaleDown([]string{"overcloud-novacompute-1", "OVERCLOUD-NOVACOMPUTE-1"}, ScaleDownOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Removal{{Hostname: "overcloud-novacompute-1", Role: "Compute", Resource: "Compute", Index: "1"}}
	if !reflect.DeepEqual(p.Remove, want) || !reflect.DeepEqual(p.Limit, []string{"overcloud-novacompute-1"}) || len(p.NotInLimit) != 0 || p.Counts["Compute"] != 2 || !p.Changed {
		t.Fatalf("plan %+v", p)
	}
	if _, err := os.Stat(l.ScaleDown()); !os.IsNotExist(err) {
		t.Fatal("planning wrote the environment")
	}
	if err := l.WriteScaleDown(p); err != nil {
		t.Fatal(err)
	}
	pd := scaleDownEnv(t, l)
	if pd["ComputeCount"] != 2 || !reflect.DeepEqual(pd["ComputeRemovalPolicies"], []any{map[string]any{"resource_list": []any{1}}}) || len(pd) != 2 {
		t.Fatalf("environment %v", pd)
	}
	if st, _ := os.Stat(l.ScaleDown()); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}

	// The same again: nothing to run, nothing changes.
	p, err = l.PlanScaleDown([]string{"overcloud-novacompute-1"}, ScaleDownOptions{})
	if err != nil || len(p.Remove) != 0 || len(p.Already) != 1 || p.Changed {
		t.Fatalf("again: %+v %v", p, err)
	}

	// A second node (given by its FQDN), before any deploy: accumulated.
	p, err = l.PlanScaleDown([]string{"overcloud-novacompute-0.ctlplane.localdomain"}, ScaleDownOptions{})
	if err != nil || len(p.Remove) != 1 || p.Remove[0].Index != "0" || p.Counts["Compute"] != 1 {
		t.Fatalf("second: %+v %v", p, err)
	}
	l.WriteScaleDown(p)
	pd = scaleDownEnv(t, l)
	if pd["ComputeCount"] != 1 || !reflect.DeepEqual(pd["ComputeRemovalPolicies"], []any{map[string]any{"resource_list": []any{0, 1}}}) {
		t.Fatalf("accumulated environment %v", pd)
	}

	// The last one: down to zero, not below.
	p, err = l.PlanScaleDown([]string{"overcloud-novacompute-2", "overcloud-novacompute-0"}, ScaleDownOptions{})
	if err != nil || len(p.Remove) != 1 || p.Counts["Compute"] != 0 {
		t.Fatalf("to zero: %+v %v", p, err)
	}
}

func TestScaleDownRefusals(t *testing.T) {
	l := nodesFixture(t)
	for _, c := range []struct {
		hosts []string
		want  string
	}{
		{nil, "no hostname given"},
		{[]string{"overcloud-novacompute-7", "overcloud-novacompute-1"}, `unknown node(s) "overcloud-novacompute-7":`},
		{[]string{"plain-0"}, "removal_policies"},
	} {
		if _, err := l.PlanScaleDown(c.hosts, ScaleDownOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.hosts, err, c.want)
		}
	}
	// No nodes file: deploy first.
	l2, _ := New(t.TempDir(), "other")
	if _, err := l2.PlanScaleDown([]string{"x"}, ScaleDownOptions{}); err == nil || !strings.Contains(err.Error(), "deploy other") {
		t.Errorf("no nodes file: %v", err)
	}
}

// The export holds what tripleoclient's export.export_overcloud exports:
// the passwords but the Ceph ones, the EXPORT_DATA parameters the saved
// outputs have, AuthCloudName and AddVipsToEtcHosts; the cell export keeps
// only the filtered keys of AllNodesExtraMapData. The rc is tripleo-common's
// overcloudrc. What a stack does not have is said.
func TestExportAndRC(t *testing.T) {
	l, _ := New(filepath.Join(t.TempDir(), "w"), "overcloud")
	os.MkdirAll(filepath.Join(l.Dir, OutputsDir), 0o700)
	os.MkdirAll(l.ConfigDownload()+"/group_vars", 0o700)
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(l.Passwords(), "parameter_defaults:\n  AdminPassword: s3cr3t'x\n  CephClusterFSID: f\n  cephx: k\n  RabbitPassword: r\n")
	write(l.Output("EndpointMap"), "KeystonePublic: {host: 192.0.2.5}\n")
	write(l.Output("HostsEntry"), "null\n")
	write(l.Output("KeystoneURL"), "http://192.0.2.5:5000/v2.0\n")
	write(l.Output("KeystoneAdminVip"), "192.0.2.6\n")
	write(l.Output("AdminPassword"), "s3cr3t'x\n")
	write(l.Output("KeystoneRegion"), "null\n")
	write(filepath.Join(l.ConfigDownload(), "group_vars/overcloud.json"), `{"redis_vip": "192.0.2.7", "other": 1}`)

	ex, err := l.WriteExport(false)
	if err != nil || !ex.Changed || len(ex.Files) != 3 {
		t.Fatalf("%+v %v", ex, err)
	}
	read := func(p string) map[string]any {
		t.Helper()
		b, _ := os.ReadFile(p)
		var doc struct {
			PD map[string]any `yaml:"parameter_defaults"`
		}
		yaml.Unmarshal(b, &doc)
		if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v", p, st.Mode().Perm())
		}
		return doc.PD
	}
	full := read(l.Export())
	keys := func(m map[string]any) []string {
		var k []string
		for n := range m {
			k = append(k, n)
		}
		sort.Strings(k)
		return k
	}
	if got, want := keys(full), []string{"AddVipsToEtcHosts", "AdminPassword", "AllNodesExtraMapData", "AuthCloudName", "EndpointMapOverride", "RabbitPassword"}; !reflect.DeepEqual(got, want) {
		t.Errorf("export keys %v, want %v", got, want)
	}
	if full["AuthCloudName"] != "overcloud" || full["AddVipsToEtcHosts"] != false {
		t.Errorf("export %v", full)
	}
	if !reflect.DeepEqual(read(l.CellExport())["AllNodesExtraMapData"], map[string]any{"redis_vip": "192.0.2.7"}) {
		t.Errorf("cell export %v", read(l.CellExport()))
	}
	for _, k := range []string{"ExtraHostFileEntries", "GlobalConfigExtraMapData"} {
		if ex.Skipped[k] == "" {
			t.Errorf("%s not said to be skipped: %v", k, ex.Skipped)
		}
	}
	rc, _ := os.ReadFile(l.RC())
	for _, want := range []string{
		"for key in $( set | awk '{FS=\"=\"}  /^OS_/ {print $1}' ); do unset $key ; done\n",
		"export OS_USERNAME=admin\nexport OS_PROJECT_NAME=admin\n",
		"export OS_CLOUD=overcloud\nexport no_proxy=,192.0.2.5,192.0.2.6\n",
		"export PYTHONWARNINGS='ignore:Certificate has no, ignore:A true SSLContext object is not available'\n",
		"export OS_PASSWORD='s3cr3t'\"'\"'x'\n",
		"export OS_AUTH_URL=http://192.0.2.5:5000\n",
		"export OS_REGION_NAME=regionOne\n",
		"export CLOUDPROMPT_ENABLED=1\nfi\n",
	} {
		if !strings.Contains(string(rc), want) {
			t.Errorf("rc lacks %q:\n%s", want, rc)
		}
	}
	if again, err := l.WriteExport(false); err != nil || again.Changed {
		t.Errorf("the same export again: %+v %v", again, err)
	}

	// A stack without KeystoneURL and no passwords file: no rc, said so.
	os.Remove(l.Output("KeystoneURL"))
	os.Remove(l.Passwords())
	ex, err = l.WriteExport(true)
	if err != nil || ex.Skipped["rc"] == "" || ex.Skipped["passwords"] == "" {
		t.Errorf("%+v %v", ex, err)
	}
}

// The archive holds the working dir but its dumps, earlier archives and
// live database, with paths relative to it.
func TestArchive(t *testing.T) {
	l, _ := New(filepath.Join(t.TempDir(), "w"), "overcloud")
	for _, f := range []string{"overcloud-passwords.yaml", "outputs/KeystoneURL", "config-download/overcloud/deploy_steps_playbook.yaml",
		"heat-launcher/heat.conf", "heat-launcher/log/heat-all.log",
		"heat-launcher/heat-db-20240101T000000.000000Z.sql.gz", "heat-launcher/heat-db-20240101T000000.000000Z.sql.gz.sha256",
		"heat-launcher/heat-db.sql-1700000000.tar.bzip2", "heat-launcher/heat.sqlite", "overcloud-install-20230101000000.tar.bzip2"} {
		p := filepath.Join(l.Dir, f)
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte(f), 0o600)
	}
	res, err := l.WriteArchive(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(res.Path) != "overcloud-install-20240102030405.tar.bzip2" {
		t.Errorf("archive %s", res.Path)
	}
	if st, _ := os.Stat(res.Path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	f, _ := os.Open(res.Path)
	defer f.Close()
	tr := tar.NewReader(bzip2.NewReader(f))
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			names = append(names, h.Name)
			b, _ := io.ReadAll(tr)
			if string(b) != h.Name {
				t.Errorf("%s holds %q", h.Name, b)
			}
		}
	}
	want := []string{"config-download/overcloud/deploy_steps_playbook.yaml", "heat-launcher/heat.conf", "heat-launcher/log/heat-all.log",
		"outputs/KeystoneURL", "overcloud-passwords.yaml"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("archived %v, want %v", names, want)
	}

	// More archives within the same second: each gets a name of its own,
	// none replaces another.
	seen := map[string]bool{res.Path: true}
	for i := 0; i < 4; i++ {
		r, err := l.WriteArchive(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		if seen[r.Path] {
			t.Errorf("archive %d reused the name %s", i, r.Path)
		}
		seen[r.Path] = true
	}
	if got, _ := filepath.Glob(filepath.Join(l.Dir, "overcloud-install-2024*.tar.bzip2")); len(got) != 5 {
		t.Errorf("5 archives written, %d on disk: %v", len(got), got)
	}
	if left, _ := filepath.Glob(filepath.Join(l.Dir, ".*tmp*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// After the deploy that applied a scale-down, the nodes file no longer
// lists the removed node as a member; Save carries its hostname over, so
// that naming it again is recognised as done (the scale-down playbook is
// idempotent) and a further scale-down accumulates on it.
func TestScaleDownAfterRedeploy(t *testing.T) {
	l := nodesFixture(t)
	p, err := l.PlanScaleDown([]string{"overcloud-novacompute-1"}, ScaleDownOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WriteScaleDown(p); err != nil {
		t.Fatal(err)
	}
	prev, err := l.ReadNodes()
	if err != nil {
		t.Fatal(err)
	}
	// What FindNodes reads from the redeployed stack: members 0 and 2,
	// Heat's removed_rsrc_list ["1"].
	cur := &Nodes{Stack: "overcloud", Groups: []Group{
		{Resource: "Compute", Role: "Compute", CountParameter: "ComputeCount", RemovalPoliciesParameter: "ComputeRemovalPolicies",
			Removed: []string{"1"}, Members: []Member{{"0", "overcloud-novacompute-0"}, {"2", "overcloud-novacompute-2"}}},
		prev.Groups[1], prev.Groups[2],
	}}
	carryRemovedMembers(prev, cur)
	if want := []Member{{"1", "overcloud-novacompute-1"}}; !reflect.DeepEqual(cur.Groups[0].RemovedMembers, want) {
		t.Fatalf("removed members %v, want %v", cur.Groups[0].RemovedMembers, want)
	}
	if err := os.WriteFile(l.Nodes(), yamlOf(cur), 0o600); err != nil {
		t.Fatal(err)
	}
	// A later save carries it over again (from removed_members).
	again := &Nodes{Stack: "overcloud", Groups: []Group{{Resource: "Compute", Removed: []string{"1"}}}}
	carryRemovedMembers(cur, again)
	if len(again.Groups[0].RemovedMembers) != 1 {
		t.Fatalf("not carried over twice: %+v", again.Groups[0])
	}

	p, err = l.PlanScaleDown([]string{"overcloud-novacompute-1"}, ScaleDownOptions{})
	if err != nil || len(p.Remove) != 0 || len(p.Already) != 1 || p.Changed {
		t.Fatalf("again after the redeploy: %+v %v", p, err)
	}
	p, err = l.PlanScaleDown([]string{"overcloud-novacompute-2"}, ScaleDownOptions{})
	if err != nil || len(p.Remove) != 1 || p.Counts["Compute"] != 1 {
		t.Fatalf("next one: %+v %v", p, err)
	}
	if err := l.WriteScaleDown(p); err != nil {
		t.Fatal(err)
	}
	if pd := scaleDownEnv(t, l); pd["ComputeCount"] != 1 || !reflect.DeepEqual(pd["ComputeRemovalPolicies"], []any{map[string]any{"resource_list": []any{1, 2}}}) {
		t.Fatalf("accumulated environment %v", pd)
	}
	// Without the environment (removed by hand), the removed member still
	// counts as removed: the count cannot go below zero.
	os.Remove(l.ScaleDown())
	p, err = l.PlanScaleDown([]string{"overcloud-novacompute-0", "overcloud-novacompute-2"}, ScaleDownOptions{})
	if err != nil || p.Counts["Compute"] != 0 {
		t.Fatalf("to zero without the environment: %+v %v", p, err)
	}
}
