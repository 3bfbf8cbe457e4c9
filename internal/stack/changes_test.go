package stack

import (
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
)

// The shape Heat 19 answers for an unchanged stack with a ResourceGroup of
// provider templates, previewed with show_nested=true (measured).
func TestClassifyNestedStacksAreNotChanges(t *testing.T) {
	pr := func(name, typ, stack, parent string) heatapi.PreviewResource {
		return heatapi.PreviewResource{Name: name, Type: typ, StackName: stack, ParentResource: parent}
	}
	p := &heatapi.UpdatePreview{
		Unchanged: []heatapi.PreviewResource{
			pr("rs", "OS::Heat::RandomString", "m2", ""),
			pr("inner", "OS::Heat::TestResource", "m2-group-0", "0"),
			pr("inner", "OS::Heat::TestResource", "m2-group-1", "1"),
		},
		Updated: []heatapi.PreviewResource{
			pr("group", "OS::Heat::ResourceGroup", "m2", ""),
			pr("0", "file:///t/nested.yaml", "m2-group-4h33nilb4htc", "group"),
			pr("1", "file:///t/nested.yaml", "m2-group-4h33nilb4htc", "group"),
		},
	}
	ch, unseen := classify(p, "m2", nil)
	if !ch.Empty() || len(unseen) != 0 {
		t.Fatalf("want no change, got %+v", ch)
	}
	want := "m2.group (OS::Heat::ResourceGroup),m2.group.0 (file:///t/nested.yaml),m2.group.0.inner (OS::Heat::TestResource)," +
		"m2.group.1 (file:///t/nested.yaml),m2.group.1.inner (OS::Heat::TestResource),m2.rs (OS::Heat::RandomString)"
	if got := strings.Join(ch.Unchanged, ","); got != want {
		t.Errorf("unchanged =\n %s\nwant\n %s", got, want)
	}
	// A real change inside shows as a change of the nested resource.
	p.Updated = append(p.Updated, pr("inner", "OS::Heat::TestResource", "m2-group-2", "2"))
	ch, _ = classify(p, "m2", nil)
	if len(ch.Updated) != 1 || ch.Updated[0] != "m2.group.2.inner (OS::Heat::TestResource)" {
		t.Errorf("updated = %v", ch.Updated)
	}
	// Without show_nested, nested stacks are set aside for the caller.
	top := &heatapi.UpdatePreview{Updated: []heatapi.PreviewResource{pr("group", "OS::Heat::ResourceGroup", "m2", ""), pr("cfg", "OS::Heat::TestResource", "m2", "")}}
	ch, unseen = classify(top, "m2", map[string]bool{"group": true})
	if len(unseen) != 1 || len(ch.Updated) != 1 || ch.Updated[0] != "m2.cfg (OS::Heat::TestResource)" {
		t.Errorf("fallback: updated %v unseen %v", ch.Updated, unseen)
	}
}

func TestHeatString(t *testing.T) {
	for _, c := range []struct {
		typ  string
		v    any
		want string
	}{
		{"string", "x", "x"},
		{"number", float64(3), "3"},
		{"number", 2.5, "2.5"},
		{"boolean", true, "True"},
		{"boolean", "false", "False"},
		{"json", map[string]any{"a": []any{float64(1), float64(2)}}, `{"a": [1, 2]}`},
		{"json", `{"k":"v, w"}`, `{"k": "v, w"}`},
		{"comma_delimited_list", []any{"x", "y"}, "x,y"},
		{"comma_delimited_list", "x,y", "x,y"},
	} {
		if got := heatString(c.typ, c.v); got != c.want {
			t.Errorf("heatString(%s, %v) = %q, want %q", c.typ, c.v, got, c.want)
		}
	}
}

func TestStackPath(t *testing.T) {
	if got := stackPath("life-nest", "life"); got != "life.nest" {
		t.Error(got)
	}
	if got := stackPath("other-x", "life"); got != "other-x" {
		t.Error(got)
	}
}
