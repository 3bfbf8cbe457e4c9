package realtht

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/precheck"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stack"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tht"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tripleocommon"
	"gopkg.in/yaml.v3"
)

// serviceSites are overclouds with the services operators commonly add,
// each with the tree's isolated networks provisioned as wallaby's network
// v2 commands leave them (tht.Options.NetworkIsolation) and a CephStorage
// node, and each with what the default workload does not have:
//   - site-a: three Controllers (a bootstrap node and two others) and no
//     Compute (a DCN central site: its computes are at the edge), HA,
//     public TLS with a trust anchor, cephadm (external deploy tasks),
//     Octavia (external post-deploy tasks that write an inventory),
//     Barbican, Designate, Manila, Ironic in the overcloud, OVN with DVR,
//     swap;
//   - site-b: IPv6 isolated networks, TLS everywhere (tripleo-ipa),
//     ceph-ansible with RGW, ML2/OVS instead of OVN, Glance and Cinder on
//     NFS, FRR (BGP), the legacy telemetry, FIPS;
//   - site-c: composable roles (tht.Options.Roles), the control plane
//     split as THT's roles/ offer it: no Controller role, but
//     ControllerOpenstack, Database, Messaging and Networker, and a
//     renamed copy of Compute (Compute:ComputeLeaf1), with cephadm.
//
// site-a's export deploys a DCN site (dcnSite), site-c's cell export a
// Nova cell (cellStack).
//
// markers are texts each rendered file must hold, so that the environments
// are known to have reached the stack. keepsNode are roles whose last node
// a scale-down must refuse to remove, with the reason it gives; mayEmpty
// roles whose last node it removes (with a warning).
var serviceSites = []struct {
	name                  string
	controllers, computes int
	cephStorage           int
	// roles and roleCounts: tht.Options.Roles and RoleCounts.
	roles      []string
	roleCounts map[string]int
	// ipv6: the isolated networks are IPv6 (tht.Options.IPv6); publicTLS:
	// the environments put TLS on the public endpoints.
	ipv6, publicTLS bool
	environments    []string
	markers         map[string][]string
	keepsNode       map[string]string
	mayEmpty        []string
	// children are stacks deployed from this one's exports (checkChild).
	children []childStack
}{
	{
		name: "site-a", controllers: 3, cephStorage: 1, publicTLS: true, children: []childStack{dcnSite},
		roleCounts: map[string]int{"Compute": 0}, // the central site of DCN: its computes are at the edge
		environments: []string{
			"environments/docker-ha.yaml",
			"environments/ssl/enable-tls.yaml",
			"environments/ssl/inject-trust-anchor.yaml",
			"environments/ssl/tls-endpoints-public-ip.yaml",
			"environments/cephadm/cephadm.yaml",
			"environments/services/octavia.yaml",
			"environments/services/barbican.yaml",
			"environments/services/designate.yaml",
			"environments/services/manila.yaml",
			"environments/services/ironic-overcloud.yaml",
			"environments/services/neutron-ovn-dvr-ha.yaml",
			"environments/enable-swap.yaml",
		},
		markers: map[string][]string{
			"external_post_deploy_steps_tasks.yaml":                   {"octavia"},
			"external_deploy_steps_tasks.yaml":                        {"tripleo_cephadm"},
			"group_vars/Controller":                                   {"enable-chassis-as-gw"},
			"Controller/config_settings.yaml":                         {"ironic::api"},
			"Controller/site-a-controller-2/ControllerSwapDeployment": {"swap_size_megabytes"},
			"group_vars/CephStorage":                                  {"ceph_osd"},
		},
		keepsNode: map[string]string{"Controller": `its name contains "controller"`},
		mayEmpty:  []string{"CephStorage"},
	},
	{
		name: "site-b", controllers: 1, computes: 1, cephStorage: 1, ipv6: true, publicTLS: true,
		environments: []string{
			"environments/ssl/enable-internal-tls.yaml",
			"environments/ssl/tls-everywhere-endpoints-dns.yaml",
			"environments/services/haproxy-public-tls-certmonger.yaml",
			"environments/ceph-ansible/ceph-ansible.yaml",
			"environments/ceph-ansible/ceph-rgw.yaml",
			"environments/services/neutron-ovs.yaml",
			"environments/storage/glance-nfs.yaml",
			"environments/storage/cinder-nfs.yaml",
			"environments/services/frr.yaml",
			"environments/enable-legacy-telemetry.yaml",
			"environments/fips.yaml",
		},
		markers: map[string][]string{
			"Controller/config_settings.yaml":  {"tripleo::profile::base::rabbitmq::enable_internal_tls: true", "rabbit_ipv6: true"},
			"external_deploy_steps_tasks.yaml": {"tripleo_ceph_run_ansible"},
			"group_vars/Compute":               {"neutron_ovs_agent"},
			"group_vars/Controller":            {"fips_mode"},
		},
	},
	{
		name: "site-c", computes: 1, cephStorage: 1,
		roles:        []string{"ControllerOpenstack", "Database", "Messaging", "Networker", "Compute", "Compute:ComputeLeaf1", "CephStorage"},
		roleCounts:   map[string]int{"ControllerOpenstack": 1, "Database": 1, "Messaging": 1, "Networker": 1, "ComputeLeaf1": 1},
		environments: []string{"environments/cephadm/cephadm.yaml"},
		markers: map[string][]string{
			"group_vars/Database":     {"mysql"},
			"group_vars/Messaging":    {"oslo_messaging_rpc"},
			"group_vars/Networker":    {"enable-chassis-as-gw"},
			"group_vars/ComputeLeaf1": {"nova_compute"},
		},
		keepsNode: map[string]string{
			"ControllerOpenstack": `its name contains "controller"`,
			"Database":            "role Database runs mysql",
			"Messaging":           "role Messaging runs pacemaker, oslo_messaging_rpc",
		},
		mayEmpty: []string{"Networker", "ComputeLeaf1"},
		children: []childStack{cellStack},
	},
}

// TestRealTHTServices creates each of serviceSites (a real-THT stack each,
// named after the site, so that hosts, working-dir files and exports take
// the stack's name) through heat_stack on its own Heat. On each, as
// TestRealTHT's steps do on the default overcloud: the export (stepExport,
// ours against tripleoclient's export_overcloud), then the deploy
// prechecks, the saved nodes and the scale-down's guard of each role's
// last node on what that left in the working dir, then config_download's
// differential test against tripleo-common's own code; the site's markers
// and every host's network addresses must show in the rendering.
func TestRealTHTServices(t *testing.T) {
	heattest.RequireHeat(t)
	for _, site := range serviceSites {
		t.Run(site.name, func(t *testing.T) {
			s := &Suite{Opts: tht.Options{WorkDir: filepath.Join(t.TempDir(), "overcloud-deploy"), StackName: site.name,
				ControllerCount: site.controllers, ComputeCount: site.computes, CephStorageCount: site.cephStorage,
				Roles: site.roles, RoleCounts: site.roleCounts,
				NetworkIsolation: true, IPv6: site.ipv6, THTEnvironments: site.environments}}
			s.Heat = heattest.Start(t, nil)
			var err error
			if s.Client, err = heatapi.NewNoAuth(s.Heat.Endpoint); err != nil {
				t.Fatal(err)
			}
			out, d := createWorkload(t, s)
			if len(out.OutputErrors) > 0 {
				t.Errorf("output errors: %v", out.OutputErrors)
			}
			t.Logf("create with network isolation and %d environments of the tree: %s", len(site.environments), d.Round(time.Second))

			// Public TLS: the endpoints the overcloud's clients use are https.
			if u, _ := out.Outputs["KeystoneURL"].(string); strings.HasPrefix(u, "https://") != site.publicTLS {
				t.Errorf("KeystoneURL %q: want https %v", u, site.publicTLS)
			}

			// The export against tripleoclient's own; it leaves the working
			// dir as a deploy does (saved environment, config-download).
			if !t.Run("export", func(t *testing.T) { stepExport(t, s) }) {
				t.FailNow()
			}
			t.Run("precheck", func(t *testing.T) { checkNetworkPrecheck(t, s) })
			t.Run("nodes", func(t *testing.T) { checkSavedNodes(t, s) })
			t.Run("scale-down", func(t *testing.T) { checkLastNodes(t, s, site.keepsNode, site.mayEmpty) })

			p := configDownloadParity(t, s)
			for file, texts := range site.markers {
				b, err := os.ReadFile(filepath.Join(p.Ours, file))
				if err != nil {
					t.Errorf("%v", err)
					continue
				}
				for _, want := range texts {
					if !strings.Contains(string(b), want) {
						t.Errorf("%s does not hold %q: the environments did not reach the rendering", file, want)
					}
				}
			}
			// Every host has the addresses the node environment gave it.
			checkHostAddresses(t, s, p)
			for _, c := range site.children {
				t.Run(c.name, func(t *testing.T) { checkChild(t, s, c) })
			}
		})
	}
}

// createWorkload generates s.Opts' workload and creates its stack through
// heat_stack on s's Heat, failing the test unless it is CREATE_COMPLETE;
// it sets s.Workload, s.Stack and s.Outcome.
func createWorkload(t *testing.T, s *Suite) (stack.Outcome, time.Duration) {
	t.Helper()
	var err error
	if s.Workload, err = tht.Generate(s.Opts); err != nil {
		t.Fatalf("generating stack %s's real-THT workload (roles %v, environments %v, extra %v): %v",
			s.Opts.StackName, s.Opts.Roles, s.Opts.THTEnvironments, s.Opts.ExtraEnvironments, err)
	}
	out, d := s.Run(t, s.StackOptions(t))
	if out.Action != stack.ActionCreate || out.Stack == nil || out.Stack.Status != "CREATE_COMPLETE" {
		t.Fatalf("%s create: action %s stack %+v: %s", s.Opts.StackName, out.Action, out.Stack, out.Msg)
	}
	s.Stack, s.Outcome = heatapi.StackRef{Name: out.Stack.Name, ID: out.Stack.ID}, out
	return out, d
}

// checkHostAddresses: every host of the workload has, in the inventory of
// our config-download rendering p, the isolated addresses the node
// environment gave it.
func checkHostAddresses(t *testing.T, s *Suite, p *tripleocommon.Parity) {
	t.Helper()
	inv := readInventoryHosts(t, filepath.Join(p.Ours, "tripleo-ansible-inventory.yaml"))
	for _, h := range s.Workload.Hosts {
		if len(h.IPs) == 0 {
			t.Errorf("host %s: the workload gave it no isolated address", h.Name)
		}
		for net, ip := range h.IPs {
			if got := inv[h.Name][net+"_ip"]; got != ip {
				t.Errorf("inventory: %s %s_ip = %v, want %s", h.Name, net, got, ip)
			}
		}
	}
}

// childStack is a stack deployed from a central stack's export, on the
// same networks and the same Heat.
type childStack struct {
	name  string // the stack's name
	roles []string
	// roleCounts: each role's nodes (tht.Options.RoleCounts).
	roleCounts   map[string]int
	environments []string // of the tree
	// cellExport: from the central stack's cell export (`openstack
	// overcloud cell export`), else its export (`overcloud export`).
	cellExport bool
	parameters map[string]any // parameter_defaults of the child's own environment
}

// dcnSite is a distributed compute site, as TripleO's multi-stack DCN
// documentation deploys one: `openstack overcloud export --stack
// <central>`, then a stack of its own with the DistributedCompute role,
// environments/dcn.yaml, the export and the site's availability zone.
var dcnSite = childStack{name: "dcn0", roles: []string{"DistributedCompute"}, roleCounts: map[string]int{"DistributedCompute": 1},
	environments: []string{"environments/dcn.yaml"},
	parameters:   map[string]any{"NovaComputeAvailabilityZone": "dcn0", "CinderStorageAvailabilityZone": "dcn0"}}

// cellStack is an additional Nova cell, as TripleO's cells v2
// documentation deploys one: `openstack overcloud cell export`, then a
// stack with the roles `roles generate Compute CellController` gives,
// the export and NovaAdditionalCell.
var cellStack = childStack{name: "cell1", roles: []string{"Compute", "CellController"},
	roleCounts: map[string]int{"CellController": 1, "Compute": 1}, cellExport: true,
	parameters: map[string]any{"NovaAdditionalCell": true, "NovaLocalMetadataPerCell": true}}

// checkChild deploys c from central's export: the stack must come up on
// the central stack's endpoints (the export's EndpointMapOverride) and
// with its hosts (ExtraHostFileEntries), and config-download of it must
// match tripleo-common's.
func checkChild(t *testing.T, central *Suite, c childStack) {
	l, err := workdir.New(central.Workload.WorkDir, central.Workload.StackName)
	if err != nil {
		t.Fatal(err)
	}
	export := l.Export()
	if c.cellExport {
		export = l.CellExport()
	}
	if _, err := os.Stat(export); err != nil {
		t.Fatalf("the central stack's export: %v", err)
	}
	dir := t.TempDir()
	own := filepath.Join(dir, c.name+"-parameters.yaml")
	b, err := yaml.Marshal(map[string]any{"parameter_defaults": c.parameters})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(own, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Suite{Heat: central.Heat, Client: central.Client, Opts: tht.Options{WorkDir: filepath.Join(dir, "overcloud-deploy"), StackName: c.name,
		Roles: c.roles, RoleCounts: c.roleCounts,
		NetworkIsolation: central.Opts.NetworkIsolation, IPv6: central.Opts.IPv6,
		THTEnvironments: c.environments, ExtraEnvironments: []string{export, own}}}
	out, d := createWorkload(t, s)
	t.Logf("%s created from %s's %s in %s", c.name, central.Workload.StackName, filepath.Base(export), d.Round(time.Second))
	if got, want := out.Outputs["KeystoneURL"], central.Outcome.Outputs["KeystoneURL"]; got != want || want == nil {
		t.Errorf("%s KeystoneURL %v, want the central stack's %v (the export's EndpointMapOverride)", c.name, got, want)
	}
	// The central stack's hosts are in the child's /etc/hosts entries (the
	// export's ExtraHostFileEntries, from the central HostsEntry).
	entries := fmt.Sprint(out.Outputs["HostsEntry"]) // lists print as [a b ...]
	names := map[string]bool{}
	for _, f := range strings.FieldsFunc(entries, func(r rune) bool { return r == ' ' || r == '[' || r == ']' }) {
		names[f] = true
	}
	for _, h := range central.Workload.Hosts {
		if !names[h.Name] {
			t.Errorf("%s HostsEntry has no entry for the central stack's %s: %.300s", c.name, h.Name, entries)
		}
	}
	p := configDownloadParity(t, s)
	checkHostAddresses(t, s, p)
}

// checkNetworkPrecheck runs the deploy's prechecks (as deploy_overcloud.yml
// calls overcloud_precheck) on the evidence stepExport left in the working
// dir: the same environments pass; without the networks environment every
// isolated network would go, and the deploy is refused naming them.
func checkNetworkPrecheck(t *testing.T, s *Suite) {
	l, err := workdir.New(s.Workload.WorkDir, s.Workload.StackName)
	if err != nil {
		t.Fatal(err)
	}
	run := func(envs []string) precheck.Outcome {
		t.Helper()
		out, err := precheck.Run(precheck.Options{EnvironmentFiles: envs, DeployedEnvironment: l.Environment(), DeployedInventory: l.Inventory()})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	same := run(s.Workload.EnvironmentFiles)
	requested, _ := same.Requested["networks"].([]string)
	if same.Failed || len(requested) == 0 {
		t.Errorf("the same environments: failed %v (%s), requested %v, deployed %v", same.Failed, same.Msg, same.Requested, same.Deployed)
	}
	// The saved environment has every provisioned network; the inventory
	// those the roles have addresses on (in the reference tree all but
	// Management, which is in no role).
	deployed, _ := same.Deployed["networks"].(map[string]any)
	env, inv := deployed["deployed_environment"], deployed["deployed_inventory"]
	if isReferenceTHT(s.Workload) {
		all := []string{"External", "InternalApi", "Management", "Storage", "StorageMgmt", "Tenant"}
		if !reflect.DeepEqual(requested, all) || !reflect.DeepEqual(env, all) ||
			!reflect.DeepEqual(inv, []string{"External", "InternalApi", "Storage", "StorageMgmt", "Tenant"}) {
			t.Errorf("networks: requested %v, deployed environment %v, inventory %v", requested, env, inv)
		}
	} else if invNets, _ := inv.([]string); !reflect.DeepEqual(env, requested) || len(invNets) == 0 {
		t.Errorf("networks: requested %v, deployed environment %v, inventory %v", requested, env, inv)
	}
	var without []string
	for _, e := range s.Workload.EnvironmentFiles {
		if filepath.Base(e) != tht.NetworksEnv {
			without = append(without, e)
		}
	}
	if len(without) != len(s.Workload.EnvironmentFiles)-1 {
		t.Fatalf("no %s among %v", tht.NetworksEnv, s.Workload.EnvironmentFiles)
	}
	gone := run(without)
	invNets, _ := inv.([]string)
	if !gone.Failed || !strings.Contains(gone.Msg, strings.Join(invNets, ", ")+" (deployed per deployed_environment, deployed_inventory;") ||
		!strings.Contains(gone.Msg, "add back the networks-deployed environment that 'openstack overcloud network provision' wrote") {
		t.Errorf("without %s: failed %v: %s", tht.NetworksEnv, gone.Failed, gone.Msg)
	}
	t.Logf("without the networks environment: %s", gone.Msg)
}

// readInventoryHosts reads each host's variables from a config-download
// inventory: the hosts of its top-level groups (config-download lists each
// host with its variables under its role's group, hosts: {name: {vars}}).
func readInventoryHosts(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	if err := yaml.Unmarshal(b, &top); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	hosts := map[string]map[string]any{}
	for _, g := range top {
		gm, _ := g.(map[string]any)
		hm, _ := gm["hosts"].(map[string]any)
		for name, v := range hm {
			vars, _ := v.(map[string]any)
			if hosts[name] == nil {
				hosts[name] = map[string]any{}
			}
			for k, x := range vars {
				hosts[name][k] = x
			}
		}
	}
	return hosts
}

// checkSavedNodes reads the nodes the export step's Save wrote: each role
// group of the workload with its hosts, by index, as a node delete finds
// them.
func checkSavedNodes(t *testing.T, s *Suite) {
	l, err := workdir.New(s.Workload.WorkDir, s.Workload.StackName)
	if err != nil {
		t.Fatal(err)
	}
	n, err := l.ReadNodes()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, g := range n.Groups {
		for _, m := range g.Members {
			got[g.Role] = append(got[g.Role], m.Index+" "+m.Hostname)
		}
	}
	want := map[string][]string{}
	for _, h := range s.Workload.Hosts {
		want[h.Role] = append(want[h.Role], fmt.Sprintf("%d %s", h.Index, h.Name))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("saved nodes %v, want %v", got, want)
	}
}

// checkLastNodes plans (writes nothing) the removal of the last node of
// each role of keepsNode, which must be refused with its reason, and of
// each role of mayEmpty, which must go with a warning: the saved nodes and
// EnabledServices of a real deploy decide.
func checkLastNodes(t *testing.T, s *Suite, keepsNode map[string]string, mayEmpty []string) {
	l, err := workdir.New(s.Workload.WorkDir, s.Workload.StackName)
	if err != nil {
		t.Fatal(err)
	}
	hostsOf := func(role string) []string {
		var names []string
		for _, h := range s.Workload.HostsOf(role) {
			names = append(names, h.Name)
		}
		if len(names) == 0 {
			t.Fatalf("the workload has no %s node", role)
		}
		return names
	}
	for role, why := range keepsNode {
		_, err := l.PlanScaleDown(hostsOf(role), workdir.ScaleDownOptions{})
		if err == nil || !strings.Contains(err.Error(), "with no node ("+role+"Count: 0), and "+why) {
			t.Errorf("removing every %s node: %v, want it refused because %s", role, err, why)
		}
	}
	for _, role := range mayEmpty {
		p, err := l.PlanScaleDown(hostsOf(role), workdir.ScaleDownOptions{})
		if err != nil || p.Counts[role] != 0 || !strings.Contains(strings.Join(p.Warnings, "\n"), "group "+role+" (role "+role+") has no node left") {
			t.Errorf("removing every %s node: plan %+v, error %v", role, p, err)
		}
	}
	if _, err := os.Stat(l.ScaleDown()); err == nil {
		t.Errorf("planning wrote %s", l.ScaleDown())
	}
}
