package workdir

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stack"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
)

const (
	topTemplate = `heat_template_version: wallaby
parameters:
  WorkerCount: {type: number, default: 3}
  WorkerRemovals: {type: json, default: []}
resources:
  Workers:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: WorkerCount}
      removal_policies: {get_param: WorkerRemovals}
      resource_def:
        type: OS::TripleO::Worker
        properties:
          Name: 'worker-%index%'
  Strings:
    type: OS::Heat::ResourceGroup
    properties:
      count: 1
      resource_def: {type: OS::Heat::RandomString}
outputs:
  KeystoneURL:
    value: http://192.0.2.5:5000
  Count:
    value: {get_param: WorkerCount}
`
	workerTemplate = `heat_template_version: wallaby
parameters:
  Name: {type: string}
resources:
  Nothing: {type: OS::Heat::None}
outputs:
  hostname: {value: {get_param: Name}}
`
)

// Save reads a real Heat: a ResourceGroup created with a removal policy
// (Heat 19 applies it at create: the members are 0 and 2, not 0 and 1)
// gives its members with their indices and hostnames, its skiplist and the
// parameters of its count and removal_policies; a group whose members have
// no hostname is no node group. The outputs and environment are saved as
// tripleoclient's utils.save_stack saves them (outputs/<key>, null for the
// ones the stack lacks).
func TestSaveFromHeat(t *testing.T) {
	h := heattest.Start(t, nil)
	c, err := heatapi.NewNoAuth(h.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "top.yaml"), []byte(topTemplate), 0o600)
	os.WriteFile(filepath.Join(src, "worker.yaml"), []byte(workerTemplate), 0o600)
	os.WriteFile(filepath.Join(src, "registry.yaml"), []byte("resource_registry:\n  OS::TripleO::Worker: worker.yaml\n"), 0o600)
	req, err := stack.Prepare(stack.Options{Name: "cloud", Template: filepath.Join(src, "top.yaml"),
		EnvironmentFiles: []string{filepath.Join(src, "registry.yaml")}, Wait: true, Timeout: 10,
		Parameters: map[string]any{"WorkerCount": 2, "WorkerRemovals": []any{map[string]any{"resource_list": []any{1}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := req.Run(context.Background(), c); err != nil || out.Failed {
		t.Fatalf("create: %+v %v", out, err)
	}

	l, _ := New(filepath.Join(t.TempDir(), "work"), "cloud")
	res, err := l.Save(context.Background(), c, true)
	if err != nil || !res.Changed {
		t.Fatalf("check: %+v %v", res, err)
	}
	if _, err := os.Stat(l.Dir); !os.IsNotExist(err) {
		t.Fatalf("check mode wrote %s", l.Dir)
	}
	if res, err = l.Save(context.Background(), c, false); err != nil {
		t.Fatal(err)
	}
	want := []Group{{Resource: "Workers", Role: "Worker", CountParameter: "WorkerCount", RemovalPoliciesParameter: "WorkerRemovals",
		Removed: []string{"1"}, Members: []Member{{"0", "worker-0"}, {"2", "worker-2"}}}}
	if !reflect.DeepEqual(res.Nodes.Groups, want) {
		t.Errorf("groups\n got %+v\nwant %+v", res.Nodes.Groups, want)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "Strings") {
		t.Errorf("warnings %v", res.Warnings)
	}
	n, err := l.ReadNodes()
	if err != nil || !reflect.DeepEqual(n.Groups, want) {
		t.Errorf("read back %+v %v", n, err)
	}
	for key, want := range map[string]string{"KeystoneURL": "http://192.0.2.5:5000\n", "VipMap": "null\n"} {
		if b, err := os.ReadFile(l.Output(key)); err != nil || string(b) != want {
			t.Errorf("outputs/%s = %q %v, want %q", key, b, err, want)
		}
	}
	var all map[string]any
	b, _ := os.ReadFile(l.AllOutputs())
	if yaml.Unmarshal(b, &all); all["Count"] != 2 {
		t.Errorf("all outputs %s", b)
	}
	var env map[string]any
	b, _ = os.ReadFile(l.Environment())
	if yaml.Unmarshal(b, &env); env["resource_registry"] == nil {
		t.Errorf("environment %s", b)
	}
	for _, p := range []string{l.Output("KeystoneURL"), l.AllOutputs(), l.Environment(), l.Nodes()} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v", p, err)
		}
	}
	if again, err := l.Save(context.Background(), c, false); err != nil || again.Changed {
		t.Errorf("saved again: %+v %v", again, err)
	}

	// A scale-down of worker-2 from what was saved.
	p, err := l.PlanScaleDown([]string{"worker-2"}, ScaleDownOptions{})
	if err != nil || len(p.Remove) != 1 || p.Remove[0].Index != "2" || p.Counts["Worker"] != 1 ||
		!reflect.DeepEqual(p.ParameterDefaults["WorkerRemovals"], []any{map[string]any{"resource_list": []any{2}}}) {
		t.Fatalf("plan %+v %v", p, err)
	}
}
