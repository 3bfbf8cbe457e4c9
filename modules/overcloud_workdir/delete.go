package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/backup"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
)

// deleteAction removes the working dir (openstack overcloud delete), after
// a backup into backup_dir unless skip_backup.
func deleteAction(ctx *module.Context, l workdir.Layout, res module.Result) (module.Result, error) {
	p := ctx.Params
	switch {
	case p.Given("backup_dir") && p.Bool("skip_backup"):
		return res, fmt.Errorf("action delete takes backup_dir or skip_backup=true, not both")
	case !p.Given("backup_dir") && !p.Bool("skip_backup"):
		return res, fmt.Errorf("action delete needs backup_dir (a backup of the working dir is written there first; restore it with action restore) " +
			"or skip_backup=true (the working dir is removed without one)")
	}
	if _, err := os.Lstat(l.Dir); errors.Is(err, fs.ErrNotExist) {
		res["msg"] = fmt.Sprintf("work_dir %s does not exist: nothing to delete", l.Dir)
		return res, nil
	}
	wait := time.Duration(p.Int("lock_wait")) * time.Second
	bg := context.Background()
	// Everything Remove checks is checked before a backup is written.
	plan, err := l.Remove(bg, true, wait)
	if err != nil {
		return res, err
	}
	var notes []string
	if plan.Heat != nil {
		if !ctx.CheckMode {
			return res, plan.Heat
		}
		notes = append(notes, fmt.Sprintf("its Heat (%s) must be stopped first, as the delete playbook does", plan.Heat.What))
	}
	if !ctx.CheckMode {
		lock, err := l.Lock(bg, p.Str("lock_token"), wait)
		if err != nil {
			return res, err
		}
		defer lock.Unlock()
	}
	if p.Given("backup_dir") {
		switch {
		case plan.Heat != nil:
			notes = append(notes, "a backup would then be written in "+p.Str("backup_dir"))
		case l.Deployed():
			r, err := backup.Backup(bg, backup.Options{Layout: l, Dir: p.Str("backup_dir"), Now: time.Now(), Check: ctx.CheckMode, Running: heatRunning})
			if err != nil {
				return res, fmt.Errorf("backing up work_dir %s before deleting it: %w; nothing was removed", l.Dir, err)
			}
			res["backup_file"], res["backup_sha256"] = r.File, r.SHA256
			verb := "backed up in"
			switch {
			case ctx.CheckMode && r.Changed:
				verb = "would be backed up in"
			case !r.Changed:
				verb = "already backed up in"
			}
			notes = append(notes, fmt.Sprintf("%s %s (%d members, %d dump(s) verified; restore: action restore backup_file=%s)",
				verb, r.File, len(r.Manifest.Members), len(r.Dumps), r.File))
		case len(plan.Entries) > 0:
			return res, fmt.Errorf("work_dir %s holds no deployment of stack %s (no %s nor %s) but holds %s: nothing a backup takes; "+
				"check work_dir and stack, or delete it without a backup (skip_backup=true); nothing was removed",
				l.Dir, l.Stack, l.Passwords(), l.Status(), strings.Join(plan.Entries, ", "))
		}
	}
	d, err := l.Remove(bg, ctx.CheckMode, wait)
	if err != nil {
		return res, err
	}
	res["changed"] = d.Existed
	res["removed"], res["removed_files"], res["removed_bytes"] = d.Entries, d.Files, d.Bytes
	if ctx.Diff && d.Existed {
		res["diff"] = map[string]any{"before": strings.Join(d.Entries, "\n") + "\n", "after": "",
			"before_header": l.Dir, "after_header": l.Dir + " (removed)"}
	}
	verb := "removed"
	if ctx.CheckMode {
		verb = "would remove"
	}
	res["msg"] = strings.Join(append([]string{fmt.Sprintf("%s work_dir %s: %d entries, %d files, %d bytes",
		verb, l.Dir, len(d.Entries), d.Files, d.Bytes)}, notes...), "; ")
	return res, nil
}
