// Package lifecycle holds what python-tripleoclient stable/wallaby
// (commit f3599d06631e) knows of an overcloud's minor update and major
// upgrade: the stages a deploy can be (a plain deploy, an update prepare,
// an upgrade prepare, an upgrade converge), the lifecycle environment of
// tripleo-heat-templates each prepare puts first among the operator's
// environments (constants.UPDATE_PREPARE_ENV, UPGRADE_PREPARE_ENV,
// UPGRADE_CONVERGE_ENV; utils.prepend_environment), the parameters an
// upgrade converge refuses (UPGRADE_CONVERGE_FORBIDDEN_PARAMS), and the
// config-download playbooks each run command runs (MINOR_UPDATE_PLAYBOOKS,
// MAJOR_UPGRADE_PLAYBOOKS, EXTERNAL_UPDATE_PLAYBOOKS,
// EXTERNAL_UPGRADE_PLAYBOOKS), with the stage its last deploy must be.
package lifecycle

import (
	"fmt"
	"sort"
	"strings"
)

// Stages of a deploy (what the working dir's deployment status records).
const (
	Deploy          = "deploy"
	UpdatePrepare   = "update-prepare"
	UpgradePrepare  = "upgrade-prepare"
	UpgradeConverge = "upgrade-converge"
)

// Stages lists them (the modules' choices).
var Stages = []string{Deploy, UpdatePrepare, UpgradePrepare, UpgradeConverge}

// environments are the lifecycle environments, relative to the THT root.
var environments = map[string]string{
	UpdatePrepare:   "environments/lifecycle/update-prepare.yaml",
	UpgradePrepare:  "environments/lifecycle/upgrade-prepare.yaml",
	UpgradeConverge: "environments/lifecycle/upgrade-converge.yaml",
}

// Environment is the lifecycle environment of stage relative to the
// templates' root ("" for a plain deploy).
func Environment(stage string) string { return environments[stage] }

// forbidden are the parameters no environment of an upgrade converge may
// set (tripleoclient refuses them: they belong to the release upgraded
// from).
var forbidden = map[string][]string{
	UpgradeConverge: {"ceph3_namespace", "ceph3_tag", "ceph3_image", "name_prefix_stein",
		"name_suffix_stein", "namespace_stein", "tag_stein"},
}

// Forbidden lists the parameters stage refuses in the operator's
// environments.
func Forbidden(stage string) []string { return append([]string{}, forbidden[stage]...) }

// Title names a stage for a person ("an update prepare").
func Title(stage string) string {
	switch stage {
	case UpdatePrepare:
		return "an update prepare (ephemeral.heat.update_prepare)"
	case UpgradePrepare:
		return "an upgrade prepare (ephemeral.heat.upgrade_prepare)"
	case UpgradeConverge:
		return "an upgrade converge (ephemeral.heat.upgrade_converge)"
	}
	return "a plain deploy (ephemeral.heat.deploy_overcloud)"
}

// Run is one of tripleoclient's run commands.
type Run struct {
	// Name is the collection playbook's (update_run ...).
	Name string
	// Command is tripleoclient's.
	Command string
	// Playbooks are the config-download playbooks it runs, in order, in
	// one ansible-playbook run.
	Playbooks []string
	// After is the stage the last deploy must be.
	After string
	// LimitRequired: --limit is required.
	LimitRequired bool
	// ExcludeBlacklisted: when DeploymentServerBlacklist names hosts
	// (the saved BlacklistedHostnames), the limit gets
	// ":!excluded_overcloud" and may not name one of them.
	ExcludeBlacklisted bool
}

// ExcludedGroup is the inventory group of the hosts
// DeploymentServerBlacklist names (tripleo-common's inventory).
const ExcludedGroup = "excluded_overcloud"

var runs = []Run{
	{Name: "update_run", Command: "openstack overcloud update run", Playbooks: []string{"update_steps_playbook.yaml"},
		After: UpdatePrepare, LimitRequired: true, ExcludeBlacklisted: true},
	{Name: "external_update_run", Command: "openstack overcloud external-update run",
		Playbooks: []string{"external_update_steps_playbook.yaml"}, After: UpdatePrepare},
	{Name: "upgrade_run", Command: "openstack overcloud upgrade run",
		Playbooks: []string{"upgrade_steps_playbook.yaml", "deploy_steps_playbook.yaml", "post_upgrade_steps_playbook.yaml"},
		After:     UpgradePrepare, LimitRequired: true},
	{Name: "external_upgrade_run", Command: "openstack overcloud external-upgrade run",
		Playbooks: []string{"external_upgrade_steps_playbook.yaml"}, After: UpgradePrepare},
}

// Runs lists the run commands' names.
func Runs() []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.Name
	}
	return out
}

// FindRun returns the run command named name.
func FindRun(name string) (Run, error) {
	for _, r := range runs {
		if r.Name == name {
			return r, nil
		}
	}
	names := Runs()
	sort.Strings(names)
	return Run{}, fmt.Errorf("no run command %q (one of %s)", name, strings.Join(names, ", "))
}
