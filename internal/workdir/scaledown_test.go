package workdir

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// envDoc reads the whole scale-down environment.
func envDoc(t *testing.T, l Layout) map[string]any {
	t.Helper()
	b, err := os.ReadFile(l.ScaleDown())
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func writeEnv(t *testing.T, l Layout, content string) {
	t.Helper()
	if err := os.WriteFile(l.ScaleDown(), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func rl(idx ...any) []any { return []any{map[string]any{"resource_list": idx}} }

// The scale-down environment is checked before use: its sections are
// mappings, each group's count an integer 0 or more, its removal policies
// a list of {resource_list: [member indices]}. A refusal names the file,
// the section and key, and its line; the file is left as it was.
func TestScaleDownEnvValidates(t *testing.T) {
	for _, c := range []struct {
		name, env string
		want      []string
	}{
		{"a negative count", "parameter_defaults:\n  ComputeCount: -1\n", []string{"parameter_defaults.ComputeCount (line 2) is negative"}},
		{"a count that is a word", "parameter_defaults:\n  ComputeCount: two\n", []string{"parameter_defaults.ComputeCount (line 2) is a string"}},
		{"a count that is a string number", "parameters:\n  ComputeCount: '2'\n", []string{"parameters.ComputeCount (line 2) is a string"}},
		{"a decimal count", "parameter_defaults:\n  ComputeCount: 1.5\n", []string{"ComputeCount (line 2) is a decimal number"}},
		{"a count that is a list", "parameter_defaults:\n  ComputeCount: [1]\n", []string{"ComputeCount (line 2) is a list"}},
		{"removal policies that are a string", "parameter_defaults:\n  ComputeRemovalPolicies: '1'\n",
			[]string{"parameter_defaults.ComputeRemovalPolicies (line 2)", "a string, not a list of {resource_list"}},
		{"removal policies that are a mapping", "parameter_defaults:\n  ComputeRemovalPolicies: {resource_list: [1]}\n",
			[]string{"ComputeRemovalPolicies (line 2)", "a mapping, not a list"}},
		{"removal policies of numbers", "parameter_defaults:\n  ComputeRemovalPolicies: [1]\n", []string{"ComputeRemovalPolicies", "item 0", "not a mapping"}},
		{"a resource_list that is a word", "parameter_defaults:\n  ComputeRemovalPolicies: [{resource_list: one}]\n",
			[]string{"ComputeRemovalPolicies", "resource_list (line 2) is a string, not a list"}},
		{"a resource_list of a word", "parameters:\n  ComputeRemovalPolicies:\n    - resource_list: [1, one]\n",
			[]string{"parameters.ComputeRemovalPolicies (line 3)", "resource_list[1] (line 3) is not a member index"}},
		{"a resource_list of a negative number", "parameter_defaults:\n  ComputeRemovalPolicies: [{resource_list: [-1]}]\n",
			[]string{"resource_list[0]", "not a member index"}},
		{"a policy without resource_list", "parameter_defaults:\n  ComputeRemovalPolicies: [{resources: [1]}]\n", []string{"item 0 (line 2) lacks resource_list"}},
		{"parameters that are a list", "parameters: [a]\n", []string{"parameters (line 1) is a list, not a mapping"}},
		{"a list", "- a\n", []string{"the file (line 1) is a list, not a mapping"}},
		{"an empty file", "", []string{"it is empty"}},
		{"not YAML", "parameter_defaults: {\n", []string{"it is not valid YAML"}},
		{"a key twice", "parameter_defaults:\n  ComputeCount: 1\n  ComputeCount: 2\n", []string{`parameter_defaults names "ComputeCount" twice (line 2 and line 3)`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := nodesFixture(t)
			writeEnv(t, l, c.env)
			_, err := l.PlanScaleDown([]string{"overcloud-novacompute-1"}, ScaleDownOptions{})
			if err == nil {
				t.Fatal("accepted")
			}
			t.Log(err)
			for _, w := range append([]string{"scale-down environment " + l.ScaleDown(), "fix that entry by hand"}, c.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the message lacks %q: %v", w, err)
				}
			}
			if b, _ := os.ReadFile(l.ScaleDown()); string(b) != c.env {
				t.Errorf("the refused file changed: %q", b)
			}
		})
	}
	// What is valid: index strings, an empty policy list, a null section,
	// keys the nodes file does not know (left as they are).
	l := nodesFixture(t)
	writeEnv(t, l, "parameters:\nparameter_defaults:\n  ComputeRemovalPolicies: [{resource_list: ['2']}]\n  ComputeCount: 2\n  Other: [x]\n")
	p, err := l.PlanScaleDown([]string{"overcloud-novacompute-1"}, ScaleDownOptions{})
	if err != nil || p.Counts["Compute"] != 1 || !reflect.DeepEqual(p.ParameterDefaults["ComputeRemovalPolicies"], rl(1, 2)) ||
		!reflect.DeepEqual(p.ParameterDefaults["Other"], []any{"x"}) {
		t.Fatalf("valid environment: %+v %v", p, err)
	}
}

// Earlier removals written under parameters: are read, kept and updated
// there (a value in parameter_defaults would lose to them in Heat); where
// both sections name a key, parameters wins, as in Heat, and the
// parameter_defaults value is left as it was; other keys and sections are
// kept.
func TestScaleDownEnvKeepsParameters(t *testing.T) {
	l := nodesFixture(t)
	writeEnv(t, l, "parameters:\n  ComputeRemovalPolicies: [{resource_list: [1]}]\n  ComputeCount: 2\n  NtpServer: pool.example\n"+
		"parameter_defaults:\n  DnsServers: [192.0.2.1]\nresource_registry:\n  OS::TripleO::X: x.yaml\n")
	p, err := l.PlanScaleDown([]string{"overcloud-novacompute-1", "overcloud-novacompute-0"}, ScaleDownOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Remove) != 1 || p.Remove[0].Hostname != "overcloud-novacompute-0" || len(p.Already) != 1 || p.Counts["Compute"] != 1 {
		t.Fatalf("plan: %+v", p)
	}
	if err := l.WriteScaleDown(p); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"parameters":         map[string]any{"ComputeRemovalPolicies": rl(0, 1), "ComputeCount": 1, "NtpServer": "pool.example"},
		"parameter_defaults": map[string]any{"DnsServers": []any{"192.0.2.1"}},
		"resource_registry":  map[string]any{"OS::TripleO::X": "x.yaml"},
	}
	if got := envDoc(t, l); !reflect.DeepEqual(got, want) {
		t.Fatalf("environment\n got %v\nwant %v", got, want)
	}

	// Both sections: parameters wins (index 2, not 1).
	writeEnv(t, l, "parameters:\n  ComputeRemovalPolicies: [{resource_list: [2]}]\n"+
		"parameter_defaults:\n  ComputeRemovalPolicies: [{resource_list: [1]}]\n  ComputeCount: 2\n")
	p, err = l.ApplyScaleDown([]string{"overcloud-novacompute-0"}, ScaleDownOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]any{
		"parameters":         map[string]any{"ComputeRemovalPolicies": rl(0, 2)},
		"parameter_defaults": map[string]any{"ComputeRemovalPolicies": rl(1), "ComputeCount": 1},
	}
	if got := envDoc(t, l); !reflect.DeepEqual(got, want) {
		t.Fatalf("both sections\n got %v\nwant %v", got, want)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "ComputeRemovalPolicies under both parameters and parameter_defaults: parameters wins") {
		t.Errorf("warnings %q", p.Warnings)
	}
}

// Removing every node of a Controller-like group is refused unless
// AllowEmptyGroup; emptying another group is a warning.
func TestScaleDownEmptyGroups(t *testing.T) {
	l := nodesFixture(t)
	_, err := l.PlanScaleDown([]string{"overcloud-controller-0"}, ScaleDownOptions{})
	for _, w := range []string{"removing overcloud-controller-0 leaves group Controller (role Controller) with no node (ControllerCount: 0)",
		"allow_empty_group: true", "overcloud_scale_down_allow_empty_group", "scale_down_allow_empty_group", "nothing was run"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("the last Controller: %v, want %q", err, w)
		}
	}
	p, err := l.ApplyScaleDown([]string{"overcloud-controller-0"}, ScaleDownOptions{AllowEmptyGroup: true})
	if err != nil || p.Counts["Controller"] != 0 || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "allow_empty_group: group Controller") {
		t.Fatalf("allowed: %+v %v", p, err)
	}
	// Matched without case, on the role or the resource name.
	for _, g := range []Group{{Role: "CellController"}, {Resource: "controllers", Role: "Ctl"}, {Role: "ControllerOpenstack"}} {
		if !ControllerLike(&g) {
			t.Errorf("%+v is not Controller-like", g)
		}
	}
	if ControllerLike(&Group{Resource: "Compute", Role: "ComputeHCI"}) {
		t.Error("Compute is Controller-like")
	}

	p, err = l.PlanScaleDown([]string{"overcloud-novacompute-0", "overcloud-novacompute-1", "overcloud-novacompute-2"}, ScaleDownOptions{})
	if err != nil || p.Counts["Compute"] != 0 {
		t.Fatalf("every Compute: %+v %v", p, err)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "group Compute (role Compute) has no node left (ComputeCount: 0)") {
		t.Errorf("warnings %q", p.Warnings)
	}
}

// The operator's host names: an empty one, one that is no host name (an
// Ansible pattern) are refused saying so; unknown ones are listed quoted.
func TestScaleDownHostNames(t *testing.T) {
	l := nodesFixture(t)
	for _, c := range []struct {
		hosts []string
		want  []string
	}{
		{[]string{""}, []string{"hosts: hosts[0] is empty: give each node's host name"}},
		{[]string{"overcloud-novacompute-1", "  "}, []string{"hosts[1] is empty"}},
		{[]string{"x:y"}, []string{`"x:y" is not a host name`, "letters, digits"}},
		{[]string{"a,b"}, []string{`"a,b" is not a host name`}},
		{[]string{"*"}, []string{`"*" is not a host name`}},
		{[]string{"overcloud-*"}, []string{`"overcloud-*" is not a host name`}},
		{[]string{"!overcloud-controller-0"}, []string{`"!overcloud-controller-0" is not a host name`}},
		{[]string{"all", "Compute"}, []string{`unknown node(s) "all", "Compute":`, "has overcloud-controller-0, overcloud-novacompute-0"}},
	} {
		_, err := l.PlanScaleDown(c.hosts, ScaleDownOptions{})
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%q: %v, want %q", c.hosts, err, w)
			}
		}
	}
}

// The limit lists the inventory's own names of the nodes removed now, only
// those that are host names, hosts of the inventory and no group's name;
// a node it leaves out is named in NotInLimit and a warning.
func TestScaleDownLimit(t *testing.T) {
	l := nodesFixture(t)
	hosts := []string{"overcloud-novacompute-0", "OVERCLOUD-NOVACOMPUTE-1.localdomain"}
	p, err := l.PlanScaleDown(hosts, ScaleDownOptions{})
	if err != nil || !reflect.DeepEqual(p.Limit, []string{"overcloud-novacompute-0", "overcloud-novacompute-1"}) ||
		p.LimitPattern() != "overcloud-novacompute-0,overcloud-novacompute-1" || len(p.NotInLimit) != 0 {
		t.Fatalf("plan %+v %v", p, err)
	}
	// The inventory spells a host its own way (Ansible's names are
	// case-sensitive): its spelling goes to the limit.
	writeInventory(t, l, strings.Replace(testInventory, "overcloud-novacompute-0:", "Overcloud-NovaCompute-0:", 1))
	if p, _ = l.PlanScaleDown(hosts[:1], ScaleDownOptions{}); !reflect.DeepEqual(p.Limit, []string{"Overcloud-NovaCompute-0"}) {
		t.Errorf("limit %q", p.Limit)
	}
	for _, c := range []struct{ name, inv, why string }{
		{"not in the inventory", strings.Replace(testInventory, "overcloud-novacompute-0:", "other-0:", 1), "the inventory does not list it"},
		{"also a group", testInventory + "overcloud-novacompute-0:\n  children: {Compute: {}}\n", "also has a group of that name"},
		{"also a child group", testInventory + "x:\n  children:\n    Overcloud-Novacompute-0: {hosts: {a: {}}}\n", "also has a group of that name"},
		{"twice, spelled differently", strings.Replace(testInventory, "overcloud-novacompute-0:", "Overcloud-NovaCompute-0:", 1) +
			"y:\n  hosts: {OVERCLOUD-NOVACOMPUTE-0: {}}\n", "lists it 2 times"},
	} {
		writeInventory(t, l, c.inv)
		p, err := l.PlanScaleDown([]string{"overcloud-novacompute-0", "overcloud-novacompute-2"}, ScaleDownOptions{})
		if err != nil || !reflect.DeepEqual(p.Limit, []string{"overcloud-novacompute-2"}) || !reflect.DeepEqual(p.NotInLimit, []string{"overcloud-novacompute-0"}) ||
			len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], c.why) {
			t.Errorf("%s: %+v %v", c.name, p, err)
		}
	}
	os.Remove(l.Inventory())
	p, err = l.PlanScaleDown(hosts, ScaleDownOptions{})
	if err != nil || len(p.Limit) != 0 || len(p.NotInLimit) != 2 || !strings.Contains(strings.Join(p.Warnings, ""), "does not exist") {
		t.Errorf("no inventory: %+v %v", p, err)
	}
	writeInventory(t, l, "all: [a]\n")
	if _, err = l.PlanScaleDown(hosts, ScaleDownOptions{}); err == nil || !strings.Contains(err.Error(), l.Inventory()) ||
		!strings.Contains(err.Error(), "group all (line 1) is a list, not a mapping") {
		t.Errorf("a malformed inventory: %v", err)
	}
	// Nothing removed now: no limit, the inventory is not read.
	writeEnv(t, l, "parameter_defaults:\n  ComputeRemovalPolicies: [{resource_list: [0]}]\n  ComputeCount: 2\n")
	p, err = l.PlanScaleDown(hosts[:1], ScaleDownOptions{})
	if err != nil || len(p.Remove) != 0 || len(p.Already) != 1 || len(p.Limit) != 0 || len(p.NotInLimit) != 0 || p.Changed {
		t.Errorf("already removed: %+v %v", p, err)
	}
}

// Two scale-downs planned from the same file and written one after the
// other both end up in the file: WriteScaleDown plans again from the file
// as it is when it writes.
func TestScaleDownWritesReplan(t *testing.T) {
	l := nodesFixture(t)
	p1, err1 := l.PlanScaleDown([]string{"overcloud-novacompute-0"}, ScaleDownOptions{})
	p2, err2 := l.PlanScaleDown([]string{"overcloud-novacompute-2"}, ScaleDownOptions{})
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if err := l.WriteScaleDown(p1); err != nil {
		t.Fatal(err)
	}
	if err := l.WriteScaleDown(p2); err != nil {
		t.Fatal(err)
	}
	pd := scaleDownEnv(t, l)
	if pd["ComputeCount"] != 1 || !reflect.DeepEqual(pd["ComputeRemovalPolicies"], rl(0, 2)) {
		t.Fatalf("environment %v", pd)
	}
	if p2.Counts["Compute"] != 1 {
		t.Errorf("the plan written is not the one returned: %+v", p2)
	}
	// The same removal again writes nothing.
	before, _ := os.ReadFile(l.ScaleDown())
	p, err := l.ApplyScaleDown([]string{"overcloud-novacompute-2"}, ScaleDownOptions{})
	if after, _ := os.ReadFile(l.ScaleDown()); err != nil || p.Changed || string(after) != string(before) {
		t.Errorf("again: %+v %v", p, err)
	}
}

// The split control plane (THT's roles/Database.yaml, Messaging.yaml,
// ...): a group whose role runs one of ClusterServices in the saved
// EnabledServices keeps its last node like a Controller, whatever its
// name; a role that runs none of them may be emptied. Without the saved
// output, or with one that is not a map, the names decide.
func TestScaleDownClusterRoles(t *testing.T) {
	const services = `Database: [mysql, pacemaker, clustercheck, sshd]
Messaging: [oslo_messaging_rpc, sshd]
Monitors: [ceph_mon]
Networker: [ovn_controller, neutron_dhcp, sshd]
ComputeLeaf1: [nova_compute, mysql_client]
`
	tests := []struct {
		name, host, services string
		refused              string // "" when the group may be emptied
	}{
		{"database", "overcloud-database-0", services, "group Database (role Database) with no node (DatabaseCount: 0), and role Database runs mysql, pacemaker"},
		{"messaging", "overcloud-messaging-0", services, "role Messaging runs oslo_messaging_rpc"},
		{"ceph monitors", "overcloud-monitors-0", services, "role Monitors runs ceph_mon"},
		{"networker", "overcloud-networker-0", services, ""},
		{"compute leaf (mysql_client is not mysql)", "overcloud-computeleaf1-0", services, ""},
		{"no saved output: the name decides", "overcloud-database-0", "", ""},
		{"output not a map: the name decides", "overcloud-database-0", "[mysql]\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := New(filepath.Join(t.TempDir(), "w"), "overcloud")
			var groups []Group
			inv := "Undercloud:\n  hosts:\n    undercloud: {ansible_connection: local}\n"
			for i, role := range []string{"Database", "Messaging", "Monitors", "Networker", "ComputeLeaf1"} {
				host := "overcloud-" + strings.ToLower(role) + "-0"
				groups = append(groups, Group{Resource: role, Role: role, CountParameter: role + "Count",
					RemovalPoliciesParameter: role + "RemovalPolicies", Removed: []string{}, Members: []Member{{"0", host}}})
				inv += fmt.Sprintf("%s:\n  hosts:\n    %s: {ansible_host: 192.0.2.%d}\n", role, host, 20+i)
			}
			os.MkdirAll(filepath.Dir(l.Nodes()), 0o700)
			if err := os.WriteFile(l.Nodes(), yamlOf(Nodes{Stack: "overcloud", Groups: groups}), 0o600); err != nil {
				t.Fatal(err)
			}
			writeInventory(t, l, inv)
			if tc.services != "" {
				if err := os.WriteFile(l.Output(OutputEnabledServices), []byte(tc.services), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			p, err := l.PlanScaleDown([]string{tc.host}, ScaleDownOptions{})
			if tc.refused != "" {
				for _, w := range []string{tc.refused, "a control-plane group", "allow_empty_group: true", "nothing was run"} {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("err %v, want it to hold %q", err, w)
					}
				}
				if p, err = l.PlanScaleDown([]string{tc.host}, ScaleDownOptions{AllowEmptyGroup: true}); err != nil || len(p.Remove) != 1 {
					t.Fatalf("with allow_empty_group: %+v %v", p, err)
				}
				if !strings.Contains(strings.Join(p.Warnings, "\n"), "allow_empty_group: group") {
					t.Errorf("with allow_empty_group: warnings %q", p.Warnings)
				}
				return
			}
			if err != nil || len(p.Remove) != 1 {
				t.Fatalf("plan %+v: %v", p, err)
			}
			if !strings.Contains(strings.Join(p.Warnings, "\n"), "has no node left") {
				t.Errorf("warnings %q, want the group emptied", p.Warnings)
			}
			if strings.HasPrefix(tc.services, "[") && !strings.Contains(strings.Join(p.Warnings, "\n"), "is not a map of role names to service lists") {
				t.Errorf("warnings %q, want the unreadable output named", p.Warnings)
			}
		})
	}
}
