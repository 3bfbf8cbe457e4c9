package workdir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
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

// nodesEnd is the key that ends every nodes file (MarshalYAML): a file cut
// off before it, even between two complete groups or members, is refused.
const nodesEnd = "complete"

// MarshalYAML writes the nodes with nodesEnd last ("complete: true").
func (n Nodes) MarshalYAML() (any, error) {
	if n.Groups == nil {
		n.Groups = []Group{}
	}
	return struct {
		Stack    string  `yaml:"stack"`
		Groups   []Group `yaml:"groups"`
		Complete bool    `yaml:"complete"`
	}{n.Stack, n.Groups, true}, nil
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

// nodesLimit bounds the nodes file (a member takes about 60 bytes).
var nodesLimit = fsutil.Limit{Bytes: 16 << 20}

// ReadNodes reads the nodes file of the last deploy through the bounded
// reader (a FIFO, a device or a huge file is refused, never read) and checks
// it against its schema before anything uses it (checkNodes).
func (l Layout) ReadNodes() (*Nodes, error) {
	b, err := fsutil.ReadOwn(l.Nodes(), nodesLimit, "nodes file")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist: deploy %s with this collection first (the deploy saves the nodes of the stack there)", l.Nodes(), l.Stack)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the nodes of the last deploy: %w (a deploy writes this file; redeploy %s to rewrite it)", err, l.Stack)
	}
	n, err := parseNodes(b, l.Stack, true)
	if err != nil {
		return nil, fmt.Errorf("nodes file %s: %w: this file is not as a deploy writes it; redeploy %s to rewrite it", l.Nodes(), err, l.Stack)
	}
	return n, nil
}

// readPreviousNodes is ReadNodes for Save, which carries the host names
// of removed members over from the file it replaces: a file of an earlier
// version, without the end key, is taken too (what is carried is only the
// name of a member Heat says is removed, so a file cut off loses nothing
// but names).
func (l Layout) readPreviousNodes() (*Nodes, error) {
	b, err := fsutil.ReadOwn(l.Nodes(), nodesLimit, "nodes file")
	if err != nil {
		return nil, err
	}
	return parseNodes(b, l.Stack, false)
}

// hostLabel is one label of a host name (RFC 1123 2.1, RFC 952): letters,
// digits and '-', 1 to 63 characters, neither first nor last a '-'.
var hostLabel = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)

// HostnameRule says what CheckHostname accepts, for messages.
const HostnameRule = "a host name is letters, digits, '-' and '.' (RFC 1123 labels of 1 to 63 characters, " +
	"not beginning or ending with '-'; 253 characters at most)"

// CheckHostname refuses what is not a host name by RFC 1123: labels of
// letters, digits and '-', separated by dots. Such a name holds none of
// the characters of an Ansible host pattern (',' ':' '!' '&' '*' '?' '['
// ']' '~' '@', spaces), so a list of them joined with ',' is no wider than
// the hosts it names (ScaleDownPlan.Limit says what else that takes).
func CheckHostname(name string) error {
	if name == "" {
		return fmt.Errorf("the host name is empty")
	}
	if len(name) > 253 {
		return fmt.Errorf("%q is not a host name: it is %d characters long (%s)", truncateName(name), len(name), HostnameRule)
	}
	for _, label := range strings.Split(name, ".") {
		if !hostLabel.MatchString(label) {
			return fmt.Errorf("%q is not a host name (%s)", truncateName(name), HostnameRule)
		}
	}
	return nil
}

// parseNodes checks a nodes file against the schema Save writes (Nodes):
//   - stack: the stack's name; groups: a list; the end key, complete: true,
//     which the writer puts last (a file cut off mid-way lacks it, or is not
//     valid YAML), unless !requireEnd;
//   - each group: resource (unique), role, count_parameter and
//     removal_policies_parameter (each either empty or used by one group
//     only), removed (member indices) and members;
//   - each member: index, an integer 0 or more unique in its group, and
//     hostname, a host name (CheckHostname) unique across the groups,
//     compared without case as the scale-down looks them up;
//   - removed_members (optional): index and hostname of the same forms, the
//     index no member's. Their host names may repeat one of a member (a
//     HostnameMap can give a new index the name of a removed one: the member
//     wins) or of each other (a name removed twice is removed).
//
// Every refusal names the entry (groups[i].members[j], its line).
func parseNodes(data []byte, stack string, requireEnd bool) (*Nodes, error) {
	root, err := parseDoc(data)
	if err != nil {
		return nil, err
	}
	top, err := asMap(root, "the file")
	if err != nil {
		return nil, err
	}
	if requireEnd {
		end, ok := top.val[nodesEnd]
		var done bool
		if !ok || end.Tag != "!!bool" || end.Decode(&done) != nil || !done {
			return nil, fmt.Errorf("it does not end with %s: true, as every deploy of this version writes it: it was cut off mid-way, or an earlier version wrote it", nodesEnd)
		}
	}
	if err := top.require("the file", "stack", "groups"); err != nil {
		return nil, err
	}
	name, err := top.str("", "stack")
	if err != nil {
		return nil, err
	}
	if name != stack {
		return nil, fmt.Errorf("stack (line %d) is %q, not %q: it is the nodes file of another stack", line(top.val["stack"]), truncateName(name), stack)
	}
	groups, err := top.seq("", "groups")
	if err != nil {
		return nil, err
	}
	n := &Nodes{Stack: stack, Groups: make([]Group, 0, len(groups))}
	resources := map[string]int{} // resource -> group
	params := map[string]string{} // parameter -> where it is used
	hosts := map[string]string{}  // lower-case host name -> where
	for gi, gn := range groups {
		where := fmt.Sprintf("groups[%d]", gi)
		g, err := parseGroup(gn, where)
		if err != nil {
			return nil, err
		}
		where = fmt.Sprintf("groups[%d] (%s, line %d)", gi, truncateName(g.Resource), gn.Line)
		if prev, dup := resources[g.Resource]; dup {
			return nil, fmt.Errorf("%s: resource %q is also groups[%d]'s: each ResourceGroup is one group", where, truncateName(g.Resource), prev)
		}
		resources[g.Resource] = gi
		for _, p := range []struct{ key, name string }{{"count_parameter", g.CountParameter}, {"removal_policies_parameter", g.RemovalPoliciesParameter}} {
			if p.name == "" {
				continue
			}
			if prev, dup := params[p.name]; dup {
				return nil, fmt.Errorf("%s: %s %q is also the %s: one parameter cannot hold two groups' values", where, p.key, truncateName(p.name), prev)
			}
			params[p.name] = fmt.Sprintf("%s of groups[%d]", p.key, gi)
		}
		for mi, m := range g.Members {
			key := strings.ToLower(m.Hostname)
			if prev, dup := hosts[key]; dup {
				return nil, fmt.Errorf("%s: members[%d]: host name %q is also %s: a host name names one node", where, mi, truncateName(m.Hostname), prev)
			}
			hosts[key] = fmt.Sprintf("the host name of groups[%d].members[%d]", gi, mi)
		}
		n.Groups = append(n.Groups, g)
	}
	return n, nil
}

// parseGroup checks and reads one group of a nodes file.
func parseGroup(gn *yaml.Node, where string) (Group, error) {
	g := Group{Removed: []string{}, Members: []Member{}}
	m, err := asMap(gn, where)
	if err != nil {
		return g, err
	}
	if err := m.require(where, "resource", "role", "count_parameter", "removal_policies_parameter", "removed", "members"); err != nil {
		return g, err
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"resource", &g.Resource}, {"role", &g.Role}, {"count_parameter", &g.CountParameter}, {"removal_policies_parameter", &g.RemovalPoliciesParameter}} {
		if *f.dst, err = m.str(where, f.key); err != nil {
			return g, err
		}
	}
	if g.Resource == "" || g.Role == "" {
		return g, fmt.Errorf("%s (line %d): resource and role must not be empty", where, gn.Line)
	}
	removed, err := m.seq(where, "removed")
	if err != nil {
		return g, err
	}
	for i, r := range removed {
		if r.Kind != yaml.ScalarNode {
			return g, fmt.Errorf("%s.removed[%d] (line %d) is %s, not a member index", where, i, r.Line, kindName(r))
		}
		if err := checkIndex(r.Value); err != nil {
			return g, fmt.Errorf("%s.removed[%d] (line %d): %v", where, i, r.Line, err)
		}
		g.Removed = append(g.Removed, r.Value)
	}
	members, err := m.seq(where, "members")
	if err != nil {
		return g, err
	}
	indices := map[string]int{}
	for i, mn := range members {
		mw := fmt.Sprintf("%s.members[%d]", where, i)
		mem, err := parseMember(mn, mw)
		if err != nil {
			return g, err
		}
		if prev, dup := indices[mem.Index]; dup {
			return g, fmt.Errorf("%s (line %d): index %s is also members[%d]'s: each member has its own index", mw, mn.Line, mem.Index, prev)
		}
		indices[mem.Index] = i
		g.Members = append(g.Members, mem)
	}
	if _, ok := m.val["removed_members"]; ok {
		rms, err := m.seq(where, "removed_members")
		if err != nil {
			return g, err
		}
		seen := map[string]bool{}
		for i, rn := range rms {
			rw := fmt.Sprintf("%s.removed_members[%d]", where, i)
			rm, err := parseMember(rn, rw)
			if err != nil {
				return g, err
			}
			if mi, dup := indices[rm.Index]; dup {
				return g, fmt.Errorf("%s (line %d): index %s is also members[%d]'s: a removed index is never a member again", rw, rn.Line, rm.Index, mi)
			}
			if seen[rm.Index] {
				return g, fmt.Errorf("%s (line %d): index %s is listed twice", rw, rn.Line, rm.Index)
			}
			seen[rm.Index] = true
			g.RemovedMembers = append(g.RemovedMembers, rm)
		}
	}
	return g, nil
}

// parseMember checks and reads one member (or removed member).
func parseMember(n *yaml.Node, where string) (Member, error) {
	var mem Member
	m, err := asMap(n, where)
	if err != nil {
		return mem, err
	}
	if err := m.require(where, "index", "hostname"); err != nil {
		return mem, err
	}
	if mem.Index, err = m.str(where, "index"); err != nil {
		return mem, err
	}
	if err := checkIndex(mem.Index); err != nil {
		return mem, fmt.Errorf("%s.index (line %d): %v", where, line(m.val["index"]), err)
	}
	if mem.Hostname, err = m.str(where, "hostname"); err != nil {
		return mem, err
	}
	if err := CheckHostname(mem.Hostname); err != nil {
		return mem, fmt.Errorf("%s.hostname (line %d): %v", where, line(m.val["hostname"]), err)
	}
	return mem, nil
}
