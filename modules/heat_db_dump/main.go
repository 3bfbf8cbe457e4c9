// Command heat_db_dump is the Ansible module (and command-line tool) that
// dumps an ephemeral Heat's database as a verified artifact, optionally wipes
// it, and restores a dump.
package main

import (
	"context"
	"fmt"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
)

var spec = &module.Spec{
	Name:  "heat_db_dump",
	Short: "dump, wipe and restore the database of an ephemeral Heat",
	Params: []module.Param{
		{Name: "heat_dir", Type: module.Path, Required: true, Help: "the heat_dir; its heat.conf names the database"},
		{Name: "state", Default: "dumped", Choices: []string{"dumped", "restored"}, Help: "dump the database, or restore a dump into it"},
		{Name: "dest", Type: module.Path, Help: "dumped: file to write (default a timestamped file in heat_dir); restored: dump to load (default the newest in heat_dir), ours or tripleoclient's heat-db.sql-*.tar.bzip2, or a directory for its newest dump"},
		{Name: "compress", Default: dumps.Gzip, Choices: []string{dumps.Gzip, dumps.None}, Help: "compression of a new dump"},
		{Name: "wipe", Type: module.Bool, Default: false, Help: "after a verified dump, drop the live database"},
		{Name: "keep", Type: module.Int, Default: 5, Range: module.Between(0, 1000), Help: "older dumps to keep in heat_dir"},
		{Name: "verify", Type: module.Bool, Default: true, Help: "restored: refuse a dump without a matching .sha256 (false loads it anyway, with a warning)"},
		{Name: "database_url", NoLog: true, Help: "MySQL admin URL, to drop Heat's MySQL user too on wipe"},
	},
}

func run(ctx *module.Context) (module.Result, error) {
	p := ctx.Params
	bg := context.Background()
	d, err := heatdir.At(p.Str("heat_dir"))
	if err != nil {
		return module.Result{"changed": false}, err
	}
	// The heat_dir must be ours; a launch, stop or restore on it waits for
	// this run, and this run for them.
	if err := d.Guard(); err != nil {
		return module.Result{"changed": false}, err
	}
	var admin *heatdb.DB
	if u := p.Str("database_url"); u != "" {
		a, err := heatdb.ParseAdmin(u)
		if err != nil {
			return module.Result{"changed": false}, fmt.Errorf("database_url %w", err)
		}
		ctx.AddSecret(a.Password)
		admin = &a
	}
	if !ctx.CheckMode && d.Exists() {
		lock, err := d.Lock(bg, heatdir.DefaultLockWait)
		if err != nil {
			return module.Result{"changed": false}, err
		}
		defer lock.Unlock()
	}
	var r dumps.Result
	if p.Str("state") == "restored" {
		// Never under a running Heat, which keeps the old database open
		// (asked once the dump is found good, before anything is written).
		r, err = dumps.Restore(bg, dumps.RestoreOptions{HeatDir: d, Dump: p.Str("dest"), AllowUnverified: !p.Bool("verify"),
			CheckMode: ctx.CheckMode, Warn: ctx.Warn, Secret: ctx.AddSecret,
			Idle: func(c context.Context) error { return backend.NotRunning(c, d, "state: restored") }})
	} else {
		r, err = dumps.Dump(bg, dumps.DumpOptions{HeatDir: d, Dest: p.Str("dest"), Compress: p.Str("compress"),
			Keep: p.Int("keep"), Wipe: p.Bool("wipe"), CheckMode: ctx.CheckMode, Warn: ctx.Warn, Secret: ctx.AddSecret,
			WipeFunc: func(c context.Context) ([]string, error) {
				// Any backend: its recorded process, or its API answering.
				if live, _ := backend.Running(c, d); live != nil {
					ctx.Warn("Heat is still running (%s) on the wiped database: stop it (ephemeral_heat_launch state=stopped)", live)
				}
				return d.DropDatabase(c, admin, ctx.Warn)
			}})
	}
	stacks := make([]map[string]any, 0, len(r.Stacks))
	for _, s := range r.Stacks {
		stacks = append(stacks, map[string]any{"id": s.ID, "name": s.Name, "status": s.Status})
	}
	res := module.Result{
		"changed": r.Changed, "msg": r.Msg, "path": r.Path, "size": r.Size, "sha256": r.SHA256,
		"tables": r.Tables, "rows": r.Rows, "stacks": stacks, "wiped": r.Wiped,
	}
	if len(r.Rotated) > 0 {
		res["rotated"] = r.Rotated
	}
	if len(r.Removed) > 0 {
		res["removed"] = r.Removed
	}
	if r.Backup != "" {
		res["backup"] = r.Backup
	}
	if r.CopiedFrom != "" {
		res["copied_from"] = r.CopiedFrom
	}
	if r.Changed && r.Before != nil && r.After != nil {
		res["diff"] = map[string]any{"before": r.Before.Map(), "after": r.After.Map()}
	}
	return res, err
}

func main() { module.Main(spec, run) }
