// Command overcloud_playbook is the Ansible module (and command-line tool)
// that runs a playbook of a config-download directory (the deploy steps,
// the scale playbook) the way TripleO runs it: with tripleo-common's
// ansible.cfg and the output streamed to ansible.log in that directory, and
// that sums up a failure in a few lines: host, task, message, the log.
package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/ansiblerun"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
)

var spec = &module.Spec{
	Name:  "overcloud_playbook",
	Short: "run a config-download playbook (deploy steps, scale playbook) with its log in the directory and a short failure summary",
	Params: []module.Param{
		{Name: "dir", Type: module.Path, Required: true, Help: "the config-download directory, e.g. ~/overcloud-deploy/overcloud/config-download/overcloud"},
		{Name: "playbook", Default: "deploy_steps_playbook.yaml", Help: "the playbook, a file of dir (or a path)"},
		{Name: "playbooks", Type: module.List, Help: "several playbooks run in order in one ansible-playbook run instead of playbook (files of dir, or paths)"},
		{Name: "log_dir", Type: module.Path, Help: "where ansible.cfg, the logs and the command go, a private directory of yours (default: dir; in check mode a new temporary directory)"},
		{Name: "inventory", Type: module.Path, Help: "the inventory, a file (default: dir's tripleo-ansible-inventory.yaml)"},
		{Name: "limit", Help: "ansible-playbook --limit (a host pattern)"},
		{Name: "tags", Type: module.List, Help: "ansible-playbook --tags"},
		{Name: "skip_tags", Type: module.List, Help: "ansible-playbook --skip-tags"},
		{Name: "extra_vars", Type: module.Dict, Help: "variables passed with -e"},
		{Name: "become", Type: module.Bool, Default: true, Help: "ANSIBLE_BECOME (tripleoclient sets it for the deploy steps and the scale playbook)"},
		{Name: "private_key", Type: module.Path, Help: "ANSIBLE_PRIVATE_KEY_FILE"},
		{Name: "ansible_cfg", Type: module.Path, Help: "an ansible.cfg to use instead of the one written into dir"},
		{Name: "ignore_unreachable", Type: module.Bool, Default: false, Help: "an unreachable host alone is no failure (tripleoclient's node delete)"},
		{Name: "timeout", Type: module.Int, Default: 0, Range: module.Between(0, 10080), Help: "minutes before the run is stopped (0: none; at most a week)"},
		{Name: "fail_on_error", Type: module.Bool, Default: true, Help: "fail the task when the playbook fails (false: report it in failed_playbook and summary)"},
		{Name: "allow_no_hosts", Type: module.Bool, Default: false, Help: "a run that matched no host, or whose tags selected no task, succeeds (it fails otherwise)"},
		{Name: "lock_token", NoLog: true, Help: "the token of the working dir lock a playbook holds (overcloud_workdir action=lock); the run then does not wait for that lock"},
		{Name: "lock_wait", Type: module.Int, Default: 30, Range: module.Between(0, 3600), Help: "seconds to wait for another operation on the same directory"},
	},
}

// interrupt is canceled by SIGTERM or SIGINT (main catches them): the run
// is stopped, every process of it, and its result still printed.
var interrupt = context.Background()

func run(ctx *module.Context) (module.Result, error) {
	p := ctx.Params
	if p.Given("playbook") && p.Given("playbooks") {
		return module.Result{"changed": false}, fmt.Errorf("give playbook or playbooks, not both")
	}
	o := ansiblerun.Options{
		Playbooks:         p.Strings("playbooks"),
		Dir:               p.Str("dir"),
		LogDir:            p.Str("log_dir"),
		Playbook:          p.Str("playbook"),
		Inventory:         p.Str("inventory"),
		Limit:             p.Str("limit"),
		Tags:              p.Strings("tags"),
		SkipTags:          p.Strings("skip_tags"),
		ExtraVars:         p.Dict("extra_vars"),
		AnsibleCfg:        p.Str("ansible_cfg"),
		Become:            p.Bool("become"),
		PrivateKey:        p.Str("private_key"),
		IgnoreUnreachable: p.Bool("ignore_unreachable"),
		AllowNoHosts:      p.Bool("allow_no_hosts"),
		LockToken:         p.Str("lock_token"),
		LockWait:          time.Duration(p.Int("lock_wait")) * time.Second,
		Timeout:           time.Duration(p.Int("timeout")) * time.Minute,
		Check:             ctx.CheckMode,
		Diff:              ctx.Diff,
	}
	r, err := ansiblerun.Run(interrupt, o)
	if err != nil {
		return module.Result{"changed": false}, err
	}
	changed := false
	for _, rc := range r.Recap {
		changed = changed || rc.Changed > 0
	}
	failures := make([]any, 0, len(r.Failures))
	for _, f := range r.Failures {
		failures = append(failures, map[string]any{"host": f.Host, "task": f.Task, "msg": f.Msg, "item": f.Item, "unreachable": f.Unreachable})
	}
	recap := map[string]any{}
	for h, rc := range r.Recap {
		recap[h] = map[string]any{"ok": rc.OK, "changed": rc.Changed, "unreachable": rc.Unreachable, "failed": rc.Failed,
			"skipped": rc.Skipped, "rescued": rc.Rescued, "ignored": rc.Ignored}
	}
	res := module.Result{
		"changed":          changed,
		"playbook":         r.Playbook,
		"playbooks":        r.Playbooks,
		"log":              r.Log,
		"ansible_cfg":      r.Cfg,
		"command":          r.Command,
		"command_file":     r.CommandFile,
		"rc":               r.RC,
		"hosts":            r.Hosts(),
		"recap":            recap,
		"failures":         failures,
		"errors":           r.Errors,
		"summary":          r.Summary,
		"failed_playbook":  r.Failed,
		"log_dir":          r.LogDir,
		"interrupted":      r.Interrupted,
		"selected_nothing": r.SelectedNothing,
	}
	if r.Failed {
		res["msg"] = strings.Join(r.Summary, "\n")
		// A stopped run is no playbook failure to report: it did not end.
		if p.Bool("fail_on_error") || r.Interrupted != "" {
			res["failed"] = true
		}
		return res, nil
	}
	switch {
	case r.SelectedNothing != "":
		res["msg"] = fmt.Sprintf("%s: ran nothing (allow_no_hosts): %s; log: %s", r.Playbook, r.SelectedNothing, r.Log)
		ctx.Warn("%s ran nothing: %s", r.Playbook, r.SelectedNothing)
	case r.RC == 4:
		res["msg"] = fmt.Sprintf("%s: unreachable host(s) ignored; log: %s", r.Playbook, r.Log)
	default:
		res["msg"] = fmt.Sprintf("%s: ok on %d host(s); log: %s", r.Playbook, len(r.Recap), r.Log)
	}
	return res, nil
}

func main() {
	interrupt, _ = ansiblerun.OnSignals(context.Background())
	module.Main(spec, run)
}
