// Command config_download is the Ansible module (and command-line tool) that
// renders the Ansible project of a deployment from its Heat stack, as
// TripleO's config-download did, into a git repository: one commit per
// change.
package main

import (
	"context"
	"fmt"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatloc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stackname"
)

var spec = &module.Spec{
	Name:  "config_download",
	Short: "render the Ansible project (config-download) of a deployment from its Heat stack",
	Params: append([]module.Param{
		{Name: "stack", Required: true, Check: stackname.Checker(stackname.Heat), Help: "stack name"},
		{Name: "dest", Type: module.Path, Required: true, Help: "the config-download directory (a git repository)"},
		{Name: "ssh_user", Default: configdownload.DefaultSSHUser, Help: "ansible_ssh_user of the nodes"},
		{Name: "ssh_network", Default: configdownload.DefaultSSHNetwork, Help: "the network whose addresses and names the inventory's hosts get"},
		{Name: "tripleo_release", Default: string(configdownload.Wallaby), Choices: configdownload.Releases,
			Help: "the tripleo-common release whose layout and inventory to write"},
		{Name: "config_type", Type: module.List, Help: "write only these RoleData keys (tripleoclient's --config-type); default: all"},
		{Name: "python_interpreter", Help: "ansible_python_interpreter of the inventory's groups (default: none; the Undercloud's is /usr/bin/python3)"},
		{Name: "commit", Type: module.Bool, Default: true, Help: "commit each change in dest's git repository"},
	}, heatloc.Params("")...),
}

func run(ctx *module.Context) (module.Result, error) {
	p := ctx.Params
	bg := context.Background()
	client, err := heatloc.Connect(bg, ctx)
	if err != nil {
		return module.Result{"changed": false}, err
	}
	out, err := configdownload.Run(bg, client, configdownload.RunOptions{
		Stack:             p.Str("stack"),
		Dest:              p.Str("dest"),
		SSHUser:           p.Str("ssh_user"),
		SSHNetwork:        p.Str("ssh_network"),
		Release:           configdownload.Release(p.Str("tripleo_release")),
		ConfigType:        p.Strings("config_type"),
		PythonInterpreter: p.Str("python_interpreter"),
		Commit:            p.Bool("commit"),
		CheckMode:         ctx.CheckMode,
	})
	for _, w := range out.Warnings {
		ctx.Warn("%s", w)
	}
	res := module.Result{
		"changed":       out.Changed,
		"dest":          p.Str("dest"),
		"stack_id":      out.StackID,
		"roles":         out.Roles,
		"hosts":         out.Hosts,
		"inventory":     out.Inventory,
		"commit":        out.Commit,
		"changed_files": out.Files,
		"api_calls":     out.APICalls,
		"endpoint":      client.Endpoint(),
	}
	if out.DeploymentLookup != "" {
		res["deployment_lookup"] = out.DeploymentLookup
	}
	if out.Msg != "" {
		res["msg"] = out.Msg
	}
	if ctx.Diff && out.Changed {
		res["diff"] = map[string]any{
			"before_header": p.Str("dest"),
			"after_header":  fmt.Sprintf("stack %s", p.Str("stack")),
			"prepared":      out.Files.DiffText(),
		}
	}
	return res, err
}

func main() { module.Main(spec, run) }
