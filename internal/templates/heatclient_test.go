package templates

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// debianPython is the interpreter python3-heatclient installs for (a python3
// earlier in PATH, e.g. from pyenv, does not see Debian's packages).
const debianPython = "/usr/bin/python3"

// heatclientOutput is what testdata/heatclient_process.py prints.
type heatclientOutput struct {
	Template         json.RawMessage   `json:"template"`
	Files            map[string]string `json:"files"`
	Environment      json.RawMessage   `json:"environment"`
	EnvironmentFiles []string          `json:"environment_files"`
}

func runHeatclient(t *testing.T, args ...string) heatclientOutput {
	t.Helper()
	if _, err := os.Stat(debianPython); err != nil {
		t.Fatalf("%s is missing: apt-get install -y python3 python3-heatclient", debianPython)
	}
	cmd := exec.Command(debianPython, append([]string{"testdata/heatclient_process.py"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 3 {
		t.Fatalf("python3-heatclient is not installed: apt-get install -y python3-heatclient (%s)", strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		t.Fatalf("heatclient_process.py: %v\n%s", err, stderr.String())
	}
	var res heatclientOutput
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("heatclient_process.py printed bad JSON: %v", err)
	}
	return res
}

// decodeJSON decodes JSON keeping numbers as written (so 1.0 and 1 differ).
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// jsonDiff returns "" when a and b (JSON texts) hold the same value, else
// where they first differ.
func jsonDiff(a, b []byte) string {
	va, err := decodeJSON(a)
	if err != nil {
		return fmt.Sprintf("first is not JSON: %v", err)
	}
	vb, err := decodeJSON(b)
	if err != nil {
		return fmt.Sprintf("second is not JSON: %v", err)
	}
	return valueDiff("$", va, vb)
}

func valueDiff(path string, a, b any) string {
	ma, aMap := a.(map[string]any)
	mb, bMap := b.(map[string]any)
	if aMap && bMap {
		keys := map[string]bool{}
		for k := range ma {
			keys[k] = true
		}
		for k := range mb {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			va, okA := ma[k]
			vb, okB := mb[k]
			if okA != okB {
				return fmt.Sprintf("%s.%s: present %v vs %v", path, k, okA, okB)
			}
			if d := valueDiff(path+"."+k, va, vb); d != "" {
				return d
			}
		}
		return ""
	}
	la, aList := a.([]any)
	lb, bList := b.([]any)
	if aList && bList {
		if len(la) != len(lb) {
			return fmt.Sprintf("%s: %d vs %d items", path, len(la), len(lb))
		}
		for i := range la {
			if d := valueDiff(fmt.Sprintf("%s[%d]", path, i), la[i], lb[i]); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Sprintf("%s: %#v vs %#v", path, a, b)
	}
	return ""
}

// TestMatchesHeatclient processes testdata/tree with python-heatclient and
// with Process and requires the same result:
//   - the same environment_files, in order;
//   - the same set of URLs in files;
//   - a file heatclient sends as it is on disk (or base64-encoded, when it
//     is not UTF-8) must be byte-identical: that is the content get_file
//     returns on the server;
//   - a file heatclient re-serialises (every template and environment:
//     json.dumps of the processed document) must be JSON holding the same
//     value, numbers compared as written (1.0 is not 1); key order and white
//     space may differ (Heat sorts str_replace keys, nothing else depends on
//     key order);
//   - the top template and the merged environment: the same JSON value.
//
// Deliberate differences are kept out of this tree and tested separately:
// a null resource_registry value (heatclient crashes), a relative or
// plain-path base_url (heatclient cannot open it), reference cycles
// (heatclient recurses until it crashes), and provider templates that are
// invalid or lack a version (heatclient sends them raw, Heat refuses them).
func TestMatchesHeatclient(t *testing.T) {
	tree, err := filepath.Abs("testdata/tree")
	if err != nil {
		t.Fatal(err)
	}
	treeURL, err := pathToURL(tree)
	if err != nil {
		t.Fatal(err)
	}
	// base_url must be an absolute URL for heatclient: write this
	// environment at test time, outside the tree, so that only base_url can
	// make its relative paths resolve.
	generated := filepath.Join(t.TempDir(), "base-url.yaml")
	env := fmt.Sprintf(`resource_registry:
  base_url: %[1]s/network
  OS::TripleO::Network::Internal: net.yaml
  resources:
    storage_port:
      base_url: %[1]s/network/ports
      OS::TripleO::Port: port.yaml
parameter_defaults:
  ControllerCount: 5
`, treeURL)
	if err := os.WriteFile(generated, []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	template := filepath.Join(tree, "overcloud.yaml")
	envs := []string{
		filepath.Join(tree, "environments", "base.yaml"),
		filepath.Join(tree, "environments", "override.yaml"),
		filepath.Join(tree, "environments", "empty.yaml"),
		generated,
	}

	want := runHeatclient(t, append([]string{template}, envs...)...)
	got, err := Process(template, envs)
	if err != nil {
		t.Fatalf("Process: %v", err)
	}

	if !reflect.DeepEqual(got.EnvironmentFiles, want.EnvironmentFiles) {
		t.Errorf("environment_files:\n got %q\nwant %q", got.EnvironmentFiles, want.EnvironmentFiles)
	}
	for u := range want.Files {
		if _, ok := got.Files[u]; !ok {
			t.Errorf("files: missing %s", u)
		}
	}
	for u := range got.Files {
		if _, ok := want.Files[u]; !ok {
			t.Errorf("files: unexpected %s", u)
		}
	}
	for u, w := range want.Files {
		g, ok := got.Files[u]
		if !ok || g == w {
			continue
		}
		path, err := urlToPath(u)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if w == string(raw) {
			t.Errorf("files[%s]: heatclient sends the raw file, we differ:\n got %q\nwant %q", u, g, w)
			continue
		}
		if d := jsonDiff([]byte(g), []byte(w)); d != "" {
			t.Errorf("files[%s]: differs from heatclient's: %s\n got %.300q\nwant %.300q", u, d, g, w)
		}
	}

	gotTemplate, err := json.Marshal(got.Template)
	if err != nil {
		t.Fatal(err)
	}
	if d := jsonDiff(gotTemplate, want.Template); d != "" {
		t.Errorf("template differs from heatclient's: %s", d)
	}
	gotEnv, err := json.Marshal(got.Environment)
	if err != nil {
		t.Fatal(err)
	}
	if d := jsonDiff(gotEnv, want.Environment); d != "" {
		t.Errorf("merged environment differs from heatclient's: %s", d)
	}

	// Independent of heatclient: the tree really exercises the rules.
	if v := got.Template["heat_template_version"]; v != "2016-10-14" {
		t.Errorf("heat_template_version = %#v, want the string 2016-10-14", v)
	}
	if n := len(got.Files); n != 15 {
		t.Errorf("got %d files, want 15 (11 referenced, 4 environments)", n)
	}
	if got.TemplateURL != treeURL+"/overcloud.yaml" {
		t.Errorf("TemplateURL = %s", got.TemplateURL)
	}
}
