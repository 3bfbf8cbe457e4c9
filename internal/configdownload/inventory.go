package configdownload

import (
	"sort"
	"strings"
)

// The inventory is tripleo-common's static inventory of one plan
// (inventory.py's TripleoInventory.list(dynamic=False), built from the stack
// outputs; no Neutron source, no inventory-network-config.yaml), merged as
// stable/wallaby's generate_tripleo_ansible_inventory does through
// TripleoInventories (every group of the plan becomes <plan>_<group>, under a
// top-level group of its own name); stable/zed writes the plan's inventory
// as it is, with the overcloud's variables on allovercloud.

// undercloudServices is TripleoInventory.UNDERCLOUD_SERVICES.
var undercloudServices = []any{"tripleo_ironic_conductor"}

// cephGroups are the ceph-ansible groups added beside tripleo's.
var cephGroups = map[string]string{
	"ceph_mon": "mons", "ceph_osd": "osds", "ceph_mgr": "mgrs", "ceph_rgw": "rgws", "ceph_mds": "mdss",
	"ceph_nfs": "nfss", "ceph_client": "clients", "ceph_rbdmirror": "rbdmirrors", "ceph_grafana": "grafana-server",
}

// buildInventory returns the inventory (top level in insertion order).
func buildInventory(r *Rendering, d *StackData, out *Object, o Options) *Object {
	inv := planInventory(r, d, out, o)
	if o.Release == Zed {
		return inv
	}
	return mergeInventories(d.Name, inv)
}

// group returns ret[name] as an object, creating it (setdefault).
func group(ret *Object, name string) *Object {
	g := asObject(ret.SetDefault(name, NewObject()))
	if g == nil { // a group that is not a mapping: replaced, as Python would fail
		g = NewObject()
		ret.Set(name, g)
	}
	return g
}

func sub(g *Object, key string) *Object {
	s := asObject(g.SetDefault(key, NewObject()))
	if s == nil {
		s = NewObject()
		g.Set(key, s)
	}
	return s
}

func hostsOf(names []string) *Object {
	h := NewObject()
	for _, n := range names {
		h.Set(n, NewObject())
	}
	return h
}

// planInventory is TripleoInventory.list(dynamic=False) for the stack.
func planInventory(r *Rendering, d *StackData, out *Object, o Options) *Object {
	ret := NewObject()
	plan := d.Name

	// The undercloud.
	uc := group(ret, "Undercloud")
	uc.SetDefault("hosts", hostsOf([]string{"undercloud"}))
	uv := sub(uc, "vars")
	uv.SetDefault("ansible_host", "localhost")
	uv.SetDefault("ansible_connection", "local")
	uv.SetDefault("ansible_remote_tmp", "/tmp/ansible-${USER}")
	if o.Release == Wallaby {
		// An ephemeral Heat has no Keystone: no auth_url, project or user.
		uv.SetDefault("auth_url", nil)
		uv.SetDefault("project_name", nil)
		uv.SetDefault("username", nil)
	}
	uv.SetDefault("any_error_fatal", true)
	uv.SetDefault("max_fail_percentage", Number("0"))
	if o.PythonInterpreter != "" {
		uv.SetDefault("ansible_python_interpreter", o.PythonInterpreter)
	} else {
		uv.SetDefault("ansible_python_interpreter", DefaultUndercloudPython)
	}
	uv.SetDefault("undercloud_service_list", append([]any(nil), undercloudServices...))
	uv.SetDefault("plan", plan)
	if v := out.Value(OutAdminPassword); truthy(v) {
		uv.SetDefault("overcloud_admin_password", v)
	}
	if v := out.Value(OutKeystoneURL); truthy(v) {
		uv.SetDefault("overcloud_keystone_url", v)
	}
	if em := asObject(out.Value(OutEndpointMap)); truthy(em) {
		if uri := asObject(em.Value("HorizonPublic")).Value("uri"); truthy(uri) {
			uv.SetDefault("overcloud_horizon_url", uri)
		}
	}

	// The roles, from the stack outputs.
	vipMap := objectOutput(r, out, OutVipMap)
	ipMap := objectOutput(r, out, OutRoleNetIPMap)
	sid := asObject(out.Value(OutServerIDData))
	hostnameMap := objectOutput(r, out, OutRoleNetHostnameMap)
	networks := map[string]bool{}
	children := map[string]bool{}
	for _, role := range hostnameMap.Keys() {
		hostnames := hostnameMap.Value(role)
		if !truthy(hostnames) {
			continue
		}
		netIPs := asObject(ipMap.Value(role))
		if netIPs == nil {
			r.warn("RoleNetIpMap has no networks of role %s: its hosts are left out of the inventory", role)
			continue
		}
		ipsV, ok := netIPs.Get(o.SSHNetwork)
		if !ok {
			r.warn("RoleNetIpMap.%s has no %s network: its hosts are left out of the inventory", role, o.SSHNetwork)
			continue
		}
		ips, _ := ipsV.([]any)
		if len(ips) == 0 {
			r.warn("no IPs found for %s role on %s network: its hosts are left out of the inventory", role, o.SSHNetwork)
			continue
		}
		netNames := asObject(hostnames)
		var srvIDs []any
		if nm := asObject(sid.Value("server_ids")); truthy(nm) {
			srvIDs, _ = nm.Value(role).([]any)
		}
		var roleNets []string
		for _, n := range netIPs.Keys() {
			roleNets = append(roleNets, n)
			networks[n] = true
		}
		sort.Strings(roleNets)

		var g *Object
		if role == "Undercloud" {
			g = NewObject()
			ret.Set(role, g)
		} else {
			g = group(ret, role)
		}
		hosts := sub(g, "hosts")
		vars := sub(g, "vars")
		vars.SetDefault("ansible_ssh_user", o.SSHUser)
		vars.SetDefault("bootstrap_server_id", sid.Value("bootstrap_server_id"))
		vars.SetDefault("tripleo_role_name", role)
		vars.SetDefault("tripleo_role_networks", stringList(roleNets))
		vars.SetDefault("serial", Number("1"))
		if o.PythonInterpreter != "" {
			vars.SetDefault("ansible_python_interpreter", o.PythonInterpreter)
		}
		names, _ := netNames.Value(o.SSHNetwork).([]any)
		for idx, n := range names {
			name := strings.ToLower(strings.SplitN(pyStr(n), "."+o.SSHNetwork+".", 2)[0])
			h := asObject(hosts.SetDefault(name, NewObject()))
			if h == nil {
				continue
			}
			if idx >= len(ips) {
				r.warn("RoleNetIpMap.%s.%s has no address %d for host %s", role, o.SSHNetwork, idx, name)
				continue
			}
			h.SetDefault("ansible_host", ips[idx])
			if len(srvIDs) > 0 && idx < len(srvIDs) {
				h.SetDefault("deploy_server_id", srvIDs[idx])
			}
			for _, net := range netIPs.Keys() {
				if l, ok := netIPs.Value(net).([]any); ok && idx < len(l) {
					h.SetDefault(net+"_ip", l[idx])
				}
			}
			for _, net := range netNames.Keys() {
				if l, ok := netNames.Value(net).([]any); ok && idx < len(l) {
					h.SetDefault(net+"_hostname", l[idx])
				}
			}
		}
		children[role] = true
	}

	if len(children) > 0 {
		overcloudVars := func(g *Object) {
			v := sub(g, "vars")
			for _, name := range vipMap.Keys() {
				vip := vipMap.Value(name)
				if truthy(vip) && (networks[name] || name == "redis") {
					v.SetDefault(name+"_vip", vip)
				}
			}
			v.SetDefault("container_cli", d.ContainerCLI)
		}
		roles := sortedStringKeys(children)
		if o.Release == Zed {
			all := group(ret, "allovercloud")
			overcloudVars(all)
			all.SetDefault("children", hostsOf(roles))
			ret.SetDefault(plan, Obj("children", hostsOf([]string{"allovercloud"})))
			if plan != "overcloud" {
				ret.SetDefault("overcloud", Obj("children", hostsOf([]string{"allovercloud"})))
			}
		} else {
			pg := group(ret, plan)
			overcloudVars(pg)
			pg.SetDefault("children", hostsOf(roles))
			ret.SetDefault("allovercloud", Obj("children", hostsOf([]string{plan})))
		}
	}

	// A group per service (lower case) holding the roles that run it, and
	// the ceph-ansible names of the Ceph ones.
	byService := rolesByService(r, out)
	for svc, alias := range cephGroups {
		if roles, ok := byService[svc]; ok {
			byService[alias] = roles
		}
	}
	for _, svc := range sortedStringKeys(byService) {
		var kids []string
		for _, role := range byService[svc] {
			if ret.Value(role) != nil {
				kids = append(kids, role)
			}
		}
		if len(kids) == 0 {
			continue
		}
		g := group(ret, strings.ToLower(svc))
		v := sub(g, "vars")
		g.SetDefault("children", hostsOf(kids))
		v.SetDefault("ansible_ssh_user", o.SSHUser)
		if o.PythonInterpreter != "" {
			v.SetDefault("ansible_python_interpreter", o.PythonInterpreter)
		}
	}

	excluded := sub(group(ret, "excluded_overcloud"), "hosts")
	switch x := out.Value(OutBlacklistedHostnames).(type) {
	case []any:
		for _, h := range x {
			if truthy(h) {
				excluded.Set(pyStr(h), NewObject())
			}
		}
	case *Object:
		for _, h := range x.Keys() {
			if h != "" {
				excluded.Set(h, NewObject())
			}
		}
	}
	return ret
}

// rolesByService is get_roles_by_service: service -> sorted roles that run it.
func rolesByService(r *Rendering, out *Object) map[string][]string {
	es := objectOutput(r, out, OutEnabledServices)
	by := map[string][]string{}
	for _, role := range es.Keys() {
		l, ok := es.Value(role).([]any)
		if !ok {
			if es.Value(role) != nil {
				r.warn("EnabledServices.%s is a %s, not a list: ignored", role, typeName(es.Value(role)))
			}
			continue
		}
		for _, s := range l {
			name, ok := s.(string)
			if !ok {
				continue
			}
			if !containsString(by[name], role) {
				by[name] = append(by[name], role)
			}
		}
	}
	for s := range by {
		sort.Strings(by[s])
	}
	return by
}

// mergeInventories is TripleoInventories._merge(dynamic=False) of one plan.
func mergeInventories(plan string, inv *Object) *Object {
	ret := NewObject()
	uc := asObject(inv.Value("Undercloud"))
	if uc == nil {
		uc = NewObject()
	}
	ret.Set("Undercloud", uc)
	uc.Set("hosts", hostsOf([]string{"undercloud"}))
	uv := sub(uc, "vars")
	plans := []any{}
	if p, ok := uv.Get("plan"); ok && p != nil {
		plans = append(plans, p)
	}
	uv.Set("plans", plans)

	for _, key := range inv.Keys() {
		if key == "Undercloud" {
			continue
		}
		newKey := plan + "_" + key
		if key != plan {
			top := group(ret, key)
			sub(top, "children").Set(newKey, NewObject())
		}
		mergeGroup(ret, plan, key, asObject(inv.Value(key)))
	}
	return ret
}

// mergeGroup sets <stack>_<key> in ret from group g of stack's inventory
// as TripleoInventories._merge does: a group of groups with its children
// renamed <stack>_<child> (sorted) and its vars (allovercloud also gives
// the group <stack>); a group of hosts as it is.
func mergeGroup(ret *Object, stack, key string, g *Object) {
	newKey := stack + "_" + key
	if !g.Has("children") {
		ret.Set(newKey, g)
		return
	}
	var names []string
	for _, c := range asObject(g.Value("children")).Keys() {
		names = append(names, stack+"_"+c)
	}
	sort.Strings(names)
	ng := Obj("children", hostsOf(names))
	if g.Has("vars") {
		ng.Set("vars", g.Value("vars"))
	}
	ret.Set(newKey, ng)
	if key == "allovercloud" {
		ret.Set(stack, Obj("children", hostsOf([]string{newKey})))
	}
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func stringList(s []string) []any {
	out := make([]any, 0, len(s))
	for _, x := range s {
		out = append(out, x)
	}
	return out
}
