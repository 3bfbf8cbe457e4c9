package configdownload

import (
	"sort"
	"strings"
)

// buildInventory builds the static inventory (tripleo-common's
// TripleoInventory in its static YAML form):
//
//   - Undercloud: localhost, ansible_connection local;
//   - one group per role with nodes: its hosts, each with ansible_host (the
//     address on the SSH network), <network>_ip and <network>_hostname for
//     every network of the role, and deploy_server_id; its vars are
//     RoleGroupVars plus ansible_ssh_user, tripleo_role_name,
//     tripleo_role_networks and bootstrap_server_id;
//   - a group named after the stack holding the role groups (vars: the
//     <network>_vip of the networks in use, and redis_vip), and allovercloud
//     holding that group;
//   - one group per enabled service (lower case) holding the roles that run it.
func buildInventory(r *Rendering, stack string, out map[string]any, nodes []node,
	groupVars map[string]any, o Options) map[string]any {
	inv := map[string]any{
		"Undercloud": map[string]any{
			"hosts": map[string]any{"localhost": map[string]any{}},
			"vars": map[string]any{
				"ansible_connection":         "local",
				"ansible_python_interpreter": "{{ ansible_playbook_python }}",
				"plan":                       stack,
			},
		},
	}
	reserved := map[string]bool{"Undercloud": true, "allovercloud": true, "all": true, "ungrouped": true}
	ips := asMap(&Rendering{}, out, OutRoleNetIPMap)
	hostnames := asMap(&Rendering{}, out, OutRoleNetHostnameMap)
	bootstrap := any(nil)
	if sid, ok := out[OutServerIDData].(map[string]any); ok {
		bootstrap = sid["bootstrap_server_id"]
	}

	byRole := map[string][]node{}
	var roleOrder []string
	for _, n := range nodes {
		if _, ok := byRole[n.Role]; !ok {
			roleOrder = append(roleOrder, n.Role)
		}
		byRole[n.Role] = append(byRole[n.Role], n)
	}
	networksInUse := map[string]bool{}
	roleGroups := map[string]any{}
	for _, role := range roleOrder {
		if reserved[role] {
			r.warn("role %s has the name of a built-in inventory group: left out of the inventory", role)
			continue
		}
		netIPs, _ := ips[role].(map[string]any)
		netNames, _ := hostnames[role].(map[string]any)
		var roleNets []string
		for net := range netIPs {
			roleNets = append(roleNets, net)
			networksInUse[net] = true
		}
		sort.Strings(roleNets)
		if _, ok := netIPs[o.SSHNetwork]; !ok {
			r.warn("role %s has no addresses on the SSH network %s: its hosts have no ansible_host", role, o.SSHNetwork)
		}
		hosts := map[string]any{}
		for _, n := range byRole[role] {
			h := map[string]any{}
			for net, list := range netIPs {
				if v := indexOf(list, n.Index); v != nil {
					h[net+"_ip"] = v
					if net == o.SSHNetwork {
						h["ansible_host"] = v
					}
				}
			}
			for net, list := range netNames {
				if v := indexOf(list, n.Index); v != nil {
					h[net+"_hostname"] = v
				}
			}
			if n.ServerID != "" {
				h["deploy_server_id"] = n.ServerID
			}
			hosts[n.Name] = h
		}
		vars := map[string]any{
			"ansible_ssh_user":      o.SSHUser,
			"tripleo_role_name":     role,
			"tripleo_role_networks": stringList(roleNets),
			"bootstrap_server_id":   bootstrap,
		}
		if gv, ok := groupVars[role].(map[string]any); ok {
			for k, v := range gv {
				vars[k] = v
			}
		}
		roleGroups[role] = map[string]any{"hosts": hosts, "vars": vars}
	}
	for role, g := range roleGroups {
		inv[role] = g
	}

	if len(roleGroups) > 0 {
		children := map[string]any{}
		for role := range roleGroups {
			children[role] = map[string]any{}
		}
		vips := map[string]any{}
		if vm, ok := out[OutVipMap].(map[string]any); ok {
			for name, vip := range vm {
				if vip != nil && vip != "" && (networksInUse[name] || name == "redis") {
					vips[name+"_vip"] = vip
				}
			}
		}
		if _, clash := inv[stack]; clash || reserved[stack] || stack == "" {
			r.warn("the stack's name %q is also a role or built-in group: no group named after the stack; allovercloud holds the roles", stack)
			inv["allovercloud"] = map[string]any{"children": children, "vars": vips}
		} else {
			inv[stack] = map[string]any{"children": children, "vars": vips}
			inv["allovercloud"] = map[string]any{"children": map[string]any{stack: map[string]any{}}}
		}
	}

	// A group per service, with the roles (that have nodes) running it.
	services := map[string][]string{}
	if es, ok := out[OutEnabledServices].(map[string]any); ok {
		for role, list := range es {
			l, _ := list.([]any)
			for _, s := range l {
				name, ok := s.(string)
				if !ok || name == "" {
					continue
				}
				services[strings.ToLower(name)] = append(services[strings.ToLower(name)], role)
			}
		}
	}
	for svc, roles := range services {
		children := map[string]any{}
		for _, role := range roles {
			if roleGroups[role] != nil {
				children[role] = map[string]any{}
			}
		}
		if len(children) == 0 {
			continue
		}
		if _, clash := inv[svc]; clash || reserved[svc] {
			r.warn("service %s has the name of another inventory group: no group for it", svc)
			continue
		}
		inv[svc] = map[string]any{"children": children, "vars": map[string]any{"ansible_ssh_user": o.SSHUser}}
	}
	return inv
}

func indexOf(list any, i int) any {
	l, ok := list.([]any)
	if !ok || i >= len(l) {
		return nil
	}
	return l[i]
}
