package heatapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// previewDoc builds a POST /stacks/preview answer shaped like Heat's for a
// TripleO overcloud: n resources (in nested lists, as Heat nests them), each
// carrying the large properties a THT service resource gets (ServiceNetMap,
// EndpointMap, RoleParameters).
func previewDoc(n int) []byte {
	netmap := map[string]string{}
	for i := 0; i < 200; i++ {
		netmap[fmt.Sprintf("Service%dNetwork", i)] = "internal_api"
	}
	endpoints := map[string]any{}
	for i := 0; i < 150; i++ {
		endpoints[fmt.Sprintf("Service%dInternal", i)] = map[string]any{
			"host": "192.168.24.10", "host_nobrackets": "192.168.24.10", "port": fmt.Sprint(8000 + i),
			"protocol": "http", "uri": fmt.Sprintf("http://192.168.24.10:%d/v1/%%(tenant_id)s", 8000+i),
		}
	}
	props := map[string]any{"ServiceNetMap": netmap, "EndpointMap": endpoints,
		"RoleName": "Controller", "RoleParameters": map[string]any{"TunedProfileName": "throughput-performance", "Count": json.Number("3")}}
	var groups []any
	var group []any
	for i := 0; i < n; i++ {
		group = append(group, map[string]any{
			"resource_name": fmt.Sprintf("Service%d", i), "resource_type": "OS::TripleO::Services::Foo",
			"stack_name": "overcloud-ControllerServiceChain-abc", "logical_resource_id": fmt.Sprintf("Service%d", i),
			"physical_resource_id": "", "resource_action": "INIT", "resource_status": "COMPLETE",
			"resource_status_reason": "", "required_by": []string{"ServiceChain"}, "description": "",
			"stack_identity": map[string]string{"stack_name": "overcloud", "stack_id": "None", "tenant": "admin", "path": ""},
			"properties":     props, "metadata": map[string]any{}, "attributes": map[string]any{},
			"creation_time": "2026-11-24T10:00:00Z", "updated_time": nil,
		})
		if len(group) == 50 {
			groups = append(groups, group)
			group = nil
		}
	}
	if len(group) > 0 {
		groups = append(groups, group)
	}
	params := map[string]string{}
	for i := 0; i < 500; i++ {
		params[fmt.Sprintf("Param%d", i)] = "value"
	}
	b, err := json.Marshal(map[string]any{"stack": map[string]any{
		"id": "None", "stack_name": "overcloud", "description": "overcloud", "parameters": params,
		"links": []any{}, "timeout_mins": 240, "disable_rollback": true, "resources": groups,
	}})
	if err != nil {
		panic(err)
	}
	return b
}

// decodePreviewStd is how PreviewCreate decoded its answer with encoding/json
// before gjson: the baseline of BenchmarkPreviewDecode.
func decodePreviewStd(data []byte) (*StackPreview, error) {
	var out struct {
		Stack struct {
			Stack
			Resources []json.RawMessage `json:"resources"`
		} `json:"stack"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	p := &StackPreview{Stack: out.Stack.Stack}
	var walk func(raw json.RawMessage) error
	walk = func(raw json.RawMessage) error {
		raw = bytes.TrimSpace(raw)
		if len(raw) > 0 && raw[0] == '[' {
			var list []json.RawMessage
			if err := json.Unmarshal(raw, &list); err != nil {
				return err
			}
			for _, e := range list {
				if err := walk(e); err != nil {
					return err
				}
			}
			return nil
		}
		var r PreviewResource
		if err := json.Unmarshal(raw, &r); err != nil {
			return err
		}
		p.Resources = append(p.Resources, r)
		return nil
	}
	for _, r := range out.Stack.Resources {
		if err := walk(r); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// BenchmarkPreviewDecode compares the encoding/json decoding of a preview
// with decodeStackPreview's (go test -run X -bench PreviewDecode ./internal/heatapi/).
func BenchmarkPreviewDecode(b *testing.B) {
	data := previewDoc(600)
	for _, impl := range []struct {
		name string
		f    func([]byte) (*StackPreview, error)
	}{{"encoding_json", decodePreviewStd}, {"gjson", decodeStackPreview}} {
		b.Run(impl.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				p, err := impl.f(data)
				if err != nil || len(p.Resources) != 600 || p.Stack.Name != "overcloud" {
					b.Fatalf("%v %d", err, len(p.Resources))
				}
			}
		})
	}
}

func TestDecodeStackPreview(t *testing.T) {
	res := func(name string) string {
		return `{"resource_name":"` + name + `","resource_type":"OS::Heat::None","stack_name":"s","properties":{"big":[1,2,{"x":"y"}]},"physical_resource_id":""}`
	}
	tests := []struct {
		name    string
		data    string
		want    []string // resource names
		wantErr string
	}{
		{"flat", `{"stack":{"stack_name":"s","id":"None","resources":[` + res("a") + `,` + res("b") + `]}}`, []string{"a", "b"}, ""},
		{"nested lists and nulls", `{"stack":{"stack_name":"s","resources":[[` + res("a") + `,[` + res("b") + `,null]],` + res("c") + `]}}`, []string{"a", "b", "c"}, ""},
		{"no resources", `{"stack":{"stack_name":"s"}}`, nil, ""},
		{"invalid JSON", `{"stack":{"stack_name":"s",`, nil, "not valid JSON"},
		{"no stack", `{"error":{}}`, nil, "no stack object"},
		{"stack field of the wrong type", `{"stack":{"stack_name":1}}`, nil, "not the expected JSON"},
		{"resource of the wrong type", `{"stack":{"stack_name":"s","resources":["x"]}}`, nil, "neither a resource nor a list"},
		{"resource name of the wrong type", `{"stack":{"stack_name":"s","resources":[{"resource_name":3}]}}`, nil, "resource_name is 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := decodeStackPreview([]byte(tc.data))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, r := range p.Resources {
				names = append(names, r.Name)
				if r.Type != "OS::Heat::None" || r.StackName != "s" {
					t.Errorf("resource %+v: fields not read", r)
				}
			}
			if !reflect.DeepEqual(names, tc.want) || p.Stack.Name != "s" {
				t.Fatalf("resources %v, stack %q; want %v, s", names, p.Stack.Name, tc.want)
			}
		})
	}
}

// TestDecodeStackPreviewAgreesWithEncodingJSON: the gjson decoding reads what
// the encoding/json one did, on the overcloud-shaped document.
func TestDecodeStackPreviewAgreesWithEncodingJSON(t *testing.T) {
	data := previewDoc(120)
	a, err := decodePreviewStd(data)
	if err != nil {
		t.Fatal(err)
	}
	b, err := decodeStackPreview(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) || len(b.Resources) != 120 {
		t.Fatalf("decodings differ:\n%+v\n%+v", a.Stack, b.Stack)
	}
}

func TestDecodeUpdatePreview(t *testing.T) {
	p, err := decodeUpdatePreview([]byte(`{"resource_changes":{"added":[{"resource_name":"a"}],"updated":[[{"resource_name":"b","parent_resource":"p"}]],"deleted":[],"replaced":null}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Added) != 1 || p.Added[0].Name != "a" || len(p.Updated) != 1 || p.Updated[0].ParentResource != "p" ||
		len(p.Deleted)+len(p.Replaced)+len(p.Unchanged) != 0 {
		t.Fatalf("got %+v", p)
	}
	for _, bad := range []string{`{}`, `{"resource_changes":{"added":[1]}}`, `not json`} {
		if _, err := decodeUpdatePreview([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
