package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/moduletest"
)

func TestDocumentationMatchesSpec(t *testing.T) {
	if err := module.CheckSidecar(spec, "../../collection/plugins/modules/ephemeral_heat_launch.yml"); err != nil {
		t.Fatal(err)
	}
}

// Every option is validated before anything runs: each bad value the spec
// implies (types, ranges, choices, empty or missing required values) is
// refused naming the option and what it allows.
func TestBoundaries(t *testing.T) {
	moduletest.Boundaries(t, spec, `{"heat_dir": "/tmp/hd"}`)
}

// With --diff, a change's diff holds the heat_dir's Heat before and after
// (check mode: as predicted); without it, none.
func TestDiff(t *testing.T) {
	for _, withDiff := range []bool{true, false} {
		dir := filepath.Join(t.TempDir(), "heat-launcher")
		res := moduletest.Call(t, spec, run, map[string]any{"heat_dir": dir, "api_port": 18006,
			"_ansible_check_mode": true, "_ansible_diff": withDiff})
		if res["failed"] == true || res["changed"] != true {
			t.Fatalf("check mode: %v", res)
		}
		want := map[string]any{
			"before": map[string]any{"state": "absent"},
			"after":  map[string]any{"state": "started", "heat_type": "native", "endpoint": "http://127.0.0.1:18006/v1/admin"},
		}
		if got, ok := res["diff"]; withDiff && !reflect.DeepEqual(got, want) || !withDiff && ok {
			t.Errorf("--diff %v: diff %v, want %v", withDiff, got, want)
		}
	}
}

// A new heat_type is one file (fake_backend_test.go) and one registry
// line: the module takes it, with its option and that option's default,
// refuses the other backends' options with it, and its documentation check
// asks for it (and is content once the sidecar documents it).
func TestFakeBackend(t *testing.T) {
	unregister, err := launch.Register(fakeDeclaration)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unregister)
	s := newSpec()

	// Documented: the stock sidecar lacks the new choice and option, and
	// the checks say so; a sidecar that documents them passes both.
	sidecar := "../../collection/plugins/modules/ephemeral_heat_launch.yml"
	err = module.CheckSidecar(s, sidecar)
	for _, want := range []string{"option heat_type: documented choices [native container pod], code [container fake native pod]", "option fake_greeting is not documented"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the documentation check does not ask for %q: %v", want, err)
		}
	}
	documented := documentFake(t, sidecar)
	if err := module.CheckSidecar(s, documented); err != nil {
		t.Errorf("a sidecar that documents heat_type fake: %v", err)
	}
	var help bytes.Buffer
	module.Usage(s, &help)
	if !strings.Contains(help.String(), "one of container|fake|native|pod") || !strings.Contains(help.String(), "--fake-greeting") {
		t.Errorf("--help does not list the fake backend:\n%s", help.String())
	}
	if err := module.CheckHelp(help.Bytes(), documented); err != nil {
		t.Errorf("--help against the documented sidecar: %v", err)
	}

	// Accepted: started with the declared default, left alone when healthy,
	// restarted when its option changes, removed with its database.
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "heat-launcher")
	args := func(extra map[string]any) map[string]any {
		a := map[string]any{"heat_dir": dir, "heat_type": "fake", "api_port": port}
		for k, v := range extra {
			a[k] = v
		}
		return a
	}
	t.Cleanup(func() { moduletest.Call(t, s, run, args(map[string]any{"state": "absent", "dump": false})) })
	res := moduletest.Call(t, s, run, args(nil))
	if res["failed"] == true || res["changed"] != true || res["heat_type"] != "fake" || res["database"] != "sqlite" || res["pid"] == float64(0) {
		t.Fatalf("start: %v", res)
	}
	endpoint, _ := res["endpoint"].(string)
	if g := greeting(t, endpoint); g != "hello" {
		t.Errorf("the declared default did not reach the backend: %q", g)
	}
	if res = moduletest.Call(t, s, run, args(nil)); res["changed"] != false || res["failed"] == true {
		t.Errorf("a healthy fake Heat was not left alone: %v", res)
	}
	res = moduletest.Call(t, s, run, args(map[string]any{"fake_greeting": "bonjour"}))
	if res["changed"] != true || !strings.Contains(fmt.Sprint(res["warnings"]), "other settings") || greeting(t, endpoint) != "bonjour" {
		t.Errorf("another fake_greeting did not restart it: %v", res)
	}
	rec, err := readRecord(dir)
	if err != nil || rec.HeatType != "fake" || rec.Process == nil || rec.Object != nil {
		t.Errorf("launch record: %+v %v", rec, err)
	}

	// The other backends' options, refused with heat_type fake.
	for opt, val := range map[string]any{"image": "x", "podman_socket": "unix:///s", "engine_workers": 2, "heat_all_command": "/bin/true"} {
		res = moduletest.Call(t, s, run, args(map[string]any{opt: val}))
		if res["failed"] != true || !strings.Contains(fmt.Sprint(res["msg"]), opt+" is only used with heat_type: ") {
			t.Errorf("%s with heat_type fake: %v", opt, res)
		}
	}
	// And its own, with the others.
	res = moduletest.Call(t, s, run, map[string]any{"heat_dir": t.TempDir(), "fake_greeting": "x"})
	if res["failed"] != true || !strings.Contains(fmt.Sprint(res["msg"]), "fake_greeting is only used with heat_type: fake") {
		t.Errorf("fake_greeting with heat_type native: %v", res)
	}

	res = moduletest.Call(t, s, run, args(map[string]any{"state": "absent"}))
	if res["failed"] == true || res["changed"] != true || res["dumped"] == nil {
		t.Fatalf("absent: %v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, heatdir.SQLiteFile)); !os.IsNotExist(err) {
		t.Errorf("absent kept the fake Heat's database: %v", err)
	}
	if _, err := http.Get(endpoint + "/stacks"); err == nil {
		t.Errorf("the fake Heat still answers after absent")
	}
}

// documentFake writes a copy of sidecar (with the doc fragments beside it)
// that documents heat_type fake and its option.
func documentFake(t *testing.T, sidecar string) string {
	t.Helper()
	b, err := os.ReadFile(sidecar)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for old, new := range map[string]string{
		"      choices: [native, container, pod]\n": "      choices: [native, container, pod, fake]\n",
		"    owner_pid:\n": "    fake_greeting:\n      description: For C(heat_type=fake), what it says.\n      type: str\n" +
			"      default: hello\n    owner_pid:\n",
	} {
		if strings.Count(doc, old) != 1 {
			t.Fatalf("%s does not hold %q once", sidecar, old)
		}
		doc = strings.Replace(doc, old, new, 1)
	}
	root := t.TempDir()
	for _, d := range []string{"modules", "doc_fragments"} {
		if err := os.MkdirAll(filepath.Join(root, "plugins", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	frags, _ := filepath.Glob(filepath.Join(filepath.Dir(sidecar), "..", "doc_fragments", "*.py"))
	for _, f := range frags {
		fb, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "plugins", "doc_fragments", filepath.Base(f)), fb, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(root, "plugins", "modules", filepath.Base(sidecar))
	if err := os.WriteFile(out, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// greeting is what the fake Heat at endpoint says.
func greeting(t *testing.T, endpoint string) string {
	t.Helper()
	resp, err := http.Get(endpoint + "/stacks")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.Header.Get("X-Fake-Greeting")
}

func readRecord(dir string) (*heatdir.Record, error) {
	d, err := heatdir.At(dir)
	if err != nil {
		return nil, err
	}
	return d.ReadRecord()
}

// The role ephemeral_heat passes its variables ephemeral_heat_NAME to this
// module: its argument_specs offer the module's choices (heat_type: the
// registered backends) and default to the module's defaults, where the
// role does not leave the default to the module (an empty value, which
// the role omits); its defaults/main.yml says the same.
func TestRoleArgumentSpecs(t *testing.T) {
	role := "../../collection/roles/ephemeral_heat"
	var specs struct {
		ArgumentSpecs map[string]struct {
			Options map[string]struct {
				Type    string   `yaml:"type"`
				Choices []string `yaml:"choices"`
				Default any      `yaml:"default"`
			} `yaml:"options"`
		} `yaml:"argument_specs"`
	}
	var defaults map[string]any
	for f, v := range map[string]any{"meta/argument_specs.yml": &specs, "defaults/main.yml": &defaults} {
		b, err := os.ReadFile(filepath.Join(role, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	params := map[string]module.Param{}
	for _, p := range spec.Params {
		params[p.Name] = p
	}
	checked := 0
	for name, o := range specs.ArgumentSpecs["main"].Options {
		short := strings.TrimPrefix(name, "ephemeral_heat_")
		p, ok := params[short]
		if !ok {
			p, ok = params["heat_"+short] // ephemeral_heat_type, ephemeral_heat_dir
		}
		if !ok {
			continue
		}
		checked++
		if a, b := strType(o.Type), strType(string(p.Type)); a != b {
			t.Errorf("%s: type %s, the module's %s is %s", name, o.Type, p.Name, p.Type)
		}
		if fmt.Sprint(sortedStrings(o.Choices)) != fmt.Sprint(sortedStrings(p.Choices)) {
			t.Errorf("%s: choices %v, the module's %s takes %v", name, o.Choices, p.Name, p.Choices)
		}
		if o.Default != "" && o.Default != 0 && p.Default != nil && fmt.Sprint(o.Default) != fmt.Sprint(p.Default) {
			t.Errorf("%s: default %v, the module's %s defaults to %v", name, o.Default, p.Name, p.Default)
		}
		if d, ok := defaults[name]; !ok || (short != "dir" && fmt.Sprint(d) != fmt.Sprint(o.Default)) {
			t.Errorf("%s: defaults/main.yml has %v, argument_specs %v", name, d, o.Default)
		}
	}
	if checked < 10 || !strings.Contains(fmt.Sprint(specs.ArgumentSpecs["main"].Options["ephemeral_heat_type"].Choices), "pod") {
		t.Errorf("only %d role options checked against the module", checked)
	}
}

func sortedStrings(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

// strType is an option type, with a path (and the default) a str.
func strType(t string) string {
	if t == "" || t == "path" {
		return "str"
	}
	return t
}
