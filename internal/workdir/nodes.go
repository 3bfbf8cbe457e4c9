package workdir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
)

// Nodes are the node groups of a stack as the last deploy left them: every
// OS::Heat::ResourceGroup of the top-level stack whose members have a
// hostname, with the member names (the indices, "0", "1", ...) Heat gave
// them. Heat names a group's members with the first integers not in its
// removal skiplist (resource_group.py _resource_names), so a member keeps
// its index, and with it its host name (THT: <Role>HostnameFormat's
// %index%), across scale-downs.
type Nodes struct {
	Stack  string  `yaml:"stack"`
	Groups []Group `yaml:"groups"`
}

// Group is one ResourceGroup of nodes.
type Group struct {
	// Resource is the group's name in the top-level template (THT: the
	// role's name).
	Resource string `yaml:"resource"`
	// Role is the role its members are: the type of its resource_def
	// without OS::TripleO:: (THT's OS::TripleO::<Role>), else Resource.
	Role string `yaml:"role"`
	// CountParameter and RemovalPoliciesParameter are the top-level
	// parameters the group's count and removal_policies properties take
	// (THT: <Role>Count, <Role>RemovalPolicies); empty when the property
	// is not a get_param.
	CountParameter           string `yaml:"count_parameter"`
	RemovalPoliciesParameter string `yaml:"removal_policies_parameter"`
	// Removed is Heat's removed_rsrc_list: the member names skipped.
	Removed []string `yaml:"removed"`
	// RemovedMembers are the removed members whose hostnames an earlier
	// nodes file knew (carried over by Save: Heat no longer has them), so
	// that naming one again is recognised as done.
	RemovedMembers []Member `yaml:"removed_members,omitempty"`
	// Members are the members, in index order.
	Members []Member `yaml:"members"`
}

// Member is one node of a group.
type Member struct {
	Index    string `yaml:"index"`
	Hostname string `yaml:"hostname"`
}

// HostnameAttr is the attribute the members of a node group have (THT's
// role templates and the sample's output "hostname").
const HostnameAttr = "hostname"

// FindNodes reads the node groups of stack ref from Heat: the top-level
// ResourceGroups (one list call), the members of each (one list call on its
// nested stack: their names are the indices) and each member's hostname
// output (one call per member: Heat's resource show resolves no member
// attribute of a group, only its removed_rsrc_list, which one more call per
// group reads), and the stack's template (one call) for the parameters of
// count and removal_policies. A group whose members are not stacks with a
// hostname output is not a node group; it is left out with a warning.
func FindNodes(ctx context.Context, c *heatapi.Client, ref heatapi.StackRef) (*Nodes, []string, error) {
	var warnings []string
	n := &Nodes{Stack: ref.Name, Groups: []Group{}}
	res, err := c.ListResources(ctx, ref, heatapi.ResourceListOpts{Type: []string{"OS::Heat::ResourceGroup"}})
	if err != nil {
		return nil, nil, fmt.Errorf("listing the ResourceGroups of %s: %w", ref.Name, err)
	}
	if len(res) == 0 {
		return n, nil, nil
	}
	tmpl, err := c.GetTemplate(ctx, ref)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the template of %s: %w", ref.Name, err)
	}
	defs, _ := tmpl["resources"].(map[string]any)
	sort.Slice(res, func(i, j int) bool { return res[i].Name < res[j].Name })
	for _, r := range res {
		if r.Type != "OS::Heat::ResourceGroup" {
			continue
		}
		g, why, err := readGroup(ctx, c, ref, r, defs[r.Name])
		if err != nil {
			return nil, nil, err
		}
		if why != "" {
			warnings = append(warnings, fmt.Sprintf("ResourceGroup %s: %s: not a node group", r.Name, why))
			continue
		}
		n.Groups = append(n.Groups, g)
	}
	return n, warnings, nil
}

// memberCalls bounds the concurrent calls for members' hostnames.
const memberCalls = 4

// readGroup reads one ResourceGroup; why says why it is not a node group.
func readGroup(ctx context.Context, c *heatapi.Client, top heatapi.StackRef, r heatapi.Resource, def any) (Group, string, error) {
	g := Group{Resource: r.Name, Role: r.Name, Removed: []string{}, Members: []Member{}}
	d, _ := def.(map[string]any)
	props, _ := d["properties"].(map[string]any)
	if rd, ok := props["resource_def"].(map[string]any); ok {
		if t, ok := rd["type"].(string); ok && strings.HasPrefix(t, "OS::TripleO::") && !strings.Contains(strings.TrimPrefix(t, "OS::TripleO::"), "::") {
			g.Role = strings.TrimPrefix(t, "OS::TripleO::")
		}
	}
	g.CountParameter = getParam(props["count"])
	g.RemovalPoliciesParameter = getParam(props["removal_policies"])

	got, err := c.GetResourceAttrs(ctx, top, r.Name, "removed_rsrc_list")
	if err != nil {
		return g, "", fmt.Errorf("reading ResourceGroup %s: %w", r.Name, err)
	}
	if rl, ok := got.Attributes["removed_rsrc_list"].([]any); ok {
		for _, v := range rl {
			g.Removed = append(g.Removed, fmt.Sprint(v))
		}
		sortIndices(g.Removed)
	}
	nested, ok := r.NestedStack()
	if !ok {
		if r.PhysicalID == "" {
			return g, "", nil // no member was ever made
		}
		return g, "no nested stack", nil
	}
	members, err := c.ListResources(ctx, nested, heatapi.ResourceListOpts{})
	if err != nil {
		return g, "", fmt.Errorf("listing the members of ResourceGroup %s: %w", r.Name, err)
	}
	sort.Slice(members, func(i, j int) bool { return lessIndex(members[i].Name, members[j].Name) })
	g.Members = make([]Member, len(members))
	whys := make([]string, len(members))
	errs := make([]error, len(members))
	sem := make(chan struct{}, memberCalls)
	var wg sync.WaitGroup
	for i, m := range members {
		if _, err := strconv.Atoi(m.Name); err != nil {
			return g, fmt.Sprintf("member %q is not an index", m.Name), nil
		}
		g.Members[i].Index = m.Name
		ms, ok := m.NestedStack()
		if !ok {
			return g, fmt.Sprintf("member %s (%s) is not a stack", m.Name, m.Type), nil
		}
		wg.Add(1)
		go func(i int, ms heatapi.StackRef) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out, err := c.GetOutput(ctx, ms, HostnameAttr)
			switch {
			case heatapi.IsNotFound(err):
				whys[i] = fmt.Sprintf("member %s has no %s output", members[i].Name, HostnameAttr)
			case err != nil:
				errs[i] = fmt.Errorf("reading the %s of member %s of %s: %w", HostnameAttr, members[i].Name, r.Name, err)
			default:
				h, _ := out.Value.(string)
				if h == "" {
					whys[i] = fmt.Sprintf("member %s has no %s (%v)", members[i].Name, HostnameAttr, firstNonEmpty(out.Error, fmt.Sprint(out.Value)))
				}
				g.Members[i].Hostname = h
			}
		}(i, ms)
	}
	wg.Wait()
	for i := range members {
		if errs[i] != nil {
			return g, "", errs[i]
		}
		if whys[i] != "" {
			return g, whys[i], nil
		}
	}
	return g, "", nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// getParam returns P of {get_param: P} (or {get_param: [P]}), else "".
func getParam(v any) string {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return ""
	}
	switch p := m["get_param"].(type) {
	case string:
		return p
	case []any:
		if len(p) == 1 {
			s, _ := p[0].(string)
			return s
		}
	}
	return ""
}

// sortIndices sorts member names as integers (non-integers last, by name).
func sortIndices(s []string) {
	sort.SliceStable(s, func(i, j int) bool { return lessIndex(s[i], s[j]) })
}

func lessIndex(x, y string) bool {
	a, ea := strconv.Atoi(x)
	b, eb := strconv.Atoi(y)
	switch {
	case ea == nil && eb == nil:
		return a < b
	case ea == nil:
		return true
	case eb == nil:
		return false
	}
	return x < y
}

// ReadNodes reads the nodes file of the last deploy.
func (l Layout) ReadNodes() (*Nodes, error) {
	b, err := os.ReadFile(l.Nodes())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist: deploy %s with this collection first (the deploy saves the nodes of the stack there)", l.Nodes(), l.Stack)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the nodes of the last deploy: %w", err)
	}
	var n Nodes
	if err := yaml.Unmarshal(b, &n); err != nil {
		return nil, fmt.Errorf("nodes file %s: %w", l.Nodes(), err)
	}
	return &n, nil
}
