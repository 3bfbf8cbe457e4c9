package heattest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"
)

// GroupTemplate is a stack with outputs, a 3-member OS::Heat::ResourceGroup
// (a nested stack) and a resource of its own: small, but it has everything a
// dump and restore must keep.
const GroupTemplate = `{
 "heat_template_version": "2016-10-14",
 "resources": {
  "group": {"type": "OS::Heat::ResourceGroup", "properties": {"count": 3,
    "resource_def": {"type": "OS::Heat::RandomString", "properties": {"length": 12}}}},
  "solo": {"type": "OS::Heat::RandomString", "properties": {"length": 20}}
 },
 "outputs": {
  "values": {"value": {"get_attr": ["group", "value"]}},
  "solo": {"value": {"get_attr": ["solo", "value"]}}
 }}`

// API sends one request to Heat and returns the status and body.
func API(t testing.TB, method, url, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// CreateGroupStack creates GroupTemplate as name and waits for
// CREATE_COMPLETE; it returns the stack id.
func CreateGroupStack(t testing.TB, endpoint, name string) string {
	t.Helper()
	code, b := API(t, "POST", endpoint+"/stacks", fmt.Sprintf(`{"stack_name": %q, "template": %s}`, name, GroupTemplate))
	if code != 201 {
		t.Fatalf("create: %d %s", code, b)
	}
	var created struct{ Stack struct{ ID string } }
	json.Unmarshal(b, &created)
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		_, b := API(t, "GET", endpoint+"/stacks/"+name+"/"+created.Stack.ID+"?resolve_outputs=false", "")
		var s struct {
			Stack struct {
				StackStatus string `json:"stack_status"`
			}
		}
		json.Unmarshal(b, &s)
		switch s.Stack.StackStatus {
		case "CREATE_COMPLETE":
			return created.Stack.ID
		case "CREATE_FAILED":
			t.Fatalf("stack failed: %s", b)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatal("stack did not complete")
	return ""
}

// Snapshot is what must survive a dump and restore of a GroupTemplate stack:
// the stack, its nested resources (ids and statuses) and its outputs.
func Snapshot(t testing.TB, endpoint, name, id string) string {
	t.Helper()
	code, b := API(t, "GET", endpoint+"/stacks/"+name+"/"+id, "")
	if code != 200 {
		t.Fatalf("GET stack %s: %d %s", name, code, b)
	}
	var s struct {
		Stack struct {
			ID          string
			StackName   string `json:"stack_name"`
			StackStatus string `json:"stack_status"`
			Outputs     []map[string]any
		}
	}
	json.Unmarshal(b, &s)
	sort.Slice(s.Stack.Outputs, func(i, j int) bool {
		return fmt.Sprint(s.Stack.Outputs[i]["output_key"]) < fmt.Sprint(s.Stack.Outputs[j]["output_key"])
	})
	_, rb := API(t, "GET", endpoint+"/stacks/"+name+"/"+id+"/resources?nested_depth=3", "")
	var r struct {
		Resources []struct {
			Name   string `json:"resource_name"`
			Phys   string `json:"physical_resource_id"`
			Status string `json:"resource_status"`
			Type   string `json:"resource_type"`
			Parent string `json:"parent_resource"`
		}
	}
	json.Unmarshal(rb, &r)
	var res []string
	for _, x := range r.Resources {
		res = append(res, strings.Join([]string{x.Parent, x.Name, x.Type, x.Phys, x.Status}, "|"))
	}
	sort.Strings(res)
	out, _ := json.Marshal(map[string]any{"stack": s.Stack, "resources": res})
	if len(res) != 5 || len(s.Stack.Outputs) != 2 {
		t.Fatalf("unexpected stack shape: %s", out)
	}
	return string(out)
}
