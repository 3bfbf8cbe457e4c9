// Command overcloud_workdir is the Ansible module (and command-line tool)
// that keeps a deployment's working directory the way python-tripleoclient
// stable/wallaby keeps ~/overcloud-deploy/<stack>/: the passwords generated
// once and reused, the deployment status, the stack's saved outputs,
// environment and nodes, the export files and <stack>rc, the deploy archive,
// and the scale-down environment that removes named nodes; and that removes
// it, after a backup (openstack overcloud delete).
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dirlock"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatloc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/lifecycle"
	"github.com/ephemeral-heat/ephemeral-heat/internal/migrate"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/passwords"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stackname"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
)

// The actions.
const (
	actPrepare   = "prepare"
	actStatus    = "status"
	actSave      = "save"
	actExport    = "export"
	actOCExport  = "overcloud_export"
	actCephExp   = "overcloud_export_ceph"
	actArchive   = "archive"
	actScaleDown = "scale_down"
	actLock      = "lock"
	actUnlock    = "unlock"
	actRecord    = "fingerprint"
	actPlanRun   = "plan_run"
	actRunDone   = "run_done"
	actMigrate   = "migrate"
	// backup.go
	actBackup   = "backup"
	actRestore  = "restore"
	actMergeInv = "merge_inventory"
	// delete.go
	actDelete = "delete"
)

var spec = &module.Spec{
	Name:  "overcloud_workdir",
	Short: "keep a deployment's working directory as tripleoclient does (passwords, status, outputs, export, rc, archive, scale-down)",
	Params: append([]module.Param{
		{Name: "work_dir", Type: module.Path, Required: true, Help: "the working directory, e.g. ~/overcloud-deploy/overcloud"},
		{Name: "stack", Default: "overcloud", Check: stackname.Checker(workdir.StackLimit), Help: "stack name"},
		{Name: "action", Required: true, Choices: []string{actPrepare, actStatus, actSave, actExport, actOCExport, actCephExp, actArchive, actScaleDown, actLock, actUnlock, actRecord, actPlanRun, actRunDone, actMigrate, actBackup, actRestore, actMergeInv, actDelete},
			Help: "prepare (passwords, paths), status, save (from Heat), export (the deploy's export files and rc), overcloud_export (openstack overcloud export: export_file), overcloud_export_ceph (openstack overcloud export ceph), archive, scale_down, lock and unlock (the working dir, for a playbook), fingerprint (record a deploy's inputs), plan_run (check an update or upgrade run), run_done (record one that succeeded), migrate (a new working dir from an installed Heat's stack), backup (one archive of the working dir into backup_dir), restore (backup_file into work_dir, a new working dir), merge_inventory (the inventory of several stacks), delete (openstack overcloud delete: the working dir removed, after a backup into backup_dir)"},
		{Name: "passwords", Type: module.Bool, Default: true, Help: "prepare: generate the passwords file once and reuse it"},
		{Name: "stage", Choices: lifecycle.Stages, Help: "prepare, status and fingerprint: the deploy's lifecycle stage (prepare: its lifecycle environment goes first among the operator's; status: recorded as deployment_stage; default deploy)"},
		{Name: "environment_files", Type: module.List, Elements: module.Path, Help: "prepare: the operator's environment files, in order (environment_files returns them with the working dir's and the lifecycle environment placed)"},
		{Name: "templates_dir", Type: module.Path, Help: "prepare: the tripleo-heat-templates root holding environments/lifecycle/ (for a stage other than deploy)"},
		{Name: "run", Choices: lifecycle.Runs(), Help: "plan_run: the run command to check (tripleoclient's update run, external-update run, upgrade run, external-upgrade run)"},
		{Name: "limit", Type: module.List, Help: "plan_run: the hosts or groups of the inventory to run on (required for update_run and upgrade_run)"},
		{Name: "playbooks", Type: module.List, Help: "plan_run: the playbooks to run instead of the command's (tripleoclient's --playbook)"},
		{Name: "tags", Type: module.List, Help: "plan_run: the run's --tags (part of what makes a run the same as an earlier one)"},
		{Name: "skip_tags", Type: module.List, Help: "plan_run: the run's --skip-tags (likewise)"},
		{Name: "run_digest", Help: "run_done: the run_digest plan_run returned, of the run that succeeded"},
		{Name: "status", Choices: workdir.Statuses, Help: "status: the deployment status to write"},
		{Name: "phase", Help: "status: the phase the deploy is in (deployment_phase)"},
		{Name: "hosts", Type: module.List, Help: "scale_down: the host names of the nodes to remove"},
		{Name: "allow_empty_group", Type: module.Bool, Default: false,
			Help: "scale_down: allow removing every node of a control-plane group (its name contains controller, or its role runs a clustered service such as pacemaker or mysql)"},
		{Name: "fingerprint", Help: "fingerprint: the sha256 (hex) of the inputs of the deploy that just succeeded"},
		{Name: "stacks", Type: module.List, Check: checkStacks,
			Help: "merge_inventory: the stacks whose inventories to merge, in order (this working dir's stack among them; the first one's Undercloud is kept)"},
		{Name: "work_dirs", Type: module.List, Elements: module.Path,
			Help: "merge_inventory: the working dir of each of stacks, in the same order (default: beside work_dir, <parent of work_dir>/<stack>)"},
		{Name: "export_file", Type: module.Path,
			Help: "overcloud_export and overcloud_export_ceph: the file to write (default <work_dir>/<stack>-export.yaml, <work_dir>/ceph-export-<stack>.yaml)"},
		{Name: "force_overwrite", Type: module.Bool, Default: false,
			Help: "overcloud_export and overcloud_export_ceph: replace an existing export_file that holds another export (tripleoclient's --force-overwrite)"},
		{Name: "password_excludes", Type: module.Bool, Default: true,
			Help: "overcloud_export: leave out the passwords tripleoclient excludes, the Ceph ones (false: --no-password-excludes)"},
		{Name: "cephx_key_client_name", Default: "openstack",
			Help: "overcloud_export_ceph: the cephx client whose key is exported (client.<name>; tripleoclient's --cephx-key-client-name)"},
		{Name: "lock_token", NoLog: true, Help: "the token of the working dir's lock a playbook holds (action=lock); the action then does not wait for that lock"},
		{Name: "lock_wait", Type: module.Int, Default: 30, Range: module.Between(0, 3600), Help: "seconds to wait for another operation on the working dir before failing"},
		{Name: "backup_dir", Type: module.Path, Help: "backup, and delete before it removes anything: the directory the archive is written in (made 0700 if missing)"},
		{Name: "skip_backup", Type: module.Bool, Default: false, Help: "delete: remove the working dir without writing a backup first"},
		{Name: "backup_file", Type: module.Path, Help: "restore: the archive a backup wrote (its .sha256 beside it)"},
		{Name: "owner_pid", Type: module.Int, Default: 0, Range: module.Between(0, 1<<22), Help: "lock: the process the lock is held for, until it ends (0: the ansible-playbook running this task)"},
		{Name: "database_url", NoLog: true, Help: "migrate: the installed Heat's database (its heat.conf [database] connection, mysql+pymysql://USER:PASSWORD@HOST/heat), only read"},
	}, heatloc.Params("save and migrate (cloud or endpoint): ")...),
}

// writes says whether an action writes the working dir (and so takes its
// lock, outside check mode).
func writes(action string) bool {
	switch action {
	case actLock, actUnlock, actPlanRun:
		return false
	}
	return true
}

func run(ctx *module.Context) (module.Result, error) {
	p := ctx.Params
	l, err := workdir.New(p.Str("work_dir"), p.Str("stack"))
	if err != nil {
		return module.Result{"changed": false}, err
	}
	res := module.Result{"changed": false, "paths": l.Paths()}
	action := p.Str("action")
	for _, n := range append([]string{"status", "phase", "hosts", "allow_empty_group", "fingerprint", "owner_pid",
		"stage", "templates_dir", "environment_files", "run", "limit", "playbooks", "tags", "skip_tags", "run_digest", "database_url", "backup_dir", "backup_file", "stacks", "work_dirs",
		"export_file", "force_overwrite", "password_excludes", "cephx_key_client_name", "skip_backup"}, heatloc.Names()...) {
		if p.Given(n) && !allowed(action, n) {
			return res, fmt.Errorf("parameter %q does not apply to action %s", n, action)
		}
	}
	if action == actRestore {
		// A restore makes a new working dir: its own checks, no lock (it
		// appears in one rename, which fails if anything is there).
		return restoreAction(ctx, res)
	}
	if err := l.Guard(); err != nil {
		return res, err
	}
	if action == actMigrate {
		// Everything is checked before the lock (which makes the working
		// dir) is taken.
		return migrateAction(ctx, l, res)
	}
	if action == actDelete {
		// Likewise: a missing working dir stays missing.
		return deleteAction(ctx, l, res)
	}
	if writes(action) && !ctx.CheckMode {
		lock, err := l.Lock(context.Background(), p.Str("lock_token"), time.Duration(p.Int("lock_wait"))*time.Second)
		if err != nil {
			return res, err
		}
		defer lock.Unlock()
	}
	switch action {
	case actLock:
		return lock(ctx, l, res)
	case actUnlock:
		return unlock(ctx, l, res)
	case actRecord:
		if !p.Given("fingerprint") {
			return res, fmt.Errorf("action fingerprint needs fingerprint (the sha256 of the deploy's inputs)")
		}
		changed, err := l.RecordDeploy(p.Str("fingerprint"), p.Str("stage"), ctx.CheckMode)
		res["changed"], res["fingerprint"] = changed, p.Str("fingerprint")
		res["msg"] = l.DeployInputs() + ": the inputs of this deploy"
		return res, err
	case actPrepare:
		return prepare(ctx, l, res)
	case actPlanRun:
		return planRun(ctx, l, res)
	case actRunDone:
		if !p.Given("run_digest") {
			return res, fmt.Errorf("action run_done needs run_digest (plan_run returns it)")
		}
		changed, err := l.RecordRun(p.Str("run_digest"), ctx.CheckMode)
		res["changed"], res["msg"] = changed, l.Runs()+": the run is recorded; the same run after the same deploy is not run again"
		return res, err
	case actStatus:
		if !p.Given("status") {
			return res, fmt.Errorf("action status needs status (one of %s)", strings.Join(workdir.Statuses, ", "))
		}
		s := workdir.Status{Status: p.Str("status"), Phase: p.Str("phase"), Stage: p.Str("stage")}
		changed, err := l.WriteStatus(s, ctx.CheckMode)
		res["changed"], res["deployment_status"], res["deployment_phase"], res["deployment_stage"] = changed, s.Status, s.Phase, s.Stage
		res["msg"] = fmt.Sprintf("%s: %s", l.Status(), s.Status)
		return res, err
	case actSave:
		return save(ctx, l, res)
	case actExport:
		ex, err := l.WriteExport(ctx.CheckMode)
		if err != nil {
			return res, err
		}
		res["changed"], res["files"], res["not_exported"] = ex.Changed, ex.Files, ex.Skipped
		res["msg"] = exportMsg(ex)
		return res, nil
	case actOCExport, actCephExp:
		return overcloudExport(ctx, l, res, action == actCephExp)
	case actArchive:
		if ctx.CheckMode {
			res["changed"], res["msg"] = true, "a deploy archive would be written in "+l.Dir
			return res, nil
		}
		a, err := l.WriteArchive(time.Now())
		if err != nil {
			return res, err
		}
		res["changed"], res["archive"], res["entries"], res["bytes"], res["left_out"] = true, a.Path, a.Entries, a.Bytes, a.Left
		res["msg"] = fmt.Sprintf("%s: %d entries, %d bytes of files (%d left out: dumps, archives, live database)", a.Path, a.Entries, a.Bytes, len(a.Left))
		return res, nil
	case actScaleDown:
		return scaleDown(ctx, l, res)
	case actBackup:
		return backupAction(ctx, l, res)
	case actMergeInv:
		return mergeInventory(ctx, l, res)
	}
	return res, fmt.Errorf("unknown action %q", p.Str("action"))
}

// allowed says which optional parameters an action takes.
func allowed(action, param string) bool {
	if heatloc.Is(param) {
		return action == actSave || (action == actMigrate && param != "heat_dir")
	}
	switch param {
	case "database_url":
		return action == actMigrate
	case "status", "phase":
		return action == actStatus
	case "hosts", "allow_empty_group":
		return action == actScaleDown
	case "fingerprint":
		return action == actRecord
	case "owner_pid":
		return action == actLock
	case "stage":
		return action == actPrepare || action == actStatus || action == actRecord
	case "templates_dir", "environment_files":
		return action == actPrepare
	case "run", "limit", "playbooks", "tags", "skip_tags":
		return action == actPlanRun
	case "run_digest":
		return action == actRunDone
	case "backup_dir":
		return action == actBackup || action == actDelete
	case "skip_backup":
		return action == actDelete
	case "backup_file":
		return action == actRestore
	case "stacks", "work_dirs":
		return action == actMergeInv
	case "export_file", "force_overwrite":
		return action == actOCExport || action == actCephExp
	case "password_excludes":
		return action == actOCExport
	case "cephx_key_client_name":
		return action == actCephExp
	}
	return true
}

// planRun checks an update or upgrade run before anything runs, and says
// what it runs.
func planRun(ctx *module.Context, l workdir.Layout, res module.Result) (module.Result, error) {
	p := ctx.Params
	if !p.Given("run") {
		return res, fmt.Errorf("action plan_run needs run (one of %s)", strings.Join(lifecycle.Runs(), ", "))
	}
	plan, err := l.PlanRun(p.Str("run"), p.Strings("limit"), p.Strings("playbooks"), p.Strings("tags"), p.Strings("skip_tags"))
	if err != nil {
		return res, err
	}
	res["playbooks"], res["run_limit"], res["excluded"] = plan.Playbooks, plan.Limit, plan.Excluded
	res["inventory"], res["config_download"] = l.Inventory(), l.ConfigDownload()
	res["command"] = plan.Run.Command
	res["run_digest"], res["done"] = plan.Digest, plan.Done
	res["msg"] = fmt.Sprintf("%s: %s on %s", plan.Run.Name, strings.Join(plan.Playbooks, ", "), plan.Limit)
	if plan.Limit == "" {
		res["msg"] = fmt.Sprintf("%s: %s on every host the playbooks name", plan.Run.Name, strings.Join(plan.Playbooks, ", "))
	}
	return res, nil
}

// lock takes the working dir's lock for the playbook running this task
// (or owner_pid): a detached holder keeps it until that process ends or
// action=unlock. In check mode nothing is locked (nothing is written).
func lock(ctx *module.Context, l workdir.Layout, res module.Result) (module.Result, error) {
	p := ctx.Params
	res["lock_token"] = ""
	if ctx.CheckMode {
		res["msg"] = "check mode: the working dir is not locked (nothing is written)"
		return res, nil
	}
	if p.Str("lock_token") != "" {
		if _, err := l.Lock(context.Background(), p.Str("lock_token"), 0); err != nil {
			return res, err
		}
		res["lock_token"], res["msg"] = p.Str("lock_token"), "the working dir is already locked under this token"
		return res, nil
	}
	owner := p.Int("owner_pid")
	if owner == 0 {
		owner = module.PlaybookPID()
		if owner == 0 && ctx.Interactive {
			owner = os.Getppid()
		}
		if owner == 0 {
			return res, fmt.Errorf("owner_pid: no ansible-playbook runs this task on this host: give owner_pid, the process the lock is held for")
		}
	}
	token, pid, err := l.Hold(owner, time.Duration(p.Int("lock_wait"))*time.Second, nil)
	if err != nil {
		return res, err
	}
	// A lock is no change of the working dir's state: it ends with its
	// playbook (a second identical run still reports changed=0).
	res["lock_token"], res["holder_pid"], res["owner_pid"] = token, pid, owner
	res["lock"] = l.LockPath()
	res["msg"] = fmt.Sprintf("%s locked for pid %d (holder pid %d) until it ends or action=unlock", l.Dir, owner, pid)
	return res, nil
}

// unlock lets go of the lock a playbook holds under lock_token.
func unlock(ctx *module.Context, l workdir.Layout, res module.Result) (module.Result, error) {
	tok := ctx.Params.Str("lock_token")
	if tok == "" {
		res["msg"] = "no lock_token: nothing to let go"
		return res, nil
	}
	if ctx.CheckMode {
		res["msg"] = "check mode: nothing was locked"
		return res, nil
	}
	released, err := l.Release(tok)
	if err != nil {
		return res, err
	}
	res["released"] = released
	res["msg"] = "the working dir's lock was let go"
	if !released {
		res["msg"] = "no holder held the working dir's lock under this token (its playbook had let go, or it ended)"
	}
	return res, nil
}

func prepare(ctx *module.Context, l workdir.Layout, res module.Result) (module.Result, error) {
	stage := ctx.Params.Str("stage")
	if stage == "" {
		stage = lifecycle.Deploy
	}
	pr, err := l.Prepare(workdir.PrepareOptions{Passwords: ctx.Params.Bool("passwords"), Names: passwords.Names,
		Stage: stage, TemplatesDir: ctx.Params.Str("templates_dir"), EnvironmentFiles: ctx.Params.Strings("environment_files"), Check: ctx.CheckMode})
	if err != nil {
		return res, err
	}
	res["stage"], res["forbidden_parameters"] = stage, lifecycle.Forbidden(stage)
	fp, err := l.ReadFingerprint()
	if err != nil {
		return res, err
	}
	res["previous_fingerprint"] = fp
	prev, err := l.PreviousStatus()
	if err != nil {
		return res, err
	}
	res["previous_status"] = map[string]any{}
	if prev != nil {
		res["previous_status"] = map[string]any{"deployment_status": prev.Status, "deployment_phase": prev.Phase, "deployment_stage": prev.Stage}
	}
	res["changed"] = pr.Changed
	res["environment_files_before"] = pr.EnvironmentsBefore
	res["environment_files_after"] = pr.EnvironmentsAfter
	res["environment_files"], res["lifecycle_environment"] = pr.Environments, pr.Lifecycle
	res["temp_dir"] = pr.TempDir
	msgs := []string{}
	if s := pr.Passwords; s != nil {
		res["passwords_generated"], res["passwords_kept"], res["passwords_dropped"] = s.Generated, len(s.Kept), s.Dropped
		switch {
		case ctx.CheckMode && s.Changed:
			msgs = append(msgs, fmt.Sprintf("%d password(s) would be generated into %s (in %s for this check)", len(s.Generated), l.Passwords(), pr.TempDir))
		case s.Changed:
			msgs = append(msgs, fmt.Sprintf("%s: %d password(s) generated, %d kept", l.Passwords(), len(s.Generated), len(s.Kept)))
		default:
			msgs = append(msgs, fmt.Sprintf("%s: %d passwords kept", l.Passwords(), len(s.Kept)))
		}
		if len(s.Dropped) > 0 {
			ctx.Warn("the passwords file had parameters tripleo-common stable/wallaby does not generate; they are left out, as tripleoclient does: %s", strings.Join(s.Dropped, ", "))
		}
	}
	if len(pr.EnvironmentsAfter) > 0 {
		msgs = append(msgs, "the scale-down environment "+l.ScaleDown()+" is included")
	}
	if len(msgs) == 0 {
		msgs = append(msgs, "nothing to prepare")
	}
	res["msg"] = strings.Join(msgs, "; ")
	return res, nil
}

func save(ctx *module.Context, l workdir.Layout, res module.Result) (module.Result, error) {
	bg := context.Background()
	c, err := heatloc.Connect(bg, ctx)
	if err != nil {
		return res, fmt.Errorf("action save reads the stack from Heat: %w", err)
	}
	s, err := l.Save(bg, c, ctx.CheckMode)
	if err != nil {
		return res, err
	}
	for _, w := range s.Warnings {
		ctx.Warn("%s", w)
	}
	groups := []any{}
	for _, g := range s.Nodes.Groups {
		members := []any{}
		for _, m := range g.Members {
			members = append(members, map[string]any{"index": m.Index, "hostname": m.Hostname})
		}
		groups = append(groups, map[string]any{"resource": g.Resource, "role": g.Role, "count_parameter": g.CountParameter,
			"removal_policies_parameter": g.RemovalPoliciesParameter, "removed": g.Removed, "members": members})
	}
	res["changed"], res["files"], res["missing_outputs"], res["node_groups"], res["stack_id"] = s.Changed, s.Files, s.Missing, groups, s.StackID
	res["msg"] = fmt.Sprintf("saved %d file(s) of stack %s (%d node group(s))", len(s.Files), l.Stack, len(groups))
	if ctx.CheckMode {
		res["msg"] = fmt.Sprintf("%d file(s) of stack %s would be saved", len(s.Files), l.Stack)
	}
	return res, nil
}

// migrateAction writes a new working dir from an installed Heat's stack
// (package migrate): everything is checked first, then the working dir's
// lock is taken and the files are written.
func migrateAction(ctx *module.Context, l workdir.Layout, res module.Result) (module.Result, error) {
	p := ctx.Params
	bg := context.Background()
	if !p.Given("database_url") {
		return res, fmt.Errorf("action migrate needs database_url: the installed Heat's database (its heat.conf [database] connection), read only")
	}
	loc, found, err := heatloc.FromParams(p, os.Getenv, false)
	if err != nil {
		return res, fmt.Errorf("action migrate reads the installed Heat: %w", err)
	}
	if !found || loc.Kind == heatloc.HeatDir {
		return res, fmt.Errorf("action migrate reads an installed Heat: give cloud or endpoint")
	}
	c, err := loc.Connect(bg, ctx.AddSecret)
	if err != nil {
		return res, fmt.Errorf("action migrate reads the installed Heat: %w", err)
	}
	src, err := migrate.Open(bg, migrate.Options{Layout: l, Heat: c, DatabaseURL: p.Str("database_url"), Names: passwords.Names,
		Warn: ctx.Warn, Secret: ctx.AddSecret})
	if err != nil {
		return res, err
	}
	if src.Done == nil && !ctx.CheckMode {
		lock, err := l.Lock(bg, p.Str("lock_token"), time.Duration(p.Int("lock_wait"))*time.Second)
		if err != nil {
			return res, err
		}
		defer lock.Unlock()
	}
	r, err := src.Write(bg, ctx.CheckMode)
	if err != nil {
		return res, err
	}
	res["changed"], res["files"], res["stack_id"], res["stack_status"] = r.Changed, r.Files, r.StackID, r.StackStatus
	res["passwords_kept"], res["passwords_generated"], res["skipped_indices"] = len(r.Kept), r.Generated, r.Skipped
	res["dump"], res["migration"], res["msg"] = r.Dump, r.Record, r.Msg
	if ctx.Diff && r.Changed {
		res["diff"] = map[string]any{"before_header": l.Dir, "after_header": l.Dir, "before": "",
			"after": strings.Join(r.Files, "\n") + "\n"}
	}
	return res, nil
}

// overcloudExport is openstack overcloud export (or, with ceph, export
// ceph): export_file written from the working dir (a differing one
// replaced only with force_overwrite); the diff shows the passwords as
// digests only.
func overcloudExport(ctx *module.Context, l workdir.Layout, res module.Result, ceph bool) (module.Result, error) {
	p := ctx.Params
	file := p.Str("export_file")
	o := workdir.ExportOptions{File: file, Force: p.Bool("force_overwrite"), NoPasswordExcludes: !p.Bool("password_excludes"), Check: ctx.CheckMode}
	var ex *workdir.Export
	var err error
	if ceph {
		if file == "" {
			file = l.CephExportDefault()
		}
		o.File = file
		ex, err = l.ExportCephTo(p.Str("cephx_key_client_name"), o)
	} else {
		if file == "" {
			file = l.Export()
		}
		o.File = file
		ex, err = l.ExportTo(o)
	}
	if err != nil {
		return res, err
	}
	res["changed"], res["files"], res["not_exported"], res["export_file"] = ex.Changed, ex.Files, ex.Skipped, file
	if ctx.Diff && ex.Changed {
		res["diff"] = map[string]any{"before": workdir.RedactExport(ex.Before), "after": workdir.RedactExport(ex.After),
			"before_header": file, "after_header": file}
	}
	switch {
	case !ex.Changed:
		res["msg"] = file + " already holds this export"
	case ctx.CheckMode:
		res["msg"] = "would write " + file
	default:
		res["msg"] = "stack information exported to " + file
	}
	res["msg"] = res["msg"].(string) + skippedMsg(ex.Skipped)
	return res, nil
}

func exportMsg(ex *workdir.Export) string {
	return fmt.Sprintf("%d file(s) written", len(ex.Files)) + skippedMsg(ex.Skipped)
}

// skippedMsg says what an export left out, and why.
func skippedMsg(skipped map[string]string) string {
	if len(skipped) == 0 {
		return ""
	}
	var s []string
	for k, v := range skipped {
		s = append(s, k+": "+v)
	}
	sort.Strings(s)
	return "; left out: " + strings.Join(s, "; ")
}

func scaleDown(ctx *module.Context, l workdir.Layout, res module.Result) (module.Result, error) {
	hosts := ctx.Params.Strings("hosts")
	opts := workdir.ScaleDownOptions{AllowEmptyGroup: ctx.Params.Bool("allow_empty_group")}
	// Check mode plans; otherwise the plan is made and written at once,
	// from the files as they are then.
	apply := l.ApplyScaleDown
	if ctx.CheckMode {
		apply = l.PlanScaleDown
	}
	plan, err := apply(hosts, opts)
	if err != nil {
		return res, err
	}
	for _, w := range plan.Warnings {
		ctx.Warn("%s", w)
	}
	removals := func(rs []workdir.Removal) []any {
		out := []any{}
		for _, r := range rs {
			out = append(out, map[string]any{"hostname": r.Hostname, "role": r.Role, "resource": r.Resource, "index": r.Index})
		}
		return out
	}
	res["remove"], res["already_removed"], res["counts"] = removals(plan.Remove), removals(plan.Already), plan.Counts
	res["limit"], res["not_in_limit"] = plan.Limit, plan.NotInLimit
	res["environment"] = l.ScaleDown()
	res["parameter_defaults"] = plan.ParameterDefaults
	if plan.Parameters != nil {
		res["parameters"] = plan.Parameters
	}
	res["changed"] = plan.Changed
	if ctx.Diff && plan.Changed {
		res["diff"] = map[string]any{"before": string(plan.Before), "after": string(plan.Content),
			"before_header": l.ScaleDown(), "after_header": l.ScaleDown()}
	}
	lines := []string{}
	for _, r := range plan.Remove {
		lines = append(lines, fmt.Sprintf("%s (%s index %s)", r.Hostname, r.Role, r.Index))
	}
	switch {
	case len(plan.Remove) == 0:
		res["msg"] = "nothing to remove: every node named was removed by an earlier scale-down"
	case ctx.CheckMode:
		res["msg"] = "would remove " + strings.Join(lines, ", ") + " and write " + l.ScaleDown()
	default:
		res["msg"] = "removed " + strings.Join(lines, ", ") + ": " + l.ScaleDown() + " is included by every later deploy"
	}
	return res, nil
}

// checkStacks checks each stack name of stacks (heat_stack's rule).
func checkStacks(v any) error {
	l, _ := v.([]string)
	for _, s := range l {
		if err := stackname.Check("stacks", s, workdir.StackLimit); err != nil {
			return err
		}
	}
	return nil
}

// mergeInventory writes the inventory of several stacks (multi-stack,
// DCN) into this working dir, reading the others' config-download
// inventories.
func mergeInventory(ctx *module.Context, l workdir.Layout, res module.Result) (module.Result, error) {
	p := ctx.Params
	names, dirs := p.Strings("stacks"), p.Strings("work_dirs")
	if len(names) == 0 {
		return res, fmt.Errorf("action merge_inventory needs stacks (the stacks to merge, in order, %s among them)", l.Stack)
	}
	if p.Given("work_dirs") && len(dirs) != len(names) {
		return res, fmt.Errorf("work_dirs has %d entries and stacks %d: give one working dir per stack, in the same order", len(dirs), len(names))
	}
	var stacks []workdir.Layout
	for i, name := range names {
		dir := filepath.Join(filepath.Dir(l.Dir), name)
		if name == l.Stack {
			dir = l.Dir
		}
		if p.Given("work_dirs") {
			dir = dirs[i]
		}
		s, err := workdir.New(dir, name)
		if err != nil {
			return res, fmt.Errorf("stacks[%d]: %w", i, err)
		}
		stacks = append(stacks, s)
	}
	m, err := l.WriteMergedInventory(stacks, ctx.CheckMode)
	if err != nil {
		return res, err
	}
	res["changed"], res["inventory"], res["stacks"], res["inventories"] = m.Changed, m.Path, m.Stacks, m.Inventories
	switch {
	case ctx.CheckMode && m.Changed:
		res["msg"] = fmt.Sprintf("%s would be written: the inventory of %s", m.Path, strings.Join(m.Stacks, ", "))
	case m.Changed:
		res["msg"] = fmt.Sprintf("%s: the inventory of %s", m.Path, strings.Join(m.Stacks, ", "))
	default:
		res["msg"] = fmt.Sprintf("%s is up to date: the inventory of %s", m.Path, strings.Join(m.Stacks, ", "))
	}
	return res, nil
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == dirlock.HoldArg {
		os.Exit(dirlock.RunHolder(os.Args[2:]))
	}
	module.Main(spec, run)
}
