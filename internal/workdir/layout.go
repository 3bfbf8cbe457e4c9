// Package workdir owns the working directory of a deployment, laid out as
// python-tripleoclient stable/wallaby leaves ~/overcloud-deploy/<stack>/
// (commit f3599d06631e): the passwords file generated once and reused, the
// deployment status, the stack's saved outputs and environment, the export
// files, the <stack>rc, the deploy archive; and what this collection adds
// to it: every output in one file, the ResourceGroup members of the last
// deploy (the nodes file) and the scale-down environment that removes named
// nodes from every later deploy; and its removal (Remove, for openstack
// overcloud delete). Each name and format is defined here once; the
// playbooks get the paths from the overcloud_workdir module.
package workdir

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stackname"
)

// Directories of a working directory (tripleoclient: v1/overcloud_deploy.py
// setup_ephemeral_heat, utils.save_stack, the config-download dir).
const (
	HeatLauncherDir   = "heat-launcher"
	ConfigDownloadDir = "config-download"
	OutputsDir        = "outputs"
	EnvironmentDir    = "environment"
)

// StackOutputs are tripleoclient's constants.STACK_OUTPUTS: the outputs
// utils.save_stack writes, one file outputs/<key> each (yaml of the value,
// null when the stack has no such output), read back by
// utils.get_stack_saved_output_item.
var StackOutputs = []string{"BlacklistedHostnames", "RoleNetIpMap", "BlacklistedIpAddresses",
	"RoleNetHostnameMap", "KeystoneAdminVip", "KeystoneRegion", "KeystoneURL", "EndpointMap",
	"VipMap", OutputEnabledServices, "HostsEntry", "AdminPassword", "GlobalConfig"}

// OutputEnabledServices is the saved output of each role's services (THT's
// EnabledServices: role name to its service names), which a scale-down
// reads (controlPlane).
const OutputEnabledServices = "EnabledServices"

// Layout names the files of one stack's working directory.
type Layout struct {
	Dir   string
	Stack string
}

// New returns the layout of dir for stack, refusing a stack name that is
// not one (package stackname, Heat's rule) or whose files could not be made
// (StackLimit). Messages name overcloud_workdir's parameters.
func New(dir, stack string) (Layout, error) {
	if dir == "" {
		return Layout{}, fmt.Errorf("work_dir is required")
	}
	if err := stackname.Check("stack", stack, StackLimit); err != nil {
		return Layout{}, err
	}
	return Layout{Dir: filepath.Clean(dir), Stack: stack}, nil
}

// StackLimit is the longest stack name whose files a working directory can
// hold: a file name has at most fsutil.MaxNameLen bytes, the layout's names
// add to the stack (the longest is the deploy archive's), and an atomic
// write's temporary name adds fsutil.TempNameExtra more.
var StackLimit = stackLimit()

// stackLimit works StackLimit out from every name the layout makes of the
// stack (Paths and Archive), so a new name is counted when it is added.
func stackLimit() stackname.Limit {
	const mark = "\x01"
	l := Layout{Dir: "/", Stack: mark}
	limit, longest := fsutil.MaxNameLen, ""
	for _, p := range append(sortedValues(l.Paths()), l.Archive(time.Date(2006, 1, 2, 15, 4, 5, 0, time.UTC))) {
		for _, elem := range strings.Split(p, "/") {
			n := strings.Count(elem, mark)
			if n == 0 || strings.Contains(elem, "*") {
				continue
			}
			fixed := len(elem) - n*len(mark) + fsutil.TempNameExtra
			if m := (fsutil.MaxNameLen - fixed) / n; m < limit {
				limit, longest = m, strings.ReplaceAll(elem, mark, "<stack>")
			}
		}
	}
	return stackname.Limit{Max: limit, Why: fmt.Sprintf("the working directory's file names (the longest is %s) and an atomic write's "+
		"temporary name add up to %d characters to it; a file name has at most %d bytes", longest, fsutil.MaxNameLen-limit, fsutil.MaxNameLen)}
}

func sortedValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func (l Layout) path(parts ...string) string {
	return filepath.Join(append([]string{l.Dir}, parts...)...)
}

// Passwords is <stack>-passwords.yaml (constants.PASSWORDS_ENV_FORMAT).
func (l Layout) Passwords() string { return l.path(l.Stack + "-passwords.yaml") }

// Status is <stack>-deployment_status.yaml (utils.get_status_yaml).
func (l Layout) Status() string { return l.path(l.Stack + "-deployment_status.yaml") }

// Export is <stack>-export.yaml and CellExport <stack>-cell-export.yaml
// (overcloud_deploy.py _export_stack, without and with the filter).
func (l Layout) Export() string     { return l.path(l.Stack + "-export.yaml") }
func (l Layout) CellExport() string { return l.path(l.Stack + "-cell-export.yaml") }

// RC is <stack>rc (workflows/deployment.py create_overcloudrc with the
// working dir as output_dir).
func (l Layout) RC() string { return l.path(l.Stack + "rc") }

// Output is outputs/<key> (utils.save_stack).
func (l Layout) Output(key string) string { return l.path(OutputsDir, key) }

// Environment is environment/tripleo-<stack>-environment.yaml
// (constants.STACK_ENV_FILE_NAME): the environment Heat merged for the
// stack, as utils.save_stack saves it.
func (l Layout) Environment() string {
	return l.path(EnvironmentDir, "tripleo-"+l.Stack+"-environment.yaml")
}

// ArchivePrefix and ArchiveSuffix frame the deploy archives,
// <stack>-install-<UTC %Y%m%d%H%M%S>.tar.bzip2 (utils.archive_deploy_artifacts).
func (l Layout) ArchivePrefix() string { return l.Stack + "-install-" }

// ArchiveSuffix is the deploy archives' extension.
const ArchiveSuffix = ".tar.bzip2"

// Archive is the archive of a deploy at t.
func (l Layout) Archive(t time.Time) string {
	return l.path(l.ArchivePrefix() + t.UTC().Format("20060102150405") + ArchiveSuffix)
}

// HeatDir is the ephemeral Heat's directory (heat-launcher/).
func (l Layout) HeatDir() string { return l.path(HeatLauncherDir) }

// ConfigDownload is config-download/<stack>, the rendered Ansible project.
func (l Layout) ConfigDownload() string { return l.path(ConfigDownloadDir, l.Stack) }

// Inventory is the config-download inventory (tripleo-common's name).
func (l Layout) Inventory() string {
	return filepath.Join(l.ConfigDownload(), "tripleo-ansible-inventory.yaml")
}

// AllOutputs is outputs/<stack>-outputs.yaml: every output of the stack in
// one file (ours; tripleoclient saves only StackOutputs).
func (l Layout) AllOutputs() string { return l.path(OutputsDir, l.Stack+"-outputs.yaml") }

// Nodes is outputs/<stack>-nodes.yaml: the node groups of the stack and
// the index of every member (ours; see Nodes).
func (l Layout) Nodes() string { return l.path(OutputsDir, l.Stack+"-nodes.yaml") }

// ScaleDown is <stack>-scale-down.yaml: the environment the scale-downs
// wrote (ours), included by every later deploy after the operator's
// environments.
func (l Layout) ScaleDown() string { return l.path(l.Stack + "-scale-down.yaml") }

// DeployInputs is deploy-inputs.sha256: the fingerprint of the inputs of
// the last successful deploy (ours; the deploy playbook skips a deploy
// whose fingerprint it holds).
func (l Layout) DeployInputs() string { return l.path("deploy-inputs.sha256") }

// Paths lists the layout for the module's result.
func (l Layout) Paths() map[string]string {
	return map[string]string{
		"work_dir":             l.Dir,
		"passwords":            l.Passwords(),
		"deployment_status":    l.Status(),
		"export":               l.Export(),
		"cell_export":          l.CellExport(),
		"rc":                   l.RC(),
		"outputs":              l.path(OutputsDir),
		"all_outputs":          l.AllOutputs(),
		"nodes":                l.Nodes(),
		"environment":          l.Environment(),
		"scale_down":           l.ScaleDown(),
		"heat_dir":             l.HeatDir(),
		"config_download":      l.ConfigDownload(),
		"inventory":            l.Inventory(),
		"deploy_archive_glob":  l.path(l.ArchivePrefix() + "*" + ArchiveSuffix),
		"config_download_root": l.path(ConfigDownloadDir),
		"deploy_inputs":        l.DeployInputs(),
		"lifecycle_runs":       l.Runs(),
		"migration":            l.Migration(),
		"merged_inventory":     l.MergedInventory(),
	}
}
