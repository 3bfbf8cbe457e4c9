// Package stack creates, updates and deletes a Heat stack the way
// python-heatclient's "openstack stack create/update/delete --wait" does, and
// adds what a configuration-management module needs: idempotence (an update
// that Heat's preview shows would change nothing, with the same inputs, is
// skipped), check mode through Heat's create and update previews, a diff, the
// outputs as a dictionary, and on failure the deepest failed resources
// through nested stacks ("openstack stack failures list").
//
// Prepare reads and validates everything local (templates, environments)
// before anything is sent to Heat; Request.Run then talks to Heat.
package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/templates"
)

// States.
const (
	Present = "present"
	Absent  = "absent"
)

// Actions an Outcome reports.
const (
	ActionNone   = "none"
	ActionCreate = "create"
	ActionUpdate = "update"
	ActionDelete = "delete"
)

// NestedDepth is how deep events, resources and progress look into nested
// stacks (Heat's max_nested_stack_depth in our heat.conf).
const NestedDepth = 10

// Options describe the wanted stack.
type Options struct {
	Name  string
	State string // Present (default) or Absent
	// Template is the path of the top template; EnvironmentFiles are
	// environment paths, later ones overriding earlier ones.
	Template         string
	EnvironmentFiles []string
	// Parameters have the highest precedence (Heat's "parameters").
	Parameters map[string]any
	// Timeout in minutes: Heat's timeout_mins and how long to wait.
	Timeout  int
	Rollback bool // disable_rollback = !Rollback
	Tags     []string
	// Wait for a terminal status (default in the module).
	Wait bool
	// Existing updates with PATCH: what is not given is kept.
	Existing bool
	// Given reports, for Existing, whether the caller gave a setting
	// ("parameters", "timeout", "rollback", "tags"); what is not given is
	// neither sent nor compared. Nil means all given.
	Given func(name string) bool
	// CheckMode changes nothing; the outcome is Heat's preview.
	CheckMode bool
	// Progress, when not nil, gets live progress (resources done, events).
	Progress io.Writer
	// PollInterval between status polls (default 2 s).
	PollInterval time.Duration
	// MaxBodyBytes bounds a request body (default: Heat's max_json_body_size
	// in our heat.conf).
	MaxBodyBytes int
	// Warn reports a warning (may be nil).
	Warn func(format string, args ...any)
}

func (o *Options) given(name string) bool { return o.Given == nil || o.Given(name) }

// Info is the summary of a stack in results.
type Info struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Status       string `json:"status"`
	StatusReason string `json:"status_reason"`
	CreationTime string `json:"creation_time"`
	UpdatedTime  string `json:"updated_time"`
}

func infoOf(s *heatapi.Stack) *Info {
	if s == nil {
		return nil
	}
	return &Info{ID: s.ID, Name: s.Name, Status: s.Status, StatusReason: s.StatusReason,
		CreationTime: s.CreationTime, UpdatedTime: s.UpdatedTime}
}

// Failure is one failed resource, the deepest through nested stacks.
type Failure struct {
	// Path is stack.resource[.nested_resource...].
	Path       string `json:"path"`
	Type       string `json:"type"`
	Status     string `json:"status"`
	Reason     string `json:"reason"`
	PhysicalID string `json:"physical_resource_id,omitempty"`
}

func (f Failure) String() string {
	return fmt.Sprintf("%s (%s) %s: %s", f.Path, f.Type, f.Status, f.Reason)
}

// ParamChange is a parameter whose value changes, as Heat shows values.
type ParamChange struct {
	Before *string `json:"before"`
	After  *string `json:"after"`
}

// Changes is what a preview shows: resources by path ("stack.resource",
// nested ones "nested_stack.resource") and type, and the other inputs that
// differ from the stack's.
type Changes struct {
	Added      []string               `json:"added"`
	Deleted    []string               `json:"deleted"`
	Replaced   []string               `json:"replaced"`
	Updated    []string               `json:"updated"`
	Unchanged  []string               `json:"unchanged"`
	Parameters map[string]ParamChange `json:"parameters,omitempty"`
	// Other lists other differences (template, files, tags, timeout,
	// rollback, a failed status to retry).
	Other []string `json:"other,omitempty"`
}

// Empty reports whether nothing would change.
func (c *Changes) Empty() bool {
	return len(c.Added)+len(c.Deleted)+len(c.Replaced)+len(c.Updated)+len(c.Parameters)+len(c.Other) == 0
}

// Outcome is the result of Run. Error returns keep the fields known so far.
type Outcome struct {
	Changed bool
	Action  string
	// Stack is the stack after the run (nil when absent or in a check of a
	// create).
	Stack        *Info
	Outputs      map[string]any
	OutputErrors map[string]string
	// Failed is true when the stack ended in a failed status; Failures then
	// lists the deepest failed resources.
	Failed   bool
	Failures []Failure
	// Preview is what Heat's preview showed (updates and check mode).
	Preview *Changes
	// Diff is Ansible's diff ({"before", "after", "prepared"}).
	Diff map[string]any
	Msg  string
}

// Request is a prepared run: options validated, files processed.
type Request struct {
	o      Options
	bundle *templates.Bundle // nil when no template is given
	// envFiles/envURLs: the environments alone (Existing without template).
	envFiles map[string]string
	envURLs  []string
}

// Prepare validates the options and processes the template and environment
// files. Nothing is sent anywhere: bad input fails here.
func Prepare(o Options) (*Request, error) {
	if o.State == "" {
		o.State = Present
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 2 * time.Second
	}
	if o.Timeout <= 0 {
		return nil, fmt.Errorf("timeout must be a positive number of minutes, got %d", o.Timeout)
	}
	if o.Warn == nil {
		o.Warn = func(string, ...any) {}
	}
	if err := validName(o.Name); err != nil {
		return nil, err
	}
	r := &Request{o: o}
	switch o.State {
	case Absent:
		return r, nil
	case Present:
	default:
		return nil, fmt.Errorf("state must be present or absent, got %q", o.State)
	}
	if o.Template == "" {
		if !o.Existing {
			return nil, fmt.Errorf("template is required with state=present (without existing=true)")
		}
		if len(o.EnvironmentFiles) > 0 {
			_, files, urls, err := templates.ProcessEnvironments(o.EnvironmentFiles)
			if err != nil {
				return nil, err
			}
			r.envFiles, r.envURLs = files, urls
		}
		return r, nil
	}
	b, err := templates.Process(o.Template, o.EnvironmentFiles)
	if err != nil {
		return nil, err
	}
	r.bundle = b
	// Build a body once now so that an oversized request fails before Heat.
	if _, err := r.body(map[string]any{"stack_name": o.Name}); err != nil {
		return nil, err
	}
	return r, nil
}

func validName(n string) error {
	if n == "" {
		return fmt.Errorf("name is required")
	}
	c := n[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return fmt.Errorf("invalid stack name %q: it must start with a letter", n)
	}
	for _, ch := range n {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '-' || ch == '.') {
			return fmt.Errorf("invalid stack name %q: only letters, digits, _, - and . are allowed", n)
		}
	}
	if len(n) > 255 {
		return fmt.Errorf("invalid stack name: longer than 255 characters")
	}
	return nil
}

// body returns a request body with the template (when given), files,
// environment_files and extra.
func (r *Request) body(extra map[string]any) ([]byte, error) {
	if r.bundle != nil {
		return r.bundle.RequestBody(extra, r.o.MaxBodyBytes)
	}
	b := map[string]any{}
	for k, v := range extra {
		b[k] = v
	}
	if len(r.envURLs) > 0 {
		b["files"] = r.envFiles
		b["environment_files"] = r.envURLs
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(b); err != nil {
		return nil, fmt.Errorf("request body: %w", err)
	}
	max := r.o.MaxBodyBytes
	if max <= 0 {
		max = templates.DefaultMaxJSONBodySize
	}
	if buf.Len() > max {
		return nil, fmt.Errorf("request body is %d bytes, over Heat's max_json_body_size of %d bytes", buf.Len(), max)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// createExtra are the fields of a create (and of a create preview).
func (r *Request) createExtra(name string) map[string]any {
	e := map[string]any{
		"stack_name":       name,
		"timeout_mins":     r.o.Timeout,
		"disable_rollback": !r.o.Rollback,
	}
	if len(r.o.Parameters) > 0 {
		e["parameters"] = r.o.Parameters
	}
	if len(r.o.Tags) > 0 {
		e["tags"] = strings.Join(r.o.Tags, ",")
	}
	return e
}

// updateExtra are the fields of an update (PUT) or, with Existing, a PATCH
// (only what was given).
func (r *Request) updateExtra() map[string]any {
	e := map[string]any{}
	o := &r.o
	if !o.Existing || o.given("parameters") {
		e["parameters"] = nonNil(o.Parameters)
	}
	if !o.Existing || o.given("timeout") {
		e["timeout_mins"] = o.Timeout
	}
	if !o.Existing || o.given("rollback") {
		e["disable_rollback"] = !o.Rollback
	}
	if !o.Existing || o.given("tags") {
		e["tags"] = strings.Join(o.Tags, ",")
	}
	return e
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// Run makes the stack as wanted.
func (r *Request) Run(ctx context.Context, c *heatapi.Client) (Outcome, error) {
	ref, err := c.FindStack(ctx, r.o.Name)
	exists := err == nil
	if err != nil && !heatapi.IsNotFound(err) {
		return Outcome{Action: ActionNone}, fmt.Errorf("looking up stack %s: %w", r.o.Name, err)
	}
	var cur *heatapi.Stack
	if exists {
		cur, err = c.GetStack(ctx, ref, false)
		if heatapi.IsNotFound(err) {
			exists = false
		} else if err != nil {
			return Outcome{Action: ActionNone}, fmt.Errorf("reading stack %s: %w", ref, err)
		}
	}
	if r.o.State == Absent {
		if !exists {
			return Outcome{Action: ActionNone, Msg: fmt.Sprintf("stack %s is absent", r.o.Name)}, nil
		}
		return r.delete(ctx, c, cur)
	}
	if !exists {
		return r.create(ctx, c)
	}
	return r.update(ctx, c, cur)
}

func (r *Request) progressf(format string, args ...any) {
	if r.o.Progress != nil {
		fmt.Fprintf(r.o.Progress, format+"\n", args...)
	}
}

func (r *Request) create(ctx context.Context, c *heatapi.Client) (Outcome, error) {
	out := Outcome{Action: ActionCreate, Changed: true}
	if r.bundle == nil {
		return Outcome{Action: ActionNone}, fmt.Errorf("stack %s does not exist and no template is given to create it", r.o.Name)
	}
	body, err := r.body(r.createExtra(r.o.Name))
	if err != nil {
		return Outcome{Action: ActionNone}, err
	}
	if r.o.CheckMode {
		p, err := c.PreviewCreate(ctx, body)
		if err != nil {
			return Outcome{Action: ActionNone}, fmt.Errorf("preview of creating stack %s: %w", r.o.Name, err)
		}
		ch := &Changes{Added: []string{}, Deleted: []string{}, Replaced: []string{}, Updated: []string{}, Unchanged: []string{}}
		names := previewPaths(p.Resources, r.o.Name)
		for i, pr := range p.Resources {
			ch.Added = append(ch.Added, fmt.Sprintf("%s (%s)", names[i], pr.Type))
		}
		out.Preview = ch
		out.Diff = diffOf(r.o.Name, "create", ch)
		out.Msg = fmt.Sprintf("stack %s would be created with %d resources (check mode)", r.o.Name, len(ch.Added))
		return out, nil
	}
	r.progressf("creating stack %s (timeout %d min)", r.o.Name, r.o.Timeout)
	ref, err := c.CreateStack(ctx, r.o.Name, body)
	if err != nil {
		return Outcome{Action: ActionNone}, fmt.Errorf("creating stack %s: %w", r.o.Name, err)
	}
	return r.finish(ctx, c, ref, out, nil, "")
}

// finish waits (when asked) and fills the outcome: stack, outputs, failures.
func (r *Request) finish(ctx context.Context, c *heatapi.Client, ref heatapi.StackRef, out Outcome, before *heatapi.Stack, marker string) (Outcome, error) {
	action := strings.ToUpper(out.Action)
	var st *heatapi.Stack
	var err error
	if r.o.Wait {
		st, err = r.wait(ctx, c, ref, action, before, marker)
		if err != nil {
			if st != nil {
				out.Stack = infoOf(st)
			}
			return out, err
		}
	}
	if out.Action == ActionDelete && (st == nil || st.Status == "DELETE_COMPLETE") && r.o.Wait {
		if st != nil {
			out.Stack = infoOf(st)
		}
		out.Msg = fmt.Sprintf("stack %s deleted", r.o.Name)
		return out, nil
	}
	full, err := c.GetStack(ctx, ref, out.Action != ActionDelete)
	if err != nil {
		if out.Action == ActionDelete && heatapi.IsNotFound(err) {
			out.Msg = fmt.Sprintf("stack %s deleted", r.o.Name)
			return out, nil
		}
		return out, fmt.Errorf("reading stack %s: %w", ref, err)
	}
	out.Stack = infoOf(full)
	if out.Action != ActionDelete {
		out.Outputs, out.OutputErrors = full.OutputMap()
	}
	if isFailed(full.Status) {
		out.Failed = true
		out.Failures, err = Failures(ctx, c, full)
		if err != nil {
			r.o.Warn("listing the failed resources of %s: %v", ref, err)
		}
		out.Msg = fmt.Sprintf("stack %s is %s: %s", r.o.Name, full.Status, full.StatusReason)
		if len(out.Failures) > 0 {
			out.Msg = fmt.Sprintf("stack %s is %s: %s", r.o.Name, full.Status, out.Failures[0])
			if n := len(out.Failures); n > 1 {
				out.Msg += fmt.Sprintf(" (and %d more failed resources, see failures)", n-1)
			}
		}
		return out, fmt.Errorf("%s", out.Msg)
	}
	if r.o.Wait {
		out.Msg = fmt.Sprintf("stack %s is %s", r.o.Name, full.Status)
	} else {
		out.Msg = fmt.Sprintf("stack %s is %s (not waiting)", r.o.Name, full.Status)
	}
	return out, nil
}

// isFailed: a FAILED status, or a rollback (the action that was asked for failed).
func isFailed(status string) bool {
	return strings.HasSuffix(status, "_FAILED") || status == "ROLLBACK_COMPLETE"
}

func isTerminal(status string) bool {
	return strings.HasSuffix(status, "_COMPLETE") || strings.HasSuffix(status, "_FAILED")
}

func (r *Request) delete(ctx context.Context, c *heatapi.Client, cur *heatapi.Stack) (Outcome, error) {
	out := Outcome{Action: ActionDelete, Changed: true, Stack: infoOf(cur)}
	ref := cur.Ref()
	if r.o.CheckMode {
		ch := &Changes{Added: []string{}, Deleted: []string{}, Replaced: []string{}, Updated: []string{}, Unchanged: []string{}}
		if res, err := c.ListResources(ctx, ref, heatapi.ResourceListOpts{}); err == nil {
			for _, x := range res {
				ch.Deleted = append(ch.Deleted, fmt.Sprintf("%s.%s (%s)", ref.Name, x.Name, x.Type))
			}
		}
		out.Preview = ch
		out.Diff = diffOf(r.o.Name, "delete", ch)
		out.Msg = fmt.Sprintf("stack %s would be deleted (check mode)", r.o.Name)
		return out, nil
	}
	marker := r.lastEvent(ctx, c, ref)
	if cur.Status != "DELETE_IN_PROGRESS" {
		r.progressf("deleting stack %s", r.o.Name)
		if err := c.DeleteStack(ctx, ref); err != nil {
			if heatapi.IsNotFound(err) {
				return Outcome{Action: ActionNone, Msg: fmt.Sprintf("stack %s is absent", r.o.Name)}, nil
			}
			return Outcome{Action: ActionNone, Stack: infoOf(cur)}, fmt.Errorf("deleting stack %s: %w", ref, err)
		}
	} else {
		r.progressf("stack %s is already being deleted; waiting", r.o.Name)
	}
	return r.finish(ctx, c, ref, out, cur, marker)
}

// lastEvent returns the id of the newest event (the marker for progress).
func (r *Request) lastEvent(ctx context.Context, c *heatapi.Client, ref heatapi.StackRef) string {
	if r.o.Progress == nil || !r.o.Wait {
		return ""
	}
	ev, err := c.ListEvents(ctx, ref, heatapi.EventListOpts{NestedDepth: NestedDepth, SortDir: "desc", Limit: 1})
	if err != nil || len(ev) == 0 {
		return ""
	}
	return ev[0].ID
}

func (r *Request) update(ctx context.Context, c *heatapi.Client, cur *heatapi.Stack) (Outcome, error) {
	ref := cur.Ref()
	if strings.HasSuffix(cur.Status, "_IN_PROGRESS") {
		return Outcome{Action: ActionNone, Stack: infoOf(cur)}, fmt.Errorf("stack %s is %s: another operation is running on it; wait for it to end and run again", r.o.Name, cur.Status)
	}
	body, err := r.body(r.updateExtra())
	if err != nil {
		return Outcome{Action: ActionNone}, err
	}
	ch, err := r.changes(ctx, c, cur, body)
	if err != nil {
		return Outcome{Action: ActionNone, Stack: infoOf(cur)}, err
	}
	out := Outcome{Action: ActionUpdate, Preview: ch, Stack: infoOf(cur)}
	if ch.Empty() {
		out.Action = ActionNone
		full, err := c.GetStack(ctx, ref, true)
		if err != nil {
			return out, fmt.Errorf("reading stack %s: %w", ref, err)
		}
		out.Stack = infoOf(full)
		out.Outputs, out.OutputErrors = full.OutputMap()
		out.Msg = fmt.Sprintf("stack %s is %s and up to date", r.o.Name, full.Status)
		return out, nil
	}
	out.Changed = true
	out.Diff = diffOf(r.o.Name, "update", ch)
	if r.o.CheckMode {
		out.Msg = fmt.Sprintf("stack %s would be updated (check mode)", r.o.Name)
		return out, nil
	}
	marker := r.lastEvent(ctx, c, ref)
	verb := "updating"
	if r.o.Existing {
		verb = "updating (PATCH, keeping what is not given)"
	}
	r.progressf("%s stack %s (timeout %d min)", verb, r.o.Name, r.o.Timeout)
	if err := c.UpdateStack(ctx, ref, body, r.o.Existing); err != nil {
		return Outcome{Action: ActionNone, Stack: infoOf(cur)}, fmt.Errorf("updating stack %s: %w", ref, err)
	}
	return r.finish(ctx, c, ref, out, cur, marker)
}

// wait polls the stack until a terminal status of action (or, for a delete,
// until it is gone) or the timeout.
func (r *Request) wait(ctx context.Context, c *heatapi.Client, ref heatapi.StackRef, action string, before *heatapi.Stack, marker string) (*heatapi.Stack, error) {
	start := time.Now()
	// Heat enforces timeout_mins itself and fails the stack; allow it a
	// little more to report that.
	deadline := start.Add(time.Duration(r.o.Timeout)*time.Minute + time.Minute)
	prog := newProgress(r, c, ref, marker, start)
	started := before == nil
	var last *heatapi.Stack
	for {
		st, err := c.GetStack(ctx, ref, false)
		switch {
		case err != nil && action == "DELETE" && heatapi.IsNotFound(err):
			prog.poll(ctx, action)
			return nil, nil
		case err != nil:
			return last, fmt.Errorf("waiting for stack %s: %w", ref, err)
		}
		last = st
		if strings.HasSuffix(st.Status, "_IN_PROGRESS") {
			started = true
		}
		if !started && (st.UpdatedTime != before.UpdatedTime || st.Status != before.Status) {
			started = true
		}
		prog.poll(ctx, action)
		if started && isTerminal(st.Status) {
			prog.done(st)
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("timed out after %s waiting for stack %s to leave %s", time.Since(start).Round(time.Second), r.o.Name, st.Status)
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("waiting for stack %s: %w", r.o.Name, ctx.Err())
		case <-time.After(r.o.PollInterval):
		}
	}
}
