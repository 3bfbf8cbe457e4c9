package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/fakekeystone"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/moduletest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/tlsproxy"
)

func TestDocumentationMatchesSpec(t *testing.T) {
	if err := module.CheckSidecar(spec, "../../collection/plugins/modules/heat_stack.yml"); err != nil {
		t.Fatal(err)
	}
}

// runModule runs the module as Ansible does (an arguments file) and returns its result.
func runModule(t *testing.T, args map[string]any) map[string]any {
	t.Helper()
	return moduletest.Call(t, spec, run, args)
}

// TestBadInputNeverReachesHeat: every bad template or environment fails
// with a message naming the file, and no request reaches Heat.
func TestBadInputNeverReachesHeat(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		t.Errorf("Heat was contacted: %s %s", r.Method, r.URL)
		w.WriteHeader(500)
	}))
	defer srv.Close()

	dir := t.TempDir()
	files := map[string]string{
		"good.yaml":       "heat_template_version: 2021-04-16\nresources: {}\n",
		"malformed.yaml":  "heat_template_version: 2021-04-16\nresources:\n  a: [unclosed\n",
		"noversion.yaml":  "resources: {}\n",
		"badversion.yaml": "heat_template_version: 2099-01-01\nresources: {}\n",
		"getfile.yaml": "heat_template_version: 2021-04-16\nresources:\n  cfg:\n    type: OS::Heat::SoftwareConfig\n" +
			"    properties: {config: {get_file: scripts/missing.sh}}\n",
		"provider.yaml": "heat_template_version: 2021-04-16\nresources:\n  n:\n    type: missing-provider.yaml\n",
		"env-bad.yaml":  "parameter_defaults: {a: 1}\nresource_registery: {}\n",
		"env-yaml.yaml": "parameter_defaults: [\n",
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := func(n string) string { return filepath.Join(dir, n) }
	cases := []struct {
		name string
		args map[string]any
		want []string // all in msg
	}{
		{"missing template", map[string]any{"template": f("nope.yaml")}, []string{"nope.yaml"}},
		{"malformed YAML", map[string]any{"template": f("malformed.yaml")}, []string{"malformed.yaml"}},
		{"no version key", map[string]any{"template": f("noversion.yaml")}, []string{"noversion.yaml"}},
		{"unknown version", map[string]any{"template": f("badversion.yaml")}, []string{"badversion.yaml", "2099-01-01"}},
		{"missing get_file target", map[string]any{"template": f("getfile.yaml")}, []string{"missing.sh"}},
		{"missing provider template", map[string]any{"template": f("provider.yaml")}, []string{"missing-provider.yaml"}},
		{"environment unknown section", map[string]any{"template": f("good.yaml"), "environment_files": []string{f("env-bad.yaml")}}, []string{"env-bad.yaml", "resource_registery"}},
		{"environment malformed", map[string]any{"template": f("good.yaml"), "environment_files": []string{f("env-yaml.yaml")}}, []string{"env-yaml.yaml"}},
		{"missing environment", map[string]any{"template": f("good.yaml"), "environment_files": []string{f("env-none.yaml")}}, []string{"env-none.yaml"}},
		{"no template", map[string]any{}, []string{"template is required"}},
		{"bad stack name", map[string]any{"template": f("good.yaml"), "name": "9lives"}, []string{"9lives"}},
		{"existing without template, bad env", map[string]any{"existing": true, "environment_files": []string{f("env-bad.yaml")}}, []string{"env-bad.yaml"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"name": "overcloud", "endpoint": srv.URL + "/v1/admin"}
			for k, v := range tc.args {
				args[k] = v
			}
			res := runModule(t, args)
			msg, _ := res["msg"].(string)
			if res["failed"] != true || res["changed"] != false {
				t.Fatalf("want failed and unchanged, got %v", res)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("msg %q lacks %q", msg, w)
				}
			}
			t.Logf("msg: %s", msg)
		})
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d requests reached Heat", n)
	}
}

func TestWhereHeatIs(t *testing.T) {
	dir := t.TempDir()
	tpl := filepath.Join(dir, "t.yaml")
	os.WriteFile(tpl, []byte("heat_template_version: 2021-04-16\n"), 0o644)
	res := runModule(t, map[string]any{"name": "s", "template": tpl})
	if res["failed"] != true || !strings.Contains(res["msg"].(string), "exactly one of heat_dir, endpoint, cloud") {
		t.Errorf("no location: %v", res["msg"])
	}
	res = runModule(t, map[string]any{"name": "s", "template": tpl, "heat_dir": dir})
	if res["failed"] != true || !strings.Contains(res["msg"].(string), "clouds.yaml") {
		t.Errorf("heat_dir without clouds.yaml: %v", res["msg"])
	}
	res = runModule(t, map[string]any{"name": "s", "template": tpl, "endpoint": "127.0.0.1:8006"})
	if res["failed"] != true || !strings.Contains(res["msg"].(string), "not an http(s) URL") {
		t.Errorf("bad endpoint: %v", res["msg"])
	}
	// A clouds.yaml cloud with no auth is an endpoint; its password is masked.
	cy := filepath.Join(dir, "clouds.yaml")
	os.WriteFile(cy, []byte("clouds:\n  kc:\n    auth:\n      auth_url: http://127.0.0.1:1/v3\n      username: admin\n      password: s3cr3t-pw\n      project_name: admin\n      user_domain_name: Default\n      project_domain_name: Default\n"), 0o600)
	t.Setenv("OS_CLIENT_CONFIG_FILE", cy)
	res = runModule(t, map[string]any{"name": "s", "template": tpl, "cloud": "kc"})
	msg, _ := res["msg"].(string)
	if res["failed"] != true || !strings.Contains(msg, "Keystone authentication") || strings.Contains(msg, "s3cr3t-pw") {
		t.Errorf("cloud with unreachable Keystone: %v", msg)
	}
	res = runModule(t, map[string]any{"name": "s", "template": tpl, "cloud": "other"})
	if msg, _ := res["msg"].(string); !strings.Contains(msg, `no cloud "other"`) {
		t.Errorf("unknown cloud: %v", msg)
	}
}

// TestHiddenValuesNeverInResults: a hidden parameter given to the module,
// used only by an output, is applied on update and its value appears
// nowhere in the module's results (outputs, diff, invocation).
func TestHiddenValuesNeverInResults(t *testing.T) {
	h := heattest.Start(t, nil)
	dir := t.TempDir()
	tpl := filepath.Join(dir, "t.yaml")
	os.WriteFile(tpl, []byte(`heat_template_version: wallaby
parameters:
  Token: {type: string, hidden: true, default: none-yet}
resources:
  r: {type: OS::Heat::None}
outputs:
  token: {value: {get_param: Token}}
  shown: {value: {list_join: ['', ['<', {get_param: Token}, '>']]}}
`), 0o644)
	args := map[string]any{"name": "hid", "template": tpl, "heat_dir": h.Dir, "timeout": 5}
	if res := runModule(t, args); res["failed"] == true {
		t.Fatalf("create: %v", res["msg"])
	}
	for _, mode := range []map[string]any{{"_ansible_check_mode": true, "_ansible_diff": true}, {"_ansible_diff": true}} {
		a := map[string]any{"parameters": map[string]any{"Token": "tok-9f8e7d6c"}}
		for k, v := range args {
			a[k] = v
		}
		for k, v := range mode {
			a[k] = v
		}
		res := runModule(t, a)
		b, _ := json.Marshal(res)
		if res["failed"] == true || res["changed"] != true {
			t.Fatalf("%v: %s", mode, b)
		}
		if strings.Contains(string(b), "tok-9f8e7d6c") {
			t.Errorf("%v: the hidden value is in the result: %s", mode, b)
		}
		if !strings.Contains(string(b), "Token") {
			t.Errorf("%v: the result does not name the changed hidden parameter: %s", mode, b)
		}
	}
	// It was applied: Heat resolves the output to the new value.
	c, err := heatapi.NewFromHeatDir(h.Dir)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := c.FindStack(context.Background(), "hid")
	if o, err := c.GetOutput(context.Background(), ref, "token"); err != nil || o.Value != "tok-9f8e7d6c" {
		t.Fatalf("the hidden parameter was not applied: %+v %v", o, err)
	}
}

// TestDigestOnlyNeedsNoHeat: digest_only processes the inputs without any
// Heat and returns a digest that follows every file that would be sent.
func TestDigestOnlyNeedsNoHeat(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "far", "away"), 0o755)
	os.MkdirAll(filepath.Join(dir, "top"), 0o755)
	os.WriteFile(filepath.Join(dir, "top", "t.yaml"), []byte("heat_template_version: wallaby\nresources:\n  n: {type: My::Node}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "far", "away", "node.yaml"), []byte("heat_template_version: wallaby\nresources: {}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "env.yaml"), []byte("resource_registry:\n  My::Node: far/away/node.yaml\n"), 0o644)
	args := map[string]any{"name": "d", "template": filepath.Join(dir, "top", "t.yaml"),
		"environment_files": []string{filepath.Join(dir, "env.yaml")}, "digest_only": true}
	first := runModule(t, args)
	if first["failed"] == true || first["changed"] != false || first["inputs_digest"] == nil {
		t.Fatalf("digest_only: %v", first)
	}
	if !strings.Contains(fmt.Sprint(first["files"]), "far/away/node.yaml") {
		t.Errorf("files read do not list the provider template: %v", first["files"])
	}
	if again := runModule(t, args); again["inputs_digest"] != first["inputs_digest"] {
		t.Errorf("same inputs, other digest")
	}
	os.WriteFile(filepath.Join(dir, "far", "away", "node.yaml"), []byte("heat_template_version: wallaby\nresources: {x: {type: OS::Heat::None}}\n"), 0o644)
	if edited := runModule(t, args); edited["inputs_digest"] == first["inputs_digest"] {
		t.Errorf("an edited provider template left the digest unchanged")
	}
	args["parameters"] = map[string]any{"a": 1}
	if withParams := runModule(t, args); withParams["inputs_digest"] == first["inputs_digest"] {
		t.Errorf("parameters left the digest unchanged")
	}
	delete(args, "digest_only")
	if res := runModule(t, args); res["failed"] != true || !strings.Contains(fmt.Sprint(res["msg"]), "exactly one of heat_dir") {
		t.Errorf("without digest_only and without a Heat: %v", res)
	}
}

// Every option is validated before anything runs: each bad value the spec
// implies (types, ranges, choices, empty or missing required values) is
// refused naming the option and what it allows.
func TestBoundaries(t *testing.T) {
	moduletest.Boundaries(t, spec, `{"name": "overcloud", "template": "/tmp/t.yaml", "heat_dir": "/tmp/hd"}`)
}

// cloudsYAML writes a clouds.yaml and points OS_CLIENT_CONFIG_FILE at it,
// with no other OS_ variable that would change what it says.
func cloudsYAML(t *testing.T, content string) string {
	t.Helper()
	for _, k := range []string{"OS_CLOUD", "OS_REGION_NAME", "OS_INTERFACE", "OS_CACERT", "OS_CERT", "OS_KEY"} {
		t.Setenv(k, "")
	}
	p := filepath.Join(t.TempDir(), "clouds.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OS_CLIENT_CONFIG_FILE", p)
	return p
}

// The TLS cloud: a Heat behind a TLS proxy whose certificate a test CA
// signed, named by a clouds.yaml cloud with auth_type none and cacert.
// The stack is created and read through it; without the CA the
// certificate is refused saying what to give; with another CA the message
// names that ca_cert; validate_certs false needs no CA.
func TestTLSCloud(t *testing.T) {
	h := heattest.Start(t, nil)
	px := tlsproxy.Start(t, h.Port)
	ep := px.URL("/v1/admin")
	cloudsYAML(t, fmt.Sprintf("clouds:\n  tls:\n    auth_type: none\n    auth: {endpoint: %q}\n    cacert: %q\n"+
		"  bare:\n    auth_type: none\n    auth: {endpoint: %q}\n", ep, px.CA, ep))
	tpl := filepath.Join(t.TempDir(), "t.yaml")
	os.WriteFile(tpl, []byte("heat_template_version: wallaby\nresources:\n  v: {type: OS::Heat::Value, properties: {value: 42}}\n"+
		"outputs:\n  answer: {value: {get_attr: [v, value]}}\n"), 0o644)
	args := func(extra map[string]any) map[string]any {
		a := map[string]any{"name": "tls", "template": tpl, "timeout": 5}
		for k, v := range extra {
			a[k] = v
		}
		return a
	}
	res := runModule(t, args(map[string]any{"cloud": "tls"}))
	if res["failed"] == true || res["changed"] != true || res["endpoint"] != ep {
		t.Fatalf("create through the TLS cloud: %v", res)
	}
	if o, _ := res["outputs"].(map[string]any); fmt.Sprint(o["answer"]) != "42" {
		t.Errorf("outputs: %v", res["outputs"])
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want []string // in msg; none: unchanged success
	}{
		{"validate_certs false, no CA", map[string]any{"cloud": "bare", "validate_certs": false}, nil},
		{"ca_cert with a cloud", map[string]any{"cloud": "bare", "ca_cert": px.CA}, nil},
		{"ca_cert with an endpoint", map[string]any{"endpoint": ep, "ca_cert": px.CA}, nil},
		{"no CA", map[string]any{"cloud": "bare"}, []string{"certificate signed by unknown authority", "the system's CA certificates", "give ca_cert"}},
		{"the wrong CA", map[string]any{"cloud": "tls", "ca_cert": px.OtherCA}, []string{"unknown authority", "checked against ca_cert " + px.OtherCA, "give ca_cert"}},
		{"the wrong CA at an endpoint", map[string]any{"endpoint": ep, "ca_cert": px.OtherCA}, []string{"checked against ca_cert " + px.OtherCA}},
	} {
		res := runModule(t, args(tc.args))
		msg, _ := res["msg"].(string)
		if tc.want == nil {
			if res["failed"] == true || res["changed"] != false {
				t.Errorf("%s: %v", tc.name, res)
			}
			continue
		}
		if res["failed"] != true {
			t.Errorf("%s: not refused: %v", tc.name, res)
		}
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: msg %q lacks %q", tc.name, msg, w)
			}
		}
	}
	if res := runModule(t, map[string]any{"name": "tls", "state": "absent", "cloud": "tls"}); res["failed"] == true || res["changed"] != true {
		t.Errorf("delete through the TLS cloud: %v", res)
	}
}

// clouds.yaml with application credentials and OS_CLOUD: no location given,
// OS_CLOUD names the cloud; the token request is the application
// credential's, the Heat the catalog's orchestration endpoint of the
// cloud's region and interface, called with the token; the secret (from
// clouds.yaml, or the auth option) is in no result.
func TestOSCloudApplicationCredential(t *testing.T) {
	ks := fakekeystone.Start(t)
	cloudsYAML(t, fmt.Sprintf(`clouds:
  deployer:
    auth_type: v3applicationcredential
    region_name: RegionTwo
    auth:
      auth_url: %s/v3
      application_credential_id: 0e6f8c2a
      application_credential_secret: sekrit-from-clouds-yaml
`, ks.URL))
	t.Setenv("OS_CLOUD", "deployer")
	for _, tc := range []struct {
		name, secret string
		args         map[string]any
	}{
		{"OS_CLOUD", "sekrit-from-clouds-yaml", nil},
		{"OS_CLOUD with the task's auth and interface", "sekrit-from-the-task",
			map[string]any{"auth": map[string]any{"application_credential_secret": "sekrit-from-the-task"}, "interface": "internal"}},
	} {
		args := map[string]any{"name": "overcloud", "state": "absent"}
		for k, v := range tc.args {
			args[k] = v
		}
		res := runModule(t, args)
		iface := "public"
		if tc.args != nil {
			iface = "internal"
		}
		if res["failed"] == true || res["changed"] != false || res["endpoint"] != ks.HeatEndpoint("RegionTwo", iface) {
			t.Fatalf("%s: %v", tc.name, res)
		}
		b, _ := json.Marshal(res)
		if strings.Contains(string(b), "sekrit") {
			t.Errorf("%s: a secret is in the result: %s", tc.name, b)
		}
		auths := ks.Auths()
		got, _ := json.Marshal(auths[len(auths)-1])
		want := `{"auth":{"identity":{"application_credential":{"id":"0e6f8c2a","secret":"` + tc.secret + `"},"methods":["application_credential"]}}}`
		if string(got) != want {
			t.Errorf("%s: token request %s, want %s", tc.name, got, want)
		}
		reqs := ks.HeatRequests()
		if len(reqs) == 0 || reqs[len(reqs)-1] != "GET "+strings.TrimPrefix(ks.HeatEndpoint("RegionTwo", iface), ks.URL)+"/stacks/overcloud "+fakekeystone.Token {
			t.Errorf("%s: Heat requests %q", tc.name, reqs)
		}
	}
	// OS_CLOUD naming a cloud that is not there says where it came from.
	t.Setenv("OS_CLOUD", "nope")
	res := runModule(t, map[string]any{"name": "overcloud", "state": "absent"})
	if msg, _ := res["msg"].(string); res["failed"] != true || !strings.Contains(msg, `cloud "nope" (from OS_CLOUD)`) {
		t.Errorf("unknown OS_CLOUD: %v", res)
	}
}

// The openstack.cloud-shaped result, read as a playbook written for
// openstack.cloud.stack reads it: id, stack.id, stack.stack_status,
// stack.outputs | items2dict(key_name='output_key',
// value_name='output_value'), stack.parameters; and timeout_s in seconds.
func TestOpenStackCloudShape(t *testing.T) {
	h := heattest.Start(t, nil)
	tpl := filepath.Join(t.TempDir(), "t.yaml")
	os.WriteFile(tpl, []byte(`heat_template_version: wallaby
description: Two outputs.
parameters:
  greeting: {type: string, default: hello}
resources:
  v: {type: OS::Heat::Value, properties: {value: {get_param: greeting}}}
outputs:
  said: {description: What v says., value: {get_attr: [v, value]}}
  nodes: {value: [a, b]}
`), 0o644)
	args := map[string]any{"name": "shaped", "template": tpl, "heat_dir": h.Dir, "timeout_s": 3601, "parameters": map[string]any{"greeting": "hi"}}
	res := runModule(t, args)
	if res["failed"] == true || res["changed"] != true {
		t.Fatalf("create: %v", res)
	}
	// Through JSON, as Ansible reads it.
	var r struct {
		ID    string `json:"id"`
		Stack struct {
			ID          string            `json:"id"`
			StackStatus string            `json:"stack_status"`
			Description string            `json:"description"`
			Parameters  map[string]string `json:"parameters"`
			TimeoutMins int               `json:"timeout_mins"`
			Outputs     []map[string]any  `json:"outputs"`
		} `json:"stack"`
		Outputs map[string]any `json:"outputs"`
	}
	b, _ := json.Marshal(res)
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	items2dict := map[string]any{}
	descriptions := map[string]any{}
	for _, o := range r.Stack.Outputs {
		items2dict[o["output_key"].(string)] = o["output_value"]
		descriptions[o["output_key"].(string)] = o["description"]
	}
	if r.ID == "" || r.ID != r.Stack.ID || r.Stack.StackStatus != "CREATE_COMPLETE" || r.Stack.Description != "Two outputs." {
		t.Errorf("id %q, stack %+v", r.ID, r.Stack)
	}
	if fmt.Sprint(items2dict) != fmt.Sprint(r.Outputs) || items2dict["said"] != "hi" || fmt.Sprint(items2dict["nodes"]) != "[a b]" ||
		descriptions["said"] != "What v says." {
		t.Errorf("stack.outputs %v, outputs %v", r.Stack.Outputs, r.Outputs)
	}
	if r.Stack.Parameters["greeting"] != "hi" || r.Stack.Parameters["OS::stack_name"] != "shaped" {
		t.Errorf("stack.parameters %v", r.Stack.Parameters)
	}
	// 3601 s is 61 min of Heat's timeout_mins.
	if r.Stack.TimeoutMins != 61 {
		t.Errorf("timeout_mins %d, want 61", r.Stack.TimeoutMins)
	}
	// The same inputs with timeout in minutes: unchanged.
	delete(args, "timeout_s")
	args["timeout"] = 61
	if res := runModule(t, args); res["failed"] == true || res["changed"] != false {
		t.Errorf("timeout=61 after timeout_s=3601: %v", res)
	}
	args["timeout_s"] = 60
	if res := runModule(t, args); res["failed"] != true || !strings.Contains(fmt.Sprint(res["msg"]), "timeout (minutes) or timeout_s (seconds), not both") {
		t.Errorf("both timeouts: %v", res)
	}
}
