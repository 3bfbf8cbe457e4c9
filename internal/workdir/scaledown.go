package workdir

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
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

// ScaleDownOptions are the operator's choices of a scale-down.
type ScaleDownOptions struct {
	// AllowEmptyGroup lets a scale-down remove every node of a
	// control-plane group (controlPlane); without it that is refused.
	AllowEmptyGroup bool
}

// ScaleDownPlan is what a scale-down does: the nodes it removes, and the
// environment it leaves for every later deploy.
type ScaleDownPlan struct {
	// Hosts and Options are what the plan was made for (WriteScaleDown
	// makes it again from them).
	Hosts   []string
	Options ScaleDownOptions
	// Remove are the nodes removed now; Already those named that earlier
	// scale-downs removed (nothing runs for them again).
	Remove, Already []Removal
	// Counts is, per role with a removal, its node count from now on.
	Counts map[string]int
	// Parameters and ParameterDefaults are the environment's two sections
	// as they are written (Parameters is nil when the file has none).
	Parameters, ParameterDefaults map[string]any
	// Limit are the inventory's names of the nodes removed now, for
	// ansible-playbook --limit; NotInLimit the nodes removed now it leaves
	// out (see limitOf). Both are empty when nothing is removed now.
	Limit, NotInLimit []string
	// Warnings are for the operator (a group left with no node, a
	// parameter in both sections, a node the limit leaves out).
	Warnings []string
	// Before is the environment file's content as read (nil when there is
	// none); Content its new content; Changed whether it is (or would be)
	// written: only when a node is removed now and the file differs.
	Before, Content []byte
	Changed         bool
}

// LimitPattern is Limit joined with ',' as ansible-playbook --limit takes
// it; why that selects exactly those hosts is said at limitOf.
func (p *ScaleDownPlan) LimitPattern() string { return strings.Join(p.Limit, ",") }

// scaleDownHeader opens the scale-down environment.
const scaleDownHeader = `# The nodes removed from stack %s by ephemeral.heat scale-downs (overcloud_workdir
# action=scale_down), accumulated: for each node group, its count from now on and the
# indices of its removed members (Heat's ResourceGroup removal_policies, given through
# the parameter the template passes to it: THT's <Role>Count and <Role>RemovalPolicies,
# as tripleo-ansible's baremetal_deploy writes them). The deploy playbook includes it after
# the operator's environments; its "parameters" still win over it.
`

// controllerLike matches the role or resource name of a group that must
// keep a node unless the operator says otherwise (ControllerLike).
var controllerLike = regexp.MustCompile(`(?i)controller`)

// ControllerLike says whether g's role or resource name contains
// "controller", in any case (THT's Controller, ControllerOpenstack,
// CellController, ...).
func ControllerLike(g *Group) bool {
	return controllerLike.MatchString(g.Role) || controllerLike.MatchString(g.Resource)
}

// ClusterServices are THT's names (the EnabledServices output's) of the
// services whose last node going takes the overcloud's control plane down:
// the Pacemaker cluster, the Galera database, RabbitMQ, the OVN databases,
// Keystone, HAProxy (the VIPs) and the Ceph monitors. THT's split-control-
// plane roles carry them under other names than Controller (roles/
// Database.yaml, Messaging.yaml, Telemetry.yaml run Pacemaker; CephAll the
// Ceph monitors).
var ClusterServices = []string{"pacemaker", "mysql", "oslo_messaging_rpc", "rabbitmq", "ovn_dbs", "keystone", "haproxy", "ceph_mon"}

// enabledServices reads the last deploy's EnabledServices output (role
// name to its services): nil when it was not saved or is empty (a template
// without such an output), nil and a warning when it is not such a map.
func (l Layout) enabledServices() (map[string][]string, string, error) {
	v, ok, err := l.savedOutput(OutputEnabledServices)
	if err != nil || !ok || v == nil {
		return nil, "", err
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		return nil, fmt.Sprintf("saved output %s is not a map of role names to service lists (%T): only the group names say which groups keep a node", l.Output(OutputEnabledServices), v), nil
	}
	out := map[string][]string{}
	for role, list := range m {
		items, _ := list.([]any)
		for _, it := range items {
			if name, ok := it.(string); ok {
				out[role] = append(out[role], name)
			}
		}
	}
	return out, "", nil
}

// controlPlane says whether a scale-down refuses to remove every node of g
// (unless ScaleDownOptions.AllowEmptyGroup), and why: g is Controller-like
// (ControllerLike), or its role runs one of ClusterServices (services, the
// last deploy's EnabledServices). A group of another name that runs none
// of them may be emptied (with a warning).
func controlPlane(g *Group, services map[string][]string) (bool, string) {
	if ControllerLike(g) {
		return true, "its name contains \"controller\""
	}
	var runs []string
	for _, svc := range services[g.Role] {
		for _, c := range ClusterServices {
			if svc == c {
				runs = append(runs, svc)
			}
		}
	}
	if len(runs) > 0 {
		return true, "role " + g.Role + " runs " + strings.Join(runs, ", ")
	}
	return false, ""
}

// PlanScaleDown maps hostnames to their group and index in the last
// deploy's nodes file and computes the scale-down environment: the
// removals of the earlier scale-downs (the current file) plus these, and
// each affected group's count, its members at the last deploy that are not
// removed. Nothing is written. Refused before anything is written or run:
//   - an empty or malformed host name (CheckHostname), an unknown one;
//   - a nodes file or scale-down environment that is not as we write it
//     (ReadNodes, readScaleDownEnv);
//   - a group whose count or removal_policies the template does not take
//     from a parameter;
//   - removing every node of a control-plane group (controlPlane) unless
//     o.AllowEmptyGroup; any other group emptied is a warning.
//
// A count cannot go below zero: only the members of the last deploy can
// be named, each counted once (a node named twice, or removed by an
// earlier scale-down, is not removed again).
func (l Layout) PlanScaleDown(hosts []string, o ScaleDownOptions) (*ScaleDownPlan, error) {
	if len(hosts) == 0 {
		return nil, fmt.Errorf("no hostname given: name the nodes to remove")
	}
	var bad []string
	for i, h := range hosts {
		if err := CheckHostname(strings.TrimSpace(h)); err != nil {
			if strings.TrimSpace(h) == "" {
				err = fmt.Errorf("hosts[%d] is empty: give each node's host name", i)
			}
			bad = append(bad, err.Error())
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("hosts: %s; nothing was run", strings.Join(bad, "; "))
	}
	nodes, err := l.ReadNodes()
	if err != nil {
		return nil, err
	}
	env, err := l.readScaleDownEnv(nodes)
	if err != nil {
		return nil, err
	}
	services, warning, err := l.enabledServices()
	if err != nil {
		return nil, fmt.Errorf("%w; nothing was run", err)
	}
	params := env.effective()
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
	}
	for gi := range nodes.Groups {
		g := &nodes.Groups[gi]
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
	p := &ScaleDownPlan{Hosts: append([]string{}, hosts...), Options: o, Remove: []Removal{}, Already: []Removal{},
		Counts: map[string]int{}, Limit: []string{}, NotInLimit: []string{}, Warnings: env.warnings, Before: env.raw}
	if warning != "" {
		p.Warnings = append(p.Warnings, warning)
	}
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
			unknown = append(unknown, fmt.Sprintf("%q", strings.TrimSpace(h)))
			continue
		}
		g := w.g
		if g.CountParameter == "" || g.RemovalPoliciesParameter == "" {
			return nil, fmt.Errorf("%s is a member of ResourceGroup %s, whose count and removal_policies the template does not both take from a parameter ({get_param: NAME}): a scale-down cannot name the removed member; give the group count: {get_param: <Role>Count} and removal_policies: {get_param: <Role>RemovalPolicies}", w.m.Hostname, g.Resource)
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
	var emptied []string
	for gi := range nodes.Groups {
		g := &nodes.Groups[gi]
		if touched[g.Resource] == nil && !hasRemovals(params, g) {
			continue
		}
		// Only members of the last deploy can be named, each once: a
		// count cannot go below zero.
		left := len(g.Members) - countRemovedMembers(g, removed[g.Resource])
		if touched[g.Resource] != nil && left == 0 && len(g.Members) > 0 {
			what := fmt.Sprintf("group %s (role %s) has no node left (%s: 0)", g.Resource, g.Role, g.CountParameter)
			cp, why := controlPlane(g, services)
			switch {
			case cp && !o.AllowEmptyGroup:
				emptied = append(emptied, fmt.Sprintf("removing %s leaves group %s (role %s) with no node (%s: 0), and %s",
					namesIn(p.Remove, g), g.Resource, g.Role, g.CountParameter, why))
			case cp:
				p.Warnings = append(p.Warnings, "allow_empty_group: "+what)
			default:
				p.Warnings = append(p.Warnings, what+": every later deploy creates none")
			}
		}
		idx := make([]string, 0, len(removed[g.Resource]))
		for ix := range removed[g.Resource] {
			idx = append(idx, ix)
		}
		if len(p.Remove) > 0 {
			env.set(g.CountParameter, left)
			env.set(g.RemovalPoliciesParameter, removalPolicies(idx))
		}
		p.Counts[g.Role] = left
	}
	if len(emptied) > 0 {
		return nil, fmt.Errorf("%s: a control-plane group (its role or resource name contains \"controller\", or its role runs "+strings.Join(ClusterServices, ", ")+
			" in the last deploy's EnabledServices) keeps a node unless allow_empty_group: true "+
			"(role variable overcloud_scale_down_allow_empty_group, playbook variable scale_down_allow_empty_group) says to remove them all; nothing was run",
			strings.Join(emptied, "; "))
	}
	p.Parameters, p.ParameterDefaults = env.params, env.defaults
	if len(p.Remove) == 0 {
		// Nothing removed now: nothing to write.
		p.Content = env.raw
		return p, nil
	}
	p.Content = append([]byte(fmt.Sprintf(scaleDownHeader, l.Stack)), yamlOf(env.document())...)
	p.Changed = !bytes.Equal(p.Content, env.raw) || env.mode != fsutil.SecretFileMode
	if err := l.limitOf(p); err != nil {
		return nil, err
	}
	return p, nil
}

// removalPolicies is a group's removal policies value in the scale-down
// environment: [{resource_list: [its removed indices]}], the indices
// sorted, numbers where they are (as Heat's ResourceGroup takes them).
// It sorts idx.
func removalPolicies(idx []string) []any {
	sortIndices(idx)
	list := make([]any, 0, len(idx))
	for _, ix := range idx {
		if n, err := strconv.Atoi(ix); err == nil {
			list = append(list, n)
		} else {
			list = append(list, ix)
		}
	}
	return []any{map[string]any{"resource_list": list}}
}

// namesIn lists the host names of rs in g.
func namesIn(rs []Removal, g *Group) string {
	var h []string
	for _, r := range rs {
		if r.Resource == g.Resource {
			h = append(h, r.Hostname)
		}
	}
	return strings.Join(h, ", ")
}

// ApplyScaleDown plans the removal of hosts from the nodes file and the
// scale-down environment as they are now, and writes the environment
// (mode 0600, atomically) when it changes: the whole read, compute and
// write, for a caller that holds the working dir's lock to run at once, so
// that no removal written meanwhile by another scale-down is lost.
func (l Layout) ApplyScaleDown(hosts []string, o ScaleDownOptions) (*ScaleDownPlan, error) {
	p, err := l.PlanScaleDown(hosts, o)
	if err != nil {
		return nil, err
	}
	if !p.Changed {
		return p, nil
	}
	if err := fsutil.WriteFileAtomic(l.ScaleDown(), p.Content, fsutil.SecretFileMode); err != nil {
		return nil, fmt.Errorf("writing the scale-down environment: %w", err)
	}
	return p, nil
}

// WriteScaleDown writes the environment of plan p made again, for the same
// hosts and options, from the files as they are at write time
// (ApplyScaleDown): a removal another scale-down wrote since p was made is
// kept. p becomes the plan written.
func (l Layout) WriteScaleDown(p *ScaleDownPlan) error {
	fresh, err := l.ApplyScaleDown(p.Hosts, p.Options)
	if err != nil {
		return err
	}
	*p = *fresh
	return nil
}

// scaleDownLimit bounds the scale-down environment.
var scaleDownLimit = fsutil.Limit{Bytes: 16 << 20}

// scaleDownFile is the scale-down environment as read: both of its
// parameter sections, which Heat merges with parameters winning, and any
// other top-level key, all kept when it is written again.
type scaleDownFile struct {
	raw              []byte
	mode             fs.FileMode
	other            map[string]any // top-level keys but the two sections
	params, defaults map[string]any // parameters (nil when absent), parameter_defaults
	warnings         []string
}

// effective is what Heat takes of the two sections: parameter_defaults,
// with parameters winning where both name a key.
func (e *scaleDownFile) effective() map[string]any {
	m := make(map[string]any, len(e.defaults)+len(e.params))
	for k, v := range e.defaults {
		m[k] = v
	}
	for k, v := range e.params {
		m[k] = v
	}
	return m
}

// set writes a value where Heat reads it: in parameters when that section
// names the key (a value in parameter_defaults would lose to it), else in
// parameter_defaults. A shadowed parameter_defaults value is left as it was.
func (e *scaleDownFile) set(key string, v any) {
	if _, ok := e.params[key]; ok {
		e.params[key] = v
		return
	}
	e.defaults[key] = v
}

// document is the environment to write.
func (e *scaleDownFile) document() map[string]any {
	d := make(map[string]any, len(e.other)+2)
	for k, v := range e.other {
		d[k] = v
	}
	d["parameter_defaults"] = e.defaults
	if e.params != nil {
		d["parameters"] = e.params
	}
	return d
}

// readScaleDownEnv reads the scale-down environment (none is an empty
// one) through the bounded reader and checks it: a mapping whose
// parameters and parameter_defaults are mappings, and, for each group of
// nodes, its count parameter an integer 0 or more and its removal
// policies parameter a list of {resource_list: [member indices]}. A
// refusal names the file, the section, the key and its line.
func (l Layout) readScaleDownEnv(nodes *Nodes) (*scaleDownFile, error) {
	e := &scaleDownFile{other: map[string]any{}, defaults: map[string]any{}, mode: fsutil.SecretFileMode}
	b, err := fsutil.ReadOwn(l.ScaleDown(), scaleDownLimit, "scale-down environment")
	if errors.Is(err, fs.ErrNotExist) {
		return e, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the removals of earlier scale-downs: %w", err)
	}
	e.raw = b
	if st, err := os.Lstat(l.ScaleDown()); err == nil {
		e.mode = st.Mode().Perm()
	}
	refuse := func(err error) error {
		return fmt.Errorf("scale-down environment %s: %w: it holds the removals of earlier scale-downs; fix that entry by hand "+
			"(remove the file only if every node it names is back)", l.ScaleDown(), err)
	}
	root, err := parseDoc(b)
	if err != nil {
		return nil, refuse(err)
	}
	top, err := asMap(root, "the file")
	if err != nil {
		return nil, refuse(err)
	}
	sections := map[string]*ymap{}
	for _, k := range top.keys {
		v := top.val[k]
		if k != "parameters" && k != "parameter_defaults" {
			var x any
			if err := v.Decode(&x); err != nil {
				return nil, refuse(fmt.Errorf("%s (line %d): %s", k, v.Line, yamlErrorText(err)))
			}
			e.other[k] = x
			continue
		}
		m := map[string]any{}
		if !isNull(v) {
			sm, err := asMap(v, k)
			if err != nil {
				return nil, refuse(err)
			}
			sections[k] = sm
			if err := v.Decode(&m); err != nil {
				return nil, refuse(fmt.Errorf("%s (line %d): %s", k, v.Line, yamlErrorText(err)))
			}
		}
		if k == "parameters" {
			e.params = m
		} else {
			e.defaults = m
		}
	}
	for gi := range nodes.Groups {
		g := &nodes.Groups[gi]
		var inBoth []string
		for _, sec := range []string{"parameters", "parameter_defaults"} {
			sm := sections[sec]
			if sm == nil {
				continue
			}
			if n, ok := sm.val[g.CountParameter]; ok && g.CountParameter != "" {
				if v, ok := intValue(n); !ok || v < 0 {
					return nil, refuse(fmt.Errorf("%s.%s (line %d) is %s: a node count is an integer 0 or more", sec, g.CountParameter, n.Line, countWhat(n)))
				}
			}
			if n, ok := sm.val[g.RemovalPoliciesParameter]; ok && g.RemovalPoliciesParameter != "" {
				if err := checkRemovalPolicies(n); err != nil {
					return nil, refuse(fmt.Errorf("%s.%s (line %d): %v", sec, g.RemovalPoliciesParameter, n.Line, err))
				}
			}
		}
		for _, k := range []string{g.CountParameter, g.RemovalPoliciesParameter} {
			if _, a := e.params[k]; a && k != "" {
				if _, b := e.defaults[k]; b {
					inBoth = append(inBoth, k)
				}
			}
		}
		for _, k := range inBoth {
			e.warnings = append(e.warnings, fmt.Sprintf("%s names %s under both parameters and parameter_defaults: parameters wins, as in Heat; "+
				"the scale-down updates it there and leaves the parameter_defaults value as it was", l.ScaleDown(), k))
		}
	}
	return e, nil
}

// countWhat says what a bad count is (a negative number, or its kind).
func countWhat(n *yaml.Node) string {
	if v, ok := intValue(n); ok && v < 0 {
		return "negative"
	}
	return kindName(n)
}

// checkRemovalPolicies checks a removal_policies value: a list of
// {resource_list: [index, ...]}, each index a number 0 or more or a member
// index as a string.
func checkRemovalPolicies(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("it is %s, not a list of {resource_list: [member indices]}", kindName(n))
	}
	for i, pn := range n.Content {
		pm, err := asMap(pn, fmt.Sprintf("item %d", i))
		if err != nil {
			return fmt.Errorf("%v: each item is {resource_list: [member indices]}", err)
		}
		rl, ok := pm.val["resource_list"]
		if !ok {
			return fmt.Errorf("item %d (line %d) lacks resource_list", i, pn.Line)
		}
		if rl.Kind != yaml.SequenceNode {
			return fmt.Errorf("item %d: resource_list (line %d) is %s, not a list of member indices", i, rl.Line, kindName(rl))
		}
		for j, x := range rl.Content {
			if _, ok := indexOf(x); !ok {
				return fmt.Errorf("item %d: resource_list[%d] (line %d) is not a member index (an integer 0 or more)", i, j, x.Line)
			}
		}
	}
	return nil
}

// inventoryLimit bounds the config-download inventory.
var inventoryLimit = fsutil.Limit{Bytes: 64 << 20}

// limitOf sets p.Limit to the names the config-download inventory gives
// the nodes removed now, and p.NotInLimit to those it cannot name safely.
// A name is in the limit only when it
//   - is a host name by CheckHostname (none of the characters of an Ansible
//     host pattern: ',' ':' '!' '&' '*' '?' '[' ']' '~' '@', spaces; so ','
//     between two names only separates them);
//   - is a host the inventory defines (a key of some group's hosts), spelled
//     as the inventory does (Ansible's host names are case-sensitive);
//   - names no group of the inventory, nor all or ungrouped (a pattern that
//     names a group selects the group's hosts).
//
// So LimitPattern selects exactly those hosts, whatever the nodes file
// says. A node left out (the inventory missing, or not listing it, or
// listing a group of its name) is named in NotInLimit and a warning: the
// scale playbook cannot run on it (overcloud_scale_down refuses to run it
// then, unless its run is turned off).
func (l Layout) limitOf(p *ScaleDownPlan) error {
	hosts, groups, err := l.inventoryNames()
	if errors.Is(err, fs.ErrNotExist) {
		for _, r := range p.Remove {
			p.NotInLimit = append(p.NotInLimit, r.Hostname)
		}
		p.Warnings = append(p.Warnings, fmt.Sprintf("the config-download inventory %s does not exist: the scale playbook cannot run on %s",
			l.Inventory(), strings.Join(p.NotInLimit, ", ")))
		return nil
	}
	if err != nil {
		return err
	}
	for _, r := range p.Remove {
		name, why := "", ""
		switch cands := hosts[strings.ToLower(r.Hostname)]; {
		case len(cands) == 0:
			why = "the inventory does not list it"
		case len(groups[strings.ToLower(r.Hostname)]) > 0:
			why = "the inventory also has a group of that name, which --limit would select"
		case len(cands) == 1:
			name = cands[0]
		default:
			for _, c := range cands {
				if c == r.Hostname {
					name = c
				}
			}
			if name == "" {
				why = fmt.Sprintf("the inventory lists it %d times, spelled differently", len(cands))
			}
		}
		if name != "" && CheckHostname(name) != nil {
			name, why = "", "the inventory spells it as no host name"
		}
		if name == "" {
			p.NotInLimit = append(p.NotInLimit, r.Hostname)
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s is left out of the scale playbook's limit: %s (%s)", r.Hostname, why, l.Inventory()))
			continue
		}
		p.Limit = append(p.Limit, name)
	}
	return nil
}

// inventoryNames reads the host names and group names of the
// config-download inventory (YAML: groups of hosts, vars and children),
// both by their lower-case form, each with its spellings.
func (l Layout) inventoryNames() (hosts, groups map[string][]string, err error) {
	path := l.Inventory()
	b, err := fsutil.ReadOwn(path, inventoryLimit, "config-download inventory")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("reading the hosts of the inventory: %w", err)
	}
	refuse := func(err error) error {
		return fmt.Errorf("config-download inventory %s: %w: it should be config-download's tripleo-ansible-inventory.yaml; redeploy to rewrite it", path, err)
	}
	root, err := parseDoc(b)
	if err != nil {
		return nil, nil, refuse(err)
	}
	top, err := asMap(root, "the file")
	if err != nil {
		return nil, nil, refuse(err)
	}
	hosts, groups = map[string][]string{}, map[string][]string{"all": {"all"}, "ungrouped": {"ungrouped"}}
	var walk func(name string, n *yaml.Node, depth int) error
	walk = func(name string, n *yaml.Node, depth int) error {
		if k := strings.ToLower(name); !containsString(groups[k], name) {
			groups[k] = append(groups[k], name)
		}
		if depth > 50 {
			return fmt.Errorf("groups nested deeper than 50 levels under %q", truncateName(name))
		}
		if n == nil || isNull(n) {
			return nil
		}
		g, err := asMap(n, "group "+truncateName(name))
		if err != nil {
			return err
		}
		if hn, ok := g.val["hosts"]; ok && !isNull(hn) {
			hm, err := asMap(hn, "hosts of group "+truncateName(name))
			if err != nil {
				return err
			}
			for _, h := range hm.keys {
				k := strings.ToLower(h)
				if !containsString(hosts[k], h) {
					hosts[k] = append(hosts[k], h)
				}
			}
		}
		if cn, ok := g.val["children"]; ok && !isNull(cn) {
			cm, err := asMap(cn, "children of group "+truncateName(name))
			if err != nil {
				return err
			}
			for _, c := range cm.keys {
				if err := walk(c, cm.val[c], depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, k := range top.keys {
		if err := walk(k, top.val[k], 0); err != nil {
			return nil, nil, refuse(err)
		}
	}
	return hosts, groups, nil
}

func containsString(s []string, x string) bool {
	for _, e := range s {
		if e == x {
			return true
		}
	}
	return false
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
