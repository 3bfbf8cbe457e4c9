// Command ephemeral_heat_launch is the Ansible module (and command-line tool)
// that starts, stops or removes an ephemeral Heat for one heat_dir.
package main

import (
	"context"
	"os"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/launch"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

var spec = newSpec()

// newSpec is the module's spec: the options every heat_type takes, then
// those of the registered backends (their declarations).
func newSpec() *module.Spec {
	return &module.Spec{
		Name:  "ephemeral_heat_launch",
		Short: "start, stop or remove a short-lived, no-auth Heat for one deployment",
		Params: append([]module.Param{
			{Name: "state", Default: launch.DefaultState, Choices: []string{launch.Started, launch.Stopped, launch.Absent},
				Help: "started, stopped (keep the database) or absent (also remove the database)"},
			{Name: "heat_type", Default: launch.DefaultHeatType, Choices: launch.HeatTypes(),
				Help: "how Heat runs"},
			{Name: "heat_dir", Type: module.Path, Required: true, Help: "directory holding Heat's config, logs and database"},
			{Name: "api_port", Type: module.Int, Default: launch.DefaultAPIPort, Range: module.Between(1, 65535), Help: "port of the Heat API"},
			{Name: "bind_host", Default: launch.DefaultBindHost, Help: "address the Heat API listens on"},
			{Name: "database", Default: launch.DefaultDatabase, Choices: []string{launch.SQLite, launch.MySQL}, Help: "database backend"},
			{Name: "database_url", NoLog: true, Help: "an existing MySQL for database=mysql, mysql://USER:PASSWORD@HOST:PORT/[DB]"},
			{Name: "restore_db", Type: module.Bool, Default: false, Help: "load the newest database dump before starting"},
			{Name: "restore_verify", Type: module.Bool, Default: true, Help: "restore_db: refuse a dump without a matching .sha256 (false loads it anyway)"},
			{Name: "restore_from", Type: module.Path, Help: "the dump to load (implies restore_db): a file, or a directory for its newest dump (a tripleoclient working dir)"},
			{Name: "timeout", Type: module.Int, Default: int(launch.DefaultTimeout / time.Second), Range: module.Between(1, launch.MaxTimeoutSeconds),
				Help: "seconds to wait for the API to answer"},
			{Name: "owner_pid", Type: module.Int, Default: 0, Range: module.Between(0, proc.MaxPID), Help: "if this process exits while Heat runs, dump the database and stop Heat"},
			{Name: "dump", Type: module.Bool, Default: true, Help: "state=absent: dump the database (verified, as heat_db_dump does) before removing it"},
		}, launch.BackendParams()...),
	}
}

func run(ctx *module.Context) (module.Result, error) {
	p := ctx.Params
	out, err := launch.Run(context.Background(), launch.Options{
		State:             p.Str("state"),
		HeatType:          p.Str("heat_type"),
		HeatDir:           p.Str("heat_dir"),
		APIPort:           p.Int("api_port"),
		BindHost:          p.Str("bind_host"),
		Database:          p.Str("database"),
		DatabaseURL:       p.Str("database_url"),
		RestoreDB:         p.Bool("restore_db"),
		RestoreFrom:       p.Str("restore_from"),
		RestoreUnverified: !p.Bool("restore_verify"),
		NoDump:            !p.Bool("dump"),
		Timeout:           time.Duration(p.Int("timeout")) * time.Second,
		Backend:           backendOptions(p),
		OwnerPID:          p.Int("owner_pid"),
		CheckMode:         ctx.CheckMode,
		Warn:              ctx.Warn,
		Secret:            ctx.AddSecret,
	})
	res := module.Result{
		"changed":           out.Changed,
		"msg":               out.Msg,
		"heat_dir":          p.Str("heat_dir"),
		"heat_type":         p.Str("heat_type"),
		"state":             p.Str("state"),
		"endpoint":          out.Endpoint,
		"pid":               out.PID,
		"clouds_yaml":       out.CloudsYAML,
		"database":          out.Database,
		"database_location": out.DatabaseLocation,
	}
	if out.Restored != "" {
		res["restored"] = out.Restored
	}
	if out.Dumped != "" {
		res["dumped"] = out.Dumped
	}
	if len(out.Reset) > 0 {
		res["reset_stacks"] = out.Reset
	}
	if out.ObjectName != "" {
		res["podman_name"] = out.ObjectName
	}
	if out.Removed != nil {
		res["removed"] = out.Removed
	}
	if out.Changed && out.Before.State != "" && out.After.State != "" {
		res["diff"] = map[string]any{"before": out.Before.Map(), "after": out.After.Map()}
	}
	return res, err
}

// backendOptions are the backends' options the user gave (launch fills in
// the defaults of the heat_type's own, and refuses another's).
func backendOptions(p module.Params) backend.Values {
	v := backend.Values{}
	for _, bp := range launch.BackendParams() {
		if p.Given(bp.Name) {
			v[bp.Name] = p.Raw(bp.Name)
		}
	}
	return v
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == launch.WatchdogArg {
		os.Exit(launch.Watchdog(os.Args[2:]))
	}
	module.Main(spec, run)
}
