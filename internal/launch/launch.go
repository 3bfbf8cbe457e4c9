// Package launch starts, finds and stops an ephemeral Heat for one heat_dir:
// it writes the configuration, prepares the database, runs db_sync, starts
// the server detached, waits until the API answers, and records what it
// started so later runs are idempotent and a recycled pid is never mistaken
// for Heat.
package launch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatconf"
	"github.com/ephemeral-heat/ephemeral-heat/internal/podheat"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// States of a launch.
const (
	Started = "started"
	Stopped = "stopped"
	Absent  = "absent"
)

// Heat types.
const (
	Native    = "native"
	Container = "container"
	Pod       = "pod"
)

// Database kinds.
const (
	SQLite = "sqlite"
	MySQL  = "mysql"
)

// StateFile is the record of a launch inside heat_dir.
const StateFile = "launch.json"

// SQLiteFile is the sqlite database inside heat_dir.
const SQLiteFile = "heat.sqlite"

// InstallHint says how to get Heat on Debian.
const InstallHint = "install it with: apt-get install -y --no-install-recommends heat-common heat-api heat-engine python3-pymysql (or run 'make deps')"

// Options are the module's parameters.
type Options struct {
	State       string
	HeatType    string
	HeatDir     string
	APIPort     int
	BindHost    string
	Database    string
	DatabaseURL string
	RestoreDB   bool
	// RestoreFrom is the dump restore_db loads ("" = the newest in HeatDir):
	// a file (ours, or tripleoclient's heat-db.sql-*.tar.bzip2, which is
	// copied into HeatDir first), or a directory standing for its newest
	// dump (a tripleoclient working dir). Giving it implies RestoreDB.
	RestoreFrom    string
	Timeout        time.Duration
	HeatAllCommand string
	CheckMode      bool
	// StopGrace is how long Heat gets to exit after SIGTERM (default 15 s).
	StopGrace time.Duration
	// ExtraConf is added to heat.conf (tuning); part of the fingerprint.
	ExtraConf map[string]map[string]string
	// OwnerPID, when set, is watched by a detached watchdog: if that process
	// exits while Heat runs, the database is dumped and Heat stopped.
	OwnerPID int
	// WatchdogCommand runs this binary as the watchdog (default /proc/self/exe).
	WatchdogCommand []string
	// StockConf launches with TripleO's stock ephemeral heat.conf, without
	// our tuning (for benchmarks).
	StockConf bool

	// Container and pod (package podheat): the Heat image (api/engine
	// images default to it), engine workers (pod), an existing RabbitMQ
	// (pod; "" runs its own) and the podman service's socket.
	Image         string
	APIImage      string
	EngineImage   string
	EngineWorkers int
	TransportURL  string
	PodmanSocket  string

	// Warn receives warnings for the operator; Secret registers values to mask.
	Warn   func(format string, args ...any)
	Secret func(string)
}

// Outcome is what a launch reports.
type Outcome struct {
	Changed    bool
	Msg        string
	Endpoint   string
	HeatDir    string
	HeatType   string
	PID        int
	CloudsYAML string
	Database   string
	// DatabaseLocation is the sqlite file or host:port/db (no credentials).
	DatabaseLocation string
	// Removed lists what state=absent removed.
	Removed []string
	// Restored is the dump restore_db loaded.
	Restored string
	// PodmanName is the pod or container (heat_type container and pod).
	PodmanName string
}

// Record is what launch.json holds.
type Record struct {
	HeatType    string      `json:"heat_type"`
	Fingerprint string      `json:"fingerprint"`
	Endpoint    string      `json:"endpoint"`
	BindHost    string      `json:"bind_host"`
	APIPort     int         `json:"api_port"`
	Database    string      `json:"database"`
	DBLocation  string      `json:"database_location"`
	Process     proc.Record `json:"process"`
	StartedAt   time.Time   `json:"started_at"`
}

func (o *Options) defaults() {
	if o.RestoreFrom != "" {
		o.RestoreDB = true
	}
	if o.State == "" {
		o.State = Started
	}
	if o.HeatType == "" {
		o.HeatType = Native
	}
	if o.APIPort == 0 {
		o.APIPort = 8006
	}
	if o.BindHost == "" {
		o.BindHost = "127.0.0.1"
	}
	if o.Database == "" {
		o.Database = SQLite
	}
	if o.Timeout <= 0 {
		o.Timeout = 180 * time.Second
	}
	if o.HeatAllCommand == "" {
		o.HeatAllCommand = "heat-all"
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 15 * time.Second
	}
	if o.Warn == nil {
		o.Warn = func(string, ...any) {}
	}
	if o.Secret == nil {
		o.Secret = func(string) {}
	}
}

func (o *Options) validate() error {
	if o.HeatDir == "" || !filepath.IsAbs(o.HeatDir) {
		return fmt.Errorf("heat_dir must be an absolute path, got %q", o.HeatDir)
	}
	if o.APIPort < 1 || o.APIPort > 65535 {
		return fmt.Errorf("api_port %d is out of range 1-65535", o.APIPort)
	}
	if o.State != Started {
		return nil
	}
	switch o.HeatType {
	case Native:
		if o.Image != "" || o.APIImage != "" || o.EngineImage != "" || o.TransportURL != "" || o.EngineWorkers != 0 {
			return errors.New("image, api_image, engine_image, engine_workers and transport_url are only used with heat_type: container or pod")
		}
	case Container, Pod:
		if err := podheat.Validate(o.podOptions()); err != nil {
			return err
		}
	default:
		return fmt.Errorf("heat_type %q is unknown; use native, container or pod", o.HeatType)
	}
	if o.OwnerPID > 0 {
		if _, err := ownerRecord(o.OwnerPID); err != nil {
			return fmt.Errorf("%v: give the pid of a live process (the ansible-playbook process), or 0", err)
		}
	}
	switch o.Database {
	case SQLite:
		if o.DatabaseURL != "" && o.HeatType != Pod {
			return errors.New("database_url is only used with database: mysql; remove it or set database: mysql")
		}
	case MySQL:
		if o.DatabaseURL == "" && o.HeatType != Pod {
			return errors.New("database: mysql needs database_url, the URL of an existing MySQL/MariaDB with a user allowed to create databases and users, e.g. mysql://root:PASSWORD@127.0.0.1:3306/")
		}
	default:
		return fmt.Errorf("database %q is unknown; use sqlite or mysql", o.Database)
	}
	return nil
}

// fingerprint identifies the requested configuration: a running Heat with
// another fingerprint is restarted.
func (o *Options) fingerprint() string {
	b, _ := json.Marshal(map[string]any{
		"heat_type": o.HeatType, "bind_host": o.BindHost, "api_port": o.APIPort,
		"database": o.Database, "database_url": o.DatabaseURL, "command": o.HeatAllCommand,
		"extra": o.mergedExtra(), // our tuning too: new defaults restart an old Heat
	})
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Run brings the heat_dir's Heat to the requested state.
func Run(ctx context.Context, o Options) (Outcome, error) {
	o.defaults()
	if err := o.validate(); err != nil {
		return Outcome{}, err
	}
	// Everything Heat and this module create may hold secrets.
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	if o.HeatType == Container || o.HeatType == Pod || (o.State != Started && o.recordedPodman()) {
		return runPodman(ctx, &o)
	}
	switch o.State {
	case Started:
		return start(ctx, &o)
	case Stopped, Absent:
		return stop(ctx, &o)
	}
	return Outcome{}, fmt.Errorf("state %q is unknown; use started, stopped or absent", o.State)
}

func (o *Options) path(name string) string { return filepath.Join(o.HeatDir, name) }

func readRecord(dir string) (*Record, error) {
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the launch record: %w", err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("the launch record %s is corrupt (%v): stop any Heat using %s by hand and remove the file",
			filepath.Join(dir, StateFile), err, filepath.Join(dir, heatconf.HeatConf))
	}
	return &r, nil
}

func writeRecord(dir string, r *Record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the launch record: %w", err)
	}
	return fsutil.WriteFileAtomic(filepath.Join(dir, StateFile), append(b, '\n'), fsutil.SecretFileMode)
}

func (o *Options) outcome(r *Record) Outcome {
	return Outcome{
		Endpoint: r.Endpoint, HeatDir: o.HeatDir, HeatType: r.HeatType, PID: r.Process.PID,
		CloudsYAML: o.path(heatconf.CloudsYAML), Database: r.Database, DatabaseLocation: r.DBLocation,
	}
}

// apiReady reports whether the API answers GET /stacks with 200.
func apiReady(ctx context.Context, endpoint string) bool {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/stacks", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func start(ctx context.Context, o *Options) (Outcome, error) {
	fp := o.fingerprint()
	rec, err := readRecord(o.HeatDir)
	if err != nil {
		return Outcome{}, err
	}
	restarting := false
	if rec != nil {
		alive, why := rec.Process.Check()
		switch {
		case alive && rec.Fingerprint == fp && apiReady(ctx, rec.Endpoint):
			out := o.outcome(rec)
			out.Msg = fmt.Sprintf("Heat is already running in %s (pid %d) at %s", o.HeatDir, rec.Process.PID, rec.Endpoint)
			if !o.CheckMode {
				if err := o.ensureWatchdog(); err != nil {
					return out, err
				}
			}
			return out, nil
		case alive && rec.Fingerprint != fp:
			o.Warn("the running Heat (pid %d) was started with other settings; restarting it with the requested ones", rec.Process.PID)
			restarting = true
		case alive:
			o.Warn("the running Heat (pid %d) does not answer at %s; restarting it", rec.Process.PID, rec.Endpoint)
			restarting = true
		default:
			o.Warn("stale launch record in %s: %s; starting Heat afresh", o.HeatDir, why)
		}
		if o.CheckMode {
			return Outcome{Changed: true, HeatDir: o.HeatDir, HeatType: o.HeatType,
				Msg: "Heat would be (re)started in " + o.HeatDir}, nil
		}
		if restarting {
			if err := proc.StopGroup(rec.Process.PGID, o.StopGrace, 10*time.Second); err != nil {
				return Outcome{}, fmt.Errorf("stopping the previous Heat: %w", err)
			}
		}
		if err := os.Remove(o.path(StateFile)); err != nil && !os.IsNotExist(err) {
			return Outcome{}, fmt.Errorf("removing the stale launch record: %w", err)
		}
	} else if o.CheckMode {
		return Outcome{Changed: true, HeatDir: o.HeatDir, HeatType: o.HeatType,
			Msg: "Heat would be started in " + o.HeatDir}, nil
	}

	heatAll, heatManage, err := o.commands()
	if err != nil {
		return Outcome{}, err
	}
	if _, err := fsutil.EnsurePrivateDir(o.HeatDir); err != nil {
		return Outcome{}, err
	}
	if _, err := fsutil.EnsurePrivateDir(o.path(heatconf.LogDir)); err != nil {
		return Outcome{}, err
	}
	confPath := o.path(heatconf.HeatConf)
	// A Heat of ours without a record (the caller died between start and
	// record) is found by its config file argument.
	if err := stopOrphans(confPath, o); err != nil {
		return Outcome{}, err
	}
	// A Heat that just died may hold its socket for a moment longer.
	if !proc.WaitPortFree(o.BindHost, o.APIPort, 3*time.Second) {
		return Outcome{}, proc.PortInUse(o.BindHost, o.APIPort)
	}
	if o.BindHost != "127.0.0.1" && o.BindHost != "::1" && o.BindHost != "localhost" {
		o.Warn("the Heat API has no authentication and is bound to %s: anyone who can reach that address controls it", o.BindHost)
	}

	dbURL, dbLoc, err := o.prepareDatabase(ctx)
	if err != nil {
		return Outcome{}, err
	}
	cfg := heatconf.Config{Dir: o.HeatDir, BindHost: o.BindHost, APIPort: o.APIPort, Database: dbURL,
		Now: time.Now(), Extra: o.mergedExtra(), PythonPath: o.path(heatconf.PythonDir)}
	if err := heatconf.WritePythonFiles(o.HeatDir); err != nil {
		return Outcome{}, err
	}
	for name, data := range cfg.Files() {
		if err := fsutil.WriteFileAtomic(o.path(name), data, fsutil.SecretFileMode); err != nil {
			return Outcome{}, err
		}
	}
	var restored *dumps.Result
	if o.RestoreDB {
		r, err := dumps.Restore(ctx, dumps.RestoreOptions{HeatDir: o.HeatDir, Dump: o.RestoreFrom, Warn: o.Warn, Secret: o.Secret})
		if err != nil {
			return Outcome{}, fmt.Errorf("restore_db: %w", err)
		}
		restored = &r
	}
	// After a restore, db_sync upgrades a dump taken by an older Heat.
	if err := dbSync(ctx, heatManage, confPath, cfg.PythonPath, o); err != nil {
		return Outcome{}, err
	}
	argv := append(append([]string(nil), heatAll...), "--config-file", confPath)
	stdoutLog := o.path(filepath.Join(heatconf.LogDir, "heat-all.stdout.log"))
	started, err := proc.Start(argv, o.HeatDir, stdoutLog, heatEnv(cfg.PythonPath))
	if err != nil {
		return Outcome{}, fmt.Errorf("starting Heat: %w", err)
	}
	rec = &Record{HeatType: o.HeatType, Fingerprint: fp, Endpoint: cfg.Endpoint(), BindHost: o.BindHost,
		APIPort: o.APIPort, Database: o.Database, DBLocation: dbLoc, Process: started.Record, StartedAt: time.Now().UTC()}
	if err := writeRecord(o.HeatDir, rec); err != nil {
		_ = proc.StopGroup(started.Record.PGID, 2*time.Second, 10*time.Second)
		return Outcome{}, err
	}
	if err := waitReady(ctx, started, rec.Endpoint, o); err != nil {
		_ = proc.StopGroup(started.Record.PGID, 2*time.Second, 10*time.Second)
		os.Remove(o.path(StateFile))
		return Outcome{}, err
	}
	out := o.outcome(rec)
	out.Changed = true
	out.Msg = fmt.Sprintf("Heat started in %s (pid %d) at %s", o.HeatDir, rec.Process.PID, rec.Endpoint)
	if err := o.ensureWatchdog(); err != nil {
		return out, err
	}
	if restored != nil {
		if err := checkRestoredStacks(ctx, rec.Endpoint, restored.Stacks); err != nil {
			return out, fmt.Errorf("restore_db: Heat runs on the restored database, but %w", err)
		}
		out.Restored = restored.Path
		out.Msg += "; database restored from " + restored.Path
	}
	return out, nil
}

// heatEnv is the environment Heat runs with: the caller's, minus variables
// that would point its clients elsewhere; with pythonDir (if any) first on
// PYTHONPATH (heatconf.PythonEnv).
func heatEnv(pythonDir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OS_") {
			continue
		}
		env = append(env, kv)
	}
	if pythonDir != "" {
		env = heatconf.PythonEnv(env, pythonDir)
	}
	return env
}

// commands resolves heat_all_command and the heat-manage beside it.
func (o *Options) commands() (heatAll []string, heatManage string, err error) {
	heatAll = strings.Fields(o.HeatAllCommand)
	if len(heatAll) == 0 {
		return nil, "", errors.New("heat_all_command is empty")
	}
	exe, err := exec.LookPath(heatAll[0])
	if err != nil {
		return nil, "", fmt.Errorf("heat_all_command %q was not found: %s", heatAll[0], InstallHint)
	}
	heatAll[0] = exe
	heatManage = filepath.Join(filepath.Dir(exe), "heat-manage")
	if _, err := os.Stat(heatManage); err != nil {
		if heatManage, err = exec.LookPath("heat-manage"); err != nil {
			return nil, "", fmt.Errorf("heat-manage was not found beside %s nor on PATH: %s", exe, InstallHint)
		}
	}
	return heatAll, heatManage, nil
}

func dbSync(ctx context.Context, heatManage, confPath, pythonPath string, o *Options) error {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, heatManage, "--config-file", confPath, "db_sync")
	cmd.Dir = o.HeatDir
	cmd.Env = heatEnv(pythonPath)
	out, err := cmd.CombinedOutput()
	logPath := o.path(filepath.Join(heatconf.LogDir, "db_sync.log"))
	_ = fsutil.WriteFileAtomic(logPath, out, fsutil.SecretFileMode)
	if err != nil {
		return fmt.Errorf("heat-manage db_sync failed (%v); last lines of %s:\n%s", err, logPath, proc.TailLines(out, 15))
	}
	return nil
}

func waitReady(ctx context.Context, s *proc.Started, endpoint string, o *Options) error {
	deadline := time.Now().Add(o.Timeout)
	for {
		if exited, werr := s.Exited(); exited {
			return fmt.Errorf("Heat exited during start-up (%v); %s", werr, o.logTails())
		}
		if apiReady(ctx, endpoint) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Heat did not answer at %s within %s (raise timeout if this host is slow); %s",
				endpoint, o.Timeout, o.logTails())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for Heat: %w", ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// logTails returns the last lines of Heat's logs, for error messages.
func (o *Options) logTails() string {
	var parts []string
	for _, name := range []string{"heat-all.stdout.log", "heat-all.log"} {
		p := o.path(filepath.Join(heatconf.LogDir, name))
		b, err := os.ReadFile(p)
		if err != nil || len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("last lines of %s:\n%s", p, proc.TailLines(b, 15)))
	}
	if len(parts) == 0 {
		return "its logs in " + o.path(heatconf.LogDir) + " are empty"
	}
	return strings.Join(parts, "\n")
}

// stopOrphans stops Heat processes that use confPath but have no record.
func stopOrphans(confPath string, o *Options) error {
	for _, info := range proc.FindByArg(confPath) {
		o.Warn("found a Heat process without a launch record using %s (pid %d); stopping it", confPath, info.PID)
		pgid := info.PGID
		if pgid <= 1 {
			pgid = info.PID
		}
		if err := proc.StopGroup(pgid, o.StopGrace, 10*time.Second); err != nil {
			return fmt.Errorf("stopping the unrecorded Heat: %w", err)
		}
	}
	return nil
}

func stop(ctx context.Context, o *Options) (Outcome, error) {
	out := Outcome{HeatDir: o.HeatDir, HeatType: o.HeatType}
	rec, err := readRecord(o.HeatDir)
	if err != nil {
		return out, err
	}
	confPath := o.path(heatconf.HeatConf)
	running := false
	if rec != nil {
		out = o.outcome(rec)
		if alive, why := rec.Process.Check(); alive {
			running = true
		} else {
			o.Warn("stale launch record in %s: %s", o.HeatDir, why)
		}
	}
	orphans := proc.FindByArg(confPath)
	var dbItems []string
	if o.State == Absent {
		dbItems = o.liveDatabase(rec)
	}
	if !running && len(orphans) == 0 && rec == nil && len(dbItems) == 0 {
		out.Msg = "no Heat is running for " + o.HeatDir
		return out, nil
	}
	out.Changed = running || len(orphans) > 0 || len(dbItems) > 0 || rec != nil
	if o.CheckMode {
		out.Msg = "Heat would be stopped in " + o.HeatDir
		out.Removed = dbItems
		return out, nil
	}
	if err := o.stopWatchdog(); err != nil {
		return out, err
	}
	if running {
		if err := proc.StopGroup(rec.Process.PGID, o.StopGrace, 10*time.Second); err != nil {
			return out, fmt.Errorf("stopping Heat: %w", err)
		}
	}
	if err := stopOrphans(confPath, o); err != nil {
		return out, err
	}
	if rec != nil {
		if err := os.Remove(o.path(StateFile)); err != nil && !os.IsNotExist(err) {
			return out, fmt.Errorf("removing the launch record: %w", err)
		}
		if !proc.WaitPortFree(rec.BindHost, rec.APIPort, 10*time.Second) {
			o.Warn("api_port %d is still in use after Heat stopped: %v", rec.APIPort, proc.PortInUse(rec.BindHost, rec.APIPort))
		}
	}
	out.Msg = "Heat stopped in " + o.HeatDir
	if o.State == Absent {
		removed, err := o.removeDatabase(ctx, rec)
		out.Removed = removed
		if err != nil {
			return out, err
		}
		out.Msg = "Heat stopped and its database removed in " + o.HeatDir
	}
	out.PID = 0
	return out, nil
}

// checkRestoredStacks compares the stacks Heat's API lists with the restored ones.
func checkRestoredStacks(ctx context.Context, endpoint string, want []dumps.Stack) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/stacks", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("listing its stacks failed: %w", err)
	}
	defer resp.Body.Close()
	var body struct {
		Stacks []struct {
			ID     string `json:"id"`
			Name   string `json:"stack_name"`
			Status string `json:"stack_status"`
		} `json:"stacks"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("listing its stacks answered %d: %v", resp.StatusCode, err)
	}
	got := make([]dumps.Stack, 0, len(body.Stacks))
	for _, s := range body.Stacks {
		got = append(got, dumps.Stack{ID: s.ID, Name: s.Name, Status: s.Status})
	}
	return dumps.SameStacks(want, got)
}

// recordedPodman reports whether heat_dir's launch record is of a container
// or pod (so that stopped/absent without heat_type stop it).
func (o *Options) recordedPodman() bool {
	b, err := os.ReadFile(o.path(StateFile))
	if err != nil {
		return false
	}
	var r struct {
		HeatType string `json:"heat_type"`
	}
	if json.Unmarshal(b, &r) != nil || (r.HeatType != Container && r.HeatType != Pod) {
		return false
	}
	o.HeatType = r.HeatType
	return true
}

func (o *Options) podOptions() podheat.Options {
	return podheat.Options{
		State: o.State, HeatType: o.HeatType, HeatDir: o.HeatDir, APIPort: o.APIPort, BindHost: o.BindHost,
		Database: o.Database, DatabaseURL: o.DatabaseURL, TransportURL: o.TransportURL, RestoreDB: o.RestoreDB, RestoreFrom: o.RestoreFrom,
		Image: o.Image, APIImage: o.APIImage, EngineImage: o.EngineImage, EngineWorkers: o.EngineWorkers,
		Socket: o.PodmanSocket, Timeout: o.Timeout, CheckMode: o.CheckMode, ExtraConf: o.ExtraConf,
		StockConf: o.StockConf, StopGrace: o.StopGrace, Warn: o.Warn, Secret: o.Secret,
	}
}

// runPodman runs heat_type container and pod through package podheat; the
// database on an existing MySQL (database_url) is prepared and removed here,
// the stacks restore_db loaded are checked through the API, and owner_pid's
// watchdog is started (and ended on stop) as for native.
func runPodman(ctx context.Context, o *Options) (Outcome, error) {
	po := o.podOptions()
	po.PrepareDB = o.prepareDatabase
	po.RemoveDB = func(ctx context.Context) ([]string, error) { return o.removeDatabase(ctx, nil) }
	if o.State != Started && !o.CheckMode {
		if err := o.stopWatchdog(); err != nil {
			return Outcome{HeatDir: o.HeatDir, HeatType: o.HeatType}, err
		}
	}
	out, err := podheat.Run(ctx, po)
	res := Outcome{Changed: out.Changed, Msg: out.Msg, Endpoint: out.Endpoint, HeatDir: o.HeatDir, HeatType: o.HeatType,
		Database: out.Database, DatabaseLocation: out.DatabaseLocation, Removed: out.Removed, PodmanName: out.Name}
	if out.Endpoint != "" {
		res.CloudsYAML = o.path(heatconf.CloudsYAML)
	}
	if err != nil || o.State != Started || o.CheckMode {
		return res, err
	}
	if err := o.ensureWatchdog(); err != nil {
		return res, err
	}
	if out.Restored != nil {
		if err := checkRestoredStacks(ctx, out.Endpoint, out.Restored.Stacks); err != nil {
			return res, fmt.Errorf("restore_db: Heat runs on the restored database, but %w", err)
		}
		res.Restored = out.Restored.Path
		res.Msg += "; database restored from " + out.Restored.Path
	}
	return res, nil
}
