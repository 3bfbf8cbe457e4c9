package configdownload

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// syntheticStack builds the outputs and deployments of an overcloud with
// `controllers` Controller and `computes` Compute nodes on ctlplane and
// internal_api, the way Heat returns them (numbers as json.Number).
func syntheticStack(name string, controllers, computes int) *StackData {
	roles := []struct {
		name, host string
		count      int
	}{{"Controller", "controller", controllers}, {"Compute", "novacompute", computes}}
	out := map[string]any{}
	roleData, groupVars, hostVars := map[string]any{}, map[string]any{}, map[string]any{}
	serverIDs, hostnames, ips, services := map[string]any{}, map[string]any{}, map[string]any{}, map[string]any{}
	var deps []Deployment
	var bootstrap any
	for ri, r := range roles {
		tasks := []any{}
		for step := 1; step <= 5; step++ {
			tasks = append(tasks,
				map[string]any{"name": fmt.Sprintf("%s step %d", r.name, step), "when": fmt.Sprintf("step|int == %d", step),
					"ansible.builtin.file": map[string]any{"path": "/tmp/x", "state": "directory"}},
				map[string]any{"name": fmt.Sprintf("%s list step %d", r.name, step), "when": []any{fmt.Sprintf("(step | int) == %d", step), "x|bool"},
					"ansible.builtin.debug": map[string]any{"msg": "hi"}})
		}
		tasks = append(tasks, map[string]any{"name": r.name + " every step", "ansible.builtin.debug": map[string]any{"msg": "{{ step }}"}})
		roleData[r.name] = map[string]any{
			"service_names":      []any{"sample_marker", strings.ToLower(r.name) + "_only"},
			"config_settings":    map[string]any{"a::b": json.Number("1"), "c": "d"},
			"deploy_steps_tasks": tasks,
			"host_prep_tasks":    []any{map[string]any{"name": "prep", "ansible.builtin.debug": map[string]any{"msg": "prep"}}},
			"step_config":        "include ::tripleo::profile::base\n",
			"external_deploy_tasks": []any{
				map[string]any{"name": "not per role"}},
		}
		groupVars[r.name] = map[string]any{"tripleo_role_name": r.name, "answer": json.Number("42")}
		services[r.name] = []any{"sample_marker", strings.ToLower(r.name) + "_only"}
		var ids, ctl, ctlNames, api, apiNames []any
		hv := map[string]any{}
		for i := 0; i < r.count; i++ {
			h := fmt.Sprintf("%s-%s-%d", name, r.host, i)
			id := fmt.Sprintf("%08d-0000-0000-0000-%012d", ri, i)
			if ri == 0 && i == 0 {
				bootstrap = id
			}
			ids = append(ids, id)
			ctl = append(ctl, fmt.Sprintf("192.168.24.%d", 10+ri*100+i))
			api = append(api, fmt.Sprintf("172.16.2.%d", 10+ri*100+i))
			ctlNames = append(ctlNames, h+".ctlplane.localdomain")
			apiNames = append(apiNames, h+".internalapi.localdomain")
			hv[h] = map[string]any{"tripleo_node_index": json.Number(fmt.Sprint(i))}
			deps = append(deps, Deployment{Name: r.name + "Deployment", ServerID: id,
				ResourceID: fmt.Sprintf("%s-%d-%sDeployment-x-TripleODeployment-y", name, i, r.name),
				Config: map[string]any{
					"id": fmt.Sprintf("cfg-%d-%d", ri, i), "name": r.name + "Deployment", "group": "hiera",
					"config": map[string]any{"datafiles": map[string]any{"node": map[string]any{"index": json.Number(fmt.Sprint(i))}}},
					"inputs": []any{
						map[string]any{"name": "deploy_server_id", "type": "String", "value": "dummy"},
						map[string]any{"name": "role_name", "type": "String", "value": r.name},
					},
					"outputs": []any{}, "options": map[string]any{}, "creation_time": "2026-01-01T00:00:00Z",
				}})
			if i == 0 {
				deps = append(deps, Deployment{Name: r.name + "PostConfig", ServerID: id,
					ResourceID: fmt.Sprintf("%s-%sExtraConfigPost-z", name, r.name),
					Config:     map[string]any{"id": "post", "name": "post", "group": "script", "config": "#!/bin/sh\necho post\n", "inputs": []any{}}})
			}
		}
		hostVars[r.name] = hv
		serverIDs[r.name] = ids
		if r.count > 0 {
			hostnames[r.name] = map[string]any{"ctlplane": ctlNames, "internal_api": apiNames}
			ips[r.name] = map[string]any{"ctlplane": ctl, "internal_api": api}
		} else {
			hostnames[r.name] = map[string]any{}
			ips[r.name] = map[string]any{}
		}
	}
	out[OutRoleData] = roleData
	out[OutRoleGroupVars] = groupVars
	out[OutAnsibleHostVarsMap] = hostVars
	out[OutServerIDData] = map[string]any{"server_ids": serverIDs, "bootstrap_server_id": bootstrap}
	out[OutRoleNetHostnameMap] = hostnames
	out[OutRoleNetIPMap] = ips
	out[OutVipMap] = map[string]any{"ctlplane": "192.168.24.5", "internal_api": "172.16.2.5", "storage": "172.16.1.5", "redis": "192.168.24.6"}
	out[OutEnabledServices] = services
	out[OutRoleConfig] = map[string]any{
		"deploy_steps_playbook": []any{map[string]any{"hosts": "allovercloud", "tasks": []any{}}},
		"global_vars":           map[string]any{"deploy_steps_max": json.Number("6")},
		"external_deploy_tasks": []any{map[string]any{"name": "ext 2", "when": "step|int == 2"}, map[string]any{"name": "ext all"}},
		"ansible.cfg":           "[defaults]\nforks = 5\n",
	}
	return &StackData{Name: name, Outputs: out, Deployments: deps}
}

func mustRender(t testing.TB, d *StackData, o Options) *Rendering {
	t.Helper()
	r, err := Render(d, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func yamlOf(t *testing.T, r *Rendering, p string) any {
	t.Helper()
	b, ok := r.Files[p]
	if !ok {
		t.Fatalf("%s not rendered; have %v", p, fileNames(r))
	}
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s is not YAML: %v\n%s", p, err, b)
	}
	return v
}

func fileNames(r *Rendering) []string {
	var n []string
	for p := range r.Files {
		n = append(n, p)
	}
	sort.Strings(n)
	return n
}

func TestRenderLayout(t *testing.T) {
	r := mustRender(t, syntheticStack("overcloud", 1, 3), Options{})
	if len(r.Warnings) != 0 {
		t.Errorf("unexpected warnings: %v", r.Warnings)
	}
	var want []string
	for _, role := range []string{"Controller", "Compute"} {
		want = append(want, role+"/service_names.yaml", role+"/config_settings.yaml", role+"/deploy_steps_tasks.yaml",
			role+"/host_prep_tasks.yaml", role+"/step_config.pp", "group_vars/"+role)
		for s := 0; s < StepsMax; s++ {
			want = append(want, fmt.Sprintf("%s/deploy_steps_tasks_step%d.yaml", role, s))
		}
	}
	want = append(want, "Controller/overcloud-controller-0/ControllerDeployment", "Controller/overcloud-controller-0/ControllerPostConfig",
		"Compute/overcloud-novacompute-2/ComputeDeployment", "host_vars/overcloud-controller-0", "host_vars/overcloud-novacompute-2",
		"deploy_steps_playbook.yaml", "global_vars.yaml", "ansible.cfg", "external_deploy_tasks.yaml",
		"external_deploy_tasks_step0.yaml", "external_deploy_tasks_step5.yaml", InventoryFile, ".gitignore")
	for _, p := range want {
		if _, ok := r.Files[p]; !ok {
			t.Errorf("%s is not rendered", p)
		}
	}
	for _, p := range []string{"Controller/external_deploy_tasks.yaml", "Controller/deploy_steps_tasks_step6.yaml"} {
		if _, ok := r.Files[p]; ok {
			t.Errorf("%s is rendered", p)
		}
	}
	if got := r.Roles; !reflect.DeepEqual(got, []string{"Compute", "Controller"}) {
		t.Errorf("roles %v", got)
	}
	if len(r.Hosts) != 4 || r.Hosts[0] != "overcloud-controller-0" {
		t.Errorf("hosts %v", r.Hosts)
	}
	// Step 2 of Compute: its two step-2 tasks and the one without a step.
	step2 := yamlOf(t, r, "Compute/deploy_steps_tasks_step2.yaml").([]any)
	var names []string
	for _, task := range step2 {
		names = append(names, task.(map[string]any)["name"].(string))
	}
	if !reflect.DeepEqual(names, []string{"Compute step 2", "Compute list step 2", "Compute every step"}) {
		t.Errorf("Compute step 2 tasks: %v", names)
	}
	if got := len(yamlOf(t, r, "Compute/deploy_steps_tasks_step0.yaml").([]any)); got != 1 {
		t.Errorf("step 0 has %d tasks, want 1 (the one without a step)", got)
	}
	if string(r.Files["ansible.cfg"]) != "[defaults]\nforks = 5\n" || string(r.Files["Controller/step_config.pp"]) != "include ::tripleo::profile::base\n" {
		t.Errorf("scalar files not written as they are")
	}
	// Numbers stay numbers.
	if !strings.Contains(string(r.Files["global_vars.yaml"]), "deploy_steps_max: 6\n") {
		t.Errorf("global_vars.yaml: %s", r.Files["global_vars.yaml"])
	}
	// The deployment: deploy_server_id is the real server, hiera config is a mapping.
	dep := yamlOf(t, r, "Compute/overcloud-novacompute-1/ComputeDeployment").(map[string]any)
	if dep["deploy_server_id"] != "00000001-0000-0000-0000-000000000001" {
		t.Errorf("deploy_server_id %v", dep["deploy_server_id"])
	}
	cd := dep["ComputeDeployment"].(map[string]any)
	if _, ok := cd["config"].(map[string]any); !ok || cd["deployment_name"] != "ComputeDeployment" || cd["group"] != "hiera" {
		t.Errorf("deployment %v", cd)
	}
	if in := cd["inputs"].([]any)[0].(map[string]any); in["value"] != "00000001-0000-0000-0000-000000000001" {
		t.Errorf("deploy_server_id input %v", in)
	}
	post := yamlOf(t, r, "Controller/overcloud-controller-0/ControllerPostConfig").(map[string]any)["ControllerPostConfig"].(map[string]any)
	if post["config"] != "#!/bin/sh\necho post\n" {
		t.Errorf("script config %q", post["config"])
	}
	hv := yamlOf(t, r, "host_vars/overcloud-controller-0").(map[string]any)
	if !reflect.DeepEqual(hv["pre_deployments"], []any{"ControllerDeployment"}) || !reflect.DeepEqual(hv["post_deployments"], []any{"ControllerPostConfig"}) ||
		hv["tripleo_node_index"] != 0 {
		t.Errorf("host_vars %v", hv)
	}
	if gv := yamlOf(t, r, "group_vars/Compute").(map[string]any); gv["answer"] != 42 || gv["tripleo_role_name"] != "Compute" {
		t.Errorf("group_vars %v", gv)
	}
}

func TestInventory(t *testing.T) {
	tests := []struct {
		name       string
		stack      string
		ctl, cmp   int
		opts       Options
		check      func(t *testing.T, inv map[string]any)
		wantWarn   string
		wantGroups []string
	}{
		{name: "overcloud", stack: "overcloud", ctl: 1, cmp: 3,
			wantGroups: []string{"Compute", "Controller", "Undercloud", "allovercloud", "compute_only", "controller_only", "overcloud", "sample_marker"},
			check: func(t *testing.T, inv map[string]any) {
				h := dig(inv, "Compute", "hosts", "overcloud-novacompute-2").(map[string]any)
				want := map[string]any{"ansible_host": "192.168.24.112", "ctlplane_ip": "192.168.24.112", "internal_api_ip": "172.16.2.112",
					"ctlplane_hostname": "overcloud-novacompute-2.ctlplane.localdomain", "internal_api_hostname": "overcloud-novacompute-2.internalapi.localdomain",
					"deploy_server_id": "00000001-0000-0000-0000-000000000002"}
				if !reflect.DeepEqual(h, want) {
					t.Errorf("host vars\n got %v\nwant %v", h, want)
				}
				vars := dig(inv, "Controller", "vars").(map[string]any)
				if vars["ansible_ssh_user"] != "tripleo-admin" || vars["answer"] != 42 || vars["tripleo_role_name"] != "Controller" ||
					vars["bootstrap_server_id"] != "00000000-0000-0000-0000-000000000000" ||
					!reflect.DeepEqual(vars["tripleo_role_networks"], []any{"ctlplane", "internal_api"}) {
					t.Errorf("role vars %v", vars)
				}
				if got := keys(dig(inv, "overcloud", "children")); !reflect.DeepEqual(got, []string{"Compute", "Controller"}) {
					t.Errorf("stack group children %v", got)
				}
				// storage is not used by any role: no storage_vip.
				if got := dig(inv, "overcloud", "vars").(map[string]any); !reflect.DeepEqual(got, map[string]any{
					"ctlplane_vip": "192.168.24.5", "internal_api_vip": "172.16.2.5", "redis_vip": "192.168.24.6"}) {
					t.Errorf("vips %v", got)
				}
				if got := keys(dig(inv, "sample_marker", "children")); !reflect.DeepEqual(got, []string{"Compute", "Controller"}) {
					t.Errorf("service group %v", got)
				}
				if got := keys(dig(inv, "compute_only", "children")); !reflect.DeepEqual(got, []string{"Compute"}) {
					t.Errorf("service group %v", got)
				}
				if dig(inv, "Undercloud", "vars", "ansible_connection") != "local" || dig(inv, "Undercloud", "hosts", "localhost") == nil {
					t.Errorf("Undercloud %v", inv["Undercloud"])
				}
				if got := keys(dig(inv, "allovercloud", "children")); !reflect.DeepEqual(got, []string{"overcloud"}) {
					t.Errorf("allovercloud %v", got)
				}
			}},
		{name: "ssh user and network", stack: "oc", ctl: 2, cmp: 1, opts: Options{SSHUser: "heat-admin", SSHNetwork: "internal_api"},
			check: func(t *testing.T, inv map[string]any) {
				if got := dig(inv, "Controller", "hosts", "oc-controller-1", "ansible_host"); got != "172.16.2.11" {
					t.Errorf("ansible_host %v", got)
				}
				if got := dig(inv, "Compute", "vars", "ansible_ssh_user"); got != "heat-admin" {
					t.Errorf("ansible_ssh_user %v", got)
				}
				if got := dig(inv, "sample_marker", "vars", "ansible_ssh_user"); got != "heat-admin" {
					t.Errorf("service ansible_ssh_user %v", got)
				}
			}},
		{name: "missing ssh network", stack: "oc", ctl: 1, cmp: 1, opts: Options{SSHNetwork: "storage"}, wantWarn: "no addresses on the SSH network storage",
			check: func(t *testing.T, inv map[string]any) {
				if got := dig(inv, "Controller", "hosts", "oc-controller-0", "ansible_host"); got != nil {
					t.Errorf("ansible_host %v", got)
				}
			}},
		{name: "a role without nodes is no group", stack: "standalone", ctl: 1, cmp: 0,
			wantGroups: []string{"Controller", "Undercloud", "allovercloud", "controller_only", "sample_marker", "standalone"},
			check: func(t *testing.T, inv map[string]any) {
				if got := keys(dig(inv, "sample_marker", "children")); !reflect.DeepEqual(got, []string{"Controller"}) {
					t.Errorf("service group %v", got)
				}
			}},
		{name: "stack named like a role", stack: "Compute", ctl: 1, cmp: 1, wantWarn: "no group named after the stack",
			check: func(t *testing.T, inv map[string]any) {
				if got := keys(dig(inv, "allovercloud", "children")); !reflect.DeepEqual(got, []string{"Compute", "Controller"}) {
					t.Errorf("allovercloud %v", got)
				}
			}},
		{name: "no nodes", stack: "empty", ctl: 0, cmp: 0, wantGroups: []string{"Undercloud"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := syntheticStack(tc.stack, tc.ctl, tc.cmp)
			if tc.stack == "Compute" {
				// Hosts named after the stack; rename so they stay unique.
				d = syntheticStack("oc", tc.ctl, tc.cmp)
				d.Name = "Compute"
			}
			r := mustRender(t, d, tc.opts)
			inv := yamlOf(t, r, InventoryFile).(map[string]any)
			if tc.wantGroups != nil {
				if got := keys(inv); !reflect.DeepEqual(got, tc.wantGroups) {
					t.Errorf("groups %v, want %v", got, tc.wantGroups)
				}
			}
			joined := strings.Join(r.Warnings, "\n")
			if tc.wantWarn == "" && joined != "" {
				t.Errorf("unexpected warnings: %s", joined)
			}
			if tc.wantWarn != "" && !strings.Contains(joined, tc.wantWarn) {
				t.Errorf("warnings %q lack %q", joined, tc.wantWarn)
			}
			if tc.check != nil {
				tc.check(t, inv)
			}
		})
	}
}

func TestRenderPlainStack(t *testing.T) {
	for _, outputs := range []map[string]any{
		nil,
		{"endpoint": "http://x", "RoleData": "not a map", "RoleNetHostnameMap": map[string]any{"R": map[string]any{"internal_api": []any{"a"}}}},
		{"RoleData": map[string]any{"../evil": map[string]any{"x": 1}, "R": map[string]any{"deploy_steps_tasks": "nope", "../k": 1}},
			"RoleNetHostnameMap": map[string]any{"R": map[string]any{"ctlplane": []any{"", nil, "Good.ctlplane.x"}}},
			"RoleNetIpMap":       map[string]any{"R": "junk"}, "EnabledServices": map[string]any{"R": "junk"}, "VipMap": []any{}},
	} {
		r, err := Render(&StackData{Name: "plain", Outputs: outputs}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Warnings) == 0 {
			t.Errorf("outputs %v: no warnings", outputs)
		}
		for p := range r.Files {
			if strings.Contains(p, "..") {
				t.Errorf("rendered %s", p)
			}
		}
		inv := yamlOf(t, r, InventoryFile).(map[string]any)
		if inv["Undercloud"] == nil {
			t.Errorf("no Undercloud group: %v", inv)
		}
	}
	r := mustRender(t, &StackData{Name: "plain"}, Options{})
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "none of the TripleO outputs (RoleData, RoleConfig,") {
		t.Errorf("warnings %v", r.Warnings)
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	a := mustRender(t, syntheticStack("overcloud", 3, 5), Options{})
	for i := 0; i < 5; i++ {
		b := mustRender(t, syntheticStack("overcloud", 3, 5), Options{})
		if !reflect.DeepEqual(a.Files, b.Files) {
			t.Fatal("two renderings of the same stack differ")
		}
	}
}

// BenchmarkRender50Nodes renders a synthetic 50-node overcloud (3
// controllers, 47 computes) from its outputs, without the API.
func BenchmarkRender50Nodes(b *testing.B) {
	d := syntheticStack("overcloud", 3, 47)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r, err := Render(d, Options{})
		if err != nil || len(r.Hosts) != 50 {
			b.Fatalf("%v %d", err, len(r.Hosts))
		}
	}
}

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
