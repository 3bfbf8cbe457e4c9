package configdownload

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

func dig(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func keys(v any) []string {
	m, _ := v.(map[string]any)
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// stable/wallaby: TripleoInventories merges the plan's inventory, every
// group under <plan>_<group> below a group of its own name.
func TestInventoryWallaby(t *testing.T) {
	r := mustRender(t, syntheticStack("overcloud", 1, 2), Options{})
	inv := yamlOf(t, r, InventoryFile).(map[string]any)
	if !strings.HasPrefix(string(r.Files[InventoryFile]), "Undercloud:\n") {
		t.Errorf("the inventory does not start with the Undercloud:\n%s", r.Files[InventoryFile])
	}
	want := []string{"Compute", "Controller", "Undercloud", "allovercloud", "ceph_mon", "compute_only", "controller_only",
		"excluded_overcloud", "mons", "overcloud", "overcloud_Compute", "overcloud_Controller", "overcloud_allovercloud",
		"overcloud_ceph_mon", "overcloud_compute_only", "overcloud_controller_only", "overcloud_excluded_overcloud",
		"overcloud_mons", "overcloud_overcloud", "overcloud_sample_marker", "sample_marker"}
	if got := keys(inv); !reflect.DeepEqual(got, want) {
		t.Errorf("groups %v\nwant %v", got, want)
	}
	for g, kids := range map[string][]string{
		"Controller": {"overcloud_Controller"}, "allovercloud": {"overcloud_allovercloud"},
		"overcloud": {"overcloud_allovercloud"}, "overcloud_allovercloud": {"overcloud_overcloud"},
		"overcloud_overcloud": {"overcloud_Compute", "overcloud_Controller"}, "sample_marker": {"overcloud_sample_marker"},
		"overcloud_sample_marker": {"overcloud_Compute", "overcloud_Controller"}, "overcloud_mons": {"overcloud_Controller"},
		"excluded_overcloud": {"overcloud_excluded_overcloud"},
	} {
		if got := keys(dig(inv, g, "children")); !reflect.DeepEqual(got, kids) {
			t.Errorf("%s children %v, want %v", g, got, kids)
		}
	}
	uc := dig(inv, "Undercloud", "vars").(map[string]any)
	for k, v := range map[string]any{"ansible_host": "localhost", "ansible_connection": "local", "ansible_remote_tmp": "/tmp/ansible-${USER}",
		"auth_url": nil, "project_name": nil, "username": nil, "any_error_fatal": true, "max_fail_percentage": 0,
		"ansible_python_interpreter": "/usr/bin/python3", "plan": "overcloud", "plans": []any{"overcloud"},
		"overcloud_admin_password": "secret", "overcloud_keystone_url": "http://192.168.24.5:5000",
		"overcloud_horizon_url": "http://192.168.24.5/dashboard", "undercloud_service_list": []any{"tripleo_ironic_conductor"}} {
		if got, ok := uc[k]; !ok || !reflect.DeepEqual(got, v) {
			t.Errorf("Undercloud %s = %#v, want %#v", k, got, v)
		}
	}
	if got := keys(dig(inv, "Undercloud", "hosts")); !reflect.DeepEqual(got, []string{"undercloud"}) {
		t.Errorf("Undercloud hosts %v", got)
	}
	cv := dig(inv, "overcloud_Compute", "vars").(map[string]any)
	if !reflect.DeepEqual(cv, map[string]any{"ansible_ssh_user": "tripleo-admin", "bootstrap_server_id": "00000000-0000-0000-0000-000000000000",
		"tripleo_role_name": "Compute", "tripleo_role_networks": []any{"ctlplane", "internal_api"}, "serial": 1}) {
		t.Errorf("overcloud_Compute vars %v", cv)
	}
	h := dig(inv, "overcloud_Compute", "hosts", "overcloud-novacompute-1").(map[string]any)
	if !reflect.DeepEqual(h, map[string]any{"ansible_host": "192.168.24.111", "deploy_server_id": "00000001-0000-0000-0000-000000000001",
		"ctlplane_ip": "192.168.24.111", "internal_api_ip": "172.16.2.111",
		"ctlplane_hostname": "overcloud-novacompute-1.ctlplane.localdomain", "internal_api_hostname": "overcloud-novacompute-1.internalapi.localdomain"}) {
		t.Errorf("host vars %v", h)
	}
	// The overcloud's vars: the VIPs of the networks in use and redis, the container CLI.
	if ov := dig(inv, "overcloud_overcloud", "vars"); !reflect.DeepEqual(ov, map[string]any{"ctlplane_vip": "192.168.24.5",
		"internal_api_vip": "172.16.2.5", "redis_vip": "192.168.24.6", "container_cli": "podman"}) {
		t.Errorf("overcloud vars %v", ov)
	}
	if got := dig(inv, "overcloud_sample_marker", "vars"); !reflect.DeepEqual(got, map[string]any{"ansible_ssh_user": "tripleo-admin"}) {
		t.Errorf("service group vars %v", got)
	}
	if got := keys(dig(inv, "overcloud_excluded_overcloud", "hosts")); !reflect.DeepEqual(got, []string{"overcloud-novacompute-9"}) {
		t.Errorf("excluded hosts %v", got)
	}
	// No RoleGroupVars in the inventory: they are in group_vars/.
	if _, ok := cv["answer"]; ok {
		t.Error("RoleGroupVars copied into the inventory")
	}

	// ssh_network and python_interpreter.
	r = mustRender(t, syntheticStack("overcloud", 1, 1), Options{SSHNetwork: "internal_api", SSHUser: "heat-admin", PythonInterpreter: "/usr/libexec/platform-python"})
	inv = yamlOf(t, r, InventoryFile).(map[string]any)
	// The host names come from that network's names, cut at ".internal_api." only.
	if got := keys(dig(inv, "overcloud_Compute", "hosts")); !reflect.DeepEqual(got, []string{"overcloud-novacompute-0.internalapi.localdomain"}) {
		t.Errorf("hosts on internal_api %v", got)
	}
	if got := dig(inv, "overcloud_Compute", "hosts", "overcloud-novacompute-0.internalapi.localdomain", "ansible_host"); got != "172.16.2.110" {
		t.Errorf("ansible_host on internal_api %v", got)
	}
	for _, g := range []string{"Undercloud", "overcloud_Compute", "overcloud_sample_marker"} {
		if got := dig(inv, g, "vars", "ansible_python_interpreter"); got != "/usr/libexec/platform-python" {
			t.Errorf("%s python %v", g, got)
		}
	}
	if got := dig(inv, "overcloud_Compute", "vars", "ansible_ssh_user"); got != "heat-admin" {
		t.Errorf("ssh user %v", got)
	}
}

// stable/zed: no merge; the overcloud's vars on allovercloud, the plan and
// overcloud groups above it.
func TestInventoryZed(t *testing.T) {
	r := mustRender(t, syntheticStack("central", 1, 1), Options{Release: Zed})
	inv := yamlOf(t, r, InventoryFile).(map[string]any)
	want := []string{"Compute", "Controller", "Undercloud", "allovercloud", "central", "ceph_mon", "compute_only", "controller_only",
		"excluded_overcloud", "mons", "overcloud", "sample_marker"}
	if got := keys(inv); !reflect.DeepEqual(got, want) {
		t.Errorf("groups %v\nwant %v", got, want)
	}
	for g, kids := range map[string][]string{"allovercloud": {"Compute", "Controller"}, "central": {"allovercloud"},
		"overcloud": {"allovercloud"}, "sample_marker": {"Compute", "Controller"}} {
		if got := keys(dig(inv, g, "children")); !reflect.DeepEqual(got, kids) {
			t.Errorf("%s children %v, want %v", g, got, kids)
		}
	}
	if got := dig(inv, "allovercloud", "vars", "internal_api_vip"); got != "172.16.2.5" {
		t.Errorf("allovercloud vars %v", dig(inv, "allovercloud", "vars"))
	}
	uc := dig(inv, "Undercloud", "vars").(map[string]any)
	for _, k := range []string{"auth_url", "project_name", "username", "plans"} {
		if _, ok := uc[k]; ok {
			t.Errorf("zed Undercloud has %s", k)
		}
	}
	if uc["plan"] != "central" {
		t.Errorf("zed Undercloud plan %v", uc["plan"])
	}
	if got := keys(dig(inv, "Compute", "hosts")); !reflect.DeepEqual(got, []string{"central-novacompute-0"}) {
		t.Errorf("zed Compute hosts %v", got)
	}
	// A role without ctlplane addresses is left out (with a warning), as zed does.
	d := syntheticStack("central", 1, 1)
	asObject(asObject(d.Outputs.Value(OutRoleNetIPMap)).Value("Compute")).Delete("ctlplane")
	r = mustRender(t, d, Options{Release: Zed})
	if inv := yamlOf(t, r, InventoryFile).(map[string]any); inv["Compute"] != nil || !strings.Contains(strings.Join(r.Warnings, "\n"), "no ctlplane network") {
		t.Errorf("zed role without ctlplane: %v %q", keys(inv), r.Warnings)
	}
}

// With another plan name, wallaby's merge names the groups after it.
func TestInventoryWallabyPlanName(t *testing.T) {
	r := mustRender(t, syntheticStack("standalone", 1, 0), Options{})
	inv := yamlOf(t, r, InventoryFile).(map[string]any)
	if got := keys(dig(inv, "standalone", "children")); !reflect.DeepEqual(got, []string{"standalone_allovercloud"}) {
		t.Errorf("plan group children %v", got)
	}
	if got := keys(dig(inv, "standalone_standalone", "children")); !reflect.DeepEqual(got, []string{"standalone_Controller"}) {
		t.Errorf("standalone_standalone children %v", got)
	}
	if inv["overcloud"] != nil {
		t.Error("wallaby has an overcloud group for another plan")
	}
}
