package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/templates"
)

// ParametersEnvURL names the environment heat_stack adds after the user's
// environment files in every create and update (PUT): it holds the module's
// parameters (so they take precedence over every environment file, as the
// module documents) and, as comments, the environment files sent with them,
// in order. Heat stores every file it is sent verbatim and returns them
// (GET .../files), but not the order of environment_files nor, readably,
// hidden parameters (it shows "******"); with this file the stored files
// alone tell whether a re-run would send the same inputs.
const ParametersEnvURL = "file:///ephemeral-heat/heat_stack/parameters.yaml"

// parametersEnv renders the parameters environment: deterministic (JSON
// with sorted keys), so the same inputs give the same bytes.
func parametersEnv(params map[string]any, envURLs []string) (string, error) {
	var b strings.Builder
	b.WriteString("# Written by ephemeral.heat heat_stack: the parameters given to the module (highest\n")
	b.WriteString("# precedence) and, for the record, the environment files sent with them, in order:\n")
	for i, u := range envURLs {
		fmt.Fprintf(&b, "#   %d. %s\n", i+1, u)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"parameters": nonNil(params)}); err != nil {
		return "", fmt.Errorf("parameters: %w", err)
	}
	b.Write(buf.Bytes())
	return b.String(), nil
}

// Inputs is everything a create or an update (PUT) sends that decides what
// the stack becomes. Two runs with equal Inputs make the same stack.
type Inputs struct {
	Template         map[string]any    `json:"template"`
	Files            map[string]string `json:"files"`
	EnvironmentFiles []string          `json:"environment_files"`
	Tags             []string          `json:"tags"`
	TimeoutMins      int               `json:"timeout_mins"`
	DisableRollback  bool              `json:"disable_rollback"`
}

// Inputs returns what this request sends (nil for a delete, or for an
// update with existing=true and no template).
func (r *Request) Inputs() *Inputs {
	if r.bundle == nil || r.o.Existing {
		return nil
	}
	tags := r.o.Tags
	if tags == nil {
		tags = []string{}
	}
	return &Inputs{Template: r.full.Template, Files: r.full.Files, EnvironmentFiles: r.full.EnvironmentFiles,
		Tags: tags, TimeoutMins: r.o.Timeout, DisableRollback: !r.o.Rollback}
}

// LocalFiles returns the local paths of every file the inputs were read
// from (the template, environments and everything they reference), sorted.
func (r *Request) LocalFiles() []string {
	if r.bundle == nil {
		return nil
	}
	var out []string
	for _, u := range append([]string{r.bundle.TemplateURL}, sortedKeys(r.bundle.Files)...) {
		if p, ok := templates.URLToPath(u); ok && u != ParametersEnvURL {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return dedup(out)
}

func dedup(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// HiddenValues returns the values given to hidden parameters (in the
// module's parameters and in the environment files), as Heat would show
// them and as results show them (each string and number inside a list or
// map value): they must be masked wherever results are shown. Which
// parameters are hidden comes from the template, or, with existing=true and
// no template, from Heat once Run has read the stack (LearnHidden): call it
// again after Run.
func (r *Request) HiddenValues() []string {
	if (r.bundle == nil || len(r.bundle.Hidden) == 0) && len(r.heatHidden) == 0 {
		return nil
	}
	var out []string
	add := func(params map[string]any) {
		for k, v := range params {
			if !r.hidden(k) || v == nil {
				continue
			}
			s := heatString("", v)
			if s != "" {
				out = append(out, s)
			}
			out = appendLeaves(out, v)
		}
	}
	add(r.o.Parameters)
	urls, files := r.envURLs, r.envFiles
	if r.bundle != nil {
		urls, files = r.bundle.EnvironmentFiles, r.bundle.Files
	}
	for _, u := range urls {
		env := parseEnv(files[u])
		for _, sec := range []string{"parameters", "parameter_defaults"} {
			m, _ := env[sec].(map[string]any)
			add(m)
		}
	}
	sort.Strings(out)
	return dedup(out)
}

// appendLeaves appends every string and number in v (a parameter's value)
// as a result shows it.
func appendLeaves(out []string, v any) []string {
	switch x := v.(type) {
	case string:
		if x != "" {
			out = append(out, x)
		}
	case json.Number:
		out = append(out, x.String())
	case float64:
		out = append(out, strconv.FormatFloat(x, 'f', -1, 64))
	case int:
		out = append(out, strconv.Itoa(x))
	case []any:
		for _, e := range x {
			out = appendLeaves(out, e)
		}
	case map[string]any:
		for _, e := range x {
			out = appendLeaves(out, e)
		}
	}
	return out
}

// hidden tells whether a parameter is hidden: by the template, or by what
// Heat showed of the stack.
func (r *Request) hidden(name string) bool {
	return (r.bundle != nil && r.bundle.Hidden[name]) || r.heatHidden[name]
}

// heatHiddenValue is how Heat shows a hidden parameter's value.
const heatHiddenValue = "******"

// LearnHidden records the parameters Heat shows hidden in stack cur (with
// existing=true and no template, only Heat knows them); HiddenValues
// includes their values from then on, and so does the masking of progress
// lines.
func (r *Request) LearnHidden(cur *heatapi.Stack) {
	if cur == nil {
		return
	}
	for k, v := range cur.Parameters {
		if v == heatHiddenValue && !r.heatHidden[k] {
			if r.heatHidden == nil {
				r.heatHidden = map[string]bool{}
			}
			r.heatHidden[k] = true
			r.masker = nil
		}
	}
}

// parseEnv reads an environment as stored in files (JSON or YAML); nil if
// it is neither.
func parseEnv(content string) map[string]any {
	v, err := templates.ParseYAML([]byte(content), "environment")
	if err != nil {
		return nil
	}
	m, _ := v.(map[string]any)
	return m
}

// hiddenMark stands for a hidden parameter's value in diffs.
const hiddenMark = "(hidden)"

// inputChanges compares what this request would send with what Heat stored
// for the stack: its template and files (environment files and the
// parameters environment included), tags, timeout and rollback. It fills
// Parameters and Other; resources are the preview's business.
func (r *Request) inputChanges(ctx context.Context, c *heatapi.Client, cur *heatapi.Stack) (*Changes, error) {
	ref := cur.Ref()
	o := &r.o
	ch := emptyChanges()
	if isFailed(cur.Status) {
		ch.Other = append(ch.Other, fmt.Sprintf("the stack is %s: updating it again", cur.Status))
	}
	if o.Existing {
		if err := r.patchChanges(ctx, c, cur, ch); err != nil {
			return nil, err
		}
	} else {
		stored, err := c.GetTemplate(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("reading the template of stack %s: %w", ref, err)
		}
		if !jsonEqual(stored, r.bundle.Template) {
			ch.Other = append(ch.Other, "template changed: "+r.bundle.TemplateURL)
		}
		files, err := c.GetFiles(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("reading the files of stack %s: %w", ref, err)
		}
		r.fileChanges(files, r.full.Files, true, cur.Parameters, ch)
	}
	// Settings.
	if !o.Existing || o.given("tags") {
		if want := o.Tags; !sameStrings(storedTags(cur.Tags), nonNilStrings(want)) {
			ch.Other = append(ch.Other, fmt.Sprintf("tags %v -> %v", storedTags(cur.Tags), nonNilStrings(want)))
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
	if len(ch.Parameters) == 0 {
		ch.Parameters = nil
	}
	return ch, nil
}

// storedTags reads a stack's tags: older runs sent "tags": "" when none
// were given, which Heat stores as [""]; that is no tags.
func storedTags(tags []string) []string {
	out := []string{}
	for _, t := range tags {
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// fileChanges compares stored files with new ones. With all, files Heat
// has that are not sent any more count too (a PUT replaces them all).
// Environments (the parameters environment included) are compared section
// by section, so the report names the parameters and registry entries that
// differ; hidden values are never shown.
//
// curParams are the stack's parameters as Heat shows them: the value before
// of a module parameter that was not given last time.
func (r *Request) fileChanges(stored, want map[string]string, all bool, curParams map[string]string, ch *Changes) {
	var other []string
	for _, u := range sortedKeys(want) {
		old, ok := stored[u]
		switch {
		case !ok && u == ParametersEnvURL:
			other = append(other, "the stack was not made by heat_stack's current inputs (no "+ParametersEnvURL+")")
		case !ok:
			other = append(other, "file added: "+u)
		case old != want[u]:
			if u == ParametersEnvURL {
				r.paramsEnvChanges(old, want[u], curParams, ch, &other)
				continue
			}
			oldEnv, newEnv := parseEnv(old), parseEnv(want[u])
			if r.isEnvironment(u) && oldEnv != nil && newEnv != nil {
				if d := r.envDiff(oldEnv, newEnv); d != "" {
					other = append(other, "environment changed: "+u+" ("+d+")")
					continue
				}
			}
			other = append(other, "file changed: "+u)
		}
	}
	if all {
		for _, u := range sortedKeys(stored) {
			if _, ok := want[u]; !ok {
				other = append(other, "file removed: "+u)
			}
		}
	}
	ch.Other = append(ch.Other, other...)
}

func (r *Request) isEnvironment(u string) bool {
	urls := r.envURLs
	if r.bundle != nil {
		urls = r.bundle.EnvironmentFiles
	}
	for _, e := range urls {
		if e == u {
			return true
		}
	}
	return false
}

// paramsEnvChanges reports the module's parameters that differ, and a
// changed order of environment files. A parameter the module did not give
// last time shows, as before, the stack's value (Heat's string form).
func (r *Request) paramsEnvChanges(old, now string, curParams map[string]string, ch *Changes, other *[]string) {
	oldEnv, newEnv := parseEnv(old), parseEnv(now)
	op, _ := oldEnv["parameters"].(map[string]any)
	np, _ := newEnv["parameters"].(map[string]any)
	for _, k := range unionKeys(op, np) {
		b, bok := op[k]
		a, aok := np[k]
		if bok == aok && jsonEqual(a, b) {
			continue
		}
		pc := ParamChange{}
		if bok {
			s := r.shown(k, b)
			pc.Before = &s
		} else if v, ok := curParams[k]; ok {
			if v == heatHiddenValue || r.hidden(k) {
				v = hiddenMark
			}
			pc.Before = &v
		}
		if aok {
			s := r.shown(k, a)
			pc.After = &s
		}
		if ch.Parameters == nil {
			ch.Parameters = map[string]ParamChange{}
		}
		ch.Parameters[k] = pc
	}
	if envOrder(old) != envOrder(now) {
		*other = append(*other, "environment files or their order changed")
	}
}

// envOrder is the list of environment files recorded in a parameters
// environment's comments.
func envOrder(content string) string {
	var b strings.Builder
	for _, line := range strings.Split(content, "\n") {
		if strings.HasPrefix(line, "#   ") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// shown formats a parameter value for a diff: Heat's string form, or a
// mark for a hidden parameter.
func (r *Request) shown(name string, v any) string {
	if r.hidden(name) {
		return hiddenMark
	}
	return heatString("", v)
}

// envDiff names what differs between two environments, by section:
// "parameter_defaults: A, B; resource_registry: OS::X".
func (r *Request) envDiff(old, now map[string]any) string {
	var parts []string
	for _, sec := range []string{"parameters", "parameter_defaults", "resource_registry", "parameter_merge_strategies", "encrypted_param_names", "event_sinks"} {
		om, oIsMap := old[sec].(map[string]any)
		nm, nIsMap := now[sec].(map[string]any)
		if !oIsMap && !nIsMap {
			if !jsonEqual(old[sec], now[sec]) {
				parts = append(parts, sec)
			}
			continue
		}
		var keys []string
		for _, k := range unionKeys(om, nm) {
			if !jsonEqual(om[k], nm[k]) {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			parts = append(parts, sec+": "+strings.Join(keys, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

func unionKeys(a, b map[string]any) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	return sortedKeys(seen)
}

// patchChanges is inputChanges for existing=true (PATCH): only what is given
// is compared, the rest is kept by Heat.
func (r *Request) patchChanges(ctx context.Context, c *heatapi.Client, cur *heatapi.Stack, ch *Changes) error {
	ref := cur.Ref()
	o := &r.o
	var tpl map[string]any
	if r.bundle != nil || (o.given("parameters") && len(o.Parameters) > 0) {
		stored, err := c.GetTemplate(ctx, ref)
		if err != nil {
			return fmt.Errorf("reading the template of stack %s: %w", ref, err)
		}
		tpl = stored
		if r.bundle != nil {
			if !jsonEqual(stored, r.bundle.Template) {
				ch.Other = append(ch.Other, "template changed: "+r.bundle.TemplateURL)
			}
			tpl = r.bundle.Template
		}
	}
	if o.given("parameters") && len(o.Parameters) > 0 {
		want := map[string]string{}
		for k, v := range o.Parameters {
			want[k] = heatString(paramType(tpl, k), v)
		}
		for k, pc := range diffParams(cur.Parameters, want, o.Parameters) {
			if r.hidden(k) || (pc.Before != nil && *pc.Before == heatHiddenValue) {
				// Heat does not show hidden values: it cannot be compared,
				// and the new value is never shown.
				s := hiddenMark
				if pc.Before != nil {
					pc.Before = &s
				}
				if pc.After != nil {
					pc.After = &s
				}
			}
			if ch.Parameters == nil {
				ch.Parameters = map[string]ParamChange{}
			}
			ch.Parameters[k] = pc
		}
	}
	newFiles := r.envFiles
	if r.bundle != nil {
		newFiles = r.bundle.Files
	}
	if len(newFiles) > 0 {
		stored, err := c.GetFiles(ctx, ref)
		if err != nil {
			return fmt.Errorf("reading the files of stack %s: %w", ref, err)
		}
		r.fileChanges(stored, newFiles, false, cur.Parameters, ch)
	}
	return nil
}

func emptyChanges() *Changes {
	return &Changes{Added: []string{}, Deleted: []string{}, Replaced: []string{}, Updated: []string{}, Unchanged: []string{}}
}
