// Command overcloud_precheck is the Ansible module (and command-line tool)
// that refuses an overcloud deploy which would change the Ceph cluster's fsid
// or drop isolated networks, judged from what the previous deploy left behind
// instead of a live Heat stack.
package main

import (
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/precheck"
)

var spec = &module.Spec{
	Name:  "overcloud_precheck",
	Short: "refuse a deploy that would change the Ceph fsid or drop isolated networks",
	Params: []module.Param{
		{Name: precheck.ParamEnvironmentFiles, Type: module.List, Elements: module.Path,
			Help: "the new deploy's environment files, in order (merged as heat_stack merges them)"},
		{Name: precheck.ParamRequested, Type: module.Dict,
			Help: "instead of environment_files: {ceph_fsid: ..., networks: [InternalApi, ...]}"},
		{Name: "checks", Type: module.List, Default: append([]string(nil), precheck.AllChecks...),
			Help: "checks to run: ceph_fsid, network_isolation"},
		{Name: precheck.ParamDeployedEnvironment, Type: module.Path,
			Help: "the previous deploy's saved merged environment (absent on a first deploy)"},
		{Name: precheck.ParamDeployedInventory, Type: module.Path,
			Help: "the previous config-download tripleo-ansible-inventory.yaml"},
		{Name: precheck.ParamCephConf, Type: module.Path, Default: "/etc/ceph/ceph.conf",
			Help: "ceph.conf of the deployed cluster (on a node); empty to ignore"},
		{Name: precheck.ParamNetIPMap, Type: module.Path, Default: "/etc/puppet/hieradata/net_ip_map.json",
			Help: "the node's hieradata net_ip_map.json (on a node); empty to ignore"},
		{Name: "forbidden_parameters", Type: module.List,
			Help: "parameters no environment file may set (an upgrade converge's: overcloud_workdir prepare returns them)"},
	},
	OneOf: [][]string{{precheck.ParamEnvironmentFiles, precheck.ParamRequested}},
}

func run(ctx *module.Context) (module.Result, error) {
	p := ctx.Params
	out, err := precheck.Run(precheck.Options{
		EnvironmentFiles:    p.Strings(precheck.ParamEnvironmentFiles),
		UseRequested:        p.Given(precheck.ParamRequested),
		Requested:           p.Dict(precheck.ParamRequested),
		Checks:              p.Strings("checks"),
		DeployedEnvironment: p.Str(precheck.ParamDeployedEnvironment),
		DeployedInventory:   p.Str(precheck.ParamDeployedInventory),
		CephConf:            p.Str(precheck.ParamCephConf),
		NetIPMap:            p.Str(precheck.ParamNetIPMap),
		Forbidden:           p.Strings("forbidden_parameters"),
	})
	if err != nil {
		return module.Result{"changed": false}, err
	}
	checks := make([]any, 0, len(out.Checks))
	for _, c := range out.Checks {
		checks = append(checks, map[string]any{"name": c.Name, "status": c.Status, "detail": c.Detail})
	}
	res := module.Result{
		"changed":   false,
		"checks":    checks,
		"requested": out.Requested,
		"deployed":  out.Deployed,
	}
	if out.Failed {
		res["failed"] = true
		res["msg"] = out.Msg
	} else {
		res["msg"] = summary(out.Checks)
	}
	return res, nil
}

// summary is the message of a run in which nothing failed.
func summary(checks []precheck.Check) string {
	parts := make([]string, 0, len(checks))
	for _, c := range checks {
		parts = append(parts, c.Name+" "+c.Status)
	}
	return "no check refused the deploy: " + strings.Join(parts, ", ")
}

func main() { module.Main(spec, run) }
