// Command ephemeral_heat_launch is the Ansible module (and command-line tool)
// that starts, stops or removes an ephemeral Heat for one heat_dir.
package main

import (
	"context"
	"os"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/launch"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/podheat"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

var spec = &module.Spec{
	Name:  "ephemeral_heat_launch",
	Short: "start, stop or remove a short-lived, no-auth Heat for one deployment",
	Params: []module.Param{
		{Name: "state", Default: launch.Started, Choices: []string{launch.Started, launch.Stopped, launch.Absent},
			Help: "started, stopped (keep the database) or absent (also remove the database)"},
		{Name: "heat_type", Default: launch.Native, Choices: launch.HeatTypes(),
			Help: "how Heat runs"},
		{Name: "heat_dir", Type: module.Path, Required: true, Help: "directory holding Heat's config, logs and database"},
		{Name: "api_port", Type: module.Int, Default: 8006, Range: module.Between(1, 65535), Help: "port of the Heat API"},
		{Name: "bind_host", Default: "127.0.0.1", Help: "address the Heat API listens on"},
		{Name: "database", Default: launch.SQLite, Choices: []string{launch.SQLite, launch.MySQL}, Help: "database backend"},
		{Name: "database_url", NoLog: true, Help: "an existing MySQL for database=mysql, mysql://USER:PASSWORD@HOST:PORT/[DB]"},
		{Name: "restore_db", Type: module.Bool, Default: false, Help: "load the newest database dump before starting"},
		{Name: "restore_verify", Type: module.Bool, Default: true, Help: "restore_db: refuse a dump without a matching .sha256 (false loads it anyway)"},
		{Name: "restore_from", Type: module.Path, Help: "the dump to load (implies restore_db): a file, or a directory for its newest dump (a tripleoclient working dir)"},
		{Name: "timeout", Type: module.Int, Default: 180, Range: module.Between(1, launch.MaxTimeoutSeconds), Help: "seconds to wait for the API to answer"},
		{Name: "heat_all_command", Default: "heat-all", Help: "the heat-all executable (heat-manage is looked up beside it)"},
		{Name: "image", Default: podheat.DefaultImage, Help: "container/pod: the Heat image (make heat-image builds it)"},
		{Name: "api_image", Help: "pod: image of heat-api (default: image)"},
		{Name: "engine_image", Help: "pod: image of heat-engine (default: image)"},
		{Name: "engine_workers", Type: module.Int, Range: module.Between(1, 256), Help: "pod: heat-engine workers (default: half the CPUs, at least 1)"},
		{Name: "transport_url", NoLog: true, Help: "pod: an existing RabbitMQ, rabbit://USER:PASSWORD@HOST:PORT/ (default: the pod runs its own)"},
		{Name: "podman_socket", Help: "container/pod: the podman service (default unix:///run/podman/podman.sock, or $XDG_RUNTIME_DIR/podman/podman.sock)"},
		{Name: "owner_pid", Type: module.Int, Default: 0, Range: module.Between(0, proc.MaxPID), Help: "if this process exits while Heat runs, dump the database and stop Heat"},
		{Name: "dump", Type: module.Bool, Default: true, Help: "state=absent: dump the database (verified, as heat_db_dump does) before removing it"},
	},
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
		HeatAllCommand:    p.Str("heat_all_command"),
		Image:             podmanParam(p, "image"),
		APIImage:          p.Str("api_image"),
		EngineImage:       p.Str("engine_image"),
		EngineWorkers:     p.Int("engine_workers"),
		TransportURL:      p.Str("transport_url"),
		PodmanSocket:      p.Str("podman_socket"),
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
	if out.PodmanName != "" {
		res["podman_name"] = out.PodmanName
	}
	if out.Removed != nil {
		res["removed"] = out.Removed
	}
	if out.Changed && out.Before.State != "" && out.After.State != "" {
		res["diff"] = map[string]any{"before": out.Before.Map(), "after": out.After.Map()}
	}
	return res, err
}

// podmanParam is a container/pod parameter whose default only applies to
// those heat types (native rejects it when given).
func podmanParam(p module.Params, name string) string {
	if !p.Given(name) && p.Str("heat_type") == launch.Native {
		return ""
	}
	return p.Str(name)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == launch.WatchdogArg {
		os.Exit(launch.Watchdog(os.Args[2:]))
	}
	module.Main(spec, run)
}
