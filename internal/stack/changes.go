package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
)

// maxNestedPreview is the most nested-stack resources a top stack may
// have for previewResources to ask Heat for the nested stacks' preview too.
// Heat works out a nested preview of every nested stack before it answers
// (as long as an update, on tripleo-heat-templates ~45 s), and Heat 19 then
// fails it on THT's stacks anyway (400: a list_concat of values a preview
// does not have); the top stack's preview takes a few seconds.
const maxNestedPreview = 20

// previewResources adds to ch the resources an update would touch, from
// Heat's update preview: the top stack's, and for a stack with at most
// maxNestedPreview nested-stack resources, with the nested stacks'
// (show_nested=true). Measured on Heat 19 (Zed): for an unchanged template
// every resource is "unchanged" (including OS::Heat::RandomString) except
// resources that are nested stacks (provider templates, ResourceGroup and
// each of its members), which Heat always lists as "updated"; with
// show_nested their own resources are listed too, with parent_resource
// naming the container. An "updated" resource that has such children is
// therefore not counted as a change: a real change inside it shows as a
// change of a child. Without the nested preview, the top stack's
// nested-stack resources count as updated (their properties come from the
// inputs that changed) and ch.Partial says the detail is partial.
//
// The preview is detail for check mode and --diff only: whether to update
// was decided from the inputs. An error is returned only when Heat refuses
// the update itself (a 400 to the top stack's preview, such as an unknown
// parameter): the update would fail the same way.
func (r *Request) previewResources(ctx context.Context, c *heatapi.Client, cur *heatapi.Stack, body []byte, ch *Changes) error {
	ref := cur.Ref()
	p, err := c.PreviewUpdate(ctx, ref, body, r.o.Existing, false)
	var ae *heatapi.APIError
	if errors.As(err, &ae) && ae.StatusCode == http.StatusBadRequest {
		return fmt.Errorf("Heat refuses this update of stack %s: %w", ref, err)
	}
	if err != nil {
		ch.Partial = fmt.Sprintf("Heat could not preview the update (%v): no resource detail", shortErr(err))
		r.o.Warn("%s", ch.Partial)
		return nil
	}
	res, err := c.ListResources(ctx, ref, heatapi.ResourceListOpts{})
	if err != nil {
		ch.Partial = fmt.Sprintf("listing the resources of stack %s failed (%v): no resource detail", ref, shortErr(err))
		r.o.Warn("%s", ch.Partial)
		return nil
	}
	containers := map[string]bool{}
	for _, x := range res {
		if _, ok := x.NestedStack(); ok {
			containers[x.Name] = true
		}
	}
	if len(containers) > 0 && len(containers) <= maxNestedPreview {
		nested, err := c.PreviewUpdate(ctx, ref, body, r.o.Existing, true)
		if err == nil {
			p, containers = nested, nil
		} else {
			// Heat 19 also fails show_nested previews with 404
			// ("ResourcePropertiesData with id {} not found") once a nested
			// stack's data is broken, and 400 (a TypeError in
			// format_stack_resource) when a ResourceGroup grows.
			ch.Partial = fmt.Sprintf("Heat could not preview the nested stacks (%v): the resources listed are the top stack's", shortErr(err))
		}
	} else if len(containers) > maxNestedPreview {
		ch.Partial = fmt.Sprintf("the top stack has %d nested stacks (more than %d): the resources listed are the top stack's, its nested stacks counted as updated", len(containers), maxNestedPreview)
	}
	got, unseen := classify(p, r.o.Name, containers)
	ch.Added, ch.Deleted, ch.Replaced, ch.Updated, ch.Unchanged = got.Added, got.Deleted, got.Replaced, got.Updated, got.Unchanged
	ch.Updated = append(ch.Updated, unseen...)
	sort.Strings(ch.Updated)
	return nil
}

// shortErr keeps the first line of an error, at most 300 characters.
func shortErr(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// classify turns an update preview into resource paths by category.
// containers, when not nil, names the top stack's nested-stack resources
// (for a preview without show_nested).
//
// It returns the changes and, without show_nested, the labels of the
// "updated" nested-stack resources whose contents were not shown.
func classify(p *heatapi.UpdatePreview, top string, containers map[string]bool) (*Changes, []string) {
	all := [][]heatapi.PreviewResource{p.Added, p.Deleted, p.Replaced, p.Updated, p.Unchanged}
	var flat []heatapi.PreviewResource
	for _, l := range all {
		flat = append(flat, l...)
	}
	paths := previewPaths(flat, top)
	idx := 0
	label := func() string {
		pr := flat[idx]
		s := fmt.Sprintf("%s (%s)", paths[idx], pr.Type)
		idx++
		return s
	}
	// hasChildren: an entry in another stack names it as parent resource.
	hasChildren := func(x heatapi.PreviewResource) bool {
		for _, y := range flat {
			if y.ParentResource == x.Name && y.StackName != x.StackName {
				return true
			}
		}
		return false
	}
	ch := &Changes{Added: []string{}, Deleted: []string{}, Replaced: []string{}, Updated: []string{}, Unchanged: []string{}}
	for range p.Added {
		ch.Added = append(ch.Added, label())
	}
	for range p.Deleted {
		ch.Deleted = append(ch.Deleted, label())
	}
	for range p.Replaced {
		ch.Replaced = append(ch.Replaced, label())
	}
	var unseen []string
	for _, x := range p.Updated {
		l := label()
		if containers != nil && containers[x.Name] && (x.StackName == top || x.StackName == "") {
			unseen = append(unseen, l)
			continue
		}
		if hasChildren(x) {
			ch.Unchanged = append(ch.Unchanged, l)
			continue
		}
		ch.Updated = append(ch.Updated, l)
	}
	for range p.Unchanged {
		ch.Unchanged = append(ch.Unchanged, label())
	}
	for _, l := range [][]string{ch.Added, ch.Deleted, ch.Replaced, ch.Updated, ch.Unchanged} {
		sort.Strings(l)
	}
	return ch, unseen
}

// previewPaths names preview entries: "top.res" for the top stack, and for
// nested ones the path of their parent resource when that is unambiguous,
// else the (preview) nested stack name.
func previewPaths(rs []heatapi.PreviewResource, top string) []string {
	byName := map[string][]int{}
	for i, x := range rs {
		byName[x.Name] = append(byName[x.Name], i)
	}
	memo := make([]string, len(rs))
	var path func(i, depth int) string
	path = func(i, depth int) string {
		if memo[i] != "" {
			return memo[i]
		}
		x := rs[i]
		prefix := ""
		if x.StackName == top || x.StackName == "" {
			prefix = top
		} else if x.ParentResource != "" && depth < 20 {
			var cands []int
			for _, j := range byName[x.ParentResource] {
				if rs[j].StackName != x.StackName {
					cands = append(cands, j)
				}
			}
			if len(cands) == 1 {
				prefix = path(cands[0], depth+1)
			}
		}
		if prefix == "" {
			prefix = stackPath(x.StackName, top)
		}
		memo[i] = prefix + "." + x.Name
		return memo[i]
	}
	out := make([]string, len(rs))
	for i := range rs {
		out[i] = path(i, 0)
	}
	return out
}

// stackPath turns a preview's nested stack name into a path: Heat names
// the nested stacks of a preview "<parent stack>-<resource>", so
// "top-nest-0" is "top.nest.0" (a real nested stack name, with its random
// suffix, is kept as it is after the top stack's name).
func stackPath(name, top string) string {
	rest, ok := strings.CutPrefix(name, top+"-")
	if !ok {
		return name
	}
	return top + "." + strings.ReplaceAll(rest, "-", ".")
}

func diffParams(cur, want map[string]string, only map[string]any) map[string]ParamChange {
	out := map[string]ParamChange{}
	keys := map[string]bool{}
	for k := range cur {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	for k := range keys {
		if strings.HasPrefix(k, "OS::") {
			continue
		}
		if only != nil {
			if _, ok := only[k]; !ok {
				continue
			}
		}
		b, bok := cur[k]
		a, aok := want[k]
		if bok == aok && b == a {
			continue
		}
		pc := ParamChange{}
		if bok {
			pc.Before = &b
		}
		if aok {
			pc.After = &a
		}
		out[k] = pc
	}
	return out
}

// paramType returns a template parameter's type ("" when unknown).
func paramType(tpl map[string]any, name string) string {
	for _, section := range []string{"parameters", "Parameters"} {
		ps, _ := tpl[section].(map[string]any)
		p, _ := ps[name].(map[string]any)
		for _, k := range []string{"type", "Type"} {
			if t, ok := p[k].(string); ok {
				return strings.ToLower(t)
			}
		}
	}
	return ""
}

// heatString formats a parameter value as Heat shows it in a stack's
// parameters (Python's str() of the parsed value).
func heatString(typ string, v any) string {
	switch typ {
	case "json":
		if s, ok := v.(string); ok {
			var x any
			if json.Unmarshal([]byte(s), &x) == nil {
				v = x
			}
		}
		return pyJSON(v)
	case "comma_delimited_list":
		if l, ok := v.([]any); ok {
			parts := make([]string, len(l))
			for i, e := range l {
				parts[i] = fmt.Sprint(e)
			}
			return strings.Join(parts, ",")
		}
	case "boolean":
		switch x := v.(type) {
		case bool:
			if x {
				return "True"
			}
			return "False"
		case string:
			switch strings.ToLower(x) {
			case "true", "yes", "on", "y", "t", "1":
				return "True"
			}
			return "False"
		}
	}
	switch x := v.(type) {
	case bool:
		if x {
			return "True"
		}
		return "False"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return x
	case nil:
		return "None"
	case map[string]any, []any:
		return pyJSON(x)
	}
	return fmt.Sprint(v)
}

// pyJSON is Python's json.dumps (", " and ": " separators, keys in order).
func pyJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	var out strings.Builder
	inStr, esc := false, false
	for _, ch := range strings.TrimSpace(buf.String()) {
		out.WriteRune(ch)
		if inStr {
			switch {
			case esc:
				esc = false
			case ch == '\\':
				esc = true
			case ch == '"':
				inStr = false
			}
			continue
		}
		switch ch {
		case '"':
			inStr = true
		case ',', ':':
			out.WriteRune(' ')
		}
	}
	return out.String()
}

func jsonEqual(a, b any) bool {
	na, err1 := normalize(a)
	nb, err2 := normalize(b)
	return err1 == nil && err2 == nil && reflect.DeepEqual(na, nb)
}

func normalize(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	err = dec.Decode(&out)
	return out, err
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// diffOf renders Ansible's diff for a planned or made change.
func diffOf(name, action string, ch *Changes) map[string]any {
	var b strings.Builder
	fmt.Fprintf(&b, "stack %s: %s\n", name, action)
	for _, sec := range []struct {
		mark string
		l    []string
	}{{"+ added:    ", ch.Added}, {"- deleted:  ", ch.Deleted}, {"! replaced: ", ch.Replaced}, {"~ updated:  ", ch.Updated}} {
		for _, x := range sec.l {
			b.WriteString(sec.mark + x + "\n")
		}
	}
	keys := make([]string, 0, len(ch.Parameters))
	for k := range ch.Parameters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	show := func(p *string) string {
		if p == nil {
			return "(unset)"
		}
		return strconv.Quote(*p)
	}
	for _, k := range keys {
		pc := ch.Parameters[k]
		fmt.Fprintf(&b, "~ parameter %s: %s -> %s\n", k, show(pc.Before), show(pc.After))
	}
	for _, o := range ch.Other {
		b.WriteString("~ " + o + "\n")
	}
	before, after := map[string]any{"state": "present"}, map[string]any{"state": "present"}
	switch action {
	case "create":
		before["state"] = "absent"
	case "delete":
		after["state"] = "absent"
	}
	return map[string]any{
		"before_header": "stack " + name,
		"after_header":  "stack " + name,
		"before":        before,
		"after":         after,
		"prepared":      b.String(),
	}
}
