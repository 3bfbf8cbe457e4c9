// Package native is the launch backend that runs heat-all on the host: it
// runs heat-manage db_sync, starts heat-all detached in its own session and
// process group with the launch's tag in its environment, and knows it again
// by pid, start time and that tag (proc.Record.Check), never by its command
// line.
package native

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// InstallHint says how to get Heat on Debian.
const InstallHint = "install it with: apt-get install -y --no-install-recommends heat-common heat-api heat-engine python3-pymysql (or run 'make deps')"

const (
	heatAllLog = "heat-all"
	dbSyncLog  = "db_sync.log"
)

// HeatAll is heat_all_command: the heat-all executable.
var HeatAll = &backend.Option{Param: module.Param{Name: "heat_all_command", Default: "heat-all",
	Help: "the heat-all executable (heat-manage is looked up beside it)"}}

// SchemaCache is schema_cache: a fresh sqlite database is a copy of
// db_sync's own earlier result for the same Heat and [database] options
// (package schemacache) instead of a new db_sync.
var SchemaCache = &backend.Option{Param: module.Param{Name: "schema_cache", Type: module.Bool, Default: true,
	Help: "copy a fresh database from db_sync's cached result for this Heat version instead of running db_sync"},
	NoRestart: true}

// HeatType selects this backend.
const HeatType = "native"

// Declaration is heat_type native.
var Declaration = backend.Declaration{
	HeatType: HeatType,
	Options:  []*backend.Option{HeatAll, SchemaCache},
	Identity: heatdir.ProcessIdentity,
	New:      New,
}

// Backend runs heat-all on the host.
type Backend struct {
	heatAll    []string
	heatManage string
	started    *proc.Started
}

// New returns a native backend for one launch.
func New() backend.Backend { return &Backend{} }

// Check resolves heat_all_command and the heat-manage beside it.
func (b *Backend) Check(s *backend.Spec) error {
	heatAll := strings.Fields(s.Options.Str(HeatAll.Name))
	if len(heatAll) == 0 {
		return errors.New("heat_all_command is empty")
	}
	exe, err := exec.LookPath(heatAll[0])
	if err != nil {
		return fmt.Errorf("heat_all_command %q was not found: %s", heatAll[0], InstallHint)
	}
	heatAll[0] = exe
	heatManage := filepath.Join(filepath.Dir(exe), "heat-manage")
	if _, err := os.Stat(heatManage); err != nil {
		if heatManage, err = exec.LookPath("heat-manage"); err != nil {
			return fmt.Errorf("heat-manage was not found beside %s nor on PATH: %s", exe, InstallHint)
		}
	}
	b.heatAll, b.heatManage = heatAll, heatManage
	return nil
}

// Database: the sqlite file in heat_dir.
func (b *Backend) Database() backend.Database { return backend.SQLiteFile{} }

// Configure has nothing to add to heat.conf.
func (b *Backend) Configure(context.Context, *backend.Spec, *heatdir.Config, *heatdir.Record) error {
	return nil
}

// Start restores (when asked), runs db_sync (which also upgrades a dump
// taken by an older Heat) and starts heat-all.
func (b *Backend) Start(ctx context.Context, s *backend.Spec, rec *heatdir.Record, restore func(context.Context) error) error {
	if restore != nil {
		if err := restore(ctx); err != nil {
			return err
		}
	}
	conf := s.Dir.File(heatdir.HeatConf)
	pythonDir := s.Dir.File(heatdir.PythonDir)
	if err := b.dbSync(ctx, s, rec, conf, pythonDir); err != nil {
		return err
	}
	argv := append(append([]string(nil), b.heatAll...), "--config-file", conf)
	started, err := proc.Start(argv, s.Dir.Path(), s.Dir.Log(heatdir.StdoutLog(heatAllLog)), Env(pythonDir), rec.Tag())
	if err != nil {
		return fmt.Errorf("starting Heat: %w", err)
	}
	b.started = started
	r := started.Record
	rec.Process = &r
	return nil
}

func (b *Backend) dbSync(ctx context.Context, s *backend.Spec, rec *heatdir.Record, conf, pythonDir string) error {
	logPath := s.Dir.Log(dbSyncLog)
	dbPath := s.Dir.File(heatdir.SQLiteFile)
	// Only a database this launch makes from nothing: a restored dump
	// (or a heat_dir's own earlier database) gets db_sync, which upgrades
	// what an older Heat wrote.
	_, statErr := os.Lstat(dbPath)
	fresh := errors.Is(statErr, fs.ErrNotExist) && rec.Database == string(heatdb.SQLite) && rec.DBLocation == dbPath
	var cache *cached
	if fresh && s.Options.Bool(SchemaCache.Name) {
		cache = b.cacheFor(s, conf)
		if cache.hit(dbPath, logPath) {
			return nil
		}
	}
	if err := b.runDBSync(ctx, s, rec, conf, pythonDir, logPath); err != nil {
		return err
	}
	cache.put(dbPath)
	return nil
}

func (b *Backend) runDBSync(ctx context.Context, s *backend.Spec, rec *heatdir.Record, conf, pythonDir, logPath string) error {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.heatManage, "--config-file", conf, "db_sync")
	cmd.Dir = s.Dir.Path()
	// Tagged in a group of its own: a launcher killed during db_sync leaves
	// it for the next launch to find and stop.
	cmd.Env = append(Env(pythonDir), rec.Tag())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.CombinedOutput()
	if werr := os.WriteFile(logPath, out, heatdir.FileMode); werr != nil && err == nil {
		return fmt.Errorf("writing %s: %w", logPath, werr)
	}
	if err != nil {
		return fmt.Errorf("heat-manage db_sync failed (%v); last lines of %s:\n%s", err, logPath, proc.TailLines(out, 15))
	}
	return nil
}

// Env is the environment Heat's commands run with: the caller's, minus
// variables that would point its clients elsewhere; with pythonDir (if any)
// first on PYTHONPATH (heatdir.PythonEnv).
func Env(pythonDir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OS_") || strings.HasPrefix(kv, proc.TagVar+"=") {
			continue
		}
		env = append(env, kv)
	}
	if pythonDir != "" {
		env = heatdir.PythonEnv(env, pythonDir)
	}
	return env
}

// Ready: heat-all has not exited, and the API lists stacks.
func (b *Backend) Ready(ctx context.Context, s *backend.Spec, rec *heatdir.Record) error {
	return backend.ProcessServes(ctx, b.started, rec.Endpoint, func() string { return b.Logs(ctx, s, rec) })
}

// Logs returns the last lines of heat-all's output and log.
func (b *Backend) Logs(_ context.Context, s *backend.Spec, _ *heatdir.Record) string {
	var parts []string
	for _, name := range []string{heatdir.StdoutLog(heatAllLog), heatdir.ServiceLog(heatAllLog)} {
		p := s.Dir.Log(name)
		data, err := os.ReadFile(p)
		if err != nil || len(strings.TrimSpace(string(data))) == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("last lines of %s:\n%s", p, proc.TailLines(data, 15)))
	}
	if len(parts) == 0 {
		return "its logs in " + s.Dir.File(heatdir.LogDir) + " are empty"
	}
	return strings.Join(parts, "\n")
}

// Alive checks the recorded heat-all: pid, start time, boot and launch tag.
func (b *Backend) Alive(_ context.Context, _ *backend.Spec, rec *heatdir.Record) (bool, string) {
	if rec == nil || rec.Process == nil {
		return false, "no process was recorded (a launch interrupted before Heat started)"
	}
	return rec.Process.Check()
}

// Find lists the recorded heat-all when it checks out, and every other
// process that carries the launch's tag (a heat-all started by a launcher
// killed before it recorded it; their children).
func (b *Backend) Find(_ context.Context, _ *backend.Spec, rec *heatdir.Record) ([]string, error) {
	var out []string
	for _, g := range ownGroups(rec) {
		out = append(out, fmt.Sprintf("process group %d (%s)", g.PGID, strings.Join(g.Cmdline, " ")))
	}
	return out, nil
}

// StopHeat stops heat-all (its database, sqlite or external, needs nothing running).
func (b *Backend) StopHeat(ctx context.Context, s *backend.Spec, rec *heatdir.Record) error {
	return b.Remove(ctx, s, rec)
}

// Remove stops what Find lists: each process group led by a process of
// ours (SIGTERM, SIGKILL after StopGrace), and a tagged process in a group
// that is not ours on its own.
func (b *Backend) Remove(_ context.Context, s *backend.Spec, rec *heatdir.Record) error {
	grace := s.StopGrace
	if grace <= 0 {
		grace = 15 * time.Second
	}
	for _, g := range ownGroups(rec) {
		stop := proc.StopGroup
		if g.PGID != g.PID {
			stop = proc.StopPID
		}
		id := g.PGID
		if g.PGID != g.PID {
			id = g.PID
		}
		if err := stop(id, grace, 10*time.Second); err != nil {
			return fmt.Errorf("stopping Heat: %w", err)
		}
	}
	return nil
}

// ownGroups lists what to stop: the recorded heat-all's process group when
// it checks out; the groups led by a process carrying the launch's tag; and
// tagged processes in a group whose leader is not ours (the caller's own
// group excepted: the watchdog carries the tag too), as PID != PGID.
func ownGroups(rec *heatdir.Record) []proc.Info {
	if rec == nil {
		return nil
	}
	self, _ := proc.Inspect(os.Getpid())
	seen := map[int]bool{self.PGID: true}
	var out []proc.Info
	if rec.Process != nil {
		if alive, _ := rec.Process.Check(); alive {
			seen[rec.Process.PGID] = true
			out = append(out, proc.Info{PID: rec.Process.PGID, PGID: rec.Process.PGID, Cmdline: rec.Process.Cmdline})
		}
	}
	tagged := proc.FindTagged(rec.Tag())
	leaders := map[int]bool{}
	for _, info := range tagged {
		if info.PID == info.PGID {
			leaders[info.PID] = true
		}
	}
	for _, info := range tagged {
		switch {
		case info.PGID <= 1 || seen[info.PGID] || info.PID == os.Getpid():
		case leaders[info.PGID]:
			seen[info.PGID] = true
			out = append(out, proc.Info{PID: info.PGID, PGID: info.PGID, Cmdline: info.Cmdline})
		default:
			out = append(out, info)
		}
	}
	return out
}
