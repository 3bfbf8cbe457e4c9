package workdir

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
)

// SaveResult says what Save wrote.
type SaveResult struct {
	StackID string
	// Files are the files written or (check mode) that would be; Missing
	// the StackOutputs the stack does not have (saved as null, as
	// tripleoclient does).
	Files, Missing []string
	Nodes          *Nodes
	Warnings       []string
	Changed        bool
}

// Save saves what a deploy leaves of its stack, read from Heat:
// outputs/<key> for tripleoclient's StackOutputs, every output in
// outputs/<stack>-outputs.yaml, the environment Heat merged in
// environment/tripleo-<stack>-environment.yaml (utils.save_stack) and the
// node groups in outputs/<stack>-nodes.yaml. Files are mode 0600 (the
// outputs hold AdminPassword; tripleoclient leaves them to the umask) in
// 0700 directories. In check mode nothing is written.
func (l Layout) Save(ctx context.Context, c *heatapi.Client, check bool) (*SaveResult, error) {
	ref, err := c.FindStack(ctx, l.Stack)
	if err != nil {
		return nil, fmt.Errorf("finding stack %s: %w", l.Stack, err)
	}
	st, err := c.GetStack(ctx, ref, true)
	if err != nil {
		return nil, fmt.Errorf("reading the outputs of %s: %w", l.Stack, err)
	}
	env, err := c.GetEnvironment(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("reading the environment of %s: %w", l.Stack, err)
	}
	nodes, warnings, err := FindNodes(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	res := &SaveResult{StackID: ref.ID, Files: []string{}, Missing: []string{}, Nodes: nodes, Warnings: warnings}
	values, errs := st.OutputMap()
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		res.Warnings = append(res.Warnings, fmt.Sprintf("output %s did not resolve: %s", k, errs[k]))
	}
	files := map[string][]byte{}
	for _, k := range StackOutputs {
		v, ok := values[k]
		if !ok {
			res.Missing = append(res.Missing, k)
		}
		files[l.Output(k)] = yamlOf(plain(v))
	}
	all := map[string]any{}
	for k, v := range values {
		all[k] = plain(v)
	}
	files[l.AllOutputs()] = yamlOf(all)
	files[l.Environment()] = yamlOf(plain(env))
	if prev, err := l.readPreviousNodes(); err == nil {
		carryRemovedMembers(prev, nodes)
	}
	files[l.Nodes()] = yamlOf(nodes)

	changed, err := l.writeChanged(files, check, "saving", l.path(OutputsDir), l.path(EnvironmentDir))
	if err != nil {
		return nil, err
	}
	res.Files = append(res.Files, changed...)
	res.Changed = len(changed) > 0
	return res, nil
}

// writeChanged writes each of files (path to content, mode 0600,
// atomically: a symlink or anything else in the way is replaced, never
// written through) whose content differs from what is on disk, in path
// order, and returns those paths; in check mode it only returns them.
// Before the first write it makes the working dir (Ensure) and each of
// dirs inside it (ensureSub) private directories of ours. verb names the
// write in its error ("writing", "saving").
func (l Layout) writeChanged(files map[string][]byte, check bool, verb string, dirs ...string) ([]string, error) {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var changed []string
	for _, p := range paths {
		if fsutil.SameContent(p, files[p], fsutil.SecretFileMode) {
			continue
		}
		changed = append(changed, p)
		if check {
			continue
		}
		if dirs != nil {
			if _, err := l.Ensure(); err != nil {
				return nil, err
			}
			for _, d := range dirs {
				if err := l.ensureSub(d); err != nil {
					return nil, err
				}
			}
			dirs = []string{} // made: the next writes go to the same directories
		}
		if err := fsutil.WriteFileAtomic(p, files[p], fsutil.SecretFileMode); err != nil {
			return nil, fmt.Errorf("%s %s: %w", verb, p, err)
		}
	}
	return changed, nil
}

// yamlOf is v as YAML (2-space indent, keys sorted).
func yamlOf(v any) []byte {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return []byte(fmt.Sprintf("# unencodable: %v\n", err))
	}
	enc.Close()
	return buf.Bytes()
}

// plain turns the numbers of a JSON value decoded with UseNumber into
// int64 or float64, so that YAML writes them as numbers.
func plain(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return string(x)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = plain(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = plain(e)
		}
		return s
	default:
		return v
	}
}
