// Package configdownload renders the Ansible project of a TripleO-style
// deployment from its Heat stack: the files tripleo-common's config
// download writes (utils/config.py with its templates, stable/wallaby or
// stable/zed) and the static inventory its inventory.py builds
// (tripleo-ansible-inventory.yaml). The rendering is a pure function of
// the stack's outputs, software deployments and environment (Render);
// Fetch reads them from Heat, and Sync puts a rendering in place atomically
// in a git repository, one commit per change.
package configdownload

import (
	"fmt"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// The stack outputs config-download reads.
const (
	OutRoleData             = "RoleData"
	OutRoleConfig           = "RoleConfig"
	OutRoleGroupVars        = "RoleGroupVars"
	OutAnsibleHostVarsMap   = "AnsibleHostVarsMap"
	OutServerIDData         = "ServerIdData"
	OutRoleNetHostnameMap   = "RoleNetHostnameMap"
	OutRoleNetIPMap         = "RoleNetIpMap"
	OutVipMap               = "VipMap"
	OutEnabledServices      = "EnabledServices"
	OutRoleNetworkConfigMap = "RoleNetworkConfigMap"
	OutBlacklistedHostnames = "BlacklistedHostnames"
	OutAdminPassword        = "AdminPassword"
	OutKeystoneURL          = "KeystoneURL"
	OutEndpointMap          = "EndpointMap"
)

// TripleOOutputs are the outputs an overcloud has, in the order they are
// reported missing.
var TripleOOutputs = []string{OutRoleData, OutRoleConfig, OutRoleGroupVars, OutAnsibleHostVarsMap,
	OutServerIDData, OutRoleNetHostnameMap, OutRoleNetIPMap, OutVipMap, OutEnabledServices}

// File names of the rendering (tripleo-common's).
const (
	InventoryFile   = "tripleo-ansible-inventory.yaml"
	DeploymentsFile = "deployments.yaml"
	HeatConfigFile  = "templates/heat-config.j2"
	GitignoreFile   = ".gitignore"
	NetworkConfig   = "NetworkConfig"
)

// Release is the tripleo-common release whose layout is rendered.
type Release string

// The releases supported.
const (
	Wallaby Release = "wallaby"
	Zed     Release = "zed"
)

// Releases lists them (the module's choices).
var Releases = []string{string(Wallaby), string(Zed)}

// zedRunnerDirs are the empty directories stable/zed's create_config_dir
// makes for ansible-runner.
var zedRunnerDirs = []string{"artifacts", "env", "inventory", "profiling_data", "project", "roles"}

// Defaults of the module's parameters.
const (
	DefaultSSHUser    = "tripleo-admin"
	DefaultSSHNetwork = "ctlplane"
	// hostNetwork names the servers in the config files (tripleo-common's
	// constants.HOST_NETWORK, whatever the SSH network).
	hostNetwork = "ctlplane"
	// DefaultUndercloudPython is the Undercloud's ansible_python_interpreter
	// when none is given (tripleo-common writes the interpreter it runs
	// under, /usr/bin/python3 on an undercloud).
	DefaultUndercloudPython = "/usr/bin/python3"
)

// StackData is what a rendering is made from.
type StackData struct {
	// Name is the stack's name (the plan).
	Name string
	// Outputs are the stack's resolved outputs, in Heat's order.
	Outputs *Object
	// Deployments are the software deployments found as TripleODeployment
	// resources, in creation order.
	Deployments []Deployment
	// ContainerCLI is parameter_defaults.ContainerCli of the stack's
	// environment (nil when unset).
	ContainerCLI any
	// NetworkConfigs holds the config of the software configs that
	// RoleNetworkConfigMap names by id.
	NetworkConfigs map[string]any
}

// Deployment is one software deployment of a server, with its config.
type Deployment struct {
	// Name is the deployment's name (its name property, else the resource
	// holding the TripleODeployment, else for an index that resource's
	// group).
	Name string
	// ServerID is the server the deployment is for.
	ServerID any
	// ResourceID is the physical id of the TripleODeployment resource (it
	// tells pre-network, pre- and post-deployments apart).
	ResourceID string
	// Config is the deployment's (derived) software config as the API
	// returns it: id, name, group, config, inputs, outputs, options,
	// creation_time.
	Config *Object
}

// Options of a rendering.
type Options struct {
	// SSHUser is ansible_ssh_user of the role and service groups.
	SSHUser string
	// SSHNetwork is the network whose addresses and names the inventory's
	// hosts get (tripleo-common's host_network).
	SSHNetwork string
	// Release selects stable/wallaby's or stable/zed's layout.
	Release Release
	// ConfigType limits the RoleData keys written (tripleoclient's
	// --config-type); empty: all.
	ConfigType []string
	// PythonInterpreter is ansible_python_interpreter of every group; the
	// Undercloud's defaults to DefaultUndercloudPython.
	PythonInterpreter string
}

// Rendering is a rendered config-download tree, in memory.
type Rendering struct {
	// Files maps slash-separated relative paths to contents; a path ending
	// in "/" is a directory (it may be empty).
	Files map[string][]byte
	// Roles are the roles of RoleData, sorted.
	Roles []string
	// Hosts are the servers' names, sorted.
	Hosts []string
	// Warnings say what was missing or skipped.
	Warnings []string
	// pending are the YAML files still to dump (dumped concurrently at
	// the end of Render).
	pending []yamlJob
}

type yamlJob struct {
	path string
	v    any
	out  []byte
	text bool // out is the content already
}

func (r *Rendering) warn(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

func (r *Rendering) dir(p string) { r.Files[strings.TrimSuffix(p, "/")+"/"] = nil }

// fileYAML adds a file that is v dumped as YAML.
func (r *Rendering) fileYAML(p string, v any) {
	r.pending = append(r.pending, yamlJob{path: p, v: v})
}

// dumpPending dumps the pending YAML files, on every CPU.
func (r *Rendering) dumpPending() {
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				r.pending[i].out = dumpYAML(r.pending[i].v)
			}
		}()
	}
	for i := range r.pending {
		if !r.pending[i].text {
			jobs <- i
		}
	}
	close(jobs)
	wg.Wait()
	// In the order they were written: a later file of the same name wins.
	for _, j := range r.pending {
		r.Files[j.path] = j.out
		for d := path.Dir(j.path); d != "."; d = path.Dir(d) {
			r.dir(d)
		}
	}
	r.pending = nil
}

// file adds a file with its content.
func (r *Rendering) file(p string, b []byte) {
	r.pending = append(r.pending, yamlJob{path: p, out: b, text: true})
}

// Render renders the config-download tree of d. It never fails on missing
// or oddly shaped data: where tripleo-common would stop with an exception it
// renders what it can and warns.
func Render(d *StackData, o Options) (*Rendering, error) {
	if o.SSHUser == "" {
		o.SSHUser = DefaultSSHUser
	}
	if o.SSHNetwork == "" {
		o.SSHNetwork = DefaultSSHNetwork
	}
	switch o.Release {
	case "":
		o.Release = Wallaby
	case Wallaby, Zed:
	default:
		return nil, fmt.Errorf("unknown tripleo-common release %q (choose %s)", o.Release, strings.Join(Releases, " or "))
	}
	r := &Rendering{Files: map[string][]byte{}, Roles: []string{}, Hosts: []string{}}
	out := d.Outputs
	if out == nil {
		out = NewObject()
	}
	var missing []string
	for _, k := range TripleOOutputs {
		if out.Value(k) == nil {
			missing = append(missing, k)
		}
	}
	if len(missing) == len(TripleOOutputs) {
		r.warn("stack %s has none of the TripleO outputs (%s): it is not an overcloud; rendered only what it has",
			d.Name, strings.Join(missing, ", "))
	} else if len(missing) > 0 {
		r.warn("stack %s lacks the output(s) %s: rendered without them", d.Name, strings.Join(missing, ", "))
	}

	if o.Release == Zed {
		for _, dir := range zedRunnerDirs {
			r.dir(dir)
		}
	}
	r.file(GitignoreFile, []byte("*.tar.gz\n"))

	roleData := objectOutput(r, out, OutRoleData)
	groupVars := objectOutput(r, out, OutRoleGroupVars).Copy()
	hostVars := objectOutput(r, out, OutAnsibleHostVarsMap)
	if err := r.renderRoleData(roleData, groupVars, o); err != nil {
		return nil, err
	}
	r.renderRoleConfig(objectOutput(r, out, OutRoleConfig))

	servers := serverNames(r, out)
	r.renderDeployments(d, out, servers, groupVars, hostVars)
	if o.Release == Wallaby {
		r.renderNetworkConfig(d, out)
	}
	r.file(DeploymentsFile, []byte(deploymentsYAML))

	inv := buildInventory(r, d, out, o)
	r.file(InventoryFile, dumpYAMLOrdered(inv))
	r.dumpPending()

	r.Roles = append(r.Roles, roleData.SortedKeys()...)
	seen := map[string]bool{}
	for _, s := range servers.order {
		if name := servers.names[s]; !seen[name] {
			seen[name] = true
			r.Hosts = append(r.Hosts, name)
		}
	}
	sort.Strings(r.Hosts)
	return r, nil
}

// renderRoleData writes <Role>/<key>.yaml for each RoleData key (with the
// step splits), step_config.pp and param_config.json; in wallaby it merges
// a role's ansible_group_vars under its RoleGroupVars.
func (r *Rendering) renderRoleData(roleData, groupVars *Object, o Options) error {
	for _, role := range roleData.Keys() {
		if !safeName(role) {
			r.warn("RoleData: role name %q is not a usable directory name: skipped", role)
			continue
		}
		data := asObject(roleData.Value(role))
		if data == nil {
			r.warn("RoleData.%s is a %s, not a mapping: skipped", role, typeName(roleData.Value(role)))
			continue
		}
		r.dir(role)
		keys := data.Keys()
		if len(o.ConfigType) > 0 {
			keys = o.ConfigType
		}
		for _, key := range keys {
			if externalTasks[key] {
				continue
			}
			v, ok := data.Get(key)
			if !ok {
				return fmt.Errorf("config_type %s: RoleData.%s has no such key", key, role)
			}
			if !safeName(key) {
				r.warn("RoleData.%s: key %q is not a usable file name: skipped", role, key)
				continue
			}
			switch {
			case key == "step_config":
				s, ok := v.(string)
				if !ok {
					r.warn("RoleData.%s.step_config is a %s, not a string: written as %s", role, typeName(v), typeName(v))
					s = pyStr(v)
				}
				r.file(role+"/step_config.pp", []byte(s))
			case key == "param_config":
				r.file(role+"/param_config.json", []byte(pyJSONDumps(v, -1)))
			case key == "ansible_group_vars" && o.Release == Wallaby:
				own := asObject(v)
				if own == nil {
					r.warn("RoleData.%s.ansible_group_vars is a %s, not a mapping: ignored", role, typeName(v))
					continue
				}
				rgv, ok := groupVars.Get(role)
				if !ok || asObject(rgv) == nil {
					r.warn("RoleGroupVars has no mapping for role %s: its ansible_group_vars are not merged", role)
					continue
				}
				merged := own.Copy()
				merged.Update(asObject(rgv))
				groupVars.Set(role, merged)
			default:
				if n, ok := perStepTasks[key]; ok {
					for step := 0; step < n; step++ {
						tasks, err := TasksForStep(v, step, false)
						if err != nil {
							r.warn("RoleData.%s.%s %v: not split by step", role, key, err)
							break
						}
						r.fileYAML(fmt.Sprintf("%s/%s_step%d.yaml", role, key, step), tasks)
					}
				}
				r.fileYAML(role+"/"+key+".yaml", v)
			}
		}
	}
	return nil
}

// renderRoleConfig writes <key>.yaml (or <key> when it has a dot) for each
// RoleConfig key, and the step splits of the external tasks.
func (r *Rendering) renderRoleConfig(roleConfig *Object) {
	for _, key := range roleConfig.Keys() {
		if !safeName(key) {
			r.warn("RoleConfig: key %q is not a usable file name: skipped", key)
			continue
		}
		v := roleConfig.Value(key)
		if externalTasks[key] {
			for step := 0; step < StepsMax; step++ {
				tasks, err := TasksForStep(v, step, false)
				if err != nil {
					r.warn("RoleConfig.%s %v: not split by step", key, err)
					break
				}
				r.fileYAML(fmt.Sprintf("%s_step%d.yaml", key, step), tasks)
			}
		}
		name := key
		if !strings.Contains(name, ".") {
			name += ".yaml"
		}
		switch x := v.(type) {
		case *Object, []any:
			r.fileYAML(name, v)
		case string:
			r.file(name, []byte(x))
		default:
			r.warn("RoleConfig.%s is a %s, not a string, list or mapping: written as text", key, typeName(v))
			r.file(name, []byte(pyStr(v)))
		}
	}
}

// servers are the servers of RoleNetHostnameMap with an id in ServerIdData
// (tripleo-common's get_server_names): id -> lower-case name from the
// ctlplane host name up to ".ctlplane.".
type servers struct {
	order []string            // ids, in first-seen order
	names map[string]string   // id -> name
	ids   map[string]any      // name -> id (the last id of that name)
	idKey map[string]any      // id string -> the id as Heat gave it
	roles map[string][]string // role -> ids (ServerIdData order)
}

func serverNames(r *Rendering, out *Object) *servers {
	s := &servers{names: map[string]string{}, ids: map[string]any{}, idKey: map[string]any{}, roles: map[string][]string{}}
	hostnames := objectOutput(r, out, OutRoleNetHostnameMap)
	sid := asObject(out.Value(OutServerIDData))
	serverIDs := asObject(sid.Value("server_ids"))
	for _, role := range hostnames.Keys() {
		nets := hostnames.Value(role)
		if !truthy(nets) {
			continue
		}
		names, _ := asObject(nets).Value(hostNetwork).([]any)
		for idx, n := range names {
			if !sid.Has("server_ids") {
				continue
			}
			ids, ok := serverIDs.Value(role).([]any)
			if !ok || idx >= len(ids) {
				r.warn("ServerIdData.server_ids has no server %d of role %s: left out", idx, role)
				continue
			}
			id := ids[idx]
			if id == nil {
				continue
			}
			name, ok := n.(string)
			if !ok {
				r.warn("RoleNetHostnameMap.%s.%s[%d] is a %s, not a host name: left out", role, hostNetwork, idx, typeName(n))
				continue
			}
			key := pyStr(id)
			if _, seen := s.names[key]; !seen {
				s.order = append(s.order, key)
			}
			s.names[key] = strings.ToLower(strings.SplitN(name, "."+hostNetwork+".", 2)[0])
			s.idKey[key] = id
		}
	}
	for _, id := range s.order {
		s.ids[s.names[id]] = s.idKey[id]
	}
	for _, role := range serverIDs.Keys() {
		if l, ok := serverIDs.Value(role).([]any); ok {
			for _, id := range l {
				s.roles[role] = append(s.roles[role], pyStr(id))
			}
		}
	}
	return s
}

// roleOf is tripleo-common's get_role_from_server_id: the first role of
// ServerIdData.server_ids whose list holds the id.
func roleOf(out *Object, id string) (string, bool) {
	serverIDs := asObject(asObject(out.Value(OutServerIDData)).Value("server_ids"))
	for _, role := range serverIDs.Keys() {
		l, _ := serverIDs.Value(role).([]any)
		for _, x := range l {
			if x != nil && pyStr(x) == id {
				return role, true
			}
		}
	}
	return "", false
}

// renderDeployments writes templates/heat-config.j2, the deployment files
// <Role>/<server>/<deployment>, group_vars/<Role> of the roles with servers
// and host_vars/<server> with the server's deployment lists.
func (r *Rendering) renderDeployments(d *StackData, out *Object, s *servers, groupVars, hostVars *Object) {
	type names struct{ preNetwork, pre, post []string }
	perServer := map[string]*names{}
	serverDeps := map[string][]*Object{}
	var serverOrder []string
	serverRoles := map[string]string{}
	for _, dep := range d.Deployments {
		id := pyStr(dep.ServerID)
		cfg := asObject(deepCopy(dep.Config))
		if cfg == nil {
			cfg = NewObject()
		}
		cfg.Set("deployment_name", dep.Name)
		inputs, _ := cfg.Value("inputs").([]any)
		var dsi *Object
		for _, in := range inputs {
			if m := asObject(in); m != nil && m.Value("name") == "deploy_server_id" {
				dsi = m
			}
		}
		if dsi == nil {
			r.warn("the config of deployment %s has no deploy_server_id input: skipped", dep.Name)
			continue
		}
		dsi.Set("value", dep.ServerID)
		server, ok := s.names[id]
		if !ok {
			r.warn("server with id %s is ignored from config (may be blacklisted): deployment %s skipped", id, dep.Name)
			continue
		}
		if _, seen := serverDeps[server]; !seen {
			serverOrder = append(serverOrder, server)
		}
		serverDeps[server] = append(serverDeps[server], cfg)
		role, _ := roleOf(out, id)
		serverRoles[server] = role
		n := perServer[server]
		if n == nil {
			n = &names{}
			perServer[server] = n
		}
		switch {
		case strings.Contains(dep.ResourceID, "ExtraConfigPost") || strings.Contains(dep.ResourceID, "PostConfig"):
			n.post = appendNew(n.post, dep.Name)
		case strings.Contains(dep.ResourceID, "PreNetworkConfig"):
			n.preNetwork = appendNew(n.preNetwork, dep.Name)
		default:
			n.pre = appendNew(n.pre, dep.Name)
		}
	}
	for name, id := range s.ids {
		if _, ok := serverRoles[name]; !ok {
			role, _ := roleOf(out, pyStr(id))
			serverRoles[name] = role
		}
	}

	r.file(HeatConfigFile, []byte(heatConfigTemplate))
	r.dir("group_vars")
	r.dir("host_vars")

	for _, server := range serverOrder {
		role := serverRoles[server]
		if !safeName(role) || !safeName(server) {
			r.warn("server %s of role %q: not a usable directory name: its deployments are skipped", server, role)
			continue
		}
		for _, cfg := range serverDeps[server] {
			name := pyStr(cfg.Value("deployment_name"))
			if !safeName(name) {
				r.warn("deployment name %q of server %s is not a usable file name: skipped", name, server)
				continue
			}
			if cfg.Value("group") == "os-apply-config" {
				r.warn("group:os-apply-config is deprecated. Deployment %s will not be applied by config-download.", name)
			}
			r.file(role+"/"+server+"/"+name, deploymentFile(cfg))
		}
	}

	roleSet := map[string]bool{}
	for _, role := range serverRoles {
		roleSet[role] = true
	}
	for role := range roleSet {
		if !safeName(role) {
			continue
		}
		vars, ok := groupVars.Get(role)
		if !ok {
			r.warn("RoleGroupVars has no entry for role %s: no group_vars/%s", role, role)
			continue
		}
		r.fileYAML("group_vars/"+role, vars)
	}

	for _, server := range sortedStringKeys(s.ids) {
		if !safeName(server) {
			r.warn("server name %q is not a usable file name: no host_vars", server)
			continue
		}
		role := serverRoles[server]
		var ahv string
		if truthy(hostVars) {
			hv, ok := asObject(hostVars.Value(role)).Get(server)
			if !ok {
				r.warn("AnsibleHostVarsMap has no entry for %s of role %s: its host_vars lack them", server, role)
			} else {
				ahv = string(dumpYAML(hv))
			}
		}
		n := perServer[server]
		if n == nil {
			n = &names{}
		}
		r.file("host_vars/"+server, hostVarsFile(role, n.preNetwork, n.pre, n.post, ahv))
	}
}

// renderNetworkConfig writes <Role>/NetworkConfig from RoleNetworkConfigMap
// (stable/wallaby): a mapping as JSON, a software config id as that
// config's text.
func (r *Rendering) renderNetworkConfig(d *StackData, out *Object) {
	v, ok := out.Get(OutRoleNetworkConfigMap)
	if !ok || v == nil {
		r.warn("stack %s has no %s output (tripleo-common stable/wallaby stops here: 'Old network config templates are possibly used'): no <Role>/NetworkConfig written", d.Name, OutRoleNetworkConfigMap)
		return
	}
	m := asObject(v)
	if m == nil {
		r.warn("output %s is a %s, not a mapping: ignored", OutRoleNetworkConfigMap, typeName(v))
		return
	}
	for _, role := range m.Keys() {
		cfg := m.Value(role)
		var text string
		switch x := cfg.(type) {
		case nil:
			continue
		case *Object:
			text = pyJSONDumps(x, -1)
		case string:
			c, ok := d.NetworkConfigs[x]
			if !ok {
				r.warn("%s.%s names software config %s, which was not read: no %s/%s", OutRoleNetworkConfigMap, role, x, role, NetworkConfig)
				continue
			}
			s, isStr := c.(string)
			if !isStr && c != nil {
				r.warn("software config %s of %s.%s is a %s, not text: no %s/%s", x, OutRoleNetworkConfigMap, role, typeName(c), role, NetworkConfig)
				continue
			}
			text = s
		default:
			r.warn("%s.%s is a %s: no %s/%s", OutRoleNetworkConfigMap, role, typeName(cfg), role, NetworkConfig)
			continue
		}
		if text == "" {
			continue
		}
		if !safeName(role) || !hasDir(r, role) {
			r.warn("%s.%s: role %s has no directory (not in RoleData): no %s written", OutRoleNetworkConfigMap, role, role, NetworkConfig)
			continue
		}
		r.file(role+"/"+NetworkConfig, []byte(text))
	}
}

// hasDir reports whether the rendering has made directory d so far.
func hasDir(r *Rendering, d string) bool {
	if _, ok := r.Files[d+"/"]; ok {
		return true
	}
	for _, j := range r.pending {
		if strings.HasPrefix(j.path, d+"/") {
			return true
		}
	}
	return false
}

// objectOutput returns an output that must be a mapping (empty when absent
// or null).
func objectOutput(r *Rendering, out *Object, key string) *Object {
	v := out.Value(key)
	if v == nil {
		return NewObject()
	}
	o := asObject(v)
	if o == nil {
		r.warn("output %s is a %s, not a mapping: ignored", key, typeName(v))
		return NewObject()
	}
	return o
}

// safeName: a role, host, key or deployment name that can be a file name.
func safeName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\x00") && path.Clean(s) == s && s != ".git"
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func sortedStringKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
