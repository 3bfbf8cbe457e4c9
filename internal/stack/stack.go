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
	"sort"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stackname"
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
	// CheckMode changes nothing; whether the stack would change is decided
	// from the inputs, and Heat's preview adds the resources it would touch.
	CheckMode bool
	// Diff asks for the resources an update would touch (Heat's preview)
	// before it is made.
	Diff bool
	// Progress, when not nil, gets live progress (resources done, events).
	Progress io.Writer
	// PollInterval between status polls (default 2 s).
	PollInterval time.Duration
	// MaxBodyBytes bounds a request body (default: Heat's max_json_body_size
	// in our heat.conf).
	MaxBodyBytes int
	// Limits bound the template and the other files read (default:
	// templates.DefaultLimits).
	Limits templates.Limits
	// Warn reports a warning (may be nil).
	Warn func(format string, args ...any)
}

func (o *Options) given(name string) bool { return o.Given == nil || o.Given(name) }

// Info is the summary of a stack in results. Beside our keys, it has
// openstack.cloud.stack's (its stack dict, Heat's names): stack_status,
// stack_status_reason, action, identifier, description, parameters (as
// Heat shows them, hidden ones "******"), timeout_mins, tags and, when
// they were resolved, outputs as Heat's list of {output_key,
// output_value, description} (output_error for one that failed).
type Info struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Status       string `json:"status"`
	StatusReason string `json:"status_reason"`
	CreationTime string `json:"creation_time"`
	UpdatedTime  string `json:"updated_time"`

	StackStatus       string            `json:"stack_status"`
	StackStatusReason string            `json:"stack_status_reason"`
	Action            string            `json:"action"`
	Identifier        string            `json:"identifier"`
	Description       string            `json:"description"`
	Parameters        map[string]string `json:"parameters,omitempty"`
	TimeoutMins       *int              `json:"timeout_mins,omitempty"`
	Tags              []string          `json:"tags,omitempty"`
	Outputs           *[]heatapi.Output `json:"outputs,omitempty"`
}

func infoOf(s *heatapi.Stack) *Info {
	if s == nil {
		return nil
	}
	action, _, _ := strings.Cut(s.Status, "_")
	return &Info{ID: s.ID, Name: s.Name, Status: s.Status, StatusReason: s.StatusReason,
		CreationTime: s.CreationTime, UpdatedTime: s.UpdatedTime,
		StackStatus: s.Status, StackStatusReason: s.StatusReason, Action: action, Identifier: s.Name + "/" + s.ID,
		Description: s.Description, Parameters: s.Parameters, TimeoutMins: s.TimeoutMins, Tags: s.Tags}
}

// resolvedInfo is infoOf a stack read with its outputs resolved: with them.
func resolvedInfo(s *heatapi.Stack) *Info {
	i := infoOf(s)
	outs := append([]heatapi.Output{}, s.Outputs...)
	i.Outputs = &outs
	return i
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
	// Partial says why the resource lists are incomplete (Heat could not
	// preview the nested stacks, or nothing); "" when they are complete.
	Partial string `json:"partial,omitempty"`
}

// Summary is a one-line account of the inputs that differ.
func (c *Changes) Summary() string {
	var parts []string
	if n := len(c.Parameters); n > 0 {
		parts = append(parts, fmt.Sprintf("parameters %s", strings.Join(sortedKeys(c.Parameters), ", ")))
	}
	parts = append(parts, c.Other...)
	if len(parts) > 3 {
		parts = append(parts[:3], fmt.Sprintf("and %d more (see preview.other)", len(parts)-3))
	}
	if len(parts) == 0 {
		return "no input differs"
	}
	return strings.Join(parts, "; ")
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
	// full is bundle plus the parameters environment (ParametersEnvURL),
	// last: what a create or an update (PUT) sends.
	full *templates.Bundle
	// envFiles/envURLs: the environments alone (Existing without template).
	envFiles map[string]string
	envURLs  []string
	masker   *strings.Replacer // hidden values in progress lines
	// heatHidden are the parameters Heat shows hidden (LearnHidden).
	heatHidden map[string]bool
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
	if err := stackname.Check("name", o.Name, stackname.Heat); err != nil {
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
			_, files, urls, err := templates.ProcessEnvironmentsWith(o.Limits, o.EnvironmentFiles)
			if err != nil {
				return nil, err
			}
			r.envFiles, r.envURLs = files, urls
		}
		return r, nil
	}
	b, err := templates.ProcessWith(o.Limits, o.Template, o.EnvironmentFiles)
	if err != nil {
		return nil, err
	}
	r.bundle = b
	penv, err := parametersEnv(o.Parameters, b.EnvironmentFiles)
	if err != nil {
		return nil, err
	}
	full := *b
	full.Files = make(map[string]string, len(b.Files)+1)
	for k, v := range b.Files {
		full.Files[k] = v
	}
	full.Files[ParametersEnvURL] = penv
	full.EnvironmentFiles = append(append([]string(nil), b.EnvironmentFiles...), ParametersEnvURL)
	r.full = &full
	// Build a body once now so that an oversized request fails before Heat.
	if _, err := r.body(map[string]any{"stack_name": o.Name}, true); err != nil {
		return nil, err
	}
	return r, nil
}

// body returns a request body with the template (when given), files,
// environment_files and extra. full (a create or PUT) sends the parameters
// environment too; otherwise (PATCH) the parameters go in extra.
func (r *Request) body(extra map[string]any, full bool) ([]byte, error) {
	if r.bundle != nil {
		if full {
			return r.full.RequestBody(extra, r.o.MaxBodyBytes)
		}
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

// createExtra are the fields of a create (and of a create preview); the
// parameters travel in the parameters environment.
func (r *Request) createExtra(name string) map[string]any {
	e := map[string]any{
		"stack_name":       name,
		"timeout_mins":     r.o.Timeout,
		"disable_rollback": !r.o.Rollback,
	}
	if len(r.o.Tags) > 0 {
		e["tags"] = strings.Join(r.o.Tags, ",")
	}
	return e
}

// updateExtra are the fields of an update (PUT) or, with Existing, a PATCH
// (only what was given). Tags are sent only when there are some: "tags": ""
// would be stored as [""], and a PUT without tags clears them.
func (r *Request) updateExtra() map[string]any {
	e := map[string]any{}
	o := &r.o
	if o.Existing && o.given("parameters") {
		e["parameters"] = nonNil(o.Parameters)
	}
	if !o.Existing || o.given("timeout") {
		e["timeout_mins"] = o.Timeout
	}
	if !o.Existing || o.given("rollback") {
		e["disable_rollback"] = !o.Rollback
	}
	if (!o.Existing || o.given("tags")) && len(o.Tags) > 0 {
		e["tags"] = strings.Join(o.Tags, ",")
	}
	return e
}

// fullUpdate: the update replaces template, environment and files (PUT).
func (r *Request) fullUpdate() bool { return !r.o.Existing && r.bundle != nil }

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
		r.LearnHidden(cur)
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

// progressf writes a progress line, values of hidden parameters masked.
func (r *Request) progressf(format string, args ...any) {
	if r.o.Progress == nil {
		return
	}
	line := fmt.Sprintf(format+"\n", args...)
	if r.masker == nil {
		var pairs []string
		hidden := r.HiddenValues()
		// Longest first: a value that contains another is masked whole.
		sort.Slice(hidden, func(i, j int) bool { return len(hidden[i]) > len(hidden[j]) })
		for _, v := range hidden {
			pairs = append(pairs, v, "********")
		}
		r.masker = strings.NewReplacer(pairs...)
	}
	io.WriteString(r.o.Progress, r.masker.Replace(line))
}

func (r *Request) create(ctx context.Context, c *heatapi.Client) (Outcome, error) {
	out := Outcome{Action: ActionCreate, Changed: true}
	if r.bundle == nil {
		return Outcome{Action: ActionNone}, fmt.Errorf("stack %s does not exist and no template is given to create it", r.o.Name)
	}
	body, err := r.body(r.createExtra(r.o.Name), true)
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
	return r.finish(ctx, c, ref, out, nil, marks{})
}

// finish waits (when asked) and fills the outcome: stack, outputs, failures.
func (r *Request) finish(ctx context.Context, c *heatapi.Client, ref heatapi.StackRef, out Outcome, before *heatapi.Stack, m marks) (Outcome, error) {
	action := strings.ToUpper(out.Action)
	var st *heatapi.Stack
	var err error
	if r.o.Wait {
		st, err = r.wait(ctx, c, ref, action, before, m)
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
		out.Stack = resolvedInfo(full)
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
	m, err := r.marks(ctx, c, ref)
	if err != nil {
		return Outcome{Action: ActionNone, Stack: infoOf(cur)}, err
	}
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
	return r.finish(ctx, c, ref, out, cur, m)
}

// marks are the newest events before an operation on an existing stack:
// top, of the stack itself (to tell when the operation has ended), and
// progress, through nested stacks (to print only the operation's events).
type marks struct {
	top, progress string
}

func (r *Request) marks(ctx context.Context, c *heatapi.Client, ref heatapi.StackRef) (marks, error) {
	var m marks
	if !r.o.Wait {
		return m, nil
	}
	ev, err := c.ListEvents(ctx, ref, heatapi.EventListOpts{SortDir: "desc", Limit: 1})
	if err != nil {
		return m, fmt.Errorf("reading the events of stack %s: %w", ref, err)
	}
	if len(ev) > 0 {
		m.top = ev[0].ID
	}
	if r.o.Progress != nil {
		if ev, err := c.ListEvents(ctx, ref, heatapi.EventListOpts{NestedDepth: NestedDepth, SortDir: "desc", Limit: 1}); err == nil && len(ev) > 0 {
			m.progress = ev[0].ID
		}
	}
	return m, nil
}

func (r *Request) update(ctx context.Context, c *heatapi.Client, cur *heatapi.Stack) (Outcome, error) {
	ref := cur.Ref()
	if strings.HasSuffix(cur.Status, "_IN_PROGRESS") {
		return Outcome{Action: ActionNone, Stack: infoOf(cur)}, fmt.Errorf("stack %s is %s: another operation is running on it; wait for it to end and run again", r.o.Name, cur.Status)
	}
	if r.o.Existing && r.bundle == nil && len(r.envURLs) > 0 {
		r.o.Warn("existing=true with environment_files but no template: Heat merges them into the stack's environment")
	}
	body, err := r.body(r.updateExtra(), r.fullUpdate())
	if err != nil {
		return Outcome{Action: ActionNone}, err
	}
	// Decide from the inputs: what this run sends against what Heat stored.
	ch, err := r.inputChanges(ctx, c, cur)
	if err != nil {
		return Outcome{Action: ActionNone, Stack: infoOf(cur)}, err
	}
	out := Outcome{Action: ActionUpdate, Preview: ch, Stack: infoOf(cur)}
	if ch.Empty() && isComplete(cur.Status) {
		out.Action = ActionNone
		full, err := c.GetStack(ctx, ref, true)
		if err != nil {
			return out, fmt.Errorf("reading stack %s: %w", ref, err)
		}
		out.Stack = resolvedInfo(full)
		out.Outputs, out.OutputErrors = full.OutputMap()
		out.Msg = fmt.Sprintf("stack %s is %s and its inputs are unchanged", r.o.Name, full.Status)
		return out, nil
	}
	if ch.Empty() {
		ch.Other = append(ch.Other, fmt.Sprintf("the stack is %s: updating it to reach a complete state", cur.Status))
	}
	out.Changed = true
	// The resources an update would touch: Heat's preview, only where it
	// is shown (check mode, diff).
	if r.o.CheckMode || r.o.Diff {
		if err := r.previewResources(ctx, c, cur, body, ch); err != nil {
			return Outcome{Action: ActionNone, Stack: infoOf(cur), Preview: ch}, err
		}
	}
	out.Diff = diffOf(r.o.Name, "update", ch)
	if r.o.CheckMode {
		out.Msg = fmt.Sprintf("stack %s would be updated (check mode): %s", r.o.Name, ch.Summary())
		return out, nil
	}
	m, err := r.marks(ctx, c, ref)
	if err != nil {
		return Outcome{Action: ActionNone, Stack: infoOf(cur)}, err
	}
	verb := "updating"
	if r.o.Existing {
		verb = "updating (PATCH, keeping what is not given)"
	}
	r.progressf("%s stack %s (timeout %d min): %s", verb, r.o.Name, r.o.Timeout, ch.Summary())
	if err := c.UpdateStack(ctx, ref, body, r.o.Existing); err != nil {
		return Outcome{Action: ActionNone, Stack: infoOf(cur)}, fmt.Errorf("updating stack %s: %w", ref, err)
	}
	return r.finish(ctx, c, ref, out, cur, m)
}

// isComplete: a *_COMPLETE status that is not the end of a rollback (the
// update asked for failed).
func isComplete(status string) bool {
	return strings.HasSuffix(status, "_COMPLETE") && !isFailed(status)
}

// wait polls the stack until the operation has ended in a terminal status
// (or, for a delete, the stack is gone) or the timeout. Polls start fast and
// slow down to PollInterval, so that quick operations return quickly.
func (r *Request) wait(ctx context.Context, c *heatapi.Client, ref heatapi.StackRef, action string, before *heatapi.Stack, m marks) (*heatapi.Stack, error) {
	start := time.Now()
	// Heat enforces timeout_mins itself and fails the stack; allow it a
	// little more to report that.
	deadline := start.Add(time.Duration(r.o.Timeout)*time.Minute + time.Minute)
	prog := newProgress(r, c, ref, m.progress, start)
	seenInProgress := false
	interval := 200 * time.Millisecond
	var last *heatapi.Stack
	var lastErr error
	for {
		// The list entry, not GET /stacks/{id}: that loads the whole stack
		// in heat-all at every poll (heatapi.StackStatus).
		st, err := c.StackStatus(ctx, ref)
		switch {
		case err != nil && action == "DELETE" && heatapi.IsNotFound(err):
			prog.poll(ctx, action, true)
			return nil, nil
		case err != nil:
			return last, fmt.Errorf("waiting for stack %s: %w", ref, err)
		}
		last = st
		if strings.HasSuffix(st.Status, "_IN_PROGRESS") {
			seenInProgress = true
		} else if isTerminal(st.Status) {
			ended, err := r.ended(ctx, c, ref, st, before, m.top, seenInProgress)
			if ended {
				prog.poll(ctx, action, true) // what is left, unpaced
				prog.done(st)
				return st, nil
			}
			lastErr = err
		}
		prog.poll(ctx, action, false)
		if time.Now().After(deadline) {
			msg := fmt.Sprintf("timed out after %s waiting for stack %s to end its %s (it is %s)", time.Since(start).Round(time.Second), r.o.Name, action, st.Status)
			if lastErr != nil {
				msg += fmt.Sprintf("; reading its events failed: %v", lastErr)
			}
			return st, fmt.Errorf("%s", msg)
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("waiting for stack %s: %w", r.o.Name, ctx.Err())
		case <-time.After(interval):
		}
		if interval = interval * 3 / 2; interval > r.o.PollInterval {
			interval = r.o.PollInterval
		}
	}
}

// ended tells whether the operation started after marker has ended, the
// stack being in the terminal status st. A new stack (before == nil) has
// no earlier operation to confuse. Otherwise the stack's status and times
// cannot tell (an update that ends within the second its predecessor ended
// leaves both as they were): Heat must have recorded, after the marker, a
// stack event with this status. Without a marker (a stack without events),
// or one Heat no longer has (events purged), a status or update time that
// moved, or an IN_PROGRESS seen, has to do.
func (r *Request) ended(ctx context.Context, c *heatapi.Client, ref heatapi.StackRef, st, before *heatapi.Stack, marker string, seenInProgress bool) (bool, error) {
	if before == nil || st.Status == "DELETE_COMPLETE" {
		return true, nil
	}
	fallback := seenInProgress || st.UpdatedTime != before.UpdatedTime || st.Status != before.Status
	if marker == "" {
		return fallback, nil
	}
	const page = 200
	for cursor := marker; ; {
		ev, err := c.ListEvents(ctx, ref, heatapi.EventListOpts{Marker: cursor, SortDir: "asc", Limit: page})
		if heatapi.IsNotFound(err) {
			return fallback, nil
		}
		if err != nil {
			return false, err
		}
		for _, e := range ev {
			if e.PhysicalID == ref.ID && e.ResourceName == ref.Name && e.Status == st.Status {
				return true, nil
			}
		}
		if len(ev) < page {
			return false, nil
		}
		cursor = ev[len(ev)-1].ID
	}
}
