package configdownload

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
)

// fakeTree is a Heat API holding stack "oc" and another top-level stack,
// with THT's shape of software deployments (config-download-software.yaml:
// a stack S per deployment, holding TripleODeployment and the deployment).
// The real shapes run against real Heat in the parity tests; this one
// drives deploymentResources' decisions, the order of ties among them.
type fakeTree struct {
	parent    map[string]string   // stack id -> parent id
	resources map[string][]fakeRs // stack id -> its resources, in Heat's order
	deploys   map[string]string   // deployment id -> its S
	configs   map[string]string   // deployment id -> deploy_stack_id ("" none)
	listed    atomic.Bool         // the nested listing was asked for
}

type fakeRs struct {
	name, nested, deployment string
}

func newFakeTree() *fakeTree {
	f := &fakeTree{
		// oc: A (-> zz1), X, G (-> aa2 as "0", mm3 as "1"); other: B (-> oo4)
		parent: map[string]string{"oc": "", "a": "oc", "zz1": "a", "g": "oc", "aa2": "g", "mm3": "g", "other": "", "oo4": "other"},
		resources: map[string][]fakeRs{
			"oc":    {{name: "A", nested: "a"}, {name: "X"}, {name: "G", nested: "g"}},
			"a":     {{name: "ExtraDeployment", nested: "zz1"}},
			"g":     {{name: "0", nested: "aa2"}, {name: "1", nested: "mm3"}},
			"other": {{name: "B", nested: "oo4"}},
		},
		deploys: map[string]string{"d1": "zz1", "d2": "aa2", "d3": "mm3", "d4": "oo4"},
		configs: map[string]string{},
	}
	for d, s := range f.deploys {
		f.resources[s] = []fakeRs{{name: DeploymentResource, deployment: d}, {name: "TripleOSoftwareDeployment"}}
		f.configs[d] = "stack-" + s + "/" + s
	}
	return f
}

func (f *fakeTree) resource(stack string, r fakeRs) map[string]any {
	out := map[string]any{"resource_name": r.name, "physical_resource_id": r.nested, "creation_time": "2026-11-29T10:00:00Z",
		"links": []any{map[string]any{"rel": "stack", "href": "http://h/v1/t/stacks/stack-" + stack + "/" + stack}}}
	if r.name == DeploymentResource {
		out["physical_resource_id"] = "tdep-" + stack
		out["attributes"] = map[string]any{"value": map[string]any{"name": "Dep", "server": "srv", "deployment": r.deployment}}
	}
	return out
}

func (f *fakeTree) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/t/"), "/")
	q := r.URL.Query()
	var body any
	switch {
	case parts[0] == "software_deployments":
		var list []any
		for d := range f.deploys {
			list = append(list, map[string]any{"id": d, "config_id": "c-" + d, "server_id": "srv"})
		}
		body = map[string]any{"software_deployments": list}
	case parts[0] == "software_configs":
		d := strings.TrimPrefix(parts[1], "c-")
		inputs := []any{map[string]any{"name": "deploy_server_id", "value": "srv"}}
		if f.configs[d] != "" {
			inputs = append(inputs, map[string]any{"name": deployStackInput, "value": f.configs[d]})
		}
		body = map[string]any{"software_config": map[string]any{"id": parts[1], "inputs": inputs, "config": "x", "group": "script"}}
	case parts[0] == "stacks" && len(parts) == 1:
		var list []any
		for id, p := range f.parent {
			if p != "" && q.Get("show_nested") != "True" {
				continue
			}
			list = append(list, map[string]any{"id": id, "stack_name": "stack-" + id, "parent": p})
		}
		body = map[string]any{"stacks": list}
	case parts[0] == "stacks" && len(parts) == 4 && parts[3] == "resources":
		id := parts[2]
		var list []any
		if q.Get("nested_depth") != "" {
			f.listed.Store(true)
			var walk func(string)
			walk = func(s string) {
				for _, rs := range f.resources[s] {
					if rs.name == DeploymentResource {
						list = append(list, f.resource(s, rs))
					}
				}
				for _, rs := range f.resources[s] {
					if rs.nested != "" {
						walk(rs.nested)
					}
				}
			}
			walk(id)
		} else {
			for _, rs := range f.resources[id] {
				if q.Get("name") == "" || q.Get("name") == rs.name {
					list = append(list, f.resource(id, rs))
				}
			}
		}
		body = map[string]any{"resources": list}
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body)
}

func TestDeploymentResources(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(f *fakeTree)
		ok     bool
		want   []string // the TripleODeployment resources, in order
	}{
		// Heat's walk: oc's A first (zz1), then G's members in order; the
		// other top-level stack's deployment is not under oc.
		{name: "THT's shape", ok: true, want: []string{"tdep-zz1", "tdep-aa2", "tdep-mm3"}},
		{name: "members in the other order", ok: true, want: []string{"tdep-zz1", "tdep-mm3", "tdep-aa2"}, change: func(f *fakeTree) {
			f.resources["g"] = []fakeRs{{name: "1", nested: "mm3"}, {name: "0", nested: "aa2"}}
		}},
		{name: "below nested_depth", ok: true, want: []string{"tdep-aa2", "tdep-mm3"}, change: func(f *fakeTree) {
			// zz1 moved 8 levels down under A.
			prev := "a"
			for _, s := range []string{"l1", "l2", "l3", "l4", "l5", "l6", "l7"} {
				f.parent[s] = prev
				f.resources[prev] = []fakeRs{{name: "N", nested: s}}
				prev = s
			}
			f.parent["zz1"] = prev
			f.resources[prev] = []fakeRs{{name: "N", nested: "zz1"}}
		}},
		{name: "a config without deploy_stack_id", change: func(f *fakeTree) { f.configs["d2"] = "" }},
		{name: "a TripleODeployment naming another deployment", change: func(f *fakeTree) {
			f.resources["mm3"][0].deployment = "d2"
		}},
		{name: "no TripleODeployment in the deployment's stack", change: func(f *fakeTree) {
			f.resources["mm3"] = []fakeRs{{name: "TripleOSoftwareDeployment"}}
		}},
		{name: "a TripleODeployment on the way", change: func(f *fakeTree) {
			f.resources["g"] = append(f.resources["g"], fakeRs{name: DeploymentResource, deployment: "d9"})
		}},
		{name: "two deployments in one stack", change: func(f *fakeTree) {
			f.deploys["d5"], f.configs["d5"] = "mm3", "stack-mm3/mm3"
		}},
		{name: "a deployment's stack below another's", change: func(f *fakeTree) {
			f.parent["mm3"] = "aa2"
			f.resources["aa2"] = append(f.resources["aa2"], fakeRs{name: "Inner", nested: "mm3"})
			f.resources["g"] = f.resources["g"][:1]
		}},
		{name: "a stack the list does not have", change: func(f *fakeTree) { delete(f.parent, "g") }},
		{name: "parents in a loop", change: func(f *fakeTree) { f.parent["g"] = "aa2" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := newFakeTree()
			if tc.change != nil {
				tc.change(tree)
			}
			srv := httptest.NewServer(tree)
			defer srv.Close()
			c, err := heatapi.NewNoAuth(srv.URL + "/v1/t")
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			all, err := c.ListSoftwareDeployments(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			f := &Fetched{}
			got, ok := f.deploymentResources(ctx, c, heatapi.StackRef{Name: "stack-oc", ID: "oc"}, all)
			if tree.listed.Load() {
				t.Errorf("the nested listing was asked for")
			}
			var ids []string
			for _, r := range got {
				ids = append(ids, r.PhysicalID)
			}
			if ok != tc.ok || !reflect.DeepEqual(ids, tc.want) {
				t.Errorf("ok %v, found %v; want %v, %v", ok, ids, tc.ok, tc.want)
			}
			// readDeployments lists as tripleo-common does when the
			// stacks do not prove the same, and says which way it took.
			d := &Fetched{}
			if err := d.readDeployments(ctx, c, heatapi.StackRef{Name: "stack-oc", ID: "oc"}); err != nil {
				t.Fatal(err)
			}
			want := LookupStacks
			if !tc.ok {
				want = LookupListing
			}
			if d.Lookup != want || tree.listed.Load() != !tc.ok {
				t.Errorf("readDeployments: lookup %q, listed %v; want %q", d.Lookup, tree.listed.Load(), want)
			}
		})
	}
}
