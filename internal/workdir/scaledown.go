package workdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// Removal is one node a scale-down removes.
type Removal struct {
	Hostname string `json:"hostname"`
	Role     string `json:"role"`
	Resource string `json:"resource"`
	Index    string `json:"index"`
}

// ScaleDownPlan is what a scale-down does: the nodes it removes, and the
// environment it leaves for every later deploy.
type ScaleDownPlan struct {
	// Remove are the nodes removed now; Already those named that earlier
	// scale-downs removed (nothing runs for them again).
	Remove, Already []Removal
	// Counts is, per role with a removal, its node count from now on.
	Counts map[string]int
	// Parameters are the environment's parameter_defaults.
	Parameters map[string]any
	// Content is the environment file's new content; Changed whether it
	// differs from the file's.
	Content []byte
	Changed bool
}

// Limit is the host pattern of the nodes removed now (ansible-playbook
// --limit, as tripleoclient's overcloud node delete joins them).
func (p *ScaleDownPlan) Limit() string {
	h := make([]string, 0, len(p.Remove))
	for _, r := range p.Remove {
		h = append(h, r.Hostname)
	}
	return strings.Join(h, ":")
}

// scaleDownHeader opens the scale-down environment.
const scaleDownHeader = `# The nodes removed from stack %s by ephemeral.heat scale-downs (overcloud_workdir
# action=scale_down), accumulated: for each node group, its count from now on and the
# indices of its removed members (Heat's ResourceGroup removal_policies, given through
# the parameter the template passes to it: THT's <Role>Count and <Role>RemovalPolicies,
# as tripleo-ansible's baremetal_deploy writes them). The deploy playbook includes it after
# the operator's environments; its "parameters" still win over it.
`

// PlanScaleDown maps hostnames to their group and index in the last
// deploy's nodes file and computes the scale-down environment: the
// removals of the earlier scale-downs (the current file) plus these, and
// each affected group's count, its members at the last deploy that are not
// removed. Unknown hostnames, groups whose count or removal_policies the
// template does not take from a parameter are refused before anything is
// written or run. A count cannot go below zero: only the members of the
// last deploy can be named, each counted once (a node named twice, or
// removed by an earlier scale-down, is not removed again).
func (l Layout) PlanScaleDown(hosts []string) (*ScaleDownPlan, error) {
	if len(hosts) == 0 {
		return nil, fmt.Errorf("no hostname given: name the nodes to remove")
	}
	nodes, err := l.ReadNodes()
	if err != nil {
		return nil, err
	}
	params, err := l.readScaleDownParams()
	if err != nil {
		return nil, err
	}
	type where struct {
		g *Group
		m Member
	}
	byName := map[string]where{}
	var known []string
	for gi := range nodes.Groups {
		g := &nodes.Groups[gi]
		for _, m := range g.Members {
			byName[strings.ToLower(m.Hostname)] = where{g, m}
			known = append(known, m.Hostname)
		}
		// Removed before the last deploy: named again, nothing is done.
		for _, m := range g.RemovedMembers {
			if _, ok := byName[strings.ToLower(m.Hostname)]; !ok {
				byName[strings.ToLower(m.Hostname)] = where{g, m}
			}
		}
	}
	removed := map[string]map[string]bool{} // group -> indices
	for gi := range nodes.Groups {
		g := &nodes.Groups[gi]
		removed[g.Resource] = map[string]bool{}
		for _, m := range g.RemovedMembers {
			removed[g.Resource][m.Index] = true
		}
		if g.RemovalPoliciesParameter != "" {
			for _, ix := range removalIndices(params[g.RemovalPoliciesParameter]) {
				removed[g.Resource][ix] = true
			}
		}
	}
	p := &ScaleDownPlan{Remove: []Removal{}, Already: []Removal{}, Counts: map[string]int{}}
	var unknown []string
	seen := map[string]bool{}
	touched := map[string]*Group{}
	for _, h := range hosts {
		key := strings.ToLower(strings.TrimSpace(h))
		if seen[key] {
			continue
		}
		seen[key] = true
		w, ok := byName[key]
		if !ok {
			// The inventory names a host by its short name; accept an FQDN.
			w, ok = byName[strings.SplitN(key, ".", 2)[0]]
		}
		if !ok {
			unknown = append(unknown, h)
			continue
		}
		g := w.g
		if g.CountParameter == "" || g.RemovalPoliciesParameter == "" {
			return nil, fmt.Errorf("%s is a member of ResourceGroup %s, whose count and removal_policies the template does not both take from a parameter ({get_param: NAME}): a scale-down cannot name the removed member; give the group count: {get_param: <Role>Count} and removal_policies: {get_param: <Role>RemovalPolicies}", h, g.Resource)
		}
		r := Removal{Hostname: w.m.Hostname, Role: g.Role, Resource: g.Resource, Index: w.m.Index}
		if removed[g.Resource][w.m.Index] {
			p.Already = append(p.Already, r)
			continue
		}
		removed[g.Resource][w.m.Index] = true
		p.Remove = append(p.Remove, r)
		touched[g.Resource] = g
	}
	if len(unknown) > 0 {
		sort.Strings(known)
		return nil, fmt.Errorf("unknown node(s) %s: the last deploy of %s (%s) has %s; nothing was run", strings.Join(unknown, ", "), l.Stack, l.Nodes(), listOrNone(known))
	}
	for gi := range nodes.Groups {
		g := &nodes.Groups[gi]
		if touched[g.Resource] == nil && !hasRemovals(params, g) {
			continue
		}
		// Only members of the last deploy can be named, each once: a
		// count cannot go below zero.
		left := len(g.Members) - countRemovedMembers(g, removed[g.Resource])
		idx := make([]string, 0, len(removed[g.Resource]))
		for ix := range removed[g.Resource] {
			idx = append(idx, ix)
		}
		sortIndices(idx)
		list := make([]any, 0, len(idx))
		for _, ix := range idx {
			if n, err := strconv.Atoi(ix); err == nil {
				list = append(list, n)
			} else {
				list = append(list, ix)
			}
		}
		params[g.CountParameter] = left
		params[g.RemovalPoliciesParameter] = []any{map[string]any{"resource_list": list}}
		p.Counts[g.Role] = left
	}
	p.Parameters = params
	p.Content = append([]byte(fmt.Sprintf(scaleDownHeader, l.Stack)), yamlOf(map[string]any{"parameter_defaults": params})...)
	p.Changed = !fsutil.SameContent(l.ScaleDown(), p.Content, fsutil.SecretFileMode)
	return p, nil
}

// WriteScaleDown writes the plan's environment (mode 0600, atomically).
func (l Layout) WriteScaleDown(p *ScaleDownPlan) error {
	if !p.Changed {
		return nil
	}
	if err := fsutil.WriteFileAtomic(l.ScaleDown(), p.Content, fsutil.SecretFileMode); err != nil {
		return fmt.Errorf("writing the scale-down environment: %w", err)
	}
	return nil
}

// readScaleDownParams returns the parameter_defaults of the scale-down
// environment (empty when there is none).
func (l Layout) readScaleDownParams() (map[string]any, error) {
	b, err := os.ReadFile(l.ScaleDown())
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the scale-down environment: %w", err)
	}
	var doc struct {
		ParameterDefaults map[string]any `yaml:"parameter_defaults"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("scale-down environment %s: %v (remove it only if every node it names is back)", l.ScaleDown(), err)
	}
	if doc.ParameterDefaults == nil {
		doc.ParameterDefaults = map[string]any{}
	}
	return doc.ParameterDefaults, nil
}

// removalIndices reads the member names of a removal_policies value
// ([{resource_list: [...]}, ...]).
func removalIndices(v any) []string {
	var out []string
	pols, _ := v.([]any)
	for _, p := range pols {
		m, _ := p.(map[string]any)
		rl, _ := m["resource_list"].([]any)
		for _, x := range rl {
			out = append(out, fmt.Sprint(x))
		}
	}
	return out
}

func hasRemovals(params map[string]any, g *Group) bool {
	return g.RemovalPoliciesParameter != "" && len(removalIndices(params[g.RemovalPoliciesParameter])) > 0
}

func countRemovedMembers(g *Group, removed map[string]bool) int {
	n := 0
	for _, m := range g.Members {
		if removed[m.Index] {
			n++
		}
	}
	return n
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "no nodes"
	}
	if len(s) > 20 {
		return strings.Join(s[:20], ", ") + fmt.Sprintf(" and %d more", len(s)-20)
	}
	return strings.Join(s, ", ")
}

// carryRemovedMembers gives each group of cur the hostnames prev knew of
// the members Heat now lists as removed (prev's members or removed
// members of the same group).
func carryRemovedMembers(prev, cur *Nodes) {
	for gi := range cur.Groups {
		g := &cur.Groups[gi]
		if len(g.Removed) == 0 {
			continue
		}
		names := map[string]string{}
		for _, pg := range prev.Groups {
			if pg.Resource != g.Resource {
				continue
			}
			for _, m := range append(append([]Member{}, pg.RemovedMembers...), pg.Members...) {
				names[m.Index] = m.Hostname
			}
		}
		for _, ix := range g.Removed {
			if h, ok := names[ix]; ok && h != "" {
				g.RemovedMembers = append(g.RemovedMembers, Member{Index: ix, Hostname: h})
			}
		}
	}
}
