package configdownload

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// syntheticStack builds the outputs, deployments and environment of an
// overcloud with `controllers` Controller and `computes` Compute nodes on
// ctlplane and internal_api, plus an ObjectStorage role without nodes, the
// way Heat returns them (keys in Heat's order, numbers as Number).
func syntheticStack(name string, controllers, computes int) *StackData {
	roles := []struct {
		name, host string
		count      int
	}{{"Controller", "controller", controllers}, {"Compute", "novacompute", computes}, {"ObjectStorage", "swift", 0}}
	roleData, groupVars, hostVars := NewObject(), NewObject(), NewObject()
	serverIDs, hostnames, ips, services := NewObject(), NewObject(), NewObject(), NewObject()
	var deps []Deployment
	var bootstrap any
	for ri, r := range roles {
		tasks := []any{}
		for step := 1; step <= 5; step++ {
			tasks = append(tasks,
				Obj("name", fmt.Sprintf("%s step %d", r.name, step), "when", fmt.Sprintf("step|int == %d", step),
					"ansible.builtin.file", Obj("path", "/tmp/x", "state", "directory")),
				Obj("name", fmt.Sprintf("%s list step %d", r.name, step), "when", []any{fmt.Sprintf("(step | int) == %d", step), "x|bool"},
					"ansible.builtin.debug", Obj("msg", "hi")))
		}
		tasks = append(tasks, Obj("name", r.name+" every step", "ansible.builtin.debug", Obj("msg", "{{ step }}")))
		svc := []any{"sample_marker", strings.ToLower(r.name) + "_only"}
		if r.name == "Controller" {
			svc = append(svc, "ceph_mon")
		}
		roleData.Set(r.name, Obj(
			"service_names", svc,
			"config_settings", Obj("a::b", Number("1"), "c", "d"),
			"deploy_steps_tasks", tasks,
			"post_update_tasks", []any{Obj("name", "pu", "when", "step|int == 3")},
			"host_prep_tasks", []any{Obj("name", "prep", "ansible.builtin.debug", Obj("msg", "prep"))},
			"step_config", "include ::tripleo::profile::base\n",
			"param_config", Obj("z", Number("1"), "a", []any{"x"}),
			"external_deploy_tasks", []any{Obj("name", "not per role")},
			"ansible_group_vars", Obj("ansible_async_dir", "/tmp/.ansible_async", "answer", Number("1")),
		))
		groupVars.Set(r.name, Obj("tripleo_role_name", r.name, "answer", Number("42")))
		services.Set(r.name, svc)
		var ids, ctl, ctlNames, api, apiNames []any
		hv := NewObject()
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
			hv.Set(h, Obj("tripleo_node_index", Number(fmt.Sprint(i))))
			deps = append(deps, Deployment{Name: r.name + "Deployment", ServerID: id,
				ResourceID: fmt.Sprintf("%s-%s-%d-%sDeployment-x-TripleODeployment-y", name, r.name, i, r.name),
				Config:     hieraConfig(fmt.Sprintf("cfg-%d-%d", ri, i), r.name, i)})
			if i == 0 {
				deps = append(deps, Deployment{Name: r.name + "ExtraConfigPost", ServerID: id,
					ResourceID: fmt.Sprintf("%s-%sExtraConfigPost-z-0-q-TripleODeployment-w", name, r.name),
					Config:     scriptConfig(fmt.Sprintf("post-%d", ri))})
			}
		}
		if r.name == "Compute" && r.count > 0 {
			deps = append(deps, Deployment{Name: "NetPre", ServerID: ids[0], ResourceID: name + "-Compute-0-PreNetworkConfig-a-TripleODeployment-b",
				Config: scriptConfig("netpre")})
		}
		hostVars.Set(r.name, hv)
		serverIDs.Set(r.name, ids)
		if r.count > 0 {
			hostnames.Set(r.name, Obj("ctlplane", ctlNames, "internal_api", apiNames))
			ips.Set(r.name, Obj("ctlplane", ctl, "internal_api", api))
		} else {
			hostnames.Set(r.name, NewObject())
			ips.Set(r.name, NewObject())
		}
	}
	// A deployment of a server not in the stack's outputs (excluded).
	deps = append(deps, Deployment{Name: "Gone", ServerID: "ffffffff-0000-0000-0000-000000000000", ResourceID: "x-TripleODeployment-y",
		Config: scriptConfig("gone")})
	out := Obj(
		OutRoleData, roleData,
		OutRoleConfig, Obj(
			"deploy_steps_playbook", []any{Obj("hosts", "allovercloud", "tasks", []any{})},
			"global_vars", Obj("deploy_steps_max", Number("6")),
			"external_deploy_steps_tasks", []any{Obj("name", "ext 1", "when", "step|int == 1"), Obj("name", "ext all")},
			"common_deploy_steps_tasks", "- name: as text\n  debug: {}\n",
			"script.sh", "#!/bin/sh\n",
		),
		OutRoleGroupVars, groupVars,
		OutAnsibleHostVarsMap, hostVars,
		OutServerIDData, Obj("server_ids", serverIDs, "bootstrap_server_id", bootstrap),
		OutRoleNetHostnameMap, hostnames,
		OutRoleNetIPMap, ips,
		OutVipMap, Obj("ctlplane", "192.168.24.5", "internal_api", "172.16.2.5", "storage", "172.16.1.5", "redis", "192.168.24.6", "tenant", nil),
		OutEnabledServices, services,
		OutRoleNetworkConfigMap, Obj("Controller", Obj("network_config", []any{Obj("type", "interface", "name", "nic1")}),
			"Compute", "net-cfg-1", "ObjectStorage", nil),
		OutBlacklistedHostnames, []any{"", name + "-novacompute-9"},
		OutKeystoneURL, "http://192.168.24.5:5000",
		OutEndpointMap, Obj("HorizonPublic", Obj("uri", "http://192.168.24.5/dashboard")),
		OutAdminPassword, "secret",
	)
	return &StackData{Name: name, Outputs: out, Deployments: deps, ContainerCLI: "podman",
		NetworkConfigs: map[string]any{"net-cfg-1": `{"network_config": [{"type": "ovs_bridge"}]}`}}
}

func hieraConfig(id, role string, index int) *Object {
	return Obj("id", id, "name", role+"Deployment-config", "group", "hiera",
		"config", Obj("datafiles", Obj("node", Obj("index", Number(fmt.Sprint(index)), "role", role))),
		"inputs", []any{
			Obj("name", "role_name", "type", "String", "value", role),
			Obj("name", "deploy_server_id", "description", "ID of the server being deployed to", "type", "String", "value", "fake_server_id"),
		},
		"outputs", []any{}, "options", NewObject(), "creation_time", "2026-01-01T00:00:00Z")
}

func scriptConfig(id string) *Object {
	return Obj("id", id, "name", "post", "group", "script", "config", "#!/bin/sh\necho post\n",
		"inputs", []any{Obj("name", "deploy_server_id", "type", "String", "value", "x"),
			Obj("name", "data", "type", "Json", "value", Obj("k", []any{Number("1"), "v"}))},
		"outputs", []any{Obj("name", "result", "description", "what it did", "type", "String")},
		"options", nil, "creation_time", "2026-01-01T00:00:01Z")
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
		t.Fatalf("no file %s", p)
	}
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v\n%s", p, err, b)
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
	r := mustRender(t, syntheticStack("overcloud", 1, 2), Options{})
	files := fileNames(r)
	has := func(p string) bool { _, ok := r.Files[p]; return ok }
	for _, p := range []string{
		".gitignore", "deployments.yaml", "templates/heat-config.j2", "tripleo-ansible-inventory.yaml",
		"deploy_steps_playbook.yaml", "global_vars.yaml", "common_deploy_steps_tasks.yaml", "script.sh",
		"external_deploy_steps_tasks.yaml", "external_deploy_steps_tasks_step0.yaml", "external_deploy_steps_tasks_step5.yaml",
		"Controller/step_config.pp", "Controller/param_config.json", "Controller/deploy_steps_tasks.yaml",
		"Controller/deploy_steps_tasks_step0.yaml", "Controller/deploy_steps_tasks_step5.yaml",
		"Controller/post_update_tasks_step3.yaml", "Controller/NetworkConfig", "Compute/NetworkConfig",
		"Controller/overcloud-controller-0/ControllerDeployment", "Controller/overcloud-controller-0/ControllerExtraConfigPost",
		"Compute/overcloud-novacompute-1/ComputeDeployment", "Compute/overcloud-novacompute-0/NetPre",
		"ObjectStorage/deploy_steps_tasks.yaml", "ObjectStorage/",
		"group_vars/Controller", "group_vars/Compute", "host_vars/overcloud-controller-0", "host_vars/overcloud-novacompute-1",
		"group_vars/", "host_vars/", "templates/",
	} {
		if !has(p) {
			t.Errorf("missing %s", p)
		}
	}
	for _, p := range []string{
		// external tasks are not per role; ansible_group_vars is merged, not written (wallaby)
		"Controller/external_deploy_tasks.yaml", "Controller/ansible_group_vars.yaml",
		// no step split beyond tripleo-common's steps
		"Controller/post_update_tasks_step4.yaml", "Controller/host_prep_tasks_step0.yaml",
		// group_vars only for the roles with servers; no deployments of unknown servers
		"group_vars/ObjectStorage", "ObjectStorage/NetworkConfig", "script.sh.yaml", "artifacts/",
	} {
		if has(p) {
			t.Errorf("unexpected %s", p)
		}
	}
	if len(r.Hosts) != 3 || !reflect.DeepEqual(r.Roles, []string{"Compute", "Controller", "ObjectStorage"}) {
		t.Errorf("hosts %v roles %v", r.Hosts, r.Roles)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "server with id ffffffff-0000-0000-0000-000000000000 is ignored") {
		t.Errorf("warnings %q", r.Warnings)
	}

	// Step files: a task naming a step goes to that step's file, one naming
	// none to every step's.
	step2 := yamlOf(t, r, "Compute/deploy_steps_tasks_step2.yaml").([]any)
	var n2 []string
	for _, x := range step2 {
		n2 = append(n2, x.(map[string]any)["name"].(string))
	}
	if want := []string{"Compute step 2", "Compute list step 2", "Compute every step"}; !reflect.DeepEqual(n2, want) {
		t.Errorf("Compute step 2 tasks %v, want %v", n2, want)
	}
	if ext := yamlOf(t, r, "external_deploy_steps_tasks_step2.yaml").([]any); len(ext) != 1 {
		t.Errorf("external step 2 tasks %v", ext)
	}
	if got := string(r.Files["Controller/step_config.pp"]); got != "include ::tripleo::profile::base\n" {
		t.Errorf("step_config.pp %q", got)
	}
	if got := string(r.Files["Controller/param_config.json"]); got != `{"z": 1, "a": ["x"]}` {
		t.Errorf("param_config.json %q", got)
	}
	if got := string(r.Files["common_deploy_steps_tasks.yaml"]); got != "- name: as text\n  debug: {}\n" {
		t.Errorf("a RoleConfig string is written as it is: %q", got)
	}
	// NetworkConfig: a mapping as json.dumps writes it, an id as its config.
	if got := string(r.Files["Controller/NetworkConfig"]); got != `{"network_config": [{"type": "interface", "name": "nic1"}]}` {
		t.Errorf("Controller/NetworkConfig %q", got)
	}
	if got := string(r.Files["Compute/NetworkConfig"]); got != `{"network_config": [{"type": "ovs_bridge"}]}` {
		t.Errorf("Compute/NetworkConfig %q", got)
	}
	// group_vars: RoleGroupVars over the role's ansible_group_vars.
	gv := yamlOf(t, r, "group_vars/Controller").(map[string]any)
	if !reflect.DeepEqual(gv, map[string]any{"tripleo_role_name": "Controller", "answer": 42, "ansible_async_dir": "/tmp/.ansible_async"}) {
		t.Errorf("group_vars/Controller %v", gv)
	}
	_ = files
}

// The deployment files are exactly the text of tripleo-common's
// deployment.j2 (Ansible renders that text again on the node).
func TestDeploymentFileText(t *testing.T) {
	r := mustRender(t, syntheticStack("overcloud", 1, 1), Options{})
	got := string(r.Files["Controller/overcloud-controller-0/ControllerDeployment"])
	want := `ControllerDeployment:
  config:
    {
      "datafiles": {
        "node": {
          "index": 0,
          "role": "Controller"
        }
      }
    }
  creation_time: "2026-01-01T00:00:00Z"
  deployment_name: ControllerDeployment
  group: hiera
  id: cfg-0-0
  inputs:
    - name: role_name
      description: None
      type: String
      value: |-
        Controller
    - name: deploy_server_id
      description: ID of the server being deployed to
      type: String
      value: |-
        00000000-0000-0000-0000-000000000000
  name: ControllerDeployment-config
  options: {}
  outputs:
`
	if got != want {
		t.Errorf("hiera deployment file:\n%s\nwant:\n%s", got, want)
	}
	got = string(r.Files["Controller/overcloud-controller-0/ControllerExtraConfigPost"])
	want = `ControllerExtraConfigPost:
  config: |
    #!/bin/sh
    echo post

  creation_time: "2026-01-01T00:00:01Z"
  deployment_name: ControllerExtraConfigPost
  group: script
  id: post-0
  inputs:
    - name: deploy_server_id
      description: None
      type: String
      value: |-
        00000000-0000-0000-0000-000000000000
    - name: data
      description: None
      type: Json
      value: |-
        {'k': [1, 'v']}
  name: post
  options: None
  outputs:
    - name: result
      description: what it did
      type: String
`
	if got != want {
		t.Errorf("script deployment file:\n%s\nwant:\n%s", got, want)
	}
	// A config that is JSON text is pretty-printed; a JSON string is used as it is.
	for in, wantCfg := range map[string]string{`{"a": [1, 2.5]}`: "  config: |\n    {\n      \"a\": [\n        1,\n        2.5\n      ]\n    }\n",
		`"just text"`: "  config: |\n    just text\n"} {
		cfg := scriptConfig("x")
		cfg.Set("config", in)
		cfg.Set("deployment_name", "D")
		if got := string(deploymentFile(cfg)); !strings.Contains(got, wantCfg) {
			t.Errorf("config %s:\n%s", in, got)
		}
	}
}

func TestHostVarsText(t *testing.T) {
	r := mustRender(t, syntheticStack("overcloud", 1, 1), Options{})
	if got, want := string(r.Files["host_vars/overcloud-controller-0"]), "pre_network_Controller:  [] \n\n"+
		"pre_deployments_Controller: \n  - ControllerDeployment\n\n"+
		"post_deployments_Controller: \n  - ControllerExtraConfigPost\n\n"+
		"# ansible_host_vars managed by TripleO Heat Templates in puppet/role.role.j2.yaml:\n"+
		"tripleo_node_index: 0\n\n"; got != want {
		t.Errorf("host_vars:\n%q\nwant\n%q", got, want)
	}
	hv := yamlOf(t, r, "host_vars/overcloud-novacompute-0").(map[string]any)
	if !reflect.DeepEqual(hv["pre_network_Compute"], []any{"NetPre"}) || !reflect.DeepEqual(hv["pre_deployments_Compute"], []any{"ComputeDeployment"}) ||
		hv["tripleo_node_index"] != 0 {
		t.Errorf("host_vars of a compute: %v", hv)
	}
	// Without AnsibleHostVarsMap, only the lists.
	d := syntheticStack("overcloud", 1, 0)
	d.Outputs.Delete(OutAnsibleHostVarsMap)
	r = mustRender(t, d, Options{})
	if got := string(r.Files["host_vars/overcloud-controller-0"]); strings.Contains(got, "ansible_host_vars") {
		t.Errorf("host_vars without the output:\n%s", got)
	}
}

// stable/zed's config download: ansible_group_vars is written as a file
// and not merged, no NetworkConfig, and ansible-runner's directories.
func TestRenderZed(t *testing.T) {
	r := mustRender(t, syntheticStack("overcloud", 1, 1), Options{Release: Zed})
	for _, p := range []string{"Controller/ansible_group_vars.yaml", "artifacts/", "env/", "inventory/", "profiling_data/", "project/", "roles/"} {
		if _, ok := r.Files[p]; !ok {
			t.Errorf("zed: missing %s", p)
		}
	}
	for _, p := range []string{"Controller/NetworkConfig", "Compute/NetworkConfig"} {
		if _, ok := r.Files[p]; ok {
			t.Errorf("zed: unexpected %s", p)
		}
	}
	gv := yamlOf(t, r, "group_vars/Controller").(map[string]any)
	if _, ok := gv["ansible_async_dir"]; ok {
		t.Errorf("zed merged ansible_group_vars: %v", gv)
	}
	// Wallaby warns (and carries on) where tripleo-common would stop on a
	// missing RoleNetworkConfigMap; zed does not read it.
	d := syntheticStack("overcloud", 1, 0)
	d.Outputs.Delete(OutRoleNetworkConfigMap)
	if w := strings.Join(mustRender(t, d, Options{}).Warnings, "\n"); !strings.Contains(w, "no RoleNetworkConfigMap output") {
		t.Errorf("wallaby warnings %q", w)
	}
	if w := strings.Join(mustRender(t, d, Options{Release: Zed}).Warnings, "\n"); strings.Contains(w, OutRoleNetworkConfigMap) {
		t.Errorf("zed warnings %q", w)
	}
	if _, err := Render(d, Options{Release: "yoga"}); err == nil {
		t.Error("an unknown release rendered")
	}
}

func TestRenderConfigType(t *testing.T) {
	r := mustRender(t, syntheticStack("overcloud", 1, 0), Options{ConfigType: []string{"deploy_steps_tasks"}})
	if _, ok := r.Files["Controller/deploy_steps_tasks_step1.yaml"]; !ok {
		t.Error("config_type: the selected key was not written")
	}
	for _, p := range []string{"Controller/step_config.pp", "Controller/host_prep_tasks.yaml", "Controller/config_settings.yaml"} {
		if _, ok := r.Files[p]; ok {
			t.Errorf("config_type: %s written", p)
		}
	}
	if _, err := Render(syntheticStack("overcloud", 1, 0), Options{ConfigType: []string{"nope"}}); err == nil ||
		!strings.Contains(err.Error(), "config_type nope") {
		t.Errorf("an unknown config_type: %v", err)
	}
}

func TestRenderOddShapes(t *testing.T) {
	for name, mutate := range map[string]func(o *Object){
		"RoleData not a mapping": func(o *Object) { o.Set(OutRoleData, []any{"x"}) },
		"a role not a mapping":   func(o *Object) { asObject(o.Value(OutRoleData)).Set("Controller", "x") },
		"tasks not a list": func(o *Object) {
			asObject(asObject(o.Value(OutRoleData)).Value("Compute")).Set("deploy_steps_tasks", "x")
		},
		"a task not a mapping": func(o *Object) {
			asObject(asObject(o.Value(OutRoleData)).Value("Compute")).Set("update_tasks", []any{"x"})
		},
		"RoleConfig null":   func(o *Object) { o.Set(OutRoleConfig, nil) },
		"RoleConfig number": func(o *Object) { asObject(o.Value(OutRoleConfig)).Set("n", Number("3")) },
		"no ctlplane ips":   func(o *Object) { asObject(asObject(o.Value(OutRoleNetIPMap)).Value("Compute")).Delete("ctlplane") },
		"fewer ips than names": func(o *Object) {
			asObject(asObject(o.Value(OutRoleNetIPMap)).Value("Compute")).Set("ctlplane", []any{"1.2.3.4"})
		},
		"no ServerIdData":             func(o *Object) { o.Delete(OutServerIDData) },
		"no RoleGroupVars":            func(o *Object) { o.Delete(OutRoleGroupVars) },
		"host vars lack a role":       func(o *Object) { asObject(o.Value(OutAnsibleHostVarsMap)).Delete("Compute") },
		"EnabledServices not lists":   func(o *Object) { o.Set(OutEnabledServices, Obj("Compute", "x")) },
		"bad role name":               func(o *Object) { asObject(o.Value(OutRoleData)).Set("../x", NewObject()) },
		"network config of a nonrole": func(o *Object) { asObject(o.Value(OutRoleNetworkConfigMap)).Set("Nope", Obj("a", "b")) },
		"network config id not read":  func(o *Object) { asObject(o.Value(OutRoleNetworkConfigMap)).Set("Compute", "unknown-id") },
		"everything missing":          func(o *Object) { *o = *NewObject() },
		"hostnames without ctlplane": func(o *Object) {
			asObject(asObject(o.Value(OutRoleNetHostnameMap)).Value("Compute")).Delete("ctlplane")
		},
		"blacklist as a mapping":      func(o *Object) { o.Set(OutBlacklistedHostnames, Obj("a", nil)) },
		"EndpointMap without Horizon": func(o *Object) { o.Set(OutEndpointMap, Obj("KeystonePublic", NewObject())) },
		"server_ids shorter than names": func(o *Object) {
			asObject(asObject(o.Value(OutServerIDData)).Value("server_ids")).Set("Compute", []any{})
		},
	} {
		t.Run(name, func(t *testing.T) {
			d := syntheticStack("overcloud", 1, 2)
			mutate(d.Outputs)
			for _, rel := range []Release{Wallaby, Zed} {
				r, err := Render(d, Options{Release: rel})
				if err != nil {
					t.Fatalf("%s: %v", rel, err)
				}
				if _, ok := r.Files[InventoryFile]; !ok {
					t.Errorf("%s: no inventory", rel)
				}
				if name != "RoleConfig null" && name != "EndpointMap without Horizon" && name != "blacklist as a mapping" &&
					name != "no ServerIdData" && len(r.Warnings) == 0 {
					t.Errorf("%s: no warning", rel)
				}
			}
		})
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	a := mustRender(t, syntheticStack("overcloud", 3, 5), Options{})
	for i := 0; i < 5; i++ {
		b := mustRender(t, syntheticStack("overcloud", 3, 5), Options{})
		if !reflect.DeepEqual(a.Files, b.Files) {
			t.Fatal("two renders of the same stack differ")
		}
	}
}

// BenchmarkRender50Nodes renders a synthetic 50-node overcloud (3
// controllers, 47 computes).
func BenchmarkRender50Nodes(b *testing.B) {
	d := syntheticStack("overcloud", 3, 47)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Render(d, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
