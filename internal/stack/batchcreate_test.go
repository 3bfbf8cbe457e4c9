package stack

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
)

// A role group of tripleo-heat-templates, reduced: a ResourceGroup with
// batch_create (THT's NodeCreateBatchSize) of provider-template members,
// each with a nested stack of its own. Batches of 2 of 5 members: the group's
// nested stack is created with 2 members, then updated to 4 and to 5.
var batchCreateFiles = map[string]string{
	"top.yaml": `heat_template_version: wallaby
resources:
  group:
    type: OS::Heat::ResourceGroup
    update_policy:
      batch_create: {max_batch_size: 2}
    properties:
      count: 5
      resource_def:
        type: OS::Batch::Member
        properties: {index: '%index%'}
outputs:
  names: {value: {get_attr: [group, name]}}
`,
	"member.yaml": `heat_template_version: wallaby
parameters:
  index: {type: string}
resources:
  inner:
    type: OS::Batch::Inner
    properties: {index: {get_param: index}}
outputs:
  name: {value: {get_attr: [inner, name]}}
`,
	"inner.yaml": `heat_template_version: wallaby
parameters:
  index: {type: string}
resources:
  cfg:
    type: OS::Heat::TestResource
    properties: {value: {list_join: ['-', [node, {get_param: index}]]}}
outputs:
  name: {value: {get_attr: [cfg, output]}}
`,
	"registry.yaml": `resource_registry:
  OS::Batch::Member: member.yaml
  OS::Batch::Inner: inner.yaml
`,
}

// testBatchCreate: with the engine plugins ephemeral_heat_nested_unchanged
// and ephemeral_heat_provider_unchanged (internal/heatdir, on in our
// defaults) a ResourceGroup's batch_create leaves the members of earlier
// batches alone, their resources and nested stacks (Heat's legacy engine updated
// each of them, nested stacks and all, at every later batch), while an
// update that changes a member's inputs (a nested template's content) still
// reaches every member; an update that leaves the members' inputs unchanged
// leaves them alone too, unless a resource of the tree is FAILED (marked
// unhealthy): then it reaches them, and Heat replaces that resource.
func testBatchCreate(t *testing.T, c *heatapi.Client) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, dir, batchCreateFiles)
	o := Options{Name: "batch-create", Template: filepath.Join(dir, "top.yaml"), Wait: true, Timeout: 10,
		EnvironmentFiles: []string{filepath.Join(dir, "registry.yaml")}}
	names := func(out Outcome) string { return fmt.Sprint(out.Outputs["names"]) }
	out, err := run(t, c, o)
	if err != nil || out.Stack.Status != "CREATE_COMPLETE" {
		t.Fatalf("create: %+v %v", out.Stack, err)
	}
	if got := names(out); got != "[node-0 node-1 node-2 node-3 node-4]" {
		t.Fatalf("create: names = %s", got)
	}
	ref := heatapi.StackRef{Name: out.Stack.Name, ID: out.Stack.ID}

	// members returns, by member name, its nested stack and the state of
	// that stack and of the inner stack's cfg resource.
	type member struct {
		stack, inner           heatapi.StackRef
		state, updated, cfgSta string
		// the member's resource in the group's nested stack
		resSta, resUpdated string
	}
	members := func() map[string]member {
		t.Helper()
		group, err := c.GetResource(ctx, ref, "group")
		if err != nil {
			t.Fatal(err)
		}
		gref, ok := group.NestedStack()
		if !ok {
			t.Fatalf("group has no nested stack: %+v", group.Links)
		}
		rs, err := c.ListResources(ctx, gref, heatapi.ResourceListOpts{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]member{}
		for _, r := range rs {
			mref, ok := r.NestedStack()
			if !ok {
				t.Fatalf("member %s has no nested stack", r.Name)
			}
			st, err := c.GetStack(ctx, mref, false)
			if err != nil {
				t.Fatal(err)
			}
			inner, err := c.GetResource(ctx, mref, "inner")
			if err != nil {
				t.Fatal(err)
			}
			iref, _ := inner.NestedStack()
			cfg, err := c.GetResource(ctx, iref, "cfg")
			if err != nil {
				t.Fatal(err)
			}
			out[r.Name] = member{stack: mref, inner: iref, state: st.Status, updated: st.UpdatedTime, cfgSta: cfg.Status,
				resSta: r.Status, resUpdated: r.UpdatedTime}
		}
		if len(out) != 5 {
			t.Fatalf("group has %d members, want 5", len(out))
		}
		return out
	}
	for name, m := range members() {
		// Heat's own legacy engine leaves members 0-3 UPDATE_COMPLETE (the
		// batches of 4 and 5 updated them).
		if m.state != "CREATE_COMPLETE" {
			t.Errorf("after the create, member %s's nested stack is %s: an earlier batch's member was updated again with unchanged inputs",
				name, m.state)
		}
		// With provider_unchanged the member's resource is left alone
		// too (Heat's own update took it to UPDATE_COMPLETE).
		if m.resSta != "CREATE_COMPLETE" {
			t.Errorf("after the create, member %s's resource is %s: an earlier batch's member resource went through an update with unchanged inputs",
				name, m.resSta)
		}
	}

	// The group's nested stack's template, as stored (the engine plugin
	// template_store writes it after each member without reading it back):
	// every member, each with its own index.
	group, err := c.GetResource(ctx, ref, "group")
	if err != nil {
		t.Fatal(err)
	}
	gref, _ := group.NestedStack()
	stored, err := c.GetTemplate(ctx, gref)
	if err != nil {
		t.Fatal(err)
	}
	rsrcs, _ := stored["resources"].(map[string]any)
	var idx []string
	for i := 0; i < 5; i++ {
		m, _ := rsrcs[fmt.Sprint(i)].(map[string]any)
		props, _ := m["properties"].(map[string]any)
		idx = append(idx, fmt.Sprint(props["index"]))
	}
	if len(rsrcs) != 5 || fmt.Sprint(idx) != "[0 1 2 3 4]" {
		t.Errorf("after the create, the group's stored template has %d resources, indexes %v (want 5, [0 1 2 3 4])", len(rsrcs), idx)
	}

	// A changed nested template reaches every member.
	write(t, dir, map[string]string{"inner.yaml": strings.Replace(batchCreateFiles["inner.yaml"], "[node,", "[host,", 1)})
	out, err = run(t, c, o)
	if err != nil || out.Stack.Status != "UPDATE_COMPLETE" {
		t.Fatalf("update of inner.yaml: %+v %v", out.Stack, err)
	}
	if got := names(out); got != "[host-0 host-1 host-2 host-3 host-4]" {
		t.Fatalf("update of inner.yaml did not reach every member: names = %s", got)
	}
	for name, m := range members() {
		if m.state != "UPDATE_COMPLETE" || m.resSta != "UPDATE_COMPLETE" {
			t.Errorf("after the update of inner.yaml, member %s's nested stack is %s and its resource %s, want UPDATE_COMPLETE",
				name, m.state, m.resSta)
		}
	}

	// An update that reaches the members with unchanged inputs (only the
	// stack's tags change; the group, a stack resource, is always updated)
	// leaves their nested stacks alone.
	before := members()
	o.Tags = []string{"first"}
	out, err = run(t, c, o)
	if err != nil || out.Stack.Status != "UPDATE_COMPLETE" {
		t.Fatalf("update of the tags: %+v %v", out.Stack, err)
	}
	for name, m := range members() {
		if m.updated != before[name].updated {
			t.Errorf("an update with unchanged member inputs updated member %s's nested stack (updated %s, before %s)",
				name, m.updated, before[name].updated)
		}
		if m.resUpdated != before[name].resUpdated || m.resSta != before[name].resSta {
			t.Errorf("an update with unchanged member inputs updated member %s's resource (%s updated %s, before %s %s)",
				name, m.resSta, m.resUpdated, before[name].resSta, before[name].resUpdated)
		}
	}

	// A resource marked unhealthy deep in the tree: the same kind of update
	// must now reach it, and Heat replaces it.
	sick := members()["1"]
	body := []byte(`{"mark_unhealthy": true, "resource_status_reason": "test: marked unhealthy"}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch,
		c.Endpoint()+"/stacks/"+sick.inner.Name+"/"+sick.inner.ID+"/resources/cfg", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("mark unhealthy: %s", resp.Status)
	}
	if got := members()["1"].cfgSta; got != "CHECK_FAILED" {
		t.Fatalf("marked unhealthy, cfg is %s", got)
	}
	o.Tags = []string{"second"}
	out, err = run(t, c, o)
	if err != nil || out.Stack.Status != "UPDATE_COMPLETE" {
		t.Fatalf("update of the tags with a resource marked unhealthy: %+v %v", out.Stack, err)
	}
	if got := members()["1"].cfgSta; got == "CHECK_FAILED" {
		t.Errorf("after an update, the resource marked unhealthy in member 1 is still %s: the update did not reach it", got)
	}
	if got := names(out); got != "[host-0 host-1 host-2 host-3 host-4]" {
		t.Errorf("after the updates of the tags: names = %s", got)
	}
}
