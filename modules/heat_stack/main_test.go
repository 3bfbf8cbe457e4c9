package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
)

func TestDocumentationMatchesSpec(t *testing.T) {
	if err := module.CheckSidecar(spec, "../../collection/plugins/modules/heat_stack.yml"); err != nil {
		t.Fatal(err)
	}
}

// runModule runs the module as Ansible does (an args file) and returns its JSON result.
func runModule(t *testing.T, args map[string]any) map[string]any {
	t.Helper()
	p := filepath.Join(t.TempDir(), "args.json")
	b, _ := json.Marshal(args)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	module.Run(spec, run, []string{p}, &out, &errb)
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("result is not JSON: %v: %s", err, out.String())
	}
	return res
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
