package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	precheckFSID      = "4b5c8c0a-ff60-454b-a1b4-9747aa737d19"
	precheckOtherFSID = "0e8a3f1c-7d2b-4c55-9a61-3b1f2d9c4e70"
)

// precheckFixtures is internal/precheck's testdata.
func precheckFixtures(t *testing.T) string {
	t.Helper()
	return filepath.Join(repoRoot(t), "internal", "precheck", "testdata")
}

// copyFile copies a fixture into place, creating directories.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// jsonVars is an -e argument carrying vars as JSON (lists stay lists).
func jsonVars(t *testing.T, vars map[string]any) []string {
	t.Helper()
	b, err := json.Marshal(vars)
	if err != nil {
		t.Fatal(err)
	}
	return []string{"-e", string(b)}
}

type precheckStep struct {
	name       string
	vars       map[string]any
	args       []string
	wantFailed int
	want       []string // in the ansible-playbook output
	notWant    []string
}

func runPrecheckSteps(t *testing.T, env []string, book string, steps []precheckStep) {
	t.Helper()
	for _, s := range steps {
		changed, failed, out := playbook(t, env, book, append(jsonVars(t, s.vars), s.args...)...)
		if changed != 0 || failed != s.wantFailed {
			t.Errorf("%s: changed=%d failed=%d, want changed=0 failed=%d:\n%s", s.name, changed, failed, s.wantFailed, out)
			continue
		}
		for _, w := range s.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", s.name, w, out)
			}
		}
		for _, w := range s.notWant {
			if strings.Contains(out, w) {
				t.Errorf("%s: output has %q:\n%s", s.name, w, out)
			}
		}
		if strings.Contains(out, "MODULE FAILURE") {
			t.Errorf("%s: module failure instead of a clean JSON result:\n%s", s.name, out)
		}
	}
}

// On the undercloud, against the artifacts the previous deploy saved.
func TestPrecheckThroughAnsible(t *testing.T) {
	env := ansibleEnv(t)
	fx := precheckFixtures(t)
	book := filepath.Join("playbooks", "precheck.yml")

	work := filepath.Join(t.TempDir(), "overcloud-deploy", "overcloud")
	deployedEnv := filepath.Join(work, "environment", "tripleo-overcloud-environment.yaml")
	inventory := filepath.Join(work, "config-download", "overcloud", "tripleo-ansible-inventory.yaml")
	copyFile(t, filepath.Join(fx, "deployed", "tripleo-overcloud-environment.yaml"), deployedEnv)
	copyFile(t, filepath.Join(fx, "deployed", "tripleo-ansible-inventory.yaml"), inventory)
	malformed := filepath.Join(work, "environment", "tripleo-broken-environment.yaml")
	copyFile(t, filepath.Join(fx, "bad", "environment-malformed.yaml"), malformed)

	envFiles := func(names ...string) []string {
		out := []string{filepath.Join(fx, "tht", "overcloud-resource-registry.yaml")}
		for _, n := range names {
			out = append(out, filepath.Join(fx, n))
		}
		return out
	}
	vars := func(files []string, deployed string) map[string]any {
		return map[string]any{"environment_files": files, "deployed_environment": deployed, "deployed_inventory": inventory}
	}
	full := envFiles("tht/environments/network-isolation.yaml", "env/network-environment.yaml", "env/ceph.yaml")

	runPrecheckSteps(t, env, book, []precheckStep{
		{name: "unchanged environment passes", vars: vars(full, deployedEnv),
			want: []string{"PRECHECK ceph_fsid=passed", "PRECHECK network_isolation=passed"}},
		{name: "unchanged environment passes in check mode too", vars: vars(full, deployedEnv), args: []string{"--check"},
			want: []string{"PRECHECK ceph_fsid=passed", "PRECHECK network_isolation=passed"}},
		{name: "a changed fsid stops the play",
			vars:       vars(envFiles("tht/environments/network-isolation.yaml", "env/network-environment.yaml", "env/ceph-new-fsid.yaml"), deployedEnv),
			wantFailed: 1,
			want: []string{"Refusing to deploy. [ceph_fsid] The new deploy sets CephClusterFSID " + precheckOtherFSID,
				"but the deployed Ceph cluster has fsid " + precheckFSID + " (from deployed_environment " + deployedEnv,
				"Changing the fsid of a running Ceph cluster destroys it",
				"set CephClusterFSID back to " + precheckFSID},
			notWant: []string{"[network_isolation]", "PRECHECK"}},
		{name: "a changed fsid stops the play in check mode too",
			vars: vars(envFiles("tht/environments/network-isolation.yaml", "env/ceph-new-fsid.yaml"), deployedEnv), args: []string{"--check"},
			wantFailed: 1, want: []string{"[ceph_fsid] The new deploy sets CephClusterFSID " + precheckOtherFSID}},
		{name: "a dropped network-isolation environment stops the play",
			vars: vars(envFiles("env/network-environment.yaml", "env/ceph.yaml"), deployedEnv), wantFailed: 1,
			want: []string{"Refusing to deploy. [network_isolation] The deployed overcloud has isolated networks that the new deploy drops",
				"External, InternalApi, Storage, StorageMgmt, Tenant (deployed per deployed_environment, deployed_inventory; " +
					"each OS::TripleO::Network::<Name> is mapped to OS::Heat::None or null by " + filepath.Join(fx, "tht", "overcloud-resource-registry.yaml"),
				"usually environments/network-isolation.yaml registers them",
				"add -e environments/network-isolation.yaml and your network-environment.yaml back"},
			notWant: []string{"[ceph_fsid]"}},
		{name: "first deploy: no saved artifacts, both checks skipped",
			vars: map[string]any{"environment_files": full, "deployed_environment": filepath.Join(t.TempDir(), "absent.yaml"),
				"deployed_inventory": filepath.Join(t.TempDir(), "absent-inventory.yaml")},
			want: []string{"PRECHECK ceph_fsid=skipped", "PRECHECK network_isolation=skipped"}},
		{name: "a malformed deployed environment is an error naming the file",
			vars: vars(full, malformed), wantFailed: 1,
			want: []string{"deployed_environment: " + malformed + ": invalid YAML"}},
	})
}

// On an overcloud node, against its ceph.conf and net_ip_map.json.
func TestPrecheckOnNodeThroughAnsible(t *testing.T) {
	env := ansibleEnv(t)
	fx := precheckFixtures(t)
	book := filepath.Join("playbooks", "precheck-node.yml")
	node := func(fsid string, networks []string, cephConf string) map[string]any {
		return map[string]any{"new_fsid": fsid, "new_networks": networks, "ceph_conf": cephConf,
			"net_ip_map": filepath.Join(fx, "node", "net_ip_map.json")}
	}
	cephConf := filepath.Join(fx, "node", "ceph.conf")
	nets := []string{"InternalApi", "Storage", "StorageMgmt", "Tenant", "External"}

	runPrecheckSteps(t, env, book, []precheckStep{
		{name: "unchanged request passes", vars: node(precheckFSID, nets, cephConf),
			want: []string{"PRECHECK ceph_fsid=passed", "PRECHECK network_isolation=passed"}},
		{name: "no new fsid keeps the deployed one", vars: node("", []string{"internal_api", "storage", "tenant"}, cephConf), args: []string{"--check"},
			want: []string{"PRECHECK ceph_fsid=passed", "PRECHECK network_isolation=passed"}},
		{name: "a changed fsid stops the play", vars: node(precheckOtherFSID, nets, cephConf), wantFailed: 1,
			want: []string{"[ceph_fsid] The new deploy sets CephClusterFSID " + precheckOtherFSID + " (requested.ceph_fsid)",
				"has fsid " + precheckFSID + " (from ceph_conf " + cephConf + ": [global] fsid)", "destroys it"}},
		{name: "a dropped network stops the play", vars: node(precheckFSID, []string{"InternalApi", "Storage"}, cephConf), wantFailed: 1,
			want: []string{"[network_isolation] The deployed overcloud has isolated networks that the new deploy drops: Tenant (deployed per net_ip_map; not in requested.networks)"}},
		{name: "a node without Ceph skips the fsid check", vars: node(precheckOtherFSID, nets, filepath.Join(t.TempDir(), "ceph.conf")),
			want: []string{"PRECHECK ceph_fsid=skipped", "PRECHECK network_isolation=passed"}},
	})
}
