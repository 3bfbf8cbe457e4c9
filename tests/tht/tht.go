// Package tht builds the real tripleo-heat-templates workload the tests and
// the benchmark deploy: a THT source (a directory such as an undercloud's
// /usr/share/openstack-tripleo-heat-templates, or a tarball; default the
// stable/wallaby one in ../shared/reference) rendered with its own
// tools/process-templates.py, and the environment files python-tripleoclient
// would pass to Heat for an overcloud of pre-provisioned ("deployed") servers:
// by default Controller and Compute with the tree's roles_data.yaml, network
// isolation off; optionally a CephStorage role, roles generated from the
// tree's roles/ (roles.go) and the isolated networks (networks.go).
//
// Every input follows TripleO's own sources (python-tripleoclient,
// tripleo-common, tripleo-ansible stable/wallaby); comments name the file each
// fact comes from. THT and tripleo-common files are only read from the paths
// given, never copied into this repository. Rendering is cached by a hash of
// the source (see cache.go), so the callers of one run pay for it once.
package tht

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/passwords"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
)

// Defaults.
const (
	DefaultStackName       = "overcloud"
	DefaultControllerCount = 1
	DefaultComputeCount    = 2
	// DefaultDeployIdentifier is a fixed DeployIdentifier, so that the same
	// options give the same inputs (tripleoclient sends int(time.time()) on
	// every deploy: v1/overcloud_deploy.py _update_parameters).
	DefaultDeployIdentifier int64 = 1700000000
	// TimeoutMins is `openstack overcloud deploy --timeout`'s default
	// (v1/overcloud_deploy.py). Note that tripleoclient's ephemeral-Heat
	// create (workflows/deployment.py deploy_without_plan) sends no
	// timeout_mins, leaving Heat's own default.
	TimeoutMins = 240
)

// Options describe a workload. Only WorkDir is required.
type Options struct {
	// THT is the tripleo-heat-templates source, a directory or a .tar.gz
	// (default: DefaultTHT).
	THT string
	// TripleoCommon is the tripleo-common source of the password names and
	// container image inputs, a directory (an undercloud's
	// /usr/share/tripleo-common) or a .tar.gz (default: DefaultTripleoCommon).
	TripleoCommon string
	// ControllerCount and ComputeCount are the nodes provisioned (0 means
	// the defaults 1 and 2: a role cannot be left empty).
	ControllerCount int
	ComputeCount    int
	// CephStorageCount is the CephStorage nodes provisioned (0: none, the
	// role left out of the node environment as THT's default has it).
	CephStorageCount int
	// Roles are the `openstack overcloud roles generate` arguments of the
	// roles data to render and deploy with (roles.go), in order: a role
	// file of the tree's roles/ ("Networker") or "Defined:New"
	// ("Compute:ComputeLeaf1"). Empty: the tree's roles_data.yaml. Given,
	// Controller and Compute get their default counts only when listed.
	Roles []string
	// RoleCounts are nodes per role, by name: the roles of Roles other
	// than Controller, Compute and CephStorage, each in an address block
	// of its own (layoutRoles), and those three too, an entry winning over
	// the field above (so that {"Compute": 0} provisions none, as count: 0
	// in baremetal_deployment.yaml does). A role of the roles data whose
	// CountDefault is above 0 needs a count (0 included), as it needs one
	// in baremetal_deployment.yaml.
	RoleCounts map[string]int
	// Removed lists, per role ("Controller", "Compute", ...), node indices
	// removed by earlier scale-downs: they become <Role>RemovalPolicies and
	// the remaining nodes keep their names, as when baremetal_deployment.yaml
	// lists them with provisioned: false.
	Removed map[string][]int
	// StackName (default "overcloud").
	StackName string
	// WorkDir plays tripleoclient's working directory
	// (~/overcloud-deploy/<stack>): it gets the rendered tree
	// (tripleo-heat-templates/, with the generated environments under its
	// user-environments/) and <stack>-passwords.yaml, generated once and
	// reused. Created with mode 0700 when missing.
	WorkDir string
	// THTEnvironments are environments of the rendered tree itself, by
	// path relative to its root (e.g. "environments/docker-ha.yaml"), as
	// an operator adds `-e /usr/share/openstack-tripleo-heat-templates/...`:
	// the user's -e files, before ExtraEnvironments.
	THTEnvironments []string
	// ExtraEnvironments are the user's own -e files, last.
	ExtraEnvironments []string
	// NetworkIsolation provisions the tree's isolated networks (its
	// network_data.yaml) as wallaby's `overcloud network provision`,
	// `network vip provision` and `node provision` with network ports
	// write them (networks.go): the networks environment, a VIP per
	// network with vip: true and each host's ports on its role's networks.
	// Without it, only the ctlplane is provisioned.
	NetworkIsolation bool
	// IPv6 makes the isolated networks IPv6 (each network's ipv6_subnet;
	// the ctlplane stays IPv4). Needs NetworkIsolation.
	IPv6 bool
	// DeployIdentifier (0: DefaultDeployIdentifier).
	DeployIdentifier int64
	// CacheDir holds rendered trees (default: $EPHEMERAL_HEAT_THT_CACHE,
	// else <user cache dir>/ephemeral-heat/tht).
	CacheDir string
}

// Host is a pre-provisioned server of the workload.
type Host struct {
	Name       string `json:"name"` // e.g. overcloud-novacompute-1
	Role       string `json:"role"` // Controller, Compute, CephStorage
	Index      int    `json:"index"`
	CtlplaneIP string `json:"ctlplane_ip"`
	// IPs are its addresses on the isolated networks, by name_lower
	// (Options.NetworkIsolation; nil without).
	IPs map[string]string `json:"ips,omitempty"`
}

// Timings of a Generate call.
type Timings struct {
	// Render is getting the rendered tree into the cache (near zero on a
	// cache hit), RenderCached whether it was there already.
	Render       time.Duration `json:"render"`
	RenderCached bool          `json:"render_cached"`
	// Copy is copying the rendered tree into the work directory (zero when
	// the work directory already holds it).
	Copy time.Duration `json:"copy"`
	// Environments is reading tripleo-common's inputs and writing the
	// passwords and environment files.
	Environments time.Duration `json:"environments"`
}

// Workload is a deployable overcloud: heat_stack's template and
// environment_files, in order.
type Workload struct {
	StackName string `json:"stack_name"`
	WorkDir   string `json:"work_dir"`
	// TemplateDir is the rendered tree; Template its overcloud.yaml.
	TemplateDir string `json:"template_dir"`
	Template    string `json:"template"`
	// RolesFile is the roles data the tree was rendered with, where
	// tripleoclient keeps it: <work dir>/tripleo-<stack>-roles-data.yaml.
	RolesFile string `json:"roles_file"`
	// EnvironmentFiles, later ones overriding earlier ones.
	EnvironmentFiles []string `json:"environment_files"`
	// Parameters to pass as Heat "parameters": none, tripleoclient passes
	// everything as parameter_defaults in environment files.
	Parameters map[string]any `json:"parameters"`
	// TimeoutMins for the stack operation.
	TimeoutMins int `json:"timeout_mins"`
	// Counts of provisioned nodes per role; Hosts the nodes, by role then
	// index.
	Counts map[string]int `json:"counts"`
	Hosts  []Host         `json:"hosts"`
	// PasswordsFile is <work dir>/<stack>-passwords.yaml (secret).
	PasswordsFile string `json:"passwords_file"`
	// THTSource and TripleoCommonSource are the absolute sources used.
	THTSource           string  `json:"tht_source"`
	TripleoCommonSource string  `json:"tripleo_common_source"`
	Timings             Timings `json:"timings"`
}

// HostsOf returns the hosts of role.
func (w *Workload) HostsOf(role string) []Host {
	var out []Host
	for _, h := range w.Hosts {
		if h.Role == role {
			out = append(out, h)
		}
	}
	return out
}

// The files Generate writes (their names are tripleoclient's).
const (
	// TreeDir is v1/overcloud_deploy.py create_template_dirs'
	// "<working_dir>/tripleo-heat-templates".
	TreeDir = "tripleo-heat-templates"
	// treeKeyFile records which rendering TreeDir holds.
	treeKeyFile = ".tht-render-key"
	// UserEnvDir is tripleoclient/utils.py build_user_env_path's
	// "<tht>/user-environments".
	UserEnvDir = "user-environments"
	// ParametersEnv is utils.py create_parameters_env's env_file.
	ParametersEnv = "tripleoclient-parameters.yaml"
	// VIPEnv and NodeEnv are the names v1/overcloud_deploy.py gives the
	// environments of _provision_virtual_ips and _provision_baremetal.
	VIPEnv = "virtual-ips-deployed.yaml"
	// NetworksEnv is `overcloud network provision`'s output
	// (Options.NetworkIsolation).
	NetworksEnv = "networks-deployed.yaml"
	NodeEnv     = "baremetal-deployed.yaml"
	// PrepareEnv is the name TripleO's documentation gives the output of
	// `openstack tripleo container image prepare default --output-env-file`.
	PrepareEnv = "containers-prepare-parameter.yaml"
)

// Generate renders the THT source (or takes it from the cache), puts it in
// the work directory and writes the environments; see Workload.
func Generate(o Options) (*Workload, error) {
	var err error
	if o.WorkDir == "" {
		return nil, fmt.Errorf("tht: a work directory is required")
	}
	if o.WorkDir, err = filepath.Abs(o.WorkDir); err != nil {
		return nil, err
	}
	if o.StackName == "" {
		o.StackName = DefaultStackName
	}
	if err := validStackName(o.StackName); err != nil {
		return nil, err
	}
	specs, err := parseRoleSpecs(o.Roles)
	if err != nil {
		return nil, fmt.Errorf("tht: %w", err)
	}
	if o.ControllerCount == 0 && (len(specs) == 0 || lists(specs, "Controller")) {
		o.ControllerCount = DefaultControllerCount
	}
	if o.ComputeCount == 0 && (len(specs) == 0 || lists(specs, "Compute")) {
		o.ComputeCount = DefaultComputeCount
	}
	if o.DeployIdentifier == 0 {
		o.DeployIdentifier = DefaultDeployIdentifier
	}
	if o.THT == "" {
		if o.THT, err = DefaultTHT(); err != nil {
			return nil, err
		}
	}
	if o.TripleoCommon == "" {
		if o.TripleoCommon, err = DefaultTripleoCommon(); err != nil {
			return nil, err
		}
	}
	thtSrc, err := openSource("tripleo-heat-templates", o.THT, EnvTHT, thtMarker)
	if err != nil {
		return nil, err
	}
	commonSrc, err := openSource("tripleo-common", o.TripleoCommon, EnvTripleoCommon, commonMarker)
	if err != nil {
		return nil, err
	}
	if o.IPv6 && !o.NetworkIsolation {
		return nil, fmt.Errorf("tht: IPv6 is for the isolated networks: set NetworkIsolation too")
	}
	counts := map[string]int{"Controller": o.ControllerCount, "Compute": o.ComputeCount, "CephStorage": o.CephStorageCount}
	for name, n := range o.RoleCounts {
		counts[name] = n
	}
	for _, name := range sortedKeys(counts) {
		if counts[name] < 0 {
			return nil, fmt.Errorf("tht: node counts must be positive, got %s %d", name, counts[name])
		}
	}
	layout, err := layoutRoles(specs, counts)
	if err != nil {
		return nil, fmt.Errorf("tht: %w", err)
	}
	for role := range o.Removed {
		if !provisions(layout, role) {
			return nil, fmt.Errorf("tht: removed %s indices: %s is not a provisioned role", role, role)
		}
	}
	if _, _, err := nodeEnvironment("", o.StackName, layout, counts, o.Removed, nil); err != nil {
		return nil, fmt.Errorf("tht: %w", err) // before any copying
	}
	extra := make([]string, len(o.ExtraEnvironments))
	for i, e := range o.ExtraEnvironments {
		if _, err := os.Stat(e); err != nil {
			return nil, fmt.Errorf("tht: extra environment: %w", err)
		}
		if extra[i], err = filepath.Abs(e); err != nil {
			return nil, err
		}
	}
	o.ExtraEnvironments = extra
	for _, e := range o.THTEnvironments {
		if !filepath.IsLocal(e) || filepath.Clean(e) != e {
			return nil, fmt.Errorf("tht: THT environment %q: want a clean path relative to the tree's root, such as environments/docker-ha.yaml", e)
		}
	}
	root, err := cacheRoot(o.CacheDir)
	if err != nil {
		return nil, err
	}
	if _, err := fsutil.EnsurePrivateDir(o.WorkDir); err != nil {
		return nil, fmt.Errorf("tht: work directory: %w", err)
	}
	w := &Workload{StackName: o.StackName, WorkDir: o.WorkDir, TimeoutMins: TimeoutMins,
		THTSource: thtSrc.path, TripleoCommonSource: commonSrc.path,
		PasswordsFile: passwordsPath(o.WorkDir, o.StackName)}

	start := time.Now()
	rendered, rolesData, hit, err := renderTHT(root, thtSrc, specs)
	if err != nil {
		return nil, err
	}
	w.Timings.Render, w.Timings.RenderCached = time.Since(start), hit

	start = time.Now()
	var copied bool
	if w.TemplateDir, copied, err = placeTree(o.WorkDir, rendered); err != nil {
		return nil, err
	}
	if copied {
		w.Timings.Copy = time.Since(start)
	}
	w.Template = filepath.Join(w.TemplateDir, "overcloud.yaml")

	start = time.Now()
	if err := writeEnvironments(w, o, layout, counts, rolesData, root, commonSrc); err != nil {
		return nil, err
	}
	w.Timings.Environments = time.Since(start)
	return w, nil
}

// placeTree makes <workdir>/tripleo-heat-templates a copy of the rendered
// tree, unless it already is one of the same rendering (so edits a test made
// there are kept for as long as the source does not change). It refuses a
// directory of that name that it did not create.
func placeTree(workDir, rendered string) (string, bool, error) {
	dst := filepath.Join(workDir, TreeDir)
	keyFile := filepath.Join(workDir, treeKeyFile)
	key := filepath.Base(filepath.Dir(rendered)) // the cache entry's name
	old, kerr := os.ReadFile(keyFile)
	if _, err := os.Stat(dst); err == nil {
		if kerr != nil {
			return "", false, fmt.Errorf("tht: %s exists and was not made by this package: choose another work directory or remove it", dst)
		}
		if string(old) == key {
			return dst, false, nil
		}
	}
	tmp, err := os.MkdirTemp(workDir, TreeDir+".tmp-")
	if err != nil {
		return "", false, err
	}
	if err := os.Remove(tmp); err != nil {
		return "", false, err
	}
	if err := copyTree(rendered, tmp); err != nil {
		os.RemoveAll(tmp)
		return "", false, fmt.Errorf("tht: copying the rendered tree to %s: %w", workDir, err)
	}
	// The key goes first: a crash between the two leaves a tree the key
	// does not match, which the next run replaces.
	if err := fsutil.WriteFileAtomic(keyFile, []byte("replacing"), 0o600); err != nil {
		os.RemoveAll(tmp)
		return "", false, err
	}
	if err := os.RemoveAll(dst); err != nil {
		os.RemoveAll(tmp)
		return "", false, err
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.RemoveAll(tmp)
		return "", false, err
	}
	if err := fsutil.WriteFileAtomic(keyFile, []byte(key), 0o600); err != nil {
		return "", false, err
	}
	return dst, true, nil
}

// writeEnvironments writes the passwords and the generated environments and
// sets w's environment list, counts and hosts. The order is tripleoclient's
// (v1/overcloud_deploy.py create_env_files) for
// `openstack overcloud deploy --deployed-server -e <vip env> -e <node env>
// -e <containers-prepare env> [-e user envs]`, the VIP and node
// environments having been written by `overcloud network vip provision` and
// `overcloud node provision`:
//  1. overcloud-resource-registry-puppet.yaml (constants.py DEFAULT_RESOURCE_REGISTRY)
//  2. user-environments/tripleoclient-parameters.yaml (build_image_params + _update_parameters)
//  3. environments/deployed-server-environment.yaml (constants.py DEPLOYED_SERVER_ENVIRONMENT)
//  4. with NetworkIsolation, the networks environment, then
//     the VIP environment, 5. the node environment,
//  6. the ContainerImagePrepare environment (tripleo-common's
//     container_image_prepare_defaults.yaml, as `openstack tripleo container
//     image prepare default` writes it), 7. the user's own: the tree's
//     (THTEnvironments), then ExtraEnvironments.
func writeEnvironments(w *Workload, o Options, layout []nodeRole, counts map[string]int, rolesData, root string, commonSrc *source) error {
	common, err := readCommon(root, commonSrc)
	if err != nil {
		return err
	}
	tree := w.TemplateDir
	userEnv := filepath.Join(tree, UserEnvDir)
	if err := os.MkdirAll(userEnv, 0o755); err != nil {
		return err
	}
	w.Counts = map[string]int{}
	for _, nr := range layout {
		w.Counts[nr.name] = counts[nr.name]
	}
	// utils.py update_working_dir_defaults: the roles data deployed with,
	// in the working dir.
	if rolesData == "" {
		rolesData = filepath.Join(tree, RolesFile)
	}
	b, err := os.ReadFile(rolesData)
	if err != nil {
		return err
	}
	w.RolesFile = filepath.Join(o.WorkDir, rolesDataName(o.StackName))
	if err := writeChanged(w.RolesFile, b, 0o644); err != nil {
		return err
	}
	roles, err := readRoles(w.RolesFile)
	if err != nil {
		return err
	}
	if err := checkRoleCounts(roles, layout, w.RolesFile); err != nil {
		return err
	}
	var iso *isolation
	if o.NetworkIsolation {
		if iso, err = readIsolation(filepath.Join(tree, NetworksFile), roles, layout, o.IPv6); err != nil {
			return err
		}
	}
	cidr, _ := ctlplaneNet(maxCtlplaneOffset(layout, counts, o.Removed))
	vipEnv := vipEnvironment(tree, cidr)
	nodeEnv, hosts, err := nodeEnvironment(tree, o.StackName, layout, counts, o.Removed, iso)
	if err != nil {
		return err
	}
	var generated []string
	netPath := filepath.Join(userEnv, NetworksEnv)
	vipHeader := "The ctlplane VIP environment"
	if iso != nil {
		iso.addVIPs(vipEnv, tree)
		vipHeader = "The VIP environment"
		if err := writeYAML(netPath, "The networks environment `openstack overcloud network provision` writes\n(generated by ephemeral-heat tests/tht).", iso.networksEnvironment(tree), 0o644); err != nil {
			return err
		}
		generated = append(generated, netPath)
	} else if err := os.Remove(netPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// A networks environment of an earlier generation with isolation.
		return err
	}
	w.Hosts = hosts
	vipPath := filepath.Join(userEnv, VIPEnv)
	if err := writeYAML(vipPath, vipHeader+" `openstack overcloud network vip provision` writes\n(generated by ephemeral-heat tests/tht).", vipEnv, 0o644); err != nil {
		return err
	}
	nodePath := filepath.Join(userEnv, NodeEnv)
	if err := writeYAML(nodePath, "The pre-provisioned nodes' environment `openstack overcloud node provision` writes\n(generated by ephemeral-heat tests/tht).", nodeEnv, 0o644); err != nil {
		return err
	}
	// v1/container_image.py TripleOImagePrepareDefault: {parameter_defaults:
	// {ContainerImagePrepare: kolla_builder.CONTAINER_IMAGE_PREPARE_PARAM}}.
	prepare := filepath.Join(userEnv, PrepareEnv)
	if err := writeYAML(prepare, "What `openstack tripleo container image prepare default --output-env-file` writes:\ntripleo-common's container-images/container_image_prepare_defaults.yaml (generated by ephemeral-heat tests/tht).",
		map[string]any{"parameter_defaults": map[string]any{"ContainerImagePrepare": common.ContainerImagePrepare}}, 0o644); err != nil {
		return err
	}
	registry := filepath.Join(tree, "overcloud-resource-registry-puppet.yaml")
	deployedServer := filepath.Join(tree, "environments", "deployed-server-environment.yaml")
	userEnvs := append(generated, vipPath, nodePath, prepare)
	for _, e := range o.THTEnvironments {
		p := filepath.Join(tree, e)
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			return fmt.Errorf("tht: THT environment %s: no such file in the tree rendered from %s (%s)", e, w.THTSource, tree)
		}
		userEnvs = append(userEnvs, p)
	}
	userEnvs = append(userEnvs, o.ExtraEnvironments...)

	// build_image_params merges the registry and the user's environments
	// (not the deployed-server one) to find the enabled services.
	merged := map[string]any{}
	for _, f := range append([]string{registry}, userEnvs...) {
		e, err := readEnv(f)
		if err != nil {
			return err
		}
		mergeEnv(merged, e)
	}
	params, err := enabledServices(merged, roles)
	if err != nil {
		return err
	}
	// plan_utils.default_image_params (tripleo-common
	// tripleo_common/utils/plan.py). build_image_params then also runs
	// kolla_builder.container_images_prepare_multi(dry_run=True), which
	// asks the registry for each enabled image's rdo_version label
	// (tag_from_label): no registry is reachable here, so the image names
	// keep the defaults' tag.
	for k, v := range common.ImageParams {
		params[k] = v
	}
	// _update_parameters.
	params["RootStackName"] = o.StackName
	params["DeployIdentifier"] = o.DeployIdentifier
	// v1/overcloud_deploy.py _update_parameters: the passwords of the
	// working dir's passwords file, the missing ones generated, as the
	// product's own generator does (internal/passwords) for the names of
	// this tripleo-common source.
	pw, err := passwords.Ensure(w.PasswordsFile, common.PasswordNames)
	if err != nil {
		return err
	}
	for k, v := range pw.Values {
		params[k] = v
	}
	params["UndercloudHostsEntries"] = []string{undercloudHostsEntry}
	params["CtlplaneNetworkAttributes"] = ctlplaneAttributes(cidr)
	paramPath := filepath.Join(userEnv, ParametersEnv)
	if err := writeYAML(paramPath, "What `openstack overcloud deploy` writes to user-environments/tripleoclient-parameters.yaml\n(generated by ephemeral-heat tests/tht; holds the passwords).", map[string]any{"parameter_defaults": params}, fsutil.SecretFileMode); err != nil {
		return err
	}
	w.EnvironmentFiles = append([]string{registry, paramPath, deployedServer}, userEnvs...)
	return nil
}

func validStackName(n string) error {
	for i, c := range n {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' && i > 0 || c == '-' && i > 0
		if !ok {
			return fmt.Errorf("tht: stack name %q: use lower-case letters, digits and '-' (it is part of the hostnames), starting with a letter", n)
		}
	}
	return nil
}

// passwordsPath is the working dir's passwords file, named as
// internal/workdir names it (tripleoclient's <stack>-passwords.yaml); the
// stack name was validated by Generate.
func passwordsPath(dir, stack string) string {
	l, _ := workdir.New(dir, stack)
	return l.Passwords()
}
