package stack

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
)

// changes works out what an update would change:
//
//   - Heat's update preview (show_nested=true). Measured on Heat 19 (Zed):
//     for an unchanged template every resource is "unchanged" (including
//     OS::Heat::RandomString) except resources that are nested stacks
//     (provider templates, ResourceGroup and each of its members), which
//     Heat always lists as "updated"; with show_nested their own resources
//     are listed too, with parent_resource naming the container. An
//     "updated" resource that has such children is therefore not counted
//     as a change: a real change inside it shows as a change of a child.
//   - The parameters as Heat resolves them (a create preview of the same
//     request under another name) against the stack's current parameters
//     (OS::* ones excepted): a parameter used only by outputs changes no
//     resource. With existing=true, only the given parameters, formatted as
//     Heat shows them.
//   - The stored template and files against the new ones (outputs or
//     descriptions change no resource either), and tags, timeout and
//     rollback.
//   - A stack in a FAILED status is always updated (that is the retry).
func (r *Request) changes(ctx context.Context, c *heatapi.Client, cur *heatapi.Stack, body []byte) (*Changes, error) {
	ref := cur.Ref()
	p, err := c.PreviewUpdate(ctx, ref, body, r.o.Existing, true)
	var containers map[string]bool
	if err != nil {
		// Heat 19 fails show_nested=true previews in several cases: 404
		// "ResourcePropertiesData with id {} not found" once a nested
		// stack's data is broken, and 400 (a TypeError in
		// format_stack_resource) when a ResourceGroup grows. Preview the
		// top stack alone then, and tell its nested-stack resources apart
		// from the resource list.
		nestedErr := err
		p, err = c.PreviewUpdate(ctx, ref, body, r.o.Existing, false)
		if err == nil {
			r.o.Warn("Heat could not preview the nested stacks of %s (%v); the preview covers the top stack only", ref.Name, nestedErr)
			res, lerr := c.ListResources(ctx, ref, heatapi.ResourceListOpts{})
			if lerr != nil {
				return nil, fmt.Errorf("listing the resources of stack %s: %w", ref, lerr)
			}
			containers = map[string]bool{}
			for _, x := range res {
				if _, ok := x.NestedStack(); ok {
					containers[x.Name] = true
				}
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("preview of updating stack %s: %w", ref, err)
	}
	ch, unseen := classify(p, r.o.Name, containers)
	if isFailed(cur.Status) {
		ch.Other = append(ch.Other, fmt.Sprintf("the stack is %s: updating it again", cur.Status))
	}
	if err := r.compareInputs(ctx, c, cur, ch); err != nil {
		return nil, err
	}
	// Nested stacks whose contents Heat did not show change when anything
	// else does (their properties come from the same inputs).
	if len(unseen) > 0 {
		if ch.Empty() {
			ch.Unchanged = append(ch.Unchanged, unseen...)
			sort.Strings(ch.Unchanged)
		} else {
			ch.Updated = append(ch.Updated, unseen...)
			sort.Strings(ch.Updated)
		}
	}
	return ch, nil
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

// compareInputs adds the parameters and other inputs that differ.
func (r *Request) compareInputs(ctx context.Context, c *heatapi.Client, cur *heatapi.Stack, ch *Changes) error {
	ref := cur.Ref()
	o := &r.o
	// Parameters.
	if r.bundle != nil && !o.Existing {
		body, err := r.body(r.createExtra(previewName(o.Name)))
		if err != nil {
			return err
		}
		p, err := c.PreviewCreate(ctx, body)
		if err != nil {
			return fmt.Errorf("preview of the parameters of stack %s: %w", ref, err)
		}
		ch.Parameters = diffParams(cur.Parameters, p.Stack.Parameters, nil)
	} else if o.Existing && o.given("parameters") && len(o.Parameters) > 0 {
		tpl, err := c.GetTemplate(ctx, ref)
		if err != nil {
			return fmt.Errorf("reading the template of stack %s: %w", ref, err)
		}
		if r.bundle != nil {
			tpl = r.bundle.Template
		}
		want := map[string]string{}
		for k, v := range o.Parameters {
			want[k] = heatString(paramType(tpl, k), v)
		}
		ch.Parameters = diffParams(cur.Parameters, want, o.Parameters)
	}
	if len(ch.Parameters) == 0 {
		ch.Parameters = nil
	}
	// Template and files.
	if r.bundle != nil {
		stored, err := c.GetTemplate(ctx, ref)
		if err != nil {
			return fmt.Errorf("reading the template of stack %s: %w", ref, err)
		}
		if !jsonEqual(stored, r.bundle.Template) {
			ch.Other = append(ch.Other, "template changed")
		}
	}
	newFiles := r.envFiles
	if r.bundle != nil {
		newFiles = r.bundle.Files
	}
	if len(newFiles) > 0 || !o.Existing {
		stored, err := c.GetFiles(ctx, ref)
		if err != nil {
			return fmt.Errorf("reading the files of stack %s: %w", ref, err)
		}
		var diff []string
		for u, content := range newFiles {
			if old, ok := stored[u]; !ok {
				diff = append(diff, "added "+u)
			} else if old != content {
				diff = append(diff, "changed "+u)
			}
		}
		if !o.Existing {
			for u := range stored {
				if _, ok := newFiles[u]; !ok {
					diff = append(diff, "removed "+u)
				}
			}
		}
		sort.Strings(diff)
		for _, d := range diff {
			ch.Other = append(ch.Other, "file "+d)
		}
	}
	// Settings.
	if !o.Existing || o.given("tags") {
		if !sameStrings(cur.Tags, o.Tags) {
			ch.Other = append(ch.Other, fmt.Sprintf("tags %v -> %v", cur.Tags, o.Tags))
		}
	}
	if !o.Existing || o.given("timeout") {
		if cur.TimeoutMins == nil || *cur.TimeoutMins != o.Timeout {
			was := "none"
			if cur.TimeoutMins != nil {
				was = strconv.Itoa(*cur.TimeoutMins)
			}
			ch.Other = append(ch.Other, fmt.Sprintf("timeout_mins %s -> %d", was, o.Timeout))
		}
	}
	if !o.Existing || o.given("rollback") {
		if cur.DisableRollback != !o.Rollback {
			ch.Other = append(ch.Other, fmt.Sprintf("disable_rollback %v -> %v", cur.DisableRollback, !o.Rollback))
		}
	}
	return nil
}

// previewName is a stack name that does not exist, for a create preview
// (Heat refuses a create preview under an existing stack's name).
func previewName(name string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	n := name
	if len(n) > 200 {
		n = n[:200]
	}
	return n + "-preview-" + hex.EncodeToString(b)
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
