package tht

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// Roles generates the roles data from the tree's roles/ as `openstack
// overcloud roles generate` does (a role file, or DEFINED:NEW renamed),
// renders the tree with it, keeps it where tripleoclient does, and
// provisions the other roles of RoleCounts in blocks of their own, on the
// ctlplane and on their networks.
func TestRoles(t *testing.T) {
	thtSrc, _ := reference(t)
	w, err := Generate(Options{WorkDir: filepath.Join(t.TempDir(), "w"), ComputeCount: 1, NetworkIsolation: true,
		Roles:      []string{"Controller", "Networker", "Compute", "Compute:ComputeLeaf1"},
		RoleCounts: map[string]int{"Networker": 1, "ComputeLeaf1": 2}})
	if err != nil {
		t.Fatal(err)
	}
	if w.RolesFile != filepath.Join(w.WorkDir, "tripleo-overcloud-roles-data.yaml") {
		t.Errorf("roles file %s", w.RolesFile)
	}
	roles, err := readRoles(w.RolesFile)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	byName := map[string]roleData{}
	for _, r := range roles {
		names = append(names, r.Name)
		byName[r.Name] = r
	}
	if !reflect.DeepEqual(names, []string{"Controller", "Networker", "Compute", "ComputeLeaf1"}) {
		t.Errorf("roles %v", names)
	}
	// The renamed copy is Compute's role but for its name.
	var compute []roleData
	if err := yaml.Unmarshal(readSourceFile(t, thtSrc, "roles/Compute.yaml"), &compute); err != nil || len(compute) != 1 {
		t.Fatalf("roles/Compute.yaml: %v", err)
	}
	if !reflect.DeepEqual(byName["ComputeLeaf1"].ServicesDefault, compute[0].ServicesDefault) || len(compute[0].ServicesDefault) == 0 {
		t.Errorf("ComputeLeaf1 services %v, want Compute's", byName["ComputeLeaf1"].ServicesDefault)
	}
	// The tree was rendered with it: the roles' resource groups are there.
	top, err := os.ReadFile(w.Template)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range []string{"\n  Networker:\n", "\n  ComputeLeaf1:\n", "\n  Compute:\n", "\n  Controller:\n"} {
		if !strings.Contains(string(top), res) {
			t.Errorf("%s has no resource %q", w.Template, strings.TrimSpace(res))
		}
	}
	if strings.Contains(string(top), "\n  CephStorage:\n") {
		t.Errorf("%s has a CephStorage resource: not rendered with the generated roles", w.Template)
	}

	want := map[string]Host{
		"overcloud-networker-0": {Name: "overcloud-networker-0", Role: "Networker", Index: 0, CtlplaneIP: "192.168.31.138",
			IPs: map[string]string{"internal_api": "172.16.2.180", "tenant": "172.16.0.180"}},
		"overcloud-computeleaf1-1": {Name: "overcloud-computeleaf1-1", Role: "ComputeLeaf1", Index: 1, CtlplaneIP: "192.168.31.159",
			IPs: map[string]string{"internal_api": "172.16.2.189", "storage": "172.16.1.189", "tenant": "172.16.0.189"}},
	}
	seen := map[string]string{}
	for _, h := range w.Hosts {
		if wh, ok := want[h.Name]; ok && !reflect.DeepEqual(h, wh) {
			t.Errorf("host %+v, want %+v", h, wh)
		}
		delete(want, h.Name)
		for net, ip := range h.IPs {
			if other := seen[net+" "+ip]; other != "" {
				t.Errorf("%s and %s both have %s on %s", other, h.Name, ip, net)
			}
			seen[net+" "+ip] = h.Name
		}
		if other := seen[h.CtlplaneIP]; other != "" {
			t.Errorf("%s and %s both have ctlplane %s", other, h.Name, h.CtlplaneIP)
		}
		seen[h.CtlplaneIP] = h.Name
	}
	if len(want) > 0 || len(w.Hosts) != 5 {
		t.Errorf("hosts %v; missing %v", w.Hosts, want)
	}
	if !reflect.DeepEqual(w.Counts, map[string]int{"Controller": 1, "Compute": 1, "Networker": 1, "ComputeLeaf1": 2}) {
		t.Errorf("counts %v", w.Counts)
	}

	nodeEnv := filepath.Join(w.TemplateDir, UserEnvDir, NodeEnv)
	nodes := parameterDefaults(t, nodeEnv)
	if nodes["NetworkerCount"] != 1 || nodes["ComputeLeaf1Count"] != 2 || nodes["ComputeLeaf1HostnameFormat"] != "%stackname%-computeleaf1-%index%" {
		t.Errorf("node environment: %v", nodes)
	}
	rr := registryOf(t, nodeEnv)
	if rr["OS::TripleO::Networker::Ports::TenantPort"] != filepath.Join(w.TemplateDir, "network", "ports", "deployed_tenant.yaml") ||
		rr["OS::TripleO::ComputeLeaf1::Ports::StoragePort"] == nil || rr["OS::TripleO::Networker::Ports::StoragePort"] != nil {
		t.Errorf("port registry %v", rr)
	}
	params := parameterDefaults(t, filepath.Join(w.TemplateDir, UserEnvDir, ParametersEnv))
	if !reflect.DeepEqual(params["ComputeLeaf1Services"], params["ComputeServices"]) {
		t.Errorf("ComputeLeaf1Services %v, want ComputeServices %v", params["ComputeLeaf1Services"], params["ComputeServices"])
	}
	if l, _ := params["NetworkerServices"].([]any); len(l) == 0 {
		t.Error("NetworkerServices empty")
	}

	// Without Roles the working dir keeps the tree's own roles data.
	def := shared(t)
	got, err := os.ReadFile(def.RolesFile)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := os.ReadFile(filepath.Join(def.TemplateDir, RolesFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || !reflect.DeepEqual(got, tree) {
		t.Errorf("%s is not the tree's roles_data.yaml", def.RolesFile)
	}
}

// A split control plane: no Controller role at all, its services on
// ControllerOpenstack, Database and Messaging.
func TestRolesWithoutController(t *testing.T) {
	reference(t)
	w, err := Generate(Options{WorkDir: filepath.Join(t.TempDir(), "w"), ComputeCount: 1,
		Roles:      []string{"ControllerOpenstack", "Database", "Messaging", "Compute"},
		RoleCounts: map[string]int{"ControllerOpenstack": 1, "Database": 1, "Messaging": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(w.Counts, map[string]int{"Compute": 1, "ControllerOpenstack": 1, "Database": 1, "Messaging": 1}) {
		t.Errorf("counts %v", w.Counts)
	}
	nodes := parameterDefaults(t, filepath.Join(w.TemplateDir, UserEnvDir, NodeEnv))
	if _, ok := nodes["ControllerCount"]; ok {
		t.Errorf("node environment has ControllerCount without a Controller role: %v", nodes)
	}
	params := parameterDefaults(t, filepath.Join(w.TemplateDir, UserEnvDir, ParametersEnv))
	if svc, _ := params["DatabaseServices"].([]any); !contains(svc, "OS::TripleO::Services::MySQL") {
		t.Errorf("DatabaseServices %v", svc)
	}
}

// Roles and counts that cannot be deployed are refused, naming what to do.
func TestRolesRefused(t *testing.T) {
	reference(t)
	for _, c := range []struct {
		name    string
		o       Options
		wantErr string
	}{
		{"unknown role", Options{Roles: []string{"Controller", "Compute", "Nope"}}, "role Nope: the tree has no roles/Nope.yaml (its roles: BlockStorage, CellController"},
		{"same name", Options{Roles: []string{"Controller", "Compute", "Compute:Compute"}}, "must differ from Compute"},
		{"other prefix", Options{Roles: []string{"Controller", "Compute", "Compute:Leaf1"}}, "must start with Compute"},
		{"twice", Options{Roles: []string{"Controller", "Compute", "Compute"}}, "role Compute is listed twice"},
		{"not a name", Options{Roles: []string{"Controller", "../Compute"}}, "want a role file's name"},
		{"count of an unlisted role", Options{Roles: []string{"Controller", "Compute"}, RoleCounts: map[string]int{"Networker": 1}},
			"not one of the roles generated (Controller, Compute)"},
		{"count without roles", Options{RoleCounts: map[string]int{"Networker": 1}}, "list it in the roles to generate"},
		{"negative", Options{Roles: []string{"Controller", "Compute", "Networker"}, RoleCounts: map[string]int{"Networker": -1}}, "got Networker -1"},
		{"defaults to nodes", Options{Roles: []string{"Controller", "Compute", "ComputeDVR"}},
			"role ComputeDVR defaults to 1 nodes (CountDefault) and none are provisioned"},
		{"too many nodes", Options{Roles: []string{"Controller", "Compute", "Networker"}, RoleCounts: map[string]int{"Networker": 21}},
			"Networker indices 0-19 only"},
		{"too many roles", Options{Roles: []string{"Controller", "Compute", "Networker", "Database", "Messaging", "Telemetry", "Novacontrol", "ObjectStorage"},
			RoleCounts: map[string]int{"Networker": 1, "Database": 1, "Messaging": 1, "Telemetry": 1, "Novacontrol": 1, "ObjectStorage": 1}},
			"role ObjectStorage: this workload gives addresses to 5 roles"},
		{"removed of a role not provisioned", Options{Removed: map[string][]int{"Networker": {0}}}, "Networker is not a provisioned role"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.o.WorkDir = filepath.Join(t.TempDir(), "w")
			_, err := Generate(c.o)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error %v, want one with %q", err, c.wantErr)
			}
		})
	}
}

// roleNetworkNames reads roles_data's networks in wallaby's map form and
// in the list form of earlier releases.
func TestRoleNetworkNames(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		want       []string
		wantErr    string
	}{
		{"map (wallaby)", "networks:\n  Tenant: {subnet: tenant_subnet}\n  InternalApi: {subnet: internal_api_subnet}\n", []string{"InternalApi", "Tenant"}, ""},
		{"list (before wallaby)", "networks: [Tenant, InternalApi, Storage]\n", []string{"InternalApi", "Storage", "Tenant"}, ""},
		{"none", "name: Undercloud\n", nil, ""},
		{"list of maps", "networks: [{name: Tenant}]\n", nil, "is not a network name"},
		{"a string", "networks: Tenant\n", nil, "want a map or a list of network names"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var r roleData
			if err := yaml.Unmarshal([]byte(c.yaml), &r); err != nil {
				t.Fatal(err)
			}
			got, err := roleNetworkNames(r.Networks)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v %v, want %v", got, err, c.want)
			}
		})
	}
}

// RoleCounts wins over the count fields: 0 Computes (a DCN central site)
// writes ComputeCount 0 and provisions none; Controller 3 over the field's 1.
func TestRoleCountsOverride(t *testing.T) {
	reference(t)
	w, err := Generate(Options{WorkDir: filepath.Join(t.TempDir(), "w"), ControllerCount: 1, RoleCounts: map[string]int{"Compute": 0, "Controller": 3}})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.HostsOf("Compute")) != 0 || len(w.HostsOf("Controller")) != 3 || w.Counts["Compute"] != 0 {
		t.Errorf("hosts %v, counts %v", w.Hosts, w.Counts)
	}
	nodes := parameterDefaults(t, filepath.Join(w.TemplateDir, UserEnvDir, NodeEnv))
	if c, ok := nodes["ComputeCount"]; !ok || c != 0 || nodes["ControllerCount"] != 3 {
		t.Errorf("node environment ComputeCount %v (set: %v), ControllerCount %v", c, ok, nodes["ControllerCount"])
	}
	params := parameterDefaults(t, filepath.Join(w.TemplateDir, UserEnvDir, ParametersEnv))
	if l, ok := params["ComputeServices"].([]any); !ok || len(l) != 0 {
		t.Errorf("ComputeServices %v, want [] for a role without nodes", params["ComputeServices"])
	}
}
