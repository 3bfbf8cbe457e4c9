package main

import (
	"context"
	"fmt"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/backup"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
)

// heatRunning is backend.Running for a heat_dir path.
func heatRunning(ctx context.Context, dir string) (string, error) {
	d, err := heatdir.At(dir)
	if err != nil {
		return "", err
	}
	live, err := backend.Running(ctx, d)
	if err != nil || live == nil {
		return "", err
	}
	return live.String(), nil
}

// backupAction writes one archive of the working dir into backup_dir.
func backupAction(ctx *module.Context, l workdir.Layout, res module.Result) (module.Result, error) {
	p := ctx.Params
	if !p.Given("backup_dir") {
		return res, fmt.Errorf("action backup needs backup_dir (where the archive is written)")
	}
	r, err := backup.Backup(context.Background(), backup.Options{Layout: l, Dir: p.Str("backup_dir"), Now: time.Now(),
		Check: ctx.CheckMode, Running: heatRunning})
	if err != nil {
		return res, err
	}
	res["changed"], res["backup_file"], res["backup_sha256"] = r.Changed, r.File, r.SHA256
	res["backup_members"], res["backup_left_out"], res["dumps_verified"] = len(r.Manifest.Members), r.Manifest.LeftOut, r.Dumps
	if ctx.Diff && r.Changed {
		before, header := "", "(no earlier backup)"
		if r.Previous != nil {
			before, header = r.Previous.Lines(), "the newest earlier backup"
		}
		res["diff"] = map[string]any{"before": before, "after": r.Manifest.Lines(), "before_header": header, "after_header": r.File}
	}
	switch {
	case !r.Changed:
		res["msg"] = fmt.Sprintf("%s already holds the working dir as it is (%d members): nothing written", r.File, len(r.Manifest.Members))
	case ctx.CheckMode:
		res["msg"] = fmt.Sprintf("would write %s: %d members, %d dump(s) verified", r.File, len(r.Manifest.Members), len(r.Dumps))
	default:
		res["msg"] = fmt.Sprintf("%s: %d members, %d dump(s) verified, sha256 %s in %s%s", r.File, len(r.Manifest.Members),
			len(r.Dumps), r.SHA256, r.File, backup.SumSuffix)
	}
	return res, nil
}

// restoreAction unpacks backup_file into work_dir, a new working dir.
func restoreAction(ctx *module.Context, res module.Result) (module.Result, error) {
	p := ctx.Params
	if !p.Given("backup_file") {
		return res, fmt.Errorf("action restore needs backup_file (the archive a backup wrote)")
	}
	stack := ""
	if p.Given("stack") {
		stack = p.Str("stack")
	}
	r, err := backup.Restore(backup.RestoreOptions{File: p.Str("backup_file"), WorkDir: p.Str("work_dir"), Stack: stack,
		Check: ctx.CheckMode, Now: time.Now()})
	if err != nil {
		return res, err
	}
	l, err := workdir.New(r.WorkDir, r.Stack)
	if err != nil {
		return res, err
	}
	res["paths"] = l.Paths()
	res["changed"], res["stack"], res["restored_from"], res["rewritten"] = r.Changed, r.Stack, r.From, r.Rewritten
	res["backup_sha256"] = r.SHA256
	if ctx.Diff && r.Changed {
		res["diff"] = map[string]any{"before": "", "after": r.Manifest.Lines(), "before_header": r.WorkDir + " (new)", "after_header": r.WorkDir}
	}
	switch {
	case !r.Changed:
		res["msg"] = fmt.Sprintf("%s was restored from this backup already: nothing written", r.WorkDir)
	case ctx.CheckMode:
		res["msg"] = fmt.Sprintf("would restore stack %s (taken of %s, %d members) into %s", r.Stack, r.From, len(r.Manifest.Members), r.WorkDir)
	default:
		res["msg"] = fmt.Sprintf("restored stack %s (taken of %s) into %s; %d file(s) naming the old path rewritten", r.Stack, r.From, r.WorkDir, len(r.Rewritten))
	}
	return res, nil
}
