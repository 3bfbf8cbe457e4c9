package precheck

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
)

const (
	deployedFSID = "4b5c8c0a-ff60-454b-a1b4-9747aa737d19"
	otherFSID    = "0e8a3f1c-7d2b-4c55-9a61-3b1f2d9c4e70"
	missing      = "testdata/does-not-exist"
)

func td(p string) string { return filepath.Join("testdata", p) }

// envs returns the environment files of a deploy: the default registry,
// then the given files (names under testdata).
func envs(names ...string) []string {
	out := []string{td("tht/overcloud-resource-registry.yaml")}
	for _, n := range names {
		out = append(out, td(n))
	}
	return out
}

var (
	netiso   = "tht/environments/network-isolation.yaml"
	netenv   = "env/network-environment.yaml"
	ceph     = "env/ceph.yaml"
	fullEnvs = []string{netiso, netenv, ceph}
)

// deployed is the evidence of the fixture overcloud, as saved on the undercloud.
func deployed(o Options) Options {
	o.DeployedEnvironment = td("deployed/tripleo-overcloud-environment.yaml")
	o.DeployedInventory = td("deployed/tripleo-ansible-inventory.yaml")
	return o
}

func statuses(out Outcome) map[string]string {
	m := map[string]string{}
	for _, c := range out.Checks {
		m[c.Name] = c.Status
	}
	return m
}

func detail(out Outcome, name string) string {
	for _, c := range out.Checks {
		if c.Name == name {
			return c.Detail
		}
	}
	return ""
}

func TestRun(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want map[string]string // check -> status
		// fragments that must appear in the check details (by check) and in Msg.
		details map[string][]string
		msg     []string
		notMsg  []string
	}{
		{
			name: "unchanged environment passes",
			opts: deployed(Options{EnvironmentFiles: envs(fullEnvs...)}),
			want: map[string]string{CephFSID: Passed, NetworkIsolation: Passed},
			details: map[string][]string{
				CephFSID:         {"matches the deployed fsid " + deployedFSID, "ceph_conf not given"},
				NetworkIsolation: {"keeps every deployed network: External, InternalApi, Storage, StorageMgmt, Tenant", "net_ip_map not given"},
			},
		},
		{
			name: "the fsid compares case-insensitively",
			opts: deployed(Options{EnvironmentFiles: envs(netiso, netenv, "env/ceph-fsid-upper.yaml")}),
			want: map[string]string{CephFSID: Passed, NetworkIsolation: Passed},
		},
		{
			name: "a changed fsid fails, naming both fsids and their sources",
			opts: deployed(Options{EnvironmentFiles: envs(netiso, netenv, ceph, "env/ceph-new-fsid.yaml")}),
			want: map[string]string{CephFSID: Failed, NetworkIsolation: Passed},
			details: map[string][]string{
				CephFSID: {"would change from " + deployedFSID + " (from deployed_environment testdata/deployed/tripleo-overcloud-environment.yaml: parameter_defaults.CephClusterFSID) to " + otherFSID + " (set by testdata/env/ceph-new-fsid.yaml)"},
			},
			msg: []string{"Refusing to deploy. [ceph_fsid] The new deploy sets CephClusterFSID " + otherFSID,
				"destroys it", "set CephClusterFSID back to " + deployedFSID + " in testdata/env/ceph-new-fsid.yaml"},
			notMsg: []string{"network_isolation"},
		},
		{
			name: "an unset requested fsid passes and keeps the deployed one",
			opts: deployed(Options{EnvironmentFiles: envs(netiso, netenv)}),
			want: map[string]string{CephFSID: Passed, NetworkIsolation: Passed},
			details: map[string][]string{
				CephFSID: {"sets no CephClusterFSID (no environment file sets it); the deployed fsid stays: " + deployedFSID},
			},
		},
		{
			name: "ceph.conf on a node is evidence of the fsid",
			opts: Options{EnvironmentFiles: envs(netiso, "env/ceph-new-fsid.yaml"), CephConf: td("node/ceph.conf"), Checks: []string{CephFSID}},
			want: map[string]string{CephFSID: Failed},
			details: map[string][]string{
				CephFSID: {deployedFSID + " (from ceph_conf testdata/node/ceph.conf: [global] fsid)", "deployed_environment not given"},
			},
		},
		{
			name: "one fsid seen in two sources is named once with both",
			opts: deployed(Options{EnvironmentFiles: envs("env/ceph-new-fsid.yaml"), CephConf: td("node/ceph.conf"), Checks: []string{CephFSID}}),
			want: map[string]string{CephFSID: Failed},
			details: map[string][]string{
				CephFSID: {deployedFSID + " (from deployed_environment testdata/deployed/tripleo-overcloud-environment.yaml: parameter_defaults.CephClusterFSID and ceph_conf testdata/node/ceph.conf: [global] fsid)"},
			},
		},
		{
			name: "a ceph.conf of another cluster fails even when the environment agrees",
			opts: deployed(Options{EnvironmentFiles: envs(ceph), CephConf: td("node/ceph-other.conf"), Checks: []string{CephFSID}}),
			want: map[string]string{CephFSID: Failed},
			msg:  []string{otherFSID + " (from ceph_conf testdata/node/ceph-other.conf: [global] fsid)"},
		},
		{
			name: "first deploy: no deployed environment, no ceph.conf: both skipped with the reason",
			opts: Options{EnvironmentFiles: envs(fullEnvs...), DeployedEnvironment: missing, CephConf: missing + "/ceph.conf", NetIPMap: missing + "/net_ip_map.json"},
			want: map[string]string{CephFSID: Skipped, NetworkIsolation: Skipped},
			details: map[string][]string{
				CephFSID:         {"no evidence of a deployed Ceph cluster", "deployed_environment: no testdata/does-not-exist (first deploy", "ceph_conf: no testdata/does-not-exist/ceph.conf (no Ceph on this host)"},
				NetworkIsolation: {"no evidence of the deployed networks", "deployed_inventory not given", "net_ip_map: no testdata/does-not-exist/net_ip_map.json"},
			},
		},
		{
			name: "no evidence given at all is skipped, not passed",
			opts: Options{EnvironmentFiles: envs(fullEnvs...)},
			want: map[string]string{CephFSID: Skipped, NetworkIsolation: Skipped},
		},
		{
			name: "a deployed environment without Ceph: any new fsid is accepted",
			opts: Options{EnvironmentFiles: envs(ceph), DeployedEnvironment: td("deployed/environment-no-ceph.yaml"), Checks: []string{CephFSID}},
			want: map[string]string{CephFSID: Passed},
			details: map[string][]string{
				CephFSID: {"has no Ceph fsid; the new fsid " + deployedFSID + " (set by testdata/env/ceph.yaml) is accepted", "sets no CephClusterFSID"},
			},
		},
		{
			name: "a ceph.conf without fsid holds no fsid",
			opts: Options{EnvironmentFiles: envs(ceph), CephConf: td("node/ceph-nofsid.conf"), Checks: []string{CephFSID}},
			want: map[string]string{CephFSID: Passed},
			details: map[string][]string{
				CephFSID: {"has no fsid in [global]"},
			},
		},
		{
			name: "forgetting network-isolation.yaml fails, naming every network and the file that provides it",
			opts: deployed(Options{EnvironmentFiles: envs(netenv, ceph)}),
			want: map[string]string{CephFSID: Passed, NetworkIsolation: Failed},
			details: map[string][]string{
				NetworkIsolation: {
					"External, InternalApi, Storage, StorageMgmt, Tenant (deployed per deployed_environment, deployed_inventory; " +
						"each OS::TripleO::Network::<Name> is mapped to OS::Heat::None or null by testdata/tht/overcloud-resource-registry.yaml; " +
						"usually environments/network-isolation.yaml registers them)"},
			},
			msg: []string{"Refusing to deploy. [network_isolation] The deployed overcloud has isolated networks that the new deploy drops",
				"breaks the overcloud", "add -e environments/network-isolation.yaml and your network-environment.yaml back"},
			notMsg: []string{"Management", "ceph_fsid"},
		},
		{
			name: "a network mapped back to OS::Heat::None fails, naming the file",
			opts: deployed(Options{EnvironmentFiles: envs(netiso, netenv, ceph, "env/disable-storage.yaml")}),
			want: map[string]string{CephFSID: Passed, NetworkIsolation: Failed},
			details: map[string][]string{
				NetworkIsolation: {"Storage (deployed per deployed_environment, deployed_inventory; OS::TripleO::Network::Storage is mapped to OS::Heat::None or null by testdata/env/disable-storage.yaml; usually environments/network-isolation.yaml registers it)"},
			},
			notMsg: []string{"StorageMgmt", "Tenant"},
		},
		{
			name: "a network unregistered by null fails, naming the file",
			opts: deployed(Options{EnvironmentFiles: envs(netiso, netenv, ceph, "env/unregister-tenant.yaml"), Checks: []string{NetworkIsolation}}),
			want: map[string]string{NetworkIsolation: Failed},
			msg:  []string{"Tenant (deployed per deployed_environment, deployed_inventory; OS::TripleO::Network::Tenant is mapped to OS::Heat::None or null by testdata/env/unregister-tenant.yaml;"},
		},
		{
			name: "a wildcard null unregisters every network",
			opts: deployed(Options{EnvironmentFiles: envs(netiso, "env/unregister-all-networks.yaml"), Checks: []string{NetworkIsolation}}),
			want: map[string]string{NetworkIsolation: Failed},
			msg:  []string{"External, InternalApi, Storage, StorageMgmt, Tenant (deployed per deployed_environment, deployed_inventory; each OS::TripleO::Network::<Name> is mapped to OS::Heat::None or null by testdata/env/unregister-all-networks.yaml;"},
		},
		{
			name: "both checks failing report both in one message",
			opts: deployed(Options{EnvironmentFiles: envs(netenv, "env/ceph-new-fsid.yaml")}),
			want: map[string]string{CephFSID: Failed, NetworkIsolation: Failed},
			msg:  []string{"[ceph_fsid] The new deploy sets", "[network_isolation] The deployed overcloud"},
		},
		{
			name: "an added network passes (only drops are refused)",
			opts: deployed(Options{EnvironmentFiles: envs(netiso, "tht/environments/network-management.yaml", netenv, ceph)}),
			want: map[string]string{CephFSID: Passed, NetworkIsolation: Passed},
		},
		{
			name: "inventory alone: derived from host vars and role_networks, ctlplane and bmc_ip ignored",
			opts: Options{EnvironmentFiles: envs(netiso), DeployedInventory: td("deployed/tripleo-ansible-inventory.yaml"), Checks: []string{NetworkIsolation}},
			want: map[string]string{NetworkIsolation: Passed},
			details: map[string][]string{
				NetworkIsolation: {"keeps every deployed network: External, InternalApi, Storage, StorageMgmt, Tenant (per deployed_inventory testdata/deployed/tripleo-ansible-inventory.yaml)", "deployed_environment not given"},
			},
		},
		{
			name: "inventory host vars only: snake_case names map to network names, empty addresses ignored",
			opts: Options{EnvironmentFiles: envs(netiso), DeployedInventory: td("deployed/tripleo-ansible-inventory-hostvars-only.yaml"), Checks: []string{NetworkIsolation}},
			want: map[string]string{NetworkIsolation: Failed},
			msg: []string{"StorageNFS (deployed per deployed_inventory; no environment file registers OS::TripleO::Network::StorageNFS; " +
				"usually environments/network-isolation.yaml registers it)"},
			notMsg: []string{"Management", "Ctlplane", "InternalApi ("},
		},
		{
			name: "a deployment without isolated networks passes",
			opts: Options{EnvironmentFiles: envs(), DeployedInventory: td("deployed/tripleo-ansible-inventory-flat.yaml"), Checks: []string{NetworkIsolation}},
			want: map[string]string{NetworkIsolation: Passed},
			details: map[string][]string{
				NetworkIsolation: {"has no isolated networks"},
			},
		},
		{
			name: "THT without network isolation: networks on the ctlplane address are not deployed ones",
			opts: Options{EnvironmentFiles: envs(), DeployedInventory: td("deployed/tripleo-ansible-inventory-tht-flat.yaml"), Checks: []string{NetworkIsolation}},
			want: map[string]string{NetworkIsolation: Passed},
			details: map[string][]string{
				NetworkIsolation: {"has no isolated networks"},
			},
		},
		{
			name:   "a network on its own address on one host is deployed, whatever the other hosts hold",
			opts:   Options{EnvironmentFiles: envs(), DeployedInventory: td("deployed/tripleo-ansible-inventory-tht-mixed.yaml"), Checks: []string{NetworkIsolation}},
			want:   map[string]string{NetworkIsolation: Failed},
			msg:    []string{"InternalApi (deployed per deployed_inventory;"},
			notMsg: []string{"Tenant", "Storage"},
		},
		{
			name: "net_ip_map on a node: networks with the ctlplane address or none are not deployed ones",
			opts: Options{EnvironmentFiles: envs(netiso, "env/disable-storage.yaml"), NetIPMap: td("node/net_ip_map.json"), Checks: []string{NetworkIsolation}},
			want: map[string]string{NetworkIsolation: Failed},
			msg:  []string{"Storage (deployed per net_ip_map;"},
			// external and storage_mgmt hold the ctlplane address, management is empty.
			notMsg: []string{"External", "StorageMgmt", "Management", "Ctlplane"},
		},
		{
			name: "networks provisioned outside Heat (DeployedNetworkEnvironment) count as requested",
			opts: deployed(Options{EnvironmentFiles: envs("env/networks-deployed.yaml", netenv, ceph)}),
			want: map[string]string{CephFSID: Passed, NetworkIsolation: Passed},
		},
		{
			name: "networks provisioned outside Heat, environment dropped: the message names the networks environment",
			opts: Options{EnvironmentFiles: envs(netenv), DeployedEnvironment: td("deployed/environment-provisioned.yaml"), Checks: []string{NetworkIsolation}},
			want: map[string]string{NetworkIsolation: Failed},
			msg: []string{"InternalApi, Storage, Tenant (deployed per deployed_environment; the deployed environment had them from " +
				"parameter_defaults.DeployedNetworkEnvironment, which 'openstack overcloud network provision' writes (networks-deployed.yaml), " +
				"and no environment file sets it now)",
				"add back the networks-deployed environment that 'openstack overcloud network provision' wrote"},
			notMsg: []string{"network-isolation.yaml", "mapped to OS::Heat::None"},
		},
		{
			name: "networks provisioned outside Heat, one gone from the new DeployedNetworkEnvironment",
			opts: Options{EnvironmentFiles: envs("env/networks-deployed-no-tenant.yaml"), DeployedEnvironment: td("deployed/environment-provisioned.yaml"),
				Checks: []string{NetworkIsolation}},
			want: map[string]string{NetworkIsolation: Failed},
			msg: []string{"Tenant (deployed per deployed_environment; the deployed environment had it from parameter_defaults.DeployedNetworkEnvironment; " +
				"the one testdata/env/networks-deployed-no-tenant.yaml sets does not list it)"},
			notMsg: []string{"InternalApi", "Storage", "network-isolation.yaml"},
		},
		{
			name: "one network registered in Heat and one provisioned outside it, both dropped: each its reason, both fixes",
			opts: Options{EnvironmentFiles: envs(netenv), DeployedEnvironment: td("deployed/environment-mixed.yaml"), Checks: []string{NetworkIsolation}},
			want: map[string]string{NetworkIsolation: Failed},
			msg: []string{"External (deployed per deployed_environment; OS::TripleO::Network::External is mapped to OS::Heat::None or null by",
				"InternalApi (deployed per deployed_environment; the deployed environment had it from parameter_defaults.DeployedNetworkEnvironment,",
				"add -e environments/network-isolation.yaml and your network-environment.yaml back",
				"for networks provisioned with 'openstack overcloud network provision', the generated networks-deployed environment"},
		},
		{
			name: "networks provisioned outside Heat, the same networks environment again",
			opts: Options{EnvironmentFiles: envs("env/networks-deployed.yaml"), DeployedEnvironment: td("deployed/environment-provisioned.yaml"),
				Checks: []string{NetworkIsolation}},
			want: map[string]string{NetworkIsolation: Passed},
		},
		{
			name: "requested dict instead of files: unchanged",
			opts: deployed(Options{UseRequested: true, Requested: map[string]any{
				"ceph_fsid": deployedFSID, "networks": []any{"InternalApi", "storage", "storage_mgmt", "Tenant", "External", "ctlplane"}}}),
			want: map[string]string{CephFSID: Passed, NetworkIsolation: Passed},
		},
		{
			name: "requested dict: a dropped network and a new fsid",
			opts: Options{UseRequested: true, Requested: map[string]any{"ceph_fsid": otherFSID, "networks": []any{"InternalApi", "Storage"}},
				CephConf: td("node/ceph.conf"), NetIPMap: td("node/net_ip_map.json")},
			want: map[string]string{CephFSID: Failed, NetworkIsolation: Failed},
			msg: []string{otherFSID + " (requested.ceph_fsid)", "Tenant (deployed per net_ip_map; not in requested.networks)",
				"leave it unset", "add the networks back to requested.networks"},
		},
		{
			name: "requested dict without networks: network check skipped, fsid unset passes",
			opts: deployed(Options{UseRequested: true, Requested: map[string]any{}}),
			want: map[string]string{CephFSID: Passed, NetworkIsolation: Skipped},
			details: map[string][]string{
				NetworkIsolation: {"requested has no networks key"},
				CephFSID:         {"(requested.ceph_fsid); the deployed fsid stays"},
			},
		},
		{
			name: "only the checks asked for run, in the order asked",
			opts: deployed(Options{EnvironmentFiles: envs(netenv), Checks: []string{CephFSID}}),
			want: map[string]string{CephFSID: Passed},
		},
		{
			name: "checks asked for twice run once",
			opts: deployed(Options{EnvironmentFiles: envs(fullEnvs...), Checks: []string{NetworkIsolation, CephFSID, NetworkIsolation}}),
			want: map[string]string{NetworkIsolation: Passed, CephFSID: Passed},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Run(tc.opts)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := statuses(out); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("statuses %v, want %v; checks %+v", got, tc.want, out.Checks)
			}
			if len(out.Checks) != len(tc.want) {
				t.Fatalf("%d checks, want %d", len(out.Checks), len(tc.want))
			}
			wantFailed := false
			for _, s := range tc.want {
				wantFailed = wantFailed || s == Failed
			}
			if out.Failed != wantFailed || (out.Msg != "") != wantFailed {
				t.Fatalf("Failed=%v Msg=%q, want failed=%v", out.Failed, out.Msg, wantFailed)
			}
			for name, frags := range tc.details {
				for _, f := range frags {
					if d := detail(out, name); !strings.Contains(d, f) {
						t.Errorf("%s detail lacks %q:\n%s", name, f, d)
					}
				}
			}
			for _, f := range tc.msg {
				if !strings.Contains(out.Msg, f) {
					t.Errorf("msg lacks %q:\n%s", f, out.Msg)
				}
			}
			for _, f := range tc.notMsg {
				if strings.Contains(out.Msg, f) {
					t.Errorf("msg has %q:\n%s", f, out.Msg)
				}
			}
		})
	}
}

func TestCheckOrder(t *testing.T) {
	out, err := Run(deployed(Options{EnvironmentFiles: envs(fullEnvs...), Checks: []string{NetworkIsolation, CephFSID}}))
	if err != nil {
		t.Fatal(err)
	}
	if out.Checks[0].Name != NetworkIsolation || out.Checks[1].Name != CephFSID {
		t.Fatalf("order %+v", out.Checks)
	}
}

func TestRequestedAndDeployedSummary(t *testing.T) {
	out, err := Run(deployed(Options{EnvironmentFiles: envs(netiso, ceph), CephConf: td("node/ceph.conf"), NetIPMap: td("node/net_ip_map.json")}))
	if err != nil {
		t.Fatal(err)
	}
	wantReq := map[string]any{"ceph_fsid": deployedFSID, "networks": []string{"External", "InternalApi", "Storage", "StorageMgmt", "Tenant"}}
	if !reflect.DeepEqual(out.Requested, wantReq) {
		t.Errorf("requested %v, want %v", out.Requested, wantReq)
	}
	nets := out.Deployed["networks"].(map[string]any)
	if got := nets[ParamNetIPMap]; !reflect.DeepEqual(got, []string{"InternalApi", "Storage", "Tenant"}) {
		t.Errorf("net_ip_map networks %v", got)
	}
	if got := nets[ParamDeployedEnvironment]; !reflect.DeepEqual(got, []string{"External", "InternalApi", "Storage", "StorageMgmt", "Tenant"}) {
		t.Errorf("deployed_environment networks %v (Management is mapped to OS::Heat::None, ports excluded)", got)
	}
	fsids := out.Deployed["ceph_fsid"].(map[string]any)
	if fsids[ParamCephConf] != deployedFSID || fsids[ParamDeployedEnvironment] != deployedFSID {
		t.Errorf("fsids %v", fsids)
	}
}

func TestEnvNetworksExclusions(t *testing.T) {
	env := map[string]any{
		"resource_registry": map[string]any{
			"OS::TripleO::Network::InternalApi":               "file:///tht/network/internal_api.yaml",
			"OS::TripleO::Network::Management":                "OS::Heat::None",
			"OS::TripleO::Network::External":                  "file:///tht/network/noop.yaml",
			"OS::TripleO::Network::Tenant":                    nil,
			"OS::TripleO::Network::Ports::ExternalVipPort":    "file:///tht/network/ports/external.yaml",
			"OS::TripleO::Network::Ports::NetVipMap":          "file:///tht/network/ports/net_ip_map.yaml",
			"OS::TripleO::Network::PortsNew":                  "file:///x.yaml",
			"OS::TripleO::Network::Something::Deeper":         "file:///x.yaml",
			"OS::TripleO::Network":                            "file:///tht/network/networks.yaml",
			"OS::TripleO::Network::Ctlplane":                  "file:///x.yaml",
			"OS::TripleO::Controller::Ports::InternalApiPort": "file:///tht/network/ports/internal_api.yaml",
			"OS::TripleO::Network::StorageNFS":                "file:///tht/network/storage_nfs.yaml",
		},
	}
	got, err := envNetworks(env, "test")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range got {
		names = append(names, n)
	}
	sort.Strings(names)
	if want := []string{"InternalApi", "StorageNFS"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("networks %v, want %v", names, want)
	}
}

func TestCephConfFSID(t *testing.T) {
	for _, tc := range []struct{ conf, want string }{
		{"[global]\nfsid = abc\n", "abc"},
		{"[global]\n\tfsid=abc ; comment\n", "abc"},
		{"[Global]\nFSID = abc # comment\n", "abc"},
		{"[client]\nfsid = abc\n", ""},
		{"; comment\n# another\n[global]\nmon host = x\n[osd]\nfsid = nope\n", ""},
		{"[global]\nfsid = abc\n[global]\nfsid = def\n", "def"},
		{"", ""},
	} {
		got, err := cephConfFSID([]byte(tc.conf), "ceph.conf")
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.conf, got, err, tc.want)
		}
	}
}

func TestDisplayName(t *testing.T) {
	for in, want := range map[string]string{
		"internal_api": "InternalApi", "storage_mgmt": "StorageMgmt", "storage_nfs": "StorageNFS",
		"external": "External", "tenant": "Tenant", "management": "Management",
		"custom_net_two": "CustomNetTwo", "InternalApi": "InternalApi",
	} {
		if got := displayName(in, nil); got != want {
			t.Errorf("displayName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBadInputs(t *testing.T) {
	unreadable := filepath.Join(t.TempDir(), "unreadable.yaml")
	if err := os.WriteFile(unreadable, []byte("parameter_defaults: {}\n"), 0o000); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fifo := filepath.Join(t.TempDir(), "net_ip_map.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"malformed deployed environment is an error, not a skip",
			Options{EnvironmentFiles: envs(), DeployedEnvironment: td("bad/environment-malformed.yaml")},
			[]string{"testdata/bad/environment-malformed.yaml", "invalid YAML"}},
		{"an empty deployed environment is an error",
			Options{EnvironmentFiles: envs(), DeployedEnvironment: td("bad/environment-empty.yaml")},
			[]string{"deployed_environment: testdata/bad/environment-empty.yaml is empty"}},
		{"a deployed environment that is a list",
			Options{EnvironmentFiles: envs(), DeployedEnvironment: td("bad/environment-list.yaml")},
			[]string{"deployed_environment: testdata/bad/environment-list.yaml is not a YAML mapping"}},
		{"a deployed environment whose fsid is not a string",
			Options{EnvironmentFiles: envs(), DeployedEnvironment: td("bad/environment-fsid-number.yaml")},
			[]string{"deployed_environment testdata/bad/environment-fsid-number.yaml: parameter_defaults.CephClusterFSID must be a string"}},
		{"a deployed environment whose registry is a list",
			Options{EnvironmentFiles: envs(), DeployedEnvironment: td("bad/environment-registry-list.yaml")},
			[]string{"deployed_environment testdata/bad/environment-registry-list.yaml: resource_registry must be a mapping"}},
		{"a deployed environment that is a directory",
			Options{EnvironmentFiles: envs(), DeployedEnvironment: dir},
			[]string{"deployed_environment " + dir + " is a directory, not a regular file"}},
		{"a net_ip_map that is a FIFO (never opened, so nothing blocks)",
			Options{EnvironmentFiles: envs(), NetIPMap: fifo},
			[]string{"net_ip_map " + fifo + " is a FIFO"}},
		{"malformed inventory",
			Options{EnvironmentFiles: envs(), DeployedInventory: td("bad/inventory-malformed.yaml")},
			[]string{"deployed_inventory: testdata/bad/inventory-malformed.yaml is not valid YAML"}},
		{"inventory whose hosts are a list",
			Options{EnvironmentFiles: envs(), DeployedInventory: td("bad/inventory-hosts-list.yaml")},
			[]string{"deployed_inventory: testdata/bad/inventory-hosts-list.yaml: hosts of group \"Controller\" is not a mapping"}},
		{"truncated net_ip_map",
			Options{EnvironmentFiles: envs(), NetIPMap: td("bad/net_ip_map-truncated.json")},
			[]string{"net_ip_map: testdata/bad/net_ip_map-truncated.json is not valid JSON"}},
		{"net_ip_map that is a list",
			Options{EnvironmentFiles: envs(), NetIPMap: td("bad/net_ip_map-list.json")},
			[]string{"net_ip_map: testdata/bad/net_ip_map-list.json is not valid JSON"}},
		{"ceph.conf with a junk line",
			Options{EnvironmentFiles: envs(), CephConf: td("bad/ceph-junk.conf")},
			[]string{"ceph_conf: testdata/bad/ceph-junk.conf: line 2:", "neither a [section]"}},
		{"ceph.conf with a broken section header",
			Options{EnvironmentFiles: envs(), CephConf: td("bad/ceph-header.conf")},
			[]string{"ceph_conf: testdata/bad/ceph-header.conf: line 1: section header"}},
		{"a new environment with an unknown section",
			Options{EnvironmentFiles: envs("env/bad-section.yaml")},
			[]string{"environment_files:", "bad-section.yaml", "unknown section \"parameter_default\""}},
		{"a missing new environment file",
			Options{EnvironmentFiles: envs("env/nope.yaml")},
			[]string{"environment_files:", "nope.yaml"}},
		{"no environment files", Options{EnvironmentFiles: []string{}}, []string{"environment_files is empty"}},
		{"unknown requested key",
			Options{UseRequested: true, Requested: map[string]any{"fsid": deployedFSID}},
			[]string{"requested has unknown key \"fsid\"; it takes ceph_fsid and networks"}},
		{"requested networks not a list",
			Options{UseRequested: true, Requested: map[string]any{"networks": map[string]any{"a": 1}}},
			[]string{"requested.networks must be a list"}},
		{"requested fsid not a string",
			Options{UseRequested: true, Requested: map[string]any{"ceph_fsid": 42}},
			[]string{"requested.ceph_fsid must be a string"}},
		{"unknown check", Options{EnvironmentFiles: envs(), Checks: []string{"ceph"}},
			[]string{"checks: unknown check \"ceph\"; the checks are ceph_fsid, network_isolation"}},
		{"no checks", Options{EnvironmentFiles: envs(), Checks: []string{}}, []string{"checks is empty"}},
	}
	if os.Geteuid() != 0 { // root reads anything
		tests = append(tests, struct {
			name string
			opts Options
			want []string
		}{"unreadable deployed environment", Options{EnvironmentFiles: envs(), DeployedEnvironment: unreadable},
			[]string{"deployed_environment " + unreadable, "permission denied", "become"}})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(tc.opts)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// Evidence a check does not use is not read: a broken inventory does not
// stop the fsid check.
func TestUnusedEvidenceIsNotRead(t *testing.T) {
	out, err := Run(Options{EnvironmentFiles: envs(ceph), DeployedInventory: td("bad/inventory-malformed.yaml"),
		NetIPMap: td("bad/net_ip_map-list.json"), CephConf: td("node/ceph.conf"), Checks: []string{CephFSID}})
	if err != nil {
		t.Fatal(err)
	}
	if statuses(out)[CephFSID] != Passed {
		t.Fatalf("%+v", out.Checks)
	}
	_, err = Run(Options{EnvironmentFiles: envs(netiso), CephConf: td("bad/ceph-junk.conf"), Checks: []string{NetworkIsolation}})
	if err != nil {
		t.Fatal(err)
	}
}

// An upgrade converge's forbidden parameters are refused wherever an
// environment file sets them under parameter_defaults, naming the file.
func TestForbiddenParameters(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	clean := write("clean.yaml", "parameter_defaults:\n  ContainerImagePrepare: [{set: {tag: wallaby}}]\n")
	nested := write("nested.yaml", "parameter_defaults:\n  ContainerImagePrepare:\n    - set:\n        namespace_stein: quay.io/x\n        tag_stein: s\n")
	top := write("top.yaml", "parameter_defaults:\n  ceph3_tag: v3\nparameters:\n  tag_stein: only-in-parameters\n")
	forbidden := []string{"ceph3_tag", "tag_stein", "namespace_stein"}
	for _, tc := range []struct {
		name  string
		files []string
		want  []string // empty: passes
	}{
		{"none set", []string{clean}, nil},
		{"nested in a list", []string{clean, nested}, []string{"nested.yaml sets namespace_stein, tag_stein"}},
		{"at the top, parameters not looked at", []string{top}, []string{"top.yaml sets ceph3_tag"}},
		{"both named", []string{nested, top}, []string{"nested.yaml sets", "top.yaml sets ceph3_tag"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Run(Options{EnvironmentFiles: tc.files, Forbidden: forbidden})
			if err != nil {
				t.Fatal(err)
			}
			if out.Failed != (len(tc.want) > 0) {
				t.Fatalf("failed=%v: %s", out.Failed, out.Msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.Msg, w) || !strings.Contains(out.Msg, "forbidden_parameters") {
					t.Errorf("%q lacks %q", out.Msg, w)
				}
			}
		})
	}
}
