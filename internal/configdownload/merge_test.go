package configdownload

import (
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func stackInventory(t *testing.T, stack string, controllers, computes int, o Options) StackInventory {
	t.Helper()
	d := syntheticStack(stack, controllers, computes)
	d.Outputs.Set(OutAdminPassword, stack+"-secret")
	r := mustRender(t, d, o)
	return StackInventory{Stack: stack, Path: stack + "/" + InventoryFile, Data: r.Files[InventoryFile]}
}

func mergedOf(t *testing.T, s ...StackInventory) map[string]any {
	t.Helper()
	b, err := MergeInventories(s)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return v
}

// One stack's wallaby inventory is already TripleoInventories' merge of
// its plan: merged alone it comes back byte for byte.
func TestMergeOneStackIsItsInventory(t *testing.T) {
	for _, stack := range []string{"overcloud", "central", "dcn0"} {
		s := stackInventory(t, stack, 1, 2, Options{})
		got, err := MergeInventories([]StackInventory{s})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(s.Data) {
			t.Errorf("%s: merged alone differs from its inventory:\n%s\n---\n%s", stack, got, s.Data)
		}
	}
}

// Two stacks: every group of each under <stack>_<group>, the top-level
// groups gather both, one Undercloud (the first stack's) with both plans.
func TestMergeTwoStacks(t *testing.T) {
	central := stackInventory(t, "central", 1, 1, Options{})
	dcn0 := stackInventory(t, "dcn0", 0, 2, Options{})
	inv := mergedOf(t, central, dcn0)
	for g, kids := range map[string][]string{
		"Compute":            {"central_Compute", "dcn0_Compute"},
		"Controller":         {"central_Controller"},
		"allovercloud":       {"central_allovercloud", "dcn0_allovercloud"},
		"central":            {"central_allovercloud"},
		"dcn0":               {"dcn0_allovercloud"},
		"dcn0_allovercloud":  {"dcn0_dcn0"},
		"dcn0_dcn0":          {"dcn0_Compute"},
		"central_central":    {"central_Compute", "central_Controller"},
		"sample_marker":      {"central_sample_marker", "dcn0_sample_marker"},
		"dcn0_sample_marker": {"dcn0_Compute"},
		"excluded_overcloud": {"central_excluded_overcloud", "dcn0_excluded_overcloud"},
	} {
		if got := keys(dig(inv, g, "children")); !reflect.DeepEqual(got, kids) {
			t.Errorf("%s children %v, want %v", g, got, kids)
		}
	}
	if got := keys(dig(inv, "dcn0_Compute", "hosts")); !reflect.DeepEqual(got, []string{"dcn0-novacompute-0", "dcn0-novacompute-1"}) {
		t.Errorf("dcn0_Compute hosts %v", got)
	}
	if got := dig(inv, "dcn0_Compute", "vars", "tripleo_role_name"); got != "Compute" {
		t.Errorf("dcn0_Compute vars %v", dig(inv, "dcn0_Compute", "vars"))
	}
	uc := dig(inv, "Undercloud", "vars").(map[string]any)
	if _, ok := uc["plan"]; ok {
		t.Errorf("the merge of two plans keeps plan %v", uc["plan"])
	}
	if !reflect.DeepEqual(uc["plans"], []any{"central", "dcn0"}) || uc["overcloud_admin_password"] != "central-secret" {
		t.Errorf("plans %v", uc["plans"])
	}
	if got := keys(dig(inv, "Undercloud", "hosts")); !reflect.DeepEqual(got, []string{"undercloud"}) {
		t.Errorf("Undercloud hosts %v", got)
	}
	// No group of one plan's single merge is left over.
	for _, g := range []string{"central_central_Compute", "Undercloud_Undercloud", "dcn0_dcn0_allovercloud"} {
		if _, ok := inv[g]; ok {
			t.Errorf("group %s in the merge", g)
		}
	}
	// The first stack's Undercloud is kept; the plans are sorted anyway.
	b, err := MergeInventories([]StackInventory{dcn0, central})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "Undercloud:\n") || !strings.Contains(string(b), "overcloud_admin_password: dcn0-secret\n") ||
		!strings.Contains(string(b), "plans:\n      - central\n      - dcn0\n") {
		t.Errorf("dcn0 first:\n%s", b)
	}
}

// Zed inventories are plan inventories: merged the same way.
func TestMergeZed(t *testing.T) {
	inv := mergedOf(t, stackInventory(t, "central", 1, 1, Options{Release: Zed}), stackInventory(t, "dcn0", 0, 1, Options{Release: Zed}))
	for g, kids := range map[string][]string{"Compute": {"central_Compute", "dcn0_Compute"}, "dcn0": {"dcn0_allovercloud"},
		"dcn0_allovercloud": {"dcn0_Compute"}} {
		if got := keys(dig(inv, g, "children")); !reflect.DeepEqual(got, kids) {
			t.Errorf("%s children %v, want %v", g, got, kids)
		}
	}
	if got := dig(inv, "dcn0_allovercloud", "vars", "internal_api_vip"); got != "172.16.2.5" {
		t.Errorf("dcn0_allovercloud vars %v", dig(inv, "dcn0_allovercloud", "vars"))
	}
}

func TestMergeRefuses(t *testing.T) {
	central := stackInventory(t, "central", 1, 1, Options{})
	renamed := central
	renamed.Stack = "dcn0"
	foreign := StackInventory{Stack: "dcn0", Path: "x.yaml", Data: []byte("Undercloud:\n  vars:\n    plan: dcn0\n    plans: [dcn0]\nControllers:\n  hosts: {}\n")}
	for name, c := range map[string]struct {
		in   []StackInventory
		want string
	}{
		"none":        {nil, "no stack"},
		"twice":       {[]StackInventory{central, central}, "given twice"},
		"other plan":  {[]StackInventory{central, renamed}, "plan central, not of stack dcn0"},
		"not yaml":    {[]StackInventory{{Stack: "a", Path: "a.yaml", Data: []byte("a: [")}}, "inventory a.yaml of stack a: not YAML"},
		"no vars":     {[]StackInventory{{Stack: "a", Path: "a.yaml", Data: []byte("all: {}\n")}}, "no Undercloud group"},
		"not grouped": {[]StackInventory{foreign}, "group Controllers, neither dcn0_<group>"},
	} {
		_, err := MergeInventories(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}
