package stack

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const nestedYAML = `heat_template_version: 2021-04-16
parameters:
  value: {type: string, default: x}
resources:
  inner:
    type: OS::Heat::TestResource
    properties: {value: {get_param: value}}
outputs:
  out: {value: {get_attr: [inner, output]}}
`

const topYAML = `heat_template_version: wallaby
parameters:
  greeting: {type: string, default: hello}
  count: {type: number, default: 1}
resources:
  rand:
    type: OS::Heat::RandomString
    properties: {length: 8}
  test:
    type: OS::Heat::TestResource
    properties: {value: {get_param: greeting}}
  nest:
    type: nested/nested.yaml
    properties: {value: {get_param: greeting}}
outputs:
  greeting: {value: {get_attr: [test, output]}}
  nested: {value: {get_attr: [nest, out]}}
  count: {value: {get_param: count}}
`

// run prepares and runs one request, logging progress.
func run(t *testing.T, c *heatapi.Client, o Options) (Outcome, error) {
	t.Helper()
	if o.PollInterval == 0 {
		o.PollInterval = 500 * time.Millisecond
	}
	if o.Timeout == 0 {
		o.Timeout = 10
	}
	o.Warn = func(f string, a ...any) { t.Logf("warning: "+f, a...) }
	r, err := Prepare(o)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	start := time.Now()
	out, err := r.Run(context.Background(), c)
	t.Logf("%s %s: changed=%v action=%s msg=%q err=%v (%s)", o.State, o.Name, out.Changed, out.Action, out.Msg, err, time.Since(start).Round(time.Millisecond))
	return out, err
}

// TestWithHeat runs every scenario against one real ephemeral Heat.
func TestWithHeat(t *testing.T) {
	h := heattest.Start(t, nil)
	c, err := heatapi.NewFromHeatDir(h.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("group", func(t *testing.T) { t.Parallel(); testGroup(t, c) })
	t.Run("lifecycle", func(t *testing.T) { t.Parallel(); testLifecycle(t, c) })
	t.Run("failure", func(t *testing.T) { t.Parallel(); testFailure(t, c) })
	t.Run("inputs", func(t *testing.T) { t.Parallel(); testInputs(t, c) })
	t.Run("back-to-back", func(t *testing.T) { t.Parallel(); testBackToBack(t, c) })
	t.Run("nested-edit", func(t *testing.T) { t.Parallel(); testNestedEdit(t, c) })
	t.Run("batch-create", func(t *testing.T) { t.Parallel(); testBatchCreate(t, c) })
}

// stackEvents counts the events of a stack itself (not its resources') with
// the given status.
func stackEvents(t *testing.T, c *heatapi.Client, ref heatapi.StackRef, status string) int {
	t.Helper()
	ev, err := c.ListEvents(context.Background(), ref, heatapi.EventListOpts{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ev {
		if e.PhysicalID == ref.ID && e.Status == status {
			n++
		}
	}
	return n
}

// testInputs: "unchanged" is decided from the inputs Heat stored, not from
// a preview: a file deep in the tree, the order of environments, a hidden
// parameter only outputs use, and tags stored as [""] by older runs.
func testInputs(t *testing.T, c *heatapi.Client) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"tht/top.yaml": `heat_template_version: wallaby
parameters:
  Secret: {type: string, hidden: true, default: s0}
resources:
  role:
    type: OS::Deep::Role
outputs:
  secret: {value: {get_param: Secret}}
  role: {value: {get_attr: [role, out]}}
`,
		// The provider template lives outside the top template's directory
		// and is named only by an environment's resource_registry.
		"elsewhere/deep/role.yaml": nestedYAML,
		"envs/registry.yaml":       "resource_registry:\n  OS::Deep::Role: ../elsewhere/deep/role.yaml\n",
		"envs/a.yaml":              "parameter_defaults:\n  value: from-a\n",
		"envs/b.yaml":              "parameter_defaults:\n  value: from-b\n",
	})
	ctx := context.Background()
	envs := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, filepath.Join(dir, "envs", n))
		}
		return out
	}
	base := Options{Name: "inputs", Template: filepath.Join(dir, "tht/top.yaml"), Wait: true, Timeout: 10,
		EnvironmentFiles: envs("registry.yaml", "a.yaml", "b.yaml")}
	out, err := run(t, c, base)
	if err != nil || out.Outputs["role"] != "from-b" {
		t.Fatalf("create: %v %v", out.Outputs, err)
	}
	ref, _ := c.FindStack(ctx, "inputs")
	noop := func(step string) {
		t.Helper()
		before := stackEvents(t, c, ref, "UPDATE_IN_PROGRESS")
		out, err := run(t, c, base)
		if err != nil || out.Changed || out.Action != ActionNone {
			t.Fatalf("%s: identical re-run changed=%v %+v %v", step, out.Changed, out.Preview, err)
		}
		if after := stackEvents(t, c, ref, "UPDATE_IN_PROGRESS"); after != before {
			t.Fatalf("%s: the identical re-run updated the stack (%d -> %d UPDATE events)", step, before, after)
		}
	}
	noop("after create")

	// Tags stored as [""] by older runs (which sent "tags": "") are none.
	if code, b := heattest.API(t, "PATCH", c.Endpoint()+"/stacks/inputs/"+ref.ID, `{"tags": ""}`); code != 202 {
		t.Fatalf("PATCH tags: %d %s", code, b)
	}
	waitComplete(t, c, ref)
	if st, _ := c.GetStack(ctx, ref, false); len(st.Tags) != 1 || st.Tags[0] != "" {
		t.Fatalf("setup: tags are %q, want [\"\"]", st.Tags)
	}
	noop("tags [\"\"]")

	// Check mode sees an edited provider template deep in the tree, and
	// names it; nothing is updated.
	write(t, dir, map[string]string{"elsewhere/deep/role.yaml": strings.Replace(nestedYAML, "default: x", "default: y", 1)})
	o := base
	o.CheckMode = true
	out, err = run(t, c, o)
	if err != nil || !out.Changed || !strings.Contains(strings.Join(out.Preview.Other, " "), "elsewhere/deep/role.yaml") {
		t.Fatalf("check mode after a deep edit: changed=%v %+v %v", out.Changed, out.Preview, err)
	}
	if out.Preview.Partial != "" {
		t.Errorf("check mode: the nested preview should have been shown: %s", out.Preview.Partial)
	}
	if stackEvents(t, c, ref, "UPDATE_IN_PROGRESS") != 1 {
		t.Fatalf("check mode updated the stack")
	}
	out, err = run(t, c, base)
	if err != nil || !out.Changed || out.Stack.Status != "UPDATE_COMPLETE" {
		t.Fatalf("update after a deep edit: %+v %v", out.Stack, err)
	}
	noop("after the deep edit")

	// Another order of the same environments: b before a.
	o = base
	o.EnvironmentFiles = envs("registry.yaml", "b.yaml", "a.yaml")
	out, err = run(t, c, o)
	if err != nil || !out.Changed || out.Outputs["role"] != "from-a" {
		t.Fatalf("reordered environments: changed=%v outputs=%v %+v %v", out.Changed, out.Outputs, out.Preview, err)
	}
	base = o
	noop("after reordering")

	// A hidden parameter only outputs use: changed, applied, never shown.
	o = base
	o.Parameters = map[string]any{"Secret": "s3cr3t-value"}
	o.CheckMode = true
	o.Diff = true
	r, err := Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	if hv := r.HiddenValues(); len(hv) != 1 || hv[0] != "s3cr3t-value" {
		t.Errorf("hidden values = %q", hv)
	}
	out, err = run(t, c, o)
	if err != nil || !out.Changed {
		t.Fatalf("check mode, hidden parameter: changed=%v %v", out.Changed, err)
	}
	pc, ok := out.Preview.Parameters["Secret"]
	if !ok || pc.After == nil || *pc.After != hiddenMark || pc.Before == nil || *pc.Before != hiddenMark {
		t.Errorf("hidden parameter change = %+v (want it named, values hidden)", pc)
	}
	if strings.Contains(fmt.Sprint(out.Diff), "s3cr3t") {
		t.Errorf("the diff shows a hidden value: %v", out.Diff)
	}
	o.CheckMode, o.Diff = false, false
	out, err = run(t, c, o)
	if err != nil || !out.Changed || out.Outputs["secret"] != "s3cr3t-value" {
		t.Fatalf("hidden parameter not applied: changed=%v outputs=%v %v", out.Changed, out.Outputs, err)
	}
	base = o
	noop("after the hidden parameter")

	// Check mode on an update Heat would refuse fails as the update would.
	o = base
	o.Parameters = map[string]any{"NoSuchParameter": 1}
	o.CheckMode = true
	if out, err := run(t, c, o); err == nil || !strings.Contains(err.Error(), "NoSuchParameter") || out.Changed {
		t.Errorf("check mode of a refused update: changed=%v %v", out.Changed, err)
	}
}

// waitComplete waits for a stack to leave IN_PROGRESS.
func waitComplete(t *testing.T, c *heatapi.Client, ref heatapi.StackRef) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		st, err := c.GetStack(context.Background(), ref, false)
		if err == nil && !strings.HasSuffix(st.Status, "_IN_PROGRESS") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stack %s still in progress: %v", ref, err)
		}
	}
}

// testBackToBack: updates of a trivial stack end within the second of the
// previous one; each must be seen to end, none may wait for its timeout.
func testBackToBack(t *testing.T, c *heatapi.Client) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"t.yaml": `heat_template_version: wallaby
parameters:
  n: {type: number, default: 0}
resources:
  none: {type: OS::Heat::None}
outputs:
  n: {value: {get_param: n}}
`})
	o := Options{Name: "b2b", Template: filepath.Join(dir, "t.yaml"), Wait: true, Timeout: 1, PollInterval: 200 * time.Millisecond}
	if _, err := run(t, c, o); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 25; i++ {
		o.Parameters = map[string]any{"n": i}
		r, err := Prepare(o)
		if err != nil {
			t.Fatal(err)
		}
		// A hang shows as this bound, far below Heat's timeout + 1 min.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := r.Run(ctx, c)
		cancel()
		if err != nil || !out.Changed || out.Stack.Status != "UPDATE_COMPLETE" || fmt.Sprint(out.Outputs["n"]) != fmt.Sprint(i) {
			t.Fatalf("update %d: %v %+v outputs=%v", i, err, out.Stack, out.Outputs)
		}
	}
}

func testLifecycle(t *testing.T, c *heatapi.Client) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"top.yaml":           topYAML,
		"nested/nested.yaml": nestedYAML,
		"env/count.yaml":     "parameter_defaults:\n  count: 2\n",
	})
	ctx := context.Background()
	base := Options{Name: "life", Template: filepath.Join(dir, "top.yaml"),
		EnvironmentFiles: []string{filepath.Join(dir, "env/count.yaml")}, Wait: true, Tags: []string{"a", "b"}}

	// Check mode on an absent stack: a create preview, nothing created.
	o := base
	o.CheckMode = true
	out, err := run(t, c, o)
	if err != nil || !out.Changed || out.Action != ActionCreate || len(out.Preview.Added) != 3 {
		t.Fatalf("check create: %+v %v", out.Preview, err)
	}
	if !strings.Contains(out.Diff["prepared"].(string), "+ added:    life.nest.inner (OS::Heat::TestResource)") {
		t.Errorf("diff: %s", out.Diff["prepared"])
	}
	if _, err := c.FindStack(ctx, "life"); !heatapi.IsNotFound(err) {
		t.Fatalf("check mode created the stack: %v", err)
	}

	// Create, with live progress.
	var prog bytes.Buffer
	o = base
	o.Progress = &prog
	out, err = run(t, c, o)
	if err != nil || !out.Changed || out.Stack.Status != "CREATE_COMPLETE" {
		t.Fatalf("create: %+v %v", out.Stack, err)
	}
	t.Logf("progress:\n%s", prog.String())
	for _, want := range []string{"creating stack life", "resources: 4 complete, 0 in progress, 0 failed", "life.nest.inner CREATE_COMPLETE", "stack life CREATE_COMPLETE"} {
		if !strings.Contains(prog.String(), want) {
			t.Errorf("progress lacks %q", want)
		}
	}
	if fmt.Sprint(out.Outputs) != "map[count:2 greeting:hello nested:hello]" || len(out.OutputErrors) != 0 {
		t.Errorf("outputs = %v, errors %v", out.Outputs, out.OutputErrors)
	}
	ref, err := c.FindStack(ctx, "life")
	if err != nil {
		t.Fatal(err)
	}
	if o, err := c.GetOutput(ctx, ref, "nested"); err != nil || o.Value != "hello" {
		t.Errorf("GetOutput = %+v %v", o, err)
	}
	st, _ := c.GetStack(ctx, ref, false)
	if strings.Join(st.Tags, ",") != "a,b" || *st.TimeoutMins != 10 || !st.DisableRollback {
		t.Errorf("tags %v timeout %v disable_rollback %v", st.Tags, *st.TimeoutMins, st.DisableRollback)
	}

	// Same again: nothing to do.
	out, err = run(t, c, base)
	if err != nil || out.Changed || out.Action != ActionNone {
		t.Fatalf("no-op: changed=%v %+v %v", out.Changed, out.Preview, err)
	}
	if out.Outputs["greeting"] != "hello" {
		t.Errorf("no-op outputs = %v", out.Outputs)
	}

	// Check mode + diff for a changed parameter: shown, not made.
	o = base
	o.CheckMode = true
	o.Parameters = map[string]any{"greeting": "bye"}
	out, err = run(t, c, o)
	if err != nil || !out.Changed || out.Action != ActionUpdate {
		t.Fatalf("check update: %v %v", out.Changed, err)
	}
	prepared := out.Diff["prepared"].(string)
	for _, want := range []string{"~ updated:  life.test (OS::Heat::TestResource)", "~ updated:  life.nest.inner", `~ parameter greeting: "hello" -> "bye"`} {
		if !strings.Contains(prepared, want) {
			t.Errorf("diff lacks %q:\n%s", want, prepared)
		}
	}
	if after, _ := c.GetStack(ctx, ref, false); after.Status != "CREATE_COMPLETE" || after.UpdatedTime != st.UpdatedTime {
		t.Fatalf("check mode changed the stack: %s %s", after.Status, after.UpdatedTime)
	}

	// Update a parameter.
	o.CheckMode = false
	out, err = run(t, c, o)
	if err != nil || !out.Changed || out.Stack.Status != "UPDATE_COMPLETE" || out.Outputs["greeting"] != "bye" || out.Outputs["nested"] != "bye" {
		t.Fatalf("update: %+v %v %v", out.Stack, out.Outputs, err)
	}
	out, err = run(t, c, o)
	if err != nil || out.Changed {
		t.Fatalf("no-op after update: changed=%v %+v %v", out.Changed, out.Preview, err)
	}

	// A parameter only outputs use: Heat's preview shows no resource
	// change; the parameters do.
	o.Parameters = map[string]any{"greeting": "bye", "count": 5}
	out, err = run(t, c, o)
	if err != nil || !out.Changed || out.Outputs["count"] != "5" && fmt.Sprint(out.Outputs["count"]) != "5" {
		t.Fatalf("output-only parameter: changed=%v outputs=%v %v", out.Changed, out.Outputs, err)
	}

	// existing=true (PATCH): what is not given is kept.
	pe := Options{Name: "life", Existing: true, Wait: true, Parameters: map[string]any{"greeting": "bye"},
		Given: func(n string) bool { return n == "parameters" }}
	out, err = run(t, c, pe)
	if err != nil || out.Changed {
		t.Fatalf("patch no-op: changed=%v %+v %v", out.Changed, out.Preview, err)
	}
	pe.Parameters = map[string]any{"greeting": "patched"}
	out, err = run(t, c, pe)
	if err != nil || !out.Changed || out.Outputs["greeting"] != "patched" || fmt.Sprint(out.Outputs["count"]) != "5" {
		t.Fatalf("patch: changed=%v outputs=%v %v", out.Changed, out.Outputs, err)
	}
	if st, _ := c.GetStack(ctx, ref, false); strings.Join(st.Tags, ",") != "a,b" {
		t.Errorf("PATCH lost the tags: %v", st.Tags)
	}

	// Delete: check mode, then for real, then again.
	del := Options{Name: "life", State: Absent, Wait: true, CheckMode: true}
	out, err = run(t, c, del)
	if err != nil || !out.Changed || len(out.Preview.Deleted) != 3 {
		t.Fatalf("check delete: %+v %v", out.Preview, err)
	}
	if _, err := c.FindStack(ctx, "life"); err != nil {
		t.Fatalf("check mode deleted the stack: %v", err)
	}
	del.CheckMode = false
	out, err = run(t, c, del)
	if err != nil || !out.Changed || out.Action != ActionDelete {
		t.Fatalf("delete: %v %v", out.Changed, err)
	}
	if _, err := c.FindStack(ctx, "life"); !heatapi.IsNotFound(err) {
		t.Fatalf("stack still there: %v", err)
	}
	out, err = run(t, c, del)
	if err != nil || out.Changed {
		t.Fatalf("delete again: %v %v", out.Changed, err)
	}
}

func testFailure(t *testing.T, c *heatapi.Client) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"top.yaml": `heat_template_version: 2021-04-16
resources:
  fine:
    type: OS::Heat::None
  nest:
    type: boom.yaml
outputs:
  broken: {value: {get_attr: [nest, no_such_output]}}
  ok: {value: {get_resource: fine}}
`,
		"boom.yaml": `heat_template_version: 2021-04-16
resources:
  calm:
    type: OS::Heat::TestResource
  boom:
    type: OS::Heat::TestResource
    properties: {fail: true}
`,
	})
	out, err := run(t, c, Options{Name: "fs", Template: filepath.Join(dir, "top.yaml"), Wait: true})
	if err == nil || !out.Failed {
		t.Fatalf("want a failure, got %v %+v", err, out)
	}
	if len(out.Failures) != 1 {
		t.Fatalf("failures = %+v", out.Failures)
	}
	f := out.Failures[0]
	if f.Path != "fs.nest.boom" || f.Type != "OS::Heat::TestResource" || f.Status != "CREATE_FAILED" || !strings.Contains(f.Reason, "Test Resource failed") {
		t.Errorf("failure = %+v", f)
	}
	if !strings.Contains(err.Error(), "fs.nest.boom") || !strings.Contains(err.Error(), "Test Resource failed") {
		t.Errorf("msg = %v", err)
	}
	if out.Stack == nil || out.Stack.Status != "CREATE_FAILED" {
		t.Errorf("stack = %+v", out.Stack)
	}
	if !strings.Contains(out.OutputErrors["broken"], "no_such_output") {
		t.Errorf("output errors = %v (outputs %v)", out.OutputErrors, out.Outputs)
	}
	if _, err := run(t, c, Options{Name: "fs", State: Absent, Wait: true}); err != nil {
		t.Errorf("deleting the failed stack: %v", err)
	}
}

func testGroup(t *testing.T, c *heatapi.Client) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"group.yaml": `heat_template_version: 2021-04-16
parameters:
  count: {type: number, default: 50}
resources:
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: count}
      resource_def:
        type: member.yaml
        properties: {index: '%index%'}
outputs:
  names: {value: {get_attr: [group, name]}}
`,
		"member.yaml": `heat_template_version: 2021-04-16
parameters:
  index: {type: string}
resources:
  cfg:
    type: OS::Heat::TestResource
    properties: {value: {list_join: ['-', [node, {get_param: index}]]}}
  none:
    type: OS::Heat::None
  rand:
    type: OS::Heat::RandomString
    properties: {length: 4}
outputs:
  name: {value: {get_attr: [cfg, output]}}
`,
	})
	start := time.Now()
	out, err := run(t, c, Options{Name: "grp", Template: filepath.Join(dir, "group.yaml"), Wait: true, PollInterval: 2 * time.Second, Timeout: 15})
	if err != nil || out.Stack.Status != "CREATE_COMPLETE" {
		t.Fatalf("group create: %v %+v", err, out.Failures)
	}
	t.Logf("50-member group created in %s", time.Since(start).Round(time.Second))
	names, _ := out.Outputs["names"].([]any)
	if len(names) != 50 {
		t.Fatalf("names = %v", out.Outputs["names"])
	}
	for i, n := range names {
		if n != fmt.Sprintf("node-%d", i) {
			t.Fatalf("names[%d] = %v: out of order: %v", i, n, names)
		}
	}
}
