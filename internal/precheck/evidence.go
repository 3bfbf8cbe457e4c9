package precheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"strings"

	"gopkg.in/yaml.v3"
)

// inventoryNetworks derives the deployed isolated networks from a
// config-download inventory (tripleo-ansible-inventory.yaml): the host
// variables <network>_ip of every overcloud host (ctlplane_ip excluded) and
// the role group variables role_networks ([InternalApi, ...]) and
// tripleo_role_networks ([internal_api, ...]). networks_lower
// ({InternalApi: internal_api}) maps snake_case names back when present.
//
// Without network isolation THT still lists every network of a role's
// roles_data entry, each with the host's ctlplane address (its noop ports
// return it): a network whose address is the host's ctlplane_ip is not an
// isolated one, and a role list naming it does not make it one unless
// another host has an address of its own on it.
func inventoryNetworks(data []byte, path string) (map[string]string, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%s: %s is not valid YAML: %v", ParamDeployedInventory, path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	top, ok := v.(map[string]any)
	if !ok {
		what := "empty"
		if v != nil {
			what = "not a YAML mapping of groups"
		}
		return nil, fmt.Errorf("%s: %s is %s; it should be config-download's tripleo-ansible-inventory.yaml", ParamDeployedInventory, path, what)
	}
	w := &invWalker{path: path, lower: map[string]string{}, snake: map[string]bool{}, camel: map[string]bool{},
		addressed: map[string]bool{}, onCtlplane: map[string]bool{}}
	for _, g := range sortedKeys(top) {
		if err := w.group(g, top[g], 0); err != nil {
			return nil, err
		}
	}
	nets := map[string]string{}
	keep := func(name string) bool {
		k := netKey(name)
		return w.addressed[k] || !w.onCtlplane[k]
	}
	for s := range w.snake {
		if keep(s) {
			nets[netKey(s)] = displayName(s, w.lower)
		}
	}
	for c := range w.camel {
		if keep(c) {
			nets[netKey(c)] = c
		}
	}
	return nets, nil
}

type invWalker struct {
	path  string
	lower map[string]string // name_lower -> name
	snake map[string]bool   // snake_case names seen
	camel map[string]bool   // network names seen
	// addressed: networks (netKey) a host has an address of its own on;
	// onCtlplane: networks a host has its ctlplane address on.
	addressed, onCtlplane map[string]bool
}

func (w *invWalker) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s: %s", ParamDeployedInventory, w.path, fmt.Sprintf(format, args...))
}

// group reads one inventory group: hosts, vars and children.
func (w *invWalker) group(name string, v any, depth int) error {
	if depth > 50 {
		return w.errorf("groups nested deeper than 50 levels under %q", name)
	}
	if strings.EqualFold(name, "undercloud") {
		return nil // the undercloud is not part of the overcloud
	}
	if v == nil {
		return nil
	}
	g, ok := v.(map[string]any)
	if !ok {
		return w.errorf("group %q is not a mapping of hosts, vars and children", name)
	}
	switch vars := g["vars"].(type) {
	case nil:
	case map[string]any:
		w.groupVars(vars)
	default:
		return w.errorf("vars of group %q is not a mapping", name)
	}
	switch hosts := g["hosts"].(type) {
	case nil:
	case map[string]any:
		for _, h := range sortedKeys(hosts) {
			if strings.EqualFold(h, "undercloud") {
				continue
			}
			switch hv := hosts[h].(type) {
			case nil:
			case map[string]any:
				w.hostVars(hv)
			default:
				return w.errorf("host %q of group %q: its variables are not a mapping", h, name)
			}
		}
	default:
		return w.errorf("hosts of group %q is not a mapping of host names to variables", name)
	}
	switch children := g["children"].(type) {
	case nil:
	case map[string]any:
		for _, c := range sortedKeys(children) {
			if err := w.group(c, children[c], depth+1); err != nil {
				return err
			}
		}
	default:
		return w.errorf("children of group %q is not a mapping of groups", name)
	}
	return nil
}

// hostVarIgnored are <prefix>_ip host variables that are not networks.
var hostVarIgnored = []string{"ctlplane", "bmc", "ipmi", "ansible"}

func (w *invWalker) hostVars(vars map[string]any) {
	ctl, _ := vars["ctlplane_ip"].(string)
	ctl = strings.TrimSpace(ctl)
	for k, v := range vars {
		prefix, ok := strings.CutSuffix(k, "_ip")
		if !ok || prefix == "" {
			continue
		}
		ignored := isCtlplane(prefix)
		for _, p := range hostVarIgnored {
			if strings.HasPrefix(prefix, p) {
				ignored = true
			}
		}
		s, _ := v.(string)
		s = strings.TrimSpace(s)
		if ignored || net.ParseIP(s) == nil {
			continue // not an address on that network
		}
		if ctl != "" && s == ctl {
			w.onCtlplane[netKey(prefix)] = true // a noop port: not isolated
			continue
		}
		w.addressed[netKey(prefix)] = true
		w.snake[prefix] = true
	}
}

func (w *invWalker) groupVars(vars map[string]any) {
	if nl, ok := vars["networks_lower"].(map[string]any); ok {
		for name, lower := range nl {
			if s, ok := lower.(string); ok {
				w.lower[s] = name
			}
		}
	}
	for _, key := range []string{"role_networks", "tripleo_role_networks"} {
		list, _ := vars[key].([]any)
		for _, it := range list {
			s, ok := it.(string)
			if !ok || strings.TrimSpace(s) == "" || isCtlplane(s) {
				continue
			}
			if s == strings.ToLower(s) {
				w.snake[s] = true
			} else {
				w.camel[s] = true
			}
		}
	}
}

// netIPMapNetworks reads a node's hieradata net_ip_map.json: the networks
// the node has an address on. The *_subnet and *_uri variants and ctlplane
// are ignored, and so are networks whose address is empty or the ctlplane
// address (what TripleO's noop ports give a node that is not on a network).
func netIPMapNetworks(data []byte, path string) (map[string]string, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&m); err != nil || m == nil {
		why := "not a JSON object"
		if err != nil {
			why = "not valid JSON: " + err.Error()
		}
		return nil, fmt.Errorf("%s: %s is %s; it should be the hieradata map of networks to this node's addresses", ParamNetIPMap, path, why)
	}
	ctl, _ := m["ctlplane"].(string)
	ctl = strings.TrimSpace(ctl)
	nets := map[string]string{}
	for k, v := range m {
		if strings.HasSuffix(k, "_subnet") || strings.HasSuffix(k, "_uri") || isCtlplane(k) {
			continue
		}
		s, ok := v.(string)
		s = strings.TrimSpace(s)
		if !ok || s == "" || (ctl != "" && s == ctl) {
			continue
		}
		nets[netKey(k)] = displayName(k, nil)
	}
	return nets, nil
}

// cephConfFSID returns the fsid in the [global] section of a ceph.conf ("" when
// there is none). Keys are matched as Ceph does (case, spaces and
// underscores alike); ; and # start comments.
func cephConfFSID(data []byte, path string) (string, error) {
	section := ""
	fsid := ""
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return "", fmt.Errorf("%s: %s: line %d: section header %q lacks its closing ]", ParamCephConf, path, i+1, line)
			}
			section = strings.ToLower(strings.TrimSpace(line[1:end]))
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			return "", fmt.Errorf("%s: %s: line %d: %q is neither a [section], a key = value nor a comment", ParamCephConf, path, i+1, line)
		}
		key = strings.ToLower(strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(key), "_", " ")), " "))
		if section != "global" || key != "fsid" {
			continue
		}
		if j := strings.IndexAny(val, "#;"); j >= 0 {
			val = val[:j]
		}
		fsid = strings.Trim(strings.TrimSpace(val), `"'`)
	}
	return fsid, nil
}
