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
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/moduletest"
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
