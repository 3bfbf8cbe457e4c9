// Package configdownload renders the Ansible project of a TripleO-style
// deployment from its Heat stack, as tripleo-common's config-download
// (utils/config.py and inventory.py) does: per-role task files (with the
// deploy steps split out), RoleConfig playbooks, per-server deployment
// files, group_vars, host_vars and the static inventory
// tripleo-ansible-inventory.yaml. The rendering is a pure function of the
// stack's outputs and software deployments (Render); Fetch reads them from
// Heat with few API calls, and Sync puts a rendering in place atomically in a
// git repository, one commit per change.
package configdownload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The stack outputs config-download reads.
const (
	OutRoleData           = "RoleData"
	OutRoleConfig         = "RoleConfig"
	OutRoleGroupVars      = "RoleGroupVars"
	OutAnsibleHostVarsMap = "AnsibleHostVarsMap"
	OutServerIDData       = "ServerIdData"
	OutRoleNetHostnameMap = "RoleNetHostnameMap"
	OutRoleNetIPMap       = "RoleNetIpMap"
	OutVipMap             = "VipMap"
	OutEnabledServices    = "EnabledServices"
)

// TripleOOutputs lists them in the order they are reported missing.
var TripleOOutputs = []string{OutRoleData, OutRoleConfig, OutRoleGroupVars, OutAnsibleHostVarsMap,
	OutServerIDData, OutRoleNetHostnameMap, OutRoleNetIPMap, OutVipMap, OutEnabledServices}

// InventoryFile is the inventory's file name in the config-download dir.
const InventoryFile = "tripleo-ansible-inventory.yaml"

// Defaults of the module's parameters.
const (
	DefaultSSHUser    = "tripleo-admin"
	DefaultSSHNetwork = "ctlplane"
	hostNetwork       = "ctlplane"
)

// StackData is what a rendering is made from.
type StackData struct {
	// Name is the stack's name (the inventory's group of all roles).
	Name string
	// Outputs are the stack's resolved outputs (numbers may be json.Number).
	Outputs map[string]any
	// Deployments are the software deployments found as TripleODeployment
	// resources, in creation order.
	Deployments []Deployment
}

// Deployment is one software deployment of a server, with its config.
type Deployment struct {
	// Name is the deployment's name (its name property, else the resource
	// that holds the TripleODeployment).
	Name string
	// ServerID is the server the deployment is for.
	ServerID string
	// ResourceID is the physical id of the TripleODeployment resource (its
	// name tells pre-network, pre- and post-deployments apart).
	ResourceID string
	// Config is the deployment's (derived) software config: id, name,
	// group, config, inputs, outputs, options, creation_time.
	Config map[string]any
}

// Options of a rendering.
type Options struct {
	SSHUser    string // ansible_ssh_user of the role and service groups
	SSHNetwork string // the network whose address is ansible_host
}

// Rendering is a rendered config-download tree, in memory.
type Rendering struct {
	// Files maps slash-separated relative paths to contents.
	Files map[string][]byte
	// Roles are the roles rendered (RoleData's and those with nodes).
	Roles []string
	// Hosts are the inventory names of the nodes.
	Hosts []string
	// Warnings say what was missing or skipped.
	Warnings []string
}

func (r *Rendering) warn(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

// node is one server of a role.
type node struct {
	Name     string // short hostname, the inventory name
	Role     string
	Index    int
	ServerID string
}

// Render renders the config-download tree of d. It never fails on
// missing or oddly shaped data: it renders what it can and warns.
func Render(d *StackData, o Options) (*Rendering, error) {
	if o.SSHUser == "" {
		o.SSHUser = DefaultSSHUser
	}
	if o.SSHNetwork == "" {
		o.SSHNetwork = DefaultSSHNetwork
	}
	r := &Rendering{Files: map[string][]byte{}}
	out := map[string]any{}
	for k, v := range d.Outputs {
		out[k] = normalize(v)
	}
	var missing []string
	for _, k := range TripleOOutputs {
		if out[k] == nil {
			missing = append(missing, k)
		}
	}
	if len(missing) == len(TripleOOutputs) {
		r.warn("stack %s has none of the TripleO outputs (%s): it is not an overcloud; rendered only what it has",
			d.Name, strings.Join(missing, ", "))
	} else if len(missing) > 0 {
		r.warn("stack %s lacks the output(s) %s: rendered without them", d.Name, strings.Join(missing, ", "))
	}

	roleData := asMap(r, out, OutRoleData)
	roleConfig := asMap(r, out, OutRoleConfig)
	groupVars := asMap(r, out, OutRoleGroupVars)
	hostVars := asMap(r, out, OutAnsibleHostVarsMap)

	r.Files[".gitignore"] = []byte("*.tar.gz\n")

	// <Role>/<key>.yaml, with the per-step splits.
	roles := map[string]bool{}
	for _, role := range sortedKeys(roleData) {
		if !safeName(role) {
			r.warn("RoleData: role name %q is not a usable directory name: skipped", role)
			continue
		}
		roles[role] = true
		data, ok := roleData[role].(map[string]any)
		if !ok {
			if roleData[role] != nil {
				r.warn("RoleData.%s is not a mapping: skipped", role)
			}
			continue
		}
		for _, key := range sortedKeys(data) {
			if externalTasks[key] {
				continue
			}
			if !safeName(key) {
				r.warn("RoleData.%s: key %q is not a usable file name: skipped", role, key)
				continue
			}
			v := data[key]
			switch key {
			case "step_config":
				r.Files[role+"/step_config.pp"] = []byte(scalarString(v))
				continue
			case "param_config":
				b, _ := json.Marshal(v)
				r.Files[role+"/param_config.json"] = b
				continue
			}
			if n, ok := perStepTasks[key]; ok {
				tasks, isList := v.([]any)
				if !isList && v != nil {
					r.warn("RoleData.%s.%s is not a list of tasks: not split by step", role, key)
				}
				for step := 0; step < n; step++ {
					r.Files[fmt.Sprintf("%s/%s_step%d.yaml", role, key, step)] = dumpYAML(TasksForStep(tasks, step))
				}
			}
			r.Files[role+"/"+key+".yaml"] = dumpYAML(v)
		}
	}

	// <key>.yaml for RoleConfig.
	for _, key := range sortedKeys(roleConfig) {
		if !safeName(key) {
			r.warn("RoleConfig: key %q is not a usable file name: skipped", key)
			continue
		}
		v := roleConfig[key]
		if externalTasks[key] {
			tasks, _ := v.([]any)
			for step := 0; step < StepsMax; step++ {
				r.Files[fmt.Sprintf("%s_step%d.yaml", key, step)] = dumpYAML(TasksForStep(tasks, step))
			}
		}
		name := key
		if !strings.Contains(name, ".") {
			name += ".yaml"
		}
		switch v.(type) {
		case map[string]any, []any:
			r.Files[name] = dumpYAML(v)
		default:
			r.Files[name] = []byte(scalarString(v))
		}
	}

	nodes := collectNodes(r, out)
	byID := map[string]*node{}
	for i := range nodes {
		roles[nodes[i].Role] = true
		r.Hosts = append(r.Hosts, nodes[i].Name)
		if nodes[i].ServerID != "" {
			byID[nodes[i].ServerID] = &nodes[i]
		}
	}
	sort.Strings(r.Hosts)

	// <Role>/<server>/<deployment>, and the deployment names per server.
	type names struct{ preNetwork, pre, post []string }
	perServer := map[string]*names{}
	for _, dep := range d.Deployments {
		n := byID[dep.ServerID]
		if n == nil {
			r.warn("deployment %s is for server %s, which is not in ServerIdData (excluded node?): skipped", dep.Name, dep.ServerID)
			continue
		}
		if !safeName(dep.Name) {
			r.warn("deployment name %q of server %s is not a usable file name: skipped", dep.Name, n.Name)
			continue
		}
		r.Files[n.Role+"/"+n.Name+"/"+dep.Name] = deploymentFile(dep, n.ServerID)
		s := perServer[n.Name]
		if s == nil {
			s = &names{}
			perServer[n.Name] = s
		}
		switch {
		case strings.Contains(dep.ResourceID, "ExtraConfigPost") || strings.Contains(dep.ResourceID, "PostConfig"):
			s.post = appendNew(s.post, dep.Name)
		case strings.Contains(dep.ResourceID, "PreNetworkConfig"):
			s.preNetwork = appendNew(s.preNetwork, dep.Name)
		default:
			s.pre = appendNew(s.pre, dep.Name)
		}
	}

	// group_vars/<Role>.
	for _, role := range sortedKeys(groupVars) {
		if !safeName(role) {
			continue
		}
		vars, ok := groupVars[role].(map[string]any)
		if !ok {
			if groupVars[role] != nil {
				r.warn("RoleGroupVars.%s is not a mapping: skipped", role)
			}
			continue
		}
		r.Files["group_vars/"+role] = dumpYAML(vars)
	}

	// host_vars/<server>.
	for _, n := range nodes {
		vars := map[string]any{}
		if rv, ok := hostVars[n.Role].(map[string]any); ok {
			if hv, ok := rv[n.Name].(map[string]any); ok {
				for k, v := range hv {
					vars[k] = v
				}
			}
		}
		s := perServer[n.Name]
		if s == nil {
			s = &names{}
		}
		vars["pre_network"] = stringList(s.preNetwork)
		vars["pre_deployments"] = stringList(s.pre)
		vars["post_deployments"] = stringList(s.post)
		r.Files["host_vars/"+n.Name] = dumpYAML(vars)
	}

	inv := buildInventory(r, d.Name, out, nodes, groupVars, o)
	r.Files[InventoryFile] = dumpYAML(inv)

	for role := range roles {
		r.Roles = append(r.Roles, role)
	}
	sort.Strings(r.Roles)
	if r.Hosts == nil {
		r.Hosts = []string{}
	}
	return r, nil
}

// collectNodes reads the nodes of each role from RoleNetHostnameMap (the
// ctlplane names up to the first dot) and ServerIdData.
func collectNodes(r *Rendering, out map[string]any) []node {
	hostnames := asMap(r, out, OutRoleNetHostnameMap)
	ids := map[string]any{}
	if sid, ok := out[OutServerIDData].(map[string]any); ok {
		if m, ok := sid["server_ids"].(map[string]any); ok {
			ids = m
		}
	}
	var nodes []node
	seen := map[string]string{}
	for _, role := range sortedKeys(hostnames) {
		nets, ok := hostnames[role].(map[string]any)
		if !ok || len(nets) == 0 {
			continue
		}
		if !safeName(role) {
			r.warn("RoleNetHostnameMap: role name %q is not a usable name: skipped", role)
			continue
		}
		names, ok := nets[hostNetwork].([]any)
		if !ok {
			r.warn("RoleNetHostnameMap.%s has no %s host names: its nodes are left out", role, hostNetwork)
			continue
		}
		roleIDs, _ := ids[role].([]any)
		for i, hn := range names {
			full, _ := hn.(string)
			short := strings.ToLower(strings.SplitN(full, ".", 2)[0])
			if short == "" || !safeName(short) {
				r.warn("RoleNetHostnameMap.%s.%s[%d] = %v is not a usable host name: skipped", role, hostNetwork, i, hn)
				continue
			}
			if other, dup := seen[short]; dup {
				r.warn("host %s is in roles %s and %s: kept in %s", short, other, role, other)
				continue
			}
			seen[short] = role
			n := node{Name: short, Role: role, Index: i}
			if i < len(roleIDs) {
				if id, ok := roleIDs[i].(string); ok {
					n.ServerID = id
				}
			}
			nodes = append(nodes, n)
		}
	}
	return nodes
}

// deploymentFile renders <Role>/<server>/<deployment> as tripleo-common's
// deployment.j2 does: the server id, then the config under the deployment's
// name, with deploy_server_id's input set to the real server.
func deploymentFile(dep Deployment, serverID string) []byte {
	c := map[string]any{}
	for k, v := range dep.Config {
		c[k] = normalize(v)
	}
	group, _ := c["group"].(string)
	cfg := c["config"]
	if s, ok := cfg.(string); ok {
		var parsed any
		if json.Unmarshal([]byte(s), &parsed) == nil {
			cfg = parsed
		}
	}
	if group != "hiera" {
		// Every hook but hiera takes its config as a scalar.
		if _, ok := cfg.(string); !ok && cfg != nil {
			b, _ := json.MarshalIndent(cfg, "", "  ")
			cfg = string(b)
		}
	}
	c["config"] = cfg
	c["deployment_name"] = dep.Name
	if inputs, ok := c["inputs"].([]any); ok {
		for _, in := range inputs {
			if m, ok := in.(map[string]any); ok && m["name"] == "deploy_server_id" {
				m["value"] = serverID
			}
		}
	} else {
		c["inputs"] = []any{}
	}
	if c["outputs"] == nil {
		c["outputs"] = []any{}
	}
	return dumpYAML(map[string]any{"deploy_server_id": serverID, dep.Name: c})
}

// asMap returns an output that must be a mapping (empty when absent).
func asMap(r *Rendering, out map[string]any, key string) map[string]any {
	switch v := out[key].(type) {
	case map[string]any:
		return v
	case nil:
		return map[string]any{}
	default:
		r.warn("output %s is not a mapping (%T): ignored", key, v)
		return map[string]any{}
	}
}

// safeName: a role, host, key or deployment name that can be a file name.
func safeName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\x00") && path.Clean(s) == s && s != ".git"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func stringList(s []string) []any {
	out := make([]any, 0, len(s))
	for _, x := range s {
		out = append(out, x)
	}
	return out
}

// scalarString writes a non-collection value as file content.
func scalarString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// normalize copies a decoded JSON value, turning json.Number into int64 or
// float64 so that YAML shows numbers as numbers.
func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			return f
		}
		return string(x)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = normalize(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = normalize(e)
		}
		return l
	}
	return v
}

// dumpYAML is yaml.safe_dump(default_flow_style=False): block style, sorted
// keys, two-space indentation.
func dumpYAML(v any) []byte {
	if v == nil {
		return []byte("null\n")
	}
	if l, ok := v.([]any); ok && len(l) == 0 {
		return []byte("[]\n")
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		// Only values that did not come from JSON can fail; show them as JSON.
		j, _ := json.MarshalIndent(v, "", "  ")
		return append(j, '\n')
	}
	enc.Close()
	return buf.Bytes()
}
