package templates

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeTree writes files (relative path -> content) under a new directory
// and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const hot = "heat_template_version: 2021-04-16\n"

func TestProcessBadInput(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		envs  []string
		want  []string // substrings of the error; "DIR" is the tree's path
	}{
		{
			name: "missing template",
			want: []string{"DIR/top.yaml", "no such file"},
		},
		{
			name:  "malformed YAML",
			files: map[string]string{"top.yaml": hot + "resources:\n  a: [1, 2\n  b: 3\n"},
			want:  []string{"DIR/top.yaml", "invalid YAML", "near line 3: did not find expected ',' or ']'"},
		},
		{
			name:  "malformed JSON",
			files: map[string]string{"top.yaml": "{\n  \"heat_template_version\": \"2021-04-16\",\n  \"resources\": {,}\n}"},
			want:  []string{"DIR/top.yaml", "invalid JSON", "line 3"},
		},
		{
			name:  "unknown version",
			files: map[string]string{"top.yaml": "heat_template_version: 2022-02-02\n"},
			want:  []string{"DIR/top.yaml", `unknown heat_template_version "2022-02-02"`, "2021-04-16"},
		},
		{
			name:  "unknown CFN version",
			files: map[string]string{"top.yaml": "AWSTemplateFormatVersion: 2012-12-12\n"},
			want:  []string{"DIR/top.yaml", `unknown AWSTemplateFormatVersion "2012-12-12"`, "2010-09-09"},
		},
		{
			name:  "version not a string",
			files: map[string]string{"top.yaml": "heat_template_version: 2013\n"},
			want:  []string{"DIR/top.yaml", "must be a version string"},
		},
		{
			name:  "no version key",
			files: map[string]string{"top.yaml": "resources: {}\n"},
			want:  []string{"DIR/top.yaml", "no version key", "heat_template_version"},
		},
		{
			name:  "empty template",
			files: map[string]string{"top.yaml": "\n"},
			want:  []string{"DIR/top.yaml", "no version key"},
		},
		{
			name:  "two version keys",
			files: map[string]string{"top.yaml": hot + "HeatTemplateFormatVersion: 2012-12-12\n"},
			want:  []string{"DIR/top.yaml", "ambiguous", "heat_template_version and HeatTemplateFormatVersion"},
		},
		{
			name:  "not a mapping",
			files: map[string]string{"top.yaml": "- heat_template_version\n"},
			want:  []string{"DIR/top.yaml", "must be a mapping"},
		},
		{
			name:  "get_file target missing",
			files: map[string]string{"top.yaml": hot + "outputs:\n  o: {value: {get_file: scripts/missing.sh}}\n"},
			want:  []string{"DIR/top.yaml: get_file \"scripts/missing.sh\"", "DIR/scripts/missing.sh", "no such file"},
		},
		{
			name: "get_file target missing in a nested template",
			files: map[string]string{
				"top.yaml":        hot + "resources:\n  r: {type: sub/nested.yaml}\n",
				"sub/nested.yaml": hot + "outputs:\n  o: {value: {get_file: ../gone.txt}}\n",
			},
			want: []string{"DIR/sub/nested.yaml: get_file \"../gone.txt\"", "DIR/gone.txt"},
		},
		{
			name:  "provider template missing",
			files: map[string]string{"top.yaml": hot + "resources:\n  r: {type: nope.yaml}\n"},
			want:  []string{"DIR/top.yaml: type \"nope.yaml\"", "no such file"},
		},
		{
			name: "provider template with bad YAML",
			files: map[string]string{
				"top.yaml": hot + "resources:\n  r: {type: bad.yaml}\n",
				"bad.yaml": hot + "resources:\n\tr: 1\n",
			},
			want: []string{"DIR/top.yaml: type \"bad.yaml\"", "DIR/bad.yaml: invalid YAML", "line 3"},
		},
		{
			name: "provider template without version",
			files: map[string]string{
				"top.yaml":  hot + "resources:\n  r: {type: data.yaml}\n",
				"data.yaml": "resources: {}\n",
			},
			want: []string{"DIR/data.yaml: not a Heat template: no version key"},
		},
		{
			name: "get_file of a template with an unknown version",
			files: map[string]string{
				"top.yaml":  hot + "outputs:\n  o: {value: {get_file: old.yaml}}\n",
				"old.yaml":  "heat_template_version: 2012-01-01\n",
				"other.txt": "unused",
			},
			want: []string{"DIR/old.yaml: unknown heat_template_version"},
		},
		{
			name: "reference cycle",
			files: map[string]string{
				"top.yaml": hot + "resources:\n  r: {type: a.yaml}\n",
				"a.yaml":   hot + "resources:\n  r: {type: b.yaml}\n",
				"b.yaml":   hot + "resources:\n  r: {type: a.yaml}\n",
			},
			want: []string{"cycle", "DIR/a.yaml -> file://DIR/b.yaml -> file://DIR/a.yaml"},
		},
		{
			name:  "remote get_file",
			files: map[string]string{"top.yaml": hot + "outputs:\n  o: {value: {get_file: 'http://example.com/x.sh'}}\n"},
			want:  []string{"DIR/top.yaml", "not a local file"},
		},
		{
			name:  "environment missing",
			files: map[string]string{"top.yaml": hot},
			envs:  []string{"env/none.yaml"},
			want:  []string{"environment file", "DIR/env/none.yaml", "no such file"},
		},
		{
			name:  "environment with an unknown section",
			files: map[string]string{"top.yaml": hot, "env/e.yaml": "parameter_default:\n  A: 1\n"},
			envs:  []string{"env/e.yaml"},
			want:  []string{"DIR/env/e.yaml", `unknown section "parameter_default"`, "parameter_defaults"},
		},
		{
			name:  "environment not a mapping",
			files: map[string]string{"top.yaml": hot, "env/e.yaml": "- a\n"},
			envs:  []string{"env/e.yaml"},
			want:  []string{"DIR/env/e.yaml", "must be a YAML mapping"},
		},
		{
			name:  "environment with bad YAML",
			files: map[string]string{"top.yaml": hot, "env/e.yaml": "parameter_defaults:\n  A: 'x\n"},
			envs:  []string{"env/e.yaml"},
			want:  []string{"DIR/env/e.yaml", "line"},
		},
		{
			name:  "registry file missing",
			files: map[string]string{"top.yaml": hot, "env/e.yaml": "resource_registry:\n  OS::X: ../x.yaml\n"},
			envs:  []string{"env/e.yaml"},
			want:  []string{"DIR/env/e.yaml: resource_registry \"OS::X\"", "DIR/x.yaml", "no such file"},
		},
		{
			name:  "per-resource registry file missing",
			files: map[string]string{"top.yaml": hot, "env/e.yaml": "resource_registry:\n  resources:\n    srv:\n      OS::X: y.yaml\n"},
			envs:  []string{"env/e.yaml"},
			want:  []string{"DIR/env/e.yaml: resource_registry.resources.srv \"OS::X\"", "DIR/env/y.yaml"},
		},
		{
			name:  "registry value of the wrong type",
			files: map[string]string{"top.yaml": hot, "env/e.yaml": "resource_registry:\n  OS::X: 5\n"},
			envs:  []string{"env/e.yaml"},
			want:  []string{"DIR/env/e.yaml", "neither a resource type nor a template path"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, tt.files)
			var envs []string
			for _, e := range tt.envs {
				envs = append(envs, filepath.Join(dir, e))
			}
			b, err := Process(filepath.Join(dir, "top.yaml"), envs)
			if err == nil {
				t.Fatalf("no error; files %v", b.Files)
			}
			for _, w := range tt.want {
				w = strings.ReplaceAll(w, "DIR", dir)
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

// heatclient crashes on a null resource_registry value ("'::' in None");
// Heat itself reads it as "unregister this mapping". We accept it, send it
// on, and drop the mapping from the client-side merge.
func TestNullRegistryValueUnregisters(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"top.yaml": hot,
		"a.yaml":   hot,
		"env1.yaml": `resource_registry:
  OS::A: a.yaml
  OS::Net::One: a.yaml
  OS::Net::Two: OS::Heat::None
  OS::Keep: OS::Heat::None
  resources:
    srv: {OS::A: a.yaml}
parameter_defaults:
  Map: {x: 1}
  Scalar: 1
`,
		"env2.yaml": `resource_registry:
  OS::A: null
  OS::Net::*: ~
  resources:
    srv: {OS::A: null}
    gone: null
parameter_defaults:
  Map: null
  Scalar: null
`,
	})
	b, err := Process(filepath.Join(dir, "top.yaml"), []string{filepath.Join(dir, "env1.yaml"), filepath.Join(dir, "env2.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"resource_registry": map[string]any{
			"OS::Keep":  "OS::Heat::None",
			"resources": map[string]any{"srv": map[string]any{}},
		},
		// heatclient's deep_update: null keeps a map, replaces a scalar.
		"parameter_defaults": map[string]any{"Map": map[string]any{"x": json.Number("1")}, "Scalar": nil},
	}
	if !reflect.DeepEqual(b.Environment, want) {
		t.Errorf("merged environment = %#v\nwant %#v", b.Environment, want)
	}
	env2URL, _ := pathToURL(filepath.Join(dir, "env2.yaml"))
	if !strings.Contains(b.Files[env2URL], `"OS::A":null`) {
		t.Errorf("the null must reach the server: %s", b.Files[env2URL])
	}
}

// heatclient needs base_url to be a URL (it cannot open a bare path); we
// also take a path, absolute or relative to the environment's directory.
func TestRegistryBaseURLForms(t *testing.T) {
	dir := writeTree(t, map[string]string{"tht/net.yaml": hot, "tht/port.yaml": hot})
	env := `resource_registry:
  base_url: ../tht
  OS::Net: net.yaml
  resources:
    p:
      base_url: ` + filepath.Join(dir, "tht") + `
      OS::Port: port.yaml
`
	if err := os.MkdirAll(filepath.Join(dir, "env"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "env", "e.yaml"), []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	merged, files, urls, err := ProcessEnvironments([]string{filepath.Join(dir, "env", "e.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	tht, _ := pathToURL(filepath.Join(dir, "tht"))
	rr := merged["resource_registry"].(map[string]any)
	if rr["OS::Net"] != tht+"/net.yaml" {
		t.Errorf("OS::Net = %v, want %s/net.yaml", rr["OS::Net"], tht)
	}
	if p := rr["resources"].(map[string]any)["p"].(map[string]any)["OS::Port"]; p != tht+"/port.yaml" {
		t.Errorf("OS::Port = %v, want %s/port.yaml", p, tht)
	}
	if len(files) != 3 || len(urls) != 1 {
		t.Errorf("files %d (want 3), urls %v", len(files), urls)
	}
	if _, ok := files[urls[0]]; !ok {
		t.Errorf("the environment itself is not in files")
	}
}

func TestRequestBody(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"top.yaml": hot + "outputs:\n  o: {value: {get_file: big.txt}}\n",
		"big.txt":  strings.Repeat("x", 5000),
		"e.yaml":   "parameter_defaults: {A: 1}\n",
	})
	b, err := Process(filepath.Join(dir, "top.yaml"), []string{filepath.Join(dir, "e.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	body, err := b.RequestBody(map[string]any{"stack_name": "overcloud", "timeout_mins": 240}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var decoded map[string]any
	if err := json.Unmarshal(body, &decoded); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"stack_name", "timeout_mins", "template", "files", "environment_files"} {
		if _, ok := decoded[k]; !ok {
			t.Errorf("body lacks %q: %s", k, body)
		}
	}
	if _, ok := decoded["environment"]; ok {
		t.Errorf("body has the client-merged environment, which Heat ignores")
	}
	if tpl := decoded["template"].(map[string]any); tpl["heat_template_version"] != "2021-04-16" {
		t.Errorf("template version = %#v", tpl["heat_template_version"])
	}

	tests := []struct {
		name  string
		extra map[string]any
		max   int
		want  string // "" means success
	}{
		{"exactly at the limit", map[string]any{"stack_name": "overcloud"}, len(body) - len(`,"timeout_mins":240`), ""},
		{"one byte over", map[string]any{"stack_name": "overcloud"}, len(body) - len(`,"timeout_mins":240`) - 1, "over Heat's max_json_body_size of"},
		{"oversize", nil, 1000, "bytes, over Heat's max_json_body_size of 1000 bytes (largest files: file://"},
		{"extra replaces files", map[string]any{"files": map[string]string{}}, 0, `field "files"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := b.RequestBody(tt.extra, tt.max)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
