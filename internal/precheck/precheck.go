// Package precheck refuses an overcloud deploy that would change the Ceph
// cluster's fsid or drop isolated networks. TripleO ran these checks against
// the live Heat stack's environment; with an ephemeral Heat there is no stack
// between deploys, so the checks judge from what the previous deploy left
// behind: its saved merged environment, its config-download inventory and,
// on an overcloud node, /etc/ceph/ceph.conf and the hieradata net_ip_map.
//
// Every piece of evidence that is absent (a first deploy, a node without
// Ceph) is reported; a check with no evidence at all is "skipped", never a
// silent pass. Evidence that exists but cannot be read or parsed is an error.
package precheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/templates"
)

// Names of the checks.
const (
	CephFSID         = "ceph_fsid"
	NetworkIsolation = "network_isolation"
)

// AllChecks are the checks run by default, in order.
var AllChecks = []string{CephFSID, NetworkIsolation}

// Statuses of a check.
const (
	Passed  = "passed"
	Failed  = "failed"
	Skipped = "skipped"
)

// Parameter names, used in messages to say where evidence came from.
const (
	ParamEnvironmentFiles    = "environment_files"
	ParamRequested           = "requested"
	ParamDeployedEnvironment = "deployed_environment"
	ParamDeployedInventory   = "deployed_inventory"
	ParamCephConf            = "ceph_conf"
	ParamNetIPMap            = "net_ip_map"
)

// Options says what is requested and where the evidence of the deployed
// overcloud is. An empty evidence path means "not given" (that source is
// skipped).
type Options struct {
	// EnvironmentFiles are the new deploy's environment files, in order;
	// they are merged as heat_stack merges them. Used unless UseRequested.
	EnvironmentFiles []string
	// UseRequested: judge Requested (keys ceph_fsid and networks) instead
	// of environment files.
	UseRequested bool
	Requested    map[string]any
	// Checks to run (default AllChecks).
	Checks []string

	DeployedEnvironment string
	DeployedInventory   string
	CephConf            string
	NetIPMap            string
	// Forbidden are parameters no environment file may name anywhere in
	// its parameter_defaults (an upgrade converge's, tripleoclient's
	// parameters.check_forbidden_params).
	Forbidden []string
}

// Check is the outcome of one check.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// Outcome is the result of Run.
type Outcome struct {
	Checks []Check
	// Failed is true when any check failed; Msg then says what changed,
	// why the deploy is refused and what to do.
	Failed bool
	Msg    string
	// Requested is what the new deploy asks for: ceph_fsid (string, ""
	// when unset) and networks (sorted names).
	Requested map[string]any
	// Deployed is the evidence found: ceph_fsid and networks, each keyed
	// by source ("deployed_environment", ...), for sources that were read.
	Deployed map[string]any
}

// Run runs the checks.
func Run(o Options) (Outcome, error) {
	checks, err := normaliseChecks(o.Checks)
	if err != nil {
		return Outcome{}, err
	}
	want := map[string]bool{}
	for _, c := range checks {
		want[c] = true
	}

	req, err := loadRequest(o)
	if err != nil {
		return Outcome{}, err
	}

	if msg := forbiddenIn(req, o.Forbidden); msg != "" {
		return Outcome{Failed: true, Msg: "Refusing to deploy. [forbidden_parameters] " + msg,
			Checks:    []Check{{Name: ForbiddenParameters, Status: Failed, Detail: msg}},
			Requested: map[string]any{}, Deployed: map[string]any{}}, nil
	}

	ev := &evidence{}
	if err := ev.load(o, want); err != nil {
		return Outcome{}, err
	}

	out := Outcome{
		Requested: map[string]any{"ceph_fsid": req.fsid, "networks": req.networkNames()},
		Deployed:  ev.summary(),
	}
	var msgs []string
	for _, name := range checks {
		var c Check
		var msg string
		switch name {
		case CephFSID:
			c, msg = checkFSID(req, ev)
		case NetworkIsolation:
			c, msg = checkNetworks(req, ev)
		}
		out.Checks = append(out.Checks, c)
		if c.Status == Failed {
			out.Failed = true
			msgs = append(msgs, "["+name+"] "+msg)
		}
	}
	if out.Failed {
		out.Msg = "Refusing to deploy. " + strings.Join(msgs, " ")
	}
	return out, nil
}

// ForbiddenParameters is the check of Options.Forbidden.
const ForbiddenParameters = "forbidden_parameters"

// forbiddenIn says which environment files name which of forbidden, as a
// key anywhere under their parameter_defaults ("" when none does).
func forbiddenIn(r *request, forbidden []string) string {
	if len(forbidden) == 0 || !r.fromFiles {
		return ""
	}
	bad := map[string]bool{}
	for _, f := range forbidden {
		bad[f] = true
	}
	var found []string
	for i, env := range r.envs {
		seen := map[string]bool{}
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					if bad[k] {
						seen[k] = true
					}
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(env["parameter_defaults"])
		if len(seen) > 0 {
			found = append(found, fmt.Sprintf("%s sets %s", r.envPaths[i], strings.Join(sortedKeys(seen), ", ")))
		}
	}
	if len(found) == 0 {
		return ""
	}
	return "these parameters belong to the release upgraded from and must be removed from the environment files first: " +
		strings.Join(found, "; ")
}

func normaliseChecks(in []string) ([]string, error) {
	if in == nil {
		return append([]string(nil), AllChecks...), nil
	}
	if len(in) == 0 {
		return nil, fmt.Errorf("checks is empty; name at least one of %s (or do not run the precheck)", strings.Join(AllChecks, ", "))
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range in {
		c = strings.TrimSpace(c)
		if c != CephFSID && c != NetworkIsolation {
			return nil, fmt.Errorf("checks: unknown check %q; the checks are %s", c, strings.Join(AllChecks, ", "))
		}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// What the new deploy requests.

type request struct {
	// fromFiles: the request comes from environment_files, not requested.
	fromFiles bool
	fsid      string
	// fsidFrom names the environment file that set CephClusterFSID last.
	fsidFrom string
	// networks maps the canonical key of each requested network to its name.
	networks map[string]string
	// networksGiven is false when requested has no networks key.
	networksGiven bool
	// envPaths and envs (each environment as sent, in order) let messages
	// say which file unregistered a network.
	envPaths []string
	envs     []map[string]any
	// provisionedFrom names the environment file that set
	// DeployedNetworkEnvironment last ("" when none does).
	provisionedFrom string
}

func (r *request) networkNames() []string {
	out := make([]string, 0, len(r.networks))
	for _, n := range r.networks {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func loadRequest(o Options) (*request, error) {
	if o.UseRequested {
		return parseRequested(o.Requested)
	}
	if len(o.EnvironmentFiles) == 0 {
		return nil, errors.New("environment_files is empty; give the new deploy's environment files in order, or requested")
	}
	merged, files, urls, err := templates.ProcessEnvironments(o.EnvironmentFiles)
	if err != nil {
		return nil, fmt.Errorf("environment_files: %w", err)
	}
	r := &request{fromFiles: true, networksGiven: true, envPaths: o.EnvironmentFiles}
	for _, u := range urls {
		var env map[string]any
		if err := json.Unmarshal([]byte(files[u]), &env); err != nil {
			return nil, fmt.Errorf("environment_files: re-reading %s: %w", u, err)
		}
		r.envs = append(r.envs, env)
	}
	if r.fsid, err = envFSID(merged, "the merged environment_files"); err != nil {
		return nil, err
	}
	for i, env := range r.envs {
		if pd, ok := env["parameter_defaults"].(map[string]any); ok {
			if _, ok := pd["CephClusterFSID"]; ok {
				r.fsidFrom = r.envPaths[i]
			}
			if _, ok := pd[deployedNetworkEnv]; ok {
				r.provisionedFrom = r.envPaths[i]
			}
		}
	}
	if r.networks, err = envNetworks(merged, "the merged environment_files"); err != nil {
		return nil, err
	}
	return r, nil
}

func parseRequested(m map[string]any) (*request, error) {
	r := &request{networks: map[string]string{}}
	for _, k := range sortedKeys(m) {
		switch k {
		case "ceph_fsid":
			switch v := m[k].(type) {
			case nil:
			case string:
				r.fsid = strings.TrimSpace(v)
			default:
				return nil, fmt.Errorf("requested.ceph_fsid must be a string (the new CephClusterFSID), got %v", v)
			}
		case "networks":
			r.networksGiven = true
			var items []any
			switch v := m[k].(type) {
			case nil:
			case []any:
				items = v
			case []string:
				for _, s := range v {
					items = append(items, s)
				}
			case string:
				for _, s := range strings.Split(v, ",") {
					if s = strings.TrimSpace(s); s != "" {
						items = append(items, s)
					}
				}
			default:
				return nil, fmt.Errorf("requested.networks must be a list of network names such as InternalApi or internal_api, got %v", v)
			}
			for _, it := range items {
				s, ok := it.(string)
				if !ok || strings.TrimSpace(s) == "" {
					return nil, fmt.Errorf("requested.networks: %v is not a network name", it)
				}
				s = strings.TrimPrefix(strings.TrimSpace(s), registryPrefix)
				if isCtlplane(s) {
					continue
				}
				r.networks[netKey(s)] = displayName(s, nil)
			}
		default:
			return nil, fmt.Errorf("requested has unknown key %q; it takes ceph_fsid and networks", k)
		}
	}
	return r, nil
}

// ---------------------------------------------------------------------------
// Reading environments.

const registryPrefix = "OS::TripleO::Network::"

// envFSID returns parameter_defaults.CephClusterFSID ("" when unset).
func envFSID(env map[string]any, where string) (string, error) {
	pd, err := section(env, "parameter_defaults", where)
	if err != nil {
		return "", err
	}
	switch v := pd["CephClusterFSID"].(type) {
	case nil:
		return "", nil
	case string:
		return strings.TrimSpace(v), nil
	default:
		return "", fmt.Errorf("%s: parameter_defaults.CephClusterFSID must be a string (a UUID), got %v", where, v)
	}
}

// envNetworks returns the isolated networks an environment creates:
//   - resource_registry keys OS::TripleO::Network::<Name> that are mapped
//     to something other than OS::Heat::None or a noop.yaml template,
//     excluding the ports (names starting "Port": OS::TripleO::Network::Ports::*);
//   - the networks of parameter_defaults.DeployedNetworkEnvironment
//     .net_attributes_map, which is how networks provisioned outside Heat
//     ("openstack overcloud network provision", Wallaby and later) reach the
//     deploy; those environments register no OS::TripleO::Network::<Name>.
//
// ctlplane is never counted.
func envNetworks(env map[string]any, where string) (map[string]string, error) {
	nets := map[string]string{}
	rr, err := section(env, "resource_registry", where)
	if err != nil {
		return nil, err
	}
	for k, v := range rr {
		name, ok := registryNetwork(k)
		if !ok || !activeMapping(v) {
			continue
		}
		nets[netKey(name)] = name
	}
	pd, err := section(env, "parameter_defaults", where)
	if err != nil {
		return nil, err
	}
	for k, name := range provisionedNetworks(pd) {
		nets[k] = name
	}
	return nets, nil
}

// provisionedNetworks returns the networks of parameter_defaults pd's
// DeployedNetworkEnvironment.net_attributes_map (ctlplane excluded), keyed
// by netKey.
func provisionedNetworks(pd map[string]any) map[string]string {
	nets := map[string]string{}
	dne, _ := pd[deployedNetworkEnv].(map[string]any)
	nam, _ := dne["net_attributes_map"].(map[string]any)
	for lower, attrs := range nam {
		if isCtlplane(lower) {
			continue
		}
		name := displayName(lower, nil)
		if n := taggedNetworkName(attrs); n != "" {
			name = n
		}
		nets[netKey(lower)] = name
	}
	return nets
}

// deployedNetworkEnv is the parameter through which networks provisioned
// outside Heat (`openstack overcloud network provision`'s
// networks-deployed.yaml) reach the deploy.
const deployedNetworkEnv = "DeployedNetworkEnvironment"

// registryNetwork returns <Name> for a key OS::TripleO::Network::<Name> that
// names a network (not a port, not a deeper namespace).
func registryNetwork(key string) (string, bool) {
	name, ok := strings.CutPrefix(key, registryPrefix)
	if !ok || name == "" || strings.HasPrefix(name, "Port") || strings.Contains(name, "::") || isCtlplane(name) {
		return "", false
	}
	return name, true
}

// activeMapping is false for mappings that create nothing.
func activeMapping(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false // null (unregistered) or a per-resource mapping
	}
	s = strings.TrimSpace(s)
	return s != "" && s != "OS::Heat::None" && !strings.HasSuffix(s, "/noop.yaml") && s != "noop.yaml"
}

// taggedNetworkName reads the tripleo_network_name=<Name> tag of a
// net_attributes_map entry.
func taggedNetworkName(attrs any) string {
	a, _ := attrs.(map[string]any)
	n, _ := a["network"].(map[string]any)
	tags, _ := n["tags"].([]any)
	for _, t := range tags {
		if s, ok := t.(string); ok {
			if v, ok := strings.CutPrefix(s, "tripleo_network_name="); ok && v != "" {
				return v
			}
		}
	}
	return ""
}

func section(env map[string]any, name, where string) (map[string]any, error) {
	switch v := env[name].(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return v, nil
	default:
		return nil, fmt.Errorf("%s: %s must be a mapping, got %v", where, name, v)
	}
}

// unregisteredBy names the last environment file that maps the network's
// registry key to nothing (OS::Heat::None, a noop template, null, or a
// null "prefix*" wildcard), or "" when none does.
func (r *request) unregisteredBy(name string) string {
	by := ""
	key := registryPrefix + name
	for i, env := range r.envs {
		rr, _ := env["resource_registry"].(map[string]any)
		for _, k := range sortedKeys(rr) {
			v := rr[k]
			if prefix, ok := strings.CutSuffix(k, "*"); ok {
				if v == nil && strings.HasPrefix(key, prefix) {
					by = r.envPaths[i]
				}
				continue
			}
			n, ok := registryNetwork(k)
			if !ok || netKey(n) != netKey(name) {
				continue
			}
			if activeMapping(v) {
				by = ""
			} else {
				by = r.envPaths[i]
			}
		}
	}
	return by
}

// ---------------------------------------------------------------------------
// Network names.

// knownNetworks maps the snake_case names TripleO uses in host variables,
// hieradata and network_data name_lower to the network names.
var knownNetworks = map[string]string{
	"internal_api": "InternalApi",
	"storage":      "Storage",
	"storage_mgmt": "StorageMgmt",
	"tenant":       "Tenant",
	"external":     "External",
	"management":   "Management",
	"storage_nfs":  "StorageNFS",
}

// netKey is the comparison key of a network name: InternalApi, internal_api
// and internalapi are the same network.
func netKey(name string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimSpace(name), "_", ""))
}

func isCtlplane(name string) bool {
	k := netKey(name)
	return k == "ctlplane" || k == "controlplane"
}

// displayName turns a snake_case name into the TripleO network name (known
// names, then lower maps name_lower to name, else CamelCase); other names
// are kept.
func displayName(s string, lower map[string]string) string {
	if n, ok := lower[s]; ok {
		return n
	}
	if n, ok := knownNetworks[s]; ok {
		return n
	}
	if s != strings.ToLower(s) {
		return s // already a network name
	}
	var b strings.Builder
	for _, part := range strings.Split(s, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// providerOf says which environment usually registers a network.
func providerOf(name string) string {
	if _, ok := knownNetworks[strings.ToLower(snake(name))]; ok {
		return "environments/network-isolation.yaml"
	}
	return "environments/network-isolation.yaml rendered from your network_data.yaml"
}

func snake(name string) string {
	for s, n := range knownNetworks {
		if n == name {
			return s
		}
	}
	return name
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ---------------------------------------------------------------------------
// Evidence of the deployed overcloud.

// source is one piece of evidence.
type source struct {
	param, path string
	present     bool
	// absent says why the source was not consulted.
	absent string
}

func (s source) String() string { return s.param + " " + s.path }

// open checks that a source exists; a missing file is an absent source, any
// other problem an error.
//
// Evidence is read through the bounded input reader: a regular file of at
// most evidenceLimit bytes (a FIFO or device is refused by its type).
func open(param, path, missing string) (source, []byte, error) {
	s := source{param: param, path: path}
	if path == "" {
		s.absent = param + " not given"
		return s, nil, nil
	}
	data, err := fsutil.ReadInput(path, evidenceLimit, param)
	switch {
	case err == nil:
		s.present = true
		return s, data, nil
	case errors.Is(err, fs.ErrNotExist):
		s.absent = fmt.Sprintf("%s: no %s (%s)", param, path, missing)
		return s, nil, nil
	case errors.Is(err, fs.ErrPermission):
		return s, nil, fmt.Errorf("%v (run the task with become: true)", err)
	default:
		return s, nil, err
	}
}

// evidenceLimit bounds an evidence file (an inventory of a large cloud is a
// few MB).
var evidenceLimit = fsutil.Limit{Bytes: 64 << 20}

type fsidFact struct {
	src   source
	field string // where in the source, e.g. "parameter_defaults.CephClusterFSID"
	fsid  string
}

type netFact struct {
	src      source
	networks map[string]string // key -> name
}

type evidence struct {
	env, inventory, cephConf, netIPMap source
	fsids                              []fsidFact
	// fsidNone lists present sources that hold no fsid.
	fsidNone []string
	nets     []netFact
	// provisioned: the networks (netKey) the deployed environment had
	// from DeployedNetworkEnvironment, i.e. provisioned with `openstack
	// overcloud network provision`.
	provisioned map[string]string
}

func (e *evidence) load(o Options, want map[string]bool) error {
	var err error
	var data []byte
	if e.env, data, err = open(ParamDeployedEnvironment, o.DeployedEnvironment,
		"first deploy, or the previous deploy's environment was saved elsewhere"); err != nil {
		return err
	}
	if e.env.present {
		env, err := parseDeployedEnvironment(data, o.DeployedEnvironment)
		if err != nil {
			return err
		}
		where := ParamDeployedEnvironment + " " + o.DeployedEnvironment
		if want[CephFSID] {
			fsid, err := envFSID(env, where)
			if err != nil {
				return err
			}
			if fsid != "" {
				e.fsids = append(e.fsids, fsidFact{e.env, "parameter_defaults.CephClusterFSID", fsid})
			} else {
				e.fsidNone = append(e.fsidNone, where+" sets no CephClusterFSID")
			}
		}
		if want[NetworkIsolation] {
			nets, err := envNetworks(env, where)
			if err != nil {
				return err
			}
			e.nets = append(e.nets, netFact{e.env, nets})
			pd, _ := env["parameter_defaults"].(map[string]any)
			e.provisioned = provisionedNetworks(pd)
		}
	}
	if want[NetworkIsolation] {
		if e.inventory, data, err = open(ParamDeployedInventory, o.DeployedInventory,
			"first deploy, or config-download wrote it elsewhere"); err != nil {
			return err
		}
		if e.inventory.present {
			nets, err := inventoryNetworks(data, o.DeployedInventory)
			if err != nil {
				return err
			}
			e.nets = append(e.nets, netFact{e.inventory, nets})
		}
		if e.netIPMap, data, err = open(ParamNetIPMap, o.NetIPMap, "not an overcloud node"); err != nil {
			return err
		}
		if e.netIPMap.present {
			nets, err := netIPMapNetworks(data, o.NetIPMap)
			if err != nil {
				return err
			}
			e.nets = append(e.nets, netFact{e.netIPMap, nets})
		}
	}
	if want[CephFSID] {
		if e.cephConf, data, err = open(ParamCephConf, o.CephConf, "no Ceph on this host"); err != nil {
			return err
		}
		if e.cephConf.present {
			fsid, err := cephConfFSID(data, o.CephConf)
			if err != nil {
				return err
			}
			if fsid != "" {
				e.fsids = append(e.fsids, fsidFact{e.cephConf, "[global] fsid", fsid})
			} else {
				e.fsidNone = append(e.fsidNone, e.cephConf.String()+" has no fsid in [global]")
			}
		}
	}
	return nil
}

func (e *evidence) summary() map[string]any {
	fsids := map[string]any{}
	for _, f := range e.fsids {
		fsids[f.src.param] = f.fsid
	}
	nets := map[string]any{}
	for _, n := range e.nets {
		names := make([]string, 0, len(n.networks))
		for _, v := range n.networks {
			names = append(names, v)
		}
		sort.Strings(names)
		nets[n.src.param] = names
	}
	return map[string]any{"ceph_fsid": fsids, "networks": nets}
}

func parseDeployedEnvironment(data []byte, path string) (map[string]any, error) {
	v, err := templates.ParseYAML(data, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ParamDeployedEnvironment, err)
	}
	env, ok := v.(map[string]any)
	if !ok {
		what := "empty"
		if v != nil {
			what = "not a YAML mapping"
		}
		return nil, fmt.Errorf("%s: %s is %s; it should be the previous deploy's merged environment, with parameter_defaults and resource_registry", ParamDeployedEnvironment, path, what)
	}
	return env, nil
}

// ---------------------------------------------------------------------------
// The checks.

func checkFSID(req *request, ev *evidence) (Check, string) {
	c := Check{Name: CephFSID}
	var absent []string
	for _, s := range []source{ev.env, ev.cephConf} {
		if !s.present {
			absent = append(absent, s.absent)
		}
	}
	if !ev.env.present && !ev.cephConf.present {
		c.Status = Skipped
		c.Detail = "no evidence of a deployed Ceph cluster to compare with: " + strings.Join(absent, "; ")
		return c, ""
	}
	reqDesc := describeRequestedFSID(req)
	deployed := groupFSIDs(ev.fsids, "")
	differ := groupFSIDs(ev.fsids, req.fsid)
	notes := append(append([]string(nil), ev.fsidNone...), absent...)
	suffix := ""
	if len(notes) > 0 {
		suffix = " [" + strings.Join(notes, "; ") + "]"
	}
	switch {
	case len(ev.fsids) == 0:
		c.Status = Passed
		c.Detail = "the deployed overcloud has no Ceph fsid"
		if req.fsid != "" {
			c.Detail += fmt.Sprintf("; the new fsid %s is accepted", reqDesc)
		}
		c.Detail += suffix
		return c, ""
	case req.fsid == "":
		c.Status = Passed
		c.Detail = fmt.Sprintf("the new deploy sets no CephClusterFSID (%s); the deployed fsid stays: %s%s",
			req.fsidSource(), strings.Join(deployed, " and "), suffix)
		return c, ""
	case len(differ) == 0:
		c.Status = Passed
		c.Detail = fmt.Sprintf("the new fsid %s matches the deployed fsid %s%s", reqDesc, strings.Join(deployed, " and "), suffix)
		return c, ""
	}
	keep := ""
	for _, f := range ev.fsids {
		if !strings.EqualFold(f.fsid, req.fsid) {
			keep = f.fsid
			break
		}
	}
	c.Status = Failed
	c.Detail = fmt.Sprintf("CephClusterFSID would change from %s to %s%s", strings.Join(differ, " and "), reqDesc, suffix)
	fix := fmt.Sprintf("set CephClusterFSID back to %s", keep)
	if req.fsidFrom != "" {
		fix += " in " + req.fsidFrom + ", or remove it from there"
	} else {
		fix += ", or leave it unset"
	}
	msg := fmt.Sprintf("The new deploy sets CephClusterFSID %s, but the deployed Ceph cluster has fsid %s. "+
		"Changing the fsid of a running Ceph cluster destroys it. To keep the cluster, %s (the deployed fsid then stays).",
		reqDesc, strings.Join(differ, " and "), fix)
	return c, msg
}

// groupFSIDs describes the deployed fsids, each once with every source that
// shows it; with unless set, only those that differ from it.
func groupFSIDs(facts []fsidFact, unless string) []string {
	var order []string
	from := map[string][]string{}
	for _, f := range facts {
		k := strings.ToLower(f.fsid)
		if unless != "" && k == strings.ToLower(unless) {
			continue
		}
		if _, ok := from[k]; !ok {
			order = append(order, f.fsid)
		}
		from[k] = append(from[k], fmt.Sprintf("%s: %s", f.src, f.field))
	}
	out := make([]string, 0, len(order))
	for _, fsid := range order {
		out = append(out, fmt.Sprintf("%s (from %s)", fsid, strings.Join(from[strings.ToLower(fsid)], " and ")))
	}
	return out
}

func describeRequestedFSID(req *request) string {
	return fmt.Sprintf("%s (%s)", req.fsid, req.fsidSource())
}

func (r *request) fsidSource() string {
	switch {
	case !r.fromFiles:
		return "requested.ceph_fsid"
	case r.fsidFrom != "":
		return "set by " + r.fsidFrom
	default:
		return "no environment file sets it"
	}
}

func checkNetworks(req *request, ev *evidence) (Check, string) {
	c := Check{Name: NetworkIsolation}
	var absent []string
	for _, s := range []source{ev.env, ev.inventory, ev.netIPMap} {
		if !s.present {
			absent = append(absent, s.absent)
		}
	}
	if len(ev.nets) == 0 {
		c.Status = Skipped
		c.Detail = "no evidence of the deployed networks to compare with: " + strings.Join(absent, "; ")
		return c, ""
	}
	if !req.networksGiven {
		c.Status = Skipped
		c.Detail = "requested has no networks key, so there is nothing to compare the deployed networks with"
		return c, ""
	}
	// deployed network key -> name and the sources that show it.
	names := map[string]string{}
	seenIn := map[string][]string{}
	var consulted []string
	for _, f := range ev.nets {
		consulted = append(consulted, f.src.String())
		for _, k := range sortedKeys(f.networks) {
			if _, ok := names[k]; !ok || f.src.param == ParamDeployedEnvironment {
				names[k] = f.networks[k]
			}
			seenIn[k] = append(seenIn[k], f.src.param)
		}
	}
	suffix := ""
	if len(absent) > 0 {
		suffix = " [" + strings.Join(absent, "; ") + "]"
	}
	var missing []string
	for _, k := range sortedKeys(names) {
		if _, ok := req.networks[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(names) == 0 {
		c.Status = Passed
		c.Detail = "the deployed overcloud has no isolated networks (per " + strings.Join(consulted, ", ") + ")" + suffix
		return c, ""
	}
	if len(missing) == 0 {
		var all []string
		for _, k := range sortedKeys(names) {
			all = append(all, names[k])
		}
		sort.Strings(all)
		c.Status = Passed
		c.Detail = fmt.Sprintf("the new deploy keeps every deployed network: %s (per %s)%s",
			strings.Join(all, ", "), strings.Join(consulted, ", "), suffix)
		return c, ""
	}
	// Networks missing for the same reason are named together.
	type group struct {
		names          []string
		seen, by, prov string
		// provisioned: the previous deploy had them from
		// DeployedNetworkEnvironment.
		provisioned bool
	}
	var groups []*group
	allProvisioned := true
	for _, k := range missing {
		name := names[k]
		_, prov := ev.provisioned[k]
		allProvisioned = allProvisioned && prov
		g := &group{names: []string{name}, seen: strings.Join(seenIn[k], ", "), provisioned: prov}
		if req.fromFiles && !prov {
			g.by, g.prov = req.unregisteredBy(name), providerOf(name)
		}
		merged := false
		for _, h := range groups {
			if h.seen == g.seen && h.by == g.by && h.prov == g.prov && h.provisioned == g.provisioned {
				h.names = append(h.names, name)
				merged = true
				break
			}
		}
		if !merged {
			groups = append(groups, g)
		}
	}
	var items []string
	for _, g := range groups {
		sort.Strings(g.names)
		key, verb := registryPrefix+g.names[0], "registers it"
		if len(g.names) > 1 {
			key, verb = "each "+registryPrefix+"<Name>", "registers them"
		}
		why := "not in requested.networks"
		if req.fromFiles && g.provisioned {
			it := "it"
			if len(g.names) > 1 {
				it = "them"
			}
			if req.provisionedFrom == "" {
				why = fmt.Sprintf("the deployed environment had %s from parameter_defaults.%s, which 'openstack overcloud network provision' "+
					"writes (networks-deployed.yaml), and no environment file sets it now", it, deployedNetworkEnv)
			} else {
				why = fmt.Sprintf("the deployed environment had %s from parameter_defaults.%s; the one %s sets does not list %s",
					it, deployedNetworkEnv, req.provisionedFrom, it)
			}
		} else if req.fromFiles {
			if g.by != "" {
				why = fmt.Sprintf("%s is mapped to OS::Heat::None or null by %s", key, g.by)
			} else {
				why = fmt.Sprintf("no environment file registers %s", strings.TrimPrefix(key, "each "))
			}
			why += "; usually " + g.prov + " " + verb
		}
		items = append(items, fmt.Sprintf("%s (deployed per %s; %s)", strings.Join(g.names, ", "), g.seen, why))
	}
	sort.Strings(items)
	c.Status = Failed
	c.Detail = "deployed networks missing from the new deploy: " + strings.Join(items, "; ") + suffix
	fix := "add -e environments/network-isolation.yaml and your network-environment.yaml back to the deploy " +
		"(environment_files), or, for networks provisioned with 'openstack overcloud network provision', the generated " +
		"networks-deployed environment"
	if allProvisioned {
		// Not network-isolation.yaml: a deploy with provisioned networks
		// does not use it.
		fix = "add back the networks-deployed environment that 'openstack overcloud network provision' wrote " +
			"(environment_files; it sets " + deployedNetworkEnv + "), with the VIP and node environments provisioned with it"
	}
	if !req.fromFiles {
		fix = "add the networks back to requested.networks (the deploy's environment must keep registering them, " +
			"usually through environments/network-isolation.yaml and network-environment.yaml)"
	}
	msg := fmt.Sprintf("The deployed overcloud has isolated networks that the new deploy drops: %s. "+
		"Deploying without them removes their ports and addresses from the nodes and breaks the overcloud. "+
		"To keep them, %s. If removing a network really is intended, run this precheck without network_isolation in checks.",
		strings.Join(items, "; "), fix)
	return c, msg
}
