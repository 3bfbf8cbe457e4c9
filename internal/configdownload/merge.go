package configdownload

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The inventory of several stacks (multi-stack, DCN: a central stack and
// edge stacks) is tripleo-common stable/wallaby's TripleoInventories of
// their plans, as tripleo-ansible-inventory --stack central,dcn0 writes it
// (inventories.py _merge(dynamic=False) and write_static_inventory): one
// Undercloud (the first stack's, with every plan in plans and no plan), every
// group of a stack as <stack>_<group> under a top-level group of its own name
// (children gathered from every stack), and a group per stack holding its
// <stack>_allovercloud. It is made from each stack's config-download
// inventory (InventoryFile), so no Heat has to run.

// StackInventory is one stack's config-download inventory, as
// config_download wrote it (InventoryFile, wallaby or zed).
type StackInventory struct {
	Stack string
	// Path names the file in messages.
	Path string
	Data []byte
}

// MergeInventories returns the inventory of stacks, in their order (the
// first one's Undercloud is kept, as tripleo-common keeps it), as the YAML
// text tripleo-common's write_static_inventory writes.
func MergeInventories(stacks []StackInventory) ([]byte, error) {
	if len(stacks) == 0 {
		return nil, fmt.Errorf("no stack to merge the inventory of")
	}
	seen := map[string]bool{}
	plans := make([]*Object, 0, len(stacks))
	for _, s := range stacks {
		if seen[s.Stack] {
			return nil, fmt.Errorf("stack %s is given twice: give each stack once", s.Stack)
		}
		seen[s.Stack] = true
		inv, err := planOf(s)
		if err != nil {
			return nil, err
		}
		plans = append(plans, inv)
	}
	merged, err := mergePlans(stacks, plans)
	if err != nil {
		return nil, err
	}
	return dumpYAMLOrdered(merged), nil
}

// planOf reads one stack's inventory and returns its plan's inventory
// (TripleoInventory.list(dynamic=False)): a wallaby inventory, already the
// merge of that one plan (Undercloud's vars have plans), is taken apart;
// a zed one is the plan's inventory.
func planOf(s StackInventory) (*Object, error) {
	v, err := parseYAMLObject(s.Data)
	if err != nil {
		return nil, fmt.Errorf("inventory %s of stack %s: %w", s.Path, s.Stack, err)
	}
	inv := asObject(v)
	uc := asObject(inv.Value("Undercloud"))
	uv := asObject(uc.Value("vars"))
	if uv == nil {
		return nil, fmt.Errorf("inventory %s of stack %s has no Undercloud group with vars: it is not a config-download inventory "+
			"(run config_download for the stack again)", s.Path, s.Stack)
	}
	if p := uv.Value("plan"); p != s.Stack {
		return nil, fmt.Errorf("inventory %s is the inventory of plan %v, not of stack %s: give each stack with its own working dir",
			s.Path, p, s.Stack)
	}
	if !uv.Has("plans") {
		return inv, nil
	}
	return unmerge(s, inv)
}

// unmerge is the plan inventory the single-plan merge of stack s came from:
// its <stack>_<group> groups under their names (children too), without the
// top-level groups the merge added (children exactly <stack>_<their name>)
// and the <stack> group.
func unmerge(s StackInventory, m *Object) (*Object, error) {
	plan := s.Stack
	prefix := plan + "_"
	out := NewObject()
	uc := asObject(m.Value("Undercloud")).Copy()
	uv := asObject(uc.Value("vars")).Copy()
	uv.Delete("plans")
	uc.Set("vars", uv)
	out.Set("Undercloud", uc)
	for _, key := range m.Keys() {
		if key == "Undercloud" || key == plan || addedTop(m, key, prefix) {
			continue
		}
		if !strings.HasPrefix(key, prefix) {
			return nil, fmt.Errorf("inventory %s of stack %s has group %s, neither %s<group> nor a group of those: "+
				"it is not a config-download inventory of that stack", s.Path, plan, key, prefix)
		}
		g := asObject(m.Value(key))
		if g == nil {
			return nil, fmt.Errorf("inventory %s of stack %s: group %s is not a mapping", s.Path, plan, key)
		}
		if g.Has("children") {
			ng := g.Copy()
			kids := NewObject()
			for _, c := range asObject(g.Value("children")).Keys() {
				if !strings.HasPrefix(c, prefix) {
					return nil, fmt.Errorf("inventory %s of stack %s: group %s has child %s, not %s<group>", s.Path, plan, key, c, prefix)
				}
				kids.Set(strings.TrimPrefix(c, prefix), NewObject())
			}
			ng.Set("children", kids)
			g = ng
		}
		out.Set(strings.TrimPrefix(key, prefix), g)
	}
	return out, nil
}

// addedTop says whether group key of m is one the merge added: children
// exactly <prefix><key>, nothing else.
func addedTop(m *Object, key, prefix string) bool {
	g := asObject(m.Value(key))
	if g == nil || g.Len() != 1 {
		return false
	}
	kids := asObject(g.Value("children"))
	return kids.Len() == 1 && kids.Has(prefix+key)
}

// mergePlans is TripleoInventories._merge(dynamic=False).
func mergePlans(stacks []StackInventory, plans []*Object) (*Object, error) {
	ret := NewObject()
	var planNames []string
	for i, inv := range plans {
		stack := stacks[i].Stack
		uc := asObject(inv.Value("Undercloud"))
		if !ret.Has("Undercloud") {
			ret.Set("Undercloud", uc)
			uc.Set("hosts", hostsOf([]string{"undercloud"}))
		}
		if p, ok := asObject(uc.Value("vars")).Get("plan"); ok && p != nil {
			planNames = append(planNames, pyStr(p))
		}
		for _, key := range inv.Keys() {
			if key == "Undercloud" {
				continue
			}
			newKey := stack + "_" + key
			if key != stack {
				top := asObject(ret.SetDefault(key, Obj("children", NewObject())))
				kids := asObject(top.Value("children"))
				if kids == nil {
					// Python would stop with a KeyError.
					return nil, fmt.Errorf("stack %s's group %s is also a group of hosts of another stack (%s): "+
						"tripleo-common cannot merge these inventories", stack, key, stacks[i].Path)
				}
				kids.Set(newKey, NewObject())
			}
			mergeGroup(ret, stack, key, asObject(inv.Value(key)))
		}
	}
	uv := sub(asObject(ret.Value("Undercloud")), "vars")
	if len(plans) > 1 {
		uv.Delete("plan")
	}
	sort.Strings(planNames)
	uv.Set("plans", stringList(planNames))
	return ret, nil
}

// parseYAMLObject reads YAML into the values of a rendering (mappings as
// *Object in the file's order, integers and floats as Number).
func parseYAMLObject(data []byte) (any, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not YAML: %w", err)
	}
	if len(doc.Content) != 1 {
		return nil, fmt.Errorf("empty YAML document")
	}
	return fromNode(doc.Content[0])
}

func fromNode(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.AliasNode:
		return fromNode(n.Alias)
	case yaml.MappingNode:
		o := NewObject()
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a mapping key that is not a scalar", k.Line)
			}
			val, err := fromNode(v)
			if err != nil {
				return nil, err
			}
			o.Set(k.Value, val)
		}
		return o, nil
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := fromNode(c)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				return nil, fmt.Errorf("line %d: %w", n.Line, err)
			}
			return b, nil
		case "!!int":
			var i int64
			if err := n.Decode(&i); err != nil {
				return nil, fmt.Errorf("line %d: an integer out of range: %w", n.Line, err)
			}
			return Number(strconv.FormatInt(i, 10)), nil
		case "!!float":
			var f float64
			if err := n.Decode(&f); err != nil {
				return nil, fmt.Errorf("line %d: %w", n.Line, err)
			}
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("line %d: %s is not a number an inventory holds", n.Line, n.Value)
			}
			s := strconv.FormatFloat(f, 'g', -1, 64)
			if !strings.ContainsAny(s, ".eE") {
				s += ".0"
			}
			return Number(s), nil
		case "!!str":
			return n.Value, nil
		}
		return nil, fmt.Errorf("line %d: a value of type %s", n.Line, n.ShortTag())
	}
	return nil, fmt.Errorf("line %d: an unexpected YAML node", n.Line)
}
