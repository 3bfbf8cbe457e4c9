// Package launch starts, finds and stops the ephemeral Heat of one heat_dir,
// whatever runs it: it guards and locks the heat_dir (package heatdir),
// prepares the database (package heatdb), records the launch before
// anything starts, has a backend (registry.go: native, container, pod;
// each declares its options, defaults, database lifecycle and identity)
// start Heat, waits until it serves and until Heat has reset the stacks an
// interruption left IN_PROGRESS, and keeps a watchdog on the caller. A
// later run recognises what the record names by its identity (pid, start
// time and launch tag; a podman object's id), never by a command line, and
// touches nothing else.
package launch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/native"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/tuning"
)

// States of a launch.
const (
	Started = "started"
	Stopped = "stopped"
	Absent  = "absent"
)

// Database kinds.
const (
	SQLite = string(heatdb.SQLite)
	MySQL  = string(heatdb.MySQL)
)

// Defaults of the options a caller leaves zero (the module's spec has
// them too: it refuses a port or timeout outside its range before it gets
// here). The backends declare the defaults of their own options.
const (
	DefaultState    = Started
	DefaultHeatType = Native
	DefaultAPIPort  = 8006
	DefaultBindHost = "127.0.0.1"
	DefaultDatabase = SQLite
	DefaultTimeout  = 180 * time.Second
	// MaxTimeoutSeconds is the longest timeout accepted: a day.
	MaxTimeoutSeconds = 86400
)

// InstallHint says how to get Heat on Debian.
const InstallHint = native.InstallHint

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
	// RestoreUnverified lets restore_db load a dump that has no .sha256
	// (restore_verify: false); by default such a dump is refused.
	RestoreUnverified bool
	// NoDump: state=absent removes the database without dumping it first
	// (dump: false). By default absent dumps it, as heat_db_dump does, and
	// removes it only once the dump is verified, as TripleO does.
	NoDump    bool
	Timeout   time.Duration
	CheckMode bool
	// RestoreFrom is the dump restore_db loads ("" = the newest in HeatDir):
	// a file (ours, or tripleoclient's heat-db.sql-*.tar.bzip2, which is
	// copied into HeatDir first), or a directory standing for its newest
	// dump (a tripleoclient working dir). Giving it implies RestoreDB.
	RestoreFrom string
	// StopGrace is how long Heat gets to exit after SIGTERM (default 15 s).
	StopGrace time.Duration
	// LockWait is how long to wait for another launch, stop or restore on
	// the same heat_dir (default heatdir.DefaultLockWait).
	LockWait time.Duration
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

	// Backend holds the options of the backends by name (heat_all_command,
	// image, engine_workers ...: backend.Declaration.Options). With state
	// started, one that HeatType's backend does not use is refused, and
	// the declared defaults fill in those not given ("" or 0 is not given).
	Backend backend.Values

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
	// Dumped is the dump state=absent wrote (or found already holding the
	// database) before removing it.
	Dumped string
	// Reset lists the stacks an interruption had left IN_PROGRESS, which
	// Heat set to FAILED when it started.
	Reset []string
	// ObjectName names what runs Heat when not a host process: the pod or
	// container (heat_type container and pod; the module's podman_name).
	ObjectName string
	// Before and After are the heat_dir's Heat before and after a run
	// that changed it (in check mode, After is the prediction): the
	// module's diff.
	Before, After View
}

func (o *Options) defaults() {
	if o.RestoreFrom != "" {
		o.RestoreDB = true
	}
	if o.State == "" {
		o.State = DefaultState
	}
	if o.HeatType == "" {
		o.HeatType = DefaultHeatType
	}
	if o.APIPort == 0 {
		o.APIPort = DefaultAPIPort
	}
	if o.BindHost == "" {
		o.BindHost = DefaultBindHost
	}
	if o.Database == "" {
		o.Database = DefaultDatabase
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 15 * time.Second
	}
	if o.LockWait <= 0 {
		o.LockWait = heatdir.DefaultLockWait
	}
	if o.Warn == nil {
		o.Warn = func(string, ...any) {}
	}
	if o.Secret == nil {
		o.Secret = func(string) {}
	}
}

// validate checks the options every backend shares; it returns the heat_dir
// and the parsed database_url (nil when not given).
func (o *Options) validate() (heatdir.Dir, *heatdb.DB, error) {
	d, err := heatdir.At(o.HeatDir)
	if err != nil {
		return d, nil, err
	}
	if o.APIPort < 1 || o.APIPort > 65535 {
		return d, nil, fmt.Errorf("api_port is %d; it must be between 1 and 65535", o.APIPort)
	}
	if o.Timeout < time.Second || o.Timeout > MaxTimeoutSeconds*time.Second {
		return d, nil, fmt.Errorf("timeout is %s; it must be between 1 and %d seconds", o.Timeout, MaxTimeoutSeconds)
	}
	switch o.State {
	case Started, Stopped, Absent:
	default:
		return d, nil, fmt.Errorf("state %q is unknown; use started, stopped or absent", o.State)
	}
	decl, ok := declaration(o.HeatType)
	if !ok {
		return d, nil, fmt.Errorf("heat_type %q is unknown; use one of %s", o.HeatType, strings.Join(HeatTypes(), ", "))
	}
	var admin *heatdb.DB
	if o.DatabaseURL != "" {
		a, err := heatdb.ParseAdmin(o.DatabaseURL)
		if err != nil {
			return d, nil, fmt.Errorf("database_url %w", err)
		}
		o.Secret(a.Password)
		admin = &a
	}
	if o.State != Started {
		return d, admin, nil
	}
	if err := proc.CheckBindHost(o.BindHost); err != nil {
		return d, nil, err
	}
	if o.OwnerPID > 0 {
		if _, err := ownerRecord(o.OwnerPID); err != nil {
			return d, nil, fmt.Errorf("%v: give the pid of a live process (the ansible-playbook process), or 0", err)
		}
	}
	switch o.Database {
	case SQLite:
		if o.DatabaseURL != "" && !decl.OwnDatabaseServer {
			return d, nil, errors.New("database_url is only used with database: mysql; remove it or set database: mysql")
		}
	case MySQL:
		if o.DatabaseURL == "" && !decl.OwnDatabaseServer {
			return d, nil, errors.New("database: mysql needs database_url, the URL of an existing MySQL/MariaDB with a user allowed to create databases and users, e.g. mysql://root:PASSWORD@127.0.0.1:3306/")
		}
	default:
		return d, nil, fmt.Errorf("database %q is unknown; use sqlite or mysql", o.Database)
	}
	return d, admin, nil
}

// launcher is one run of the module on one heat_dir.
type launcher struct {
	o     *Options
	d     heatdir.Dir
	admin *heatdb.DB
	// decl, b and bspec are the requested backend, its instance and its
	// spec, checked (state started only).
	decl  backend.Declaration
	b     backend.Backend
	bspec *backend.Spec
}

// Run brings the heat_dir's Heat to the requested state. It refuses a
// heat_dir that is not safely ours (heatdir.Dir.Guard), and holds the
// heat_dir's lock for the whole run: a second caller waits for it.
func Run(ctx context.Context, o Options) (Outcome, error) {
	o.defaults()
	d, admin, err := o.validate()
	if err != nil {
		return Outcome{}, err
	}
	if err := d.Guard(); err != nil {
		return Outcome{HeatDir: o.HeatDir}, err
	}
	// Everything Heat and this module create may hold secrets.
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	l := &launcher{o: &o, d: d, admin: admin}
	if o.State == Started {
		// The backend's own options are checked before anything is
		// created (one of another heat_type, a heat_all_command that does
		// not exist, a bad image).
		l.decl, _ = declaration(o.HeatType)
		vals, err := backendValues(l.decl, o.Backend, true)
		if err != nil {
			return Outcome{HeatDir: o.HeatDir}, err
		}
		l.b, l.bspec = l.decl.New(), l.spec(o.HeatType, vals)
		if err := l.b.Check(l.bspec); err != nil {
			return Outcome{HeatDir: o.HeatDir}, err
		}
	}
	if !o.CheckMode && (o.State == Started || d.Exists()) {
		if _, err := d.Ensure(); err != nil {
			return Outcome{HeatDir: o.HeatDir}, err
		}
		lock, err := d.Lock(ctx, o.LockWait)
		if err != nil {
			return Outcome{HeatDir: o.HeatDir}, err
		}
		defer lock.Unlock()
	}
	if o.State == Started {
		return l.start(ctx)
	}
	return l.stop(ctx)
}

// spec is what a backend of heatType gets of the options; vals are its
// own (backendValues).
func (l *launcher) spec(heatType string, vals backend.Values) *backend.Spec {
	o := l.o
	return &backend.Spec{
		Dir: l.d, HeatType: heatType, BindHost: o.BindHost, APIPort: o.APIPort,
		Extra: tuning.Apply(o.ExtraConf, o.StockConf), AdminDB: l.admin, Options: vals,
		Timeout: o.Timeout, StopGrace: o.StopGrace, Warn: o.Warn, Secret: o.Secret,
	}
}

// recordedSpec is the spec of backend d (a record's, or the requested one
// with state stopped or absent): of the options given, those it uses.
func (l *launcher) recordedSpec(d backend.Declaration) *backend.Spec {
	vals, _ := backendValues(d, l.o.Backend, false)
	return l.spec(d.HeatType, vals)
}

// fingerprint identifies the requested configuration (after the backend
// filled its defaults): a running Heat with another fingerprint is
// restarted. Credentials made per launch, and options that do not change
// how Heat runs (backend.Option.NoRestart), are not part of it.
func (l *launcher) fingerprint(s *backend.Spec) string {
	opts := map[string]any{}
	for _, o := range l.decl.Options {
		if !o.NoRestart {
			opts[o.Name] = s.Options[o.Name]
		}
	}
	b, _ := json.Marshal(map[string]any{
		"heat_type": s.HeatType, "bind_host": s.BindHost, "api_port": s.APIPort, "database": l.o.Database,
		"database_url": l.o.DatabaseURL, "options": opts,
		"extra": s.Extra, // our tuning too: new defaults restart an old Heat
	})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (l *launcher) outcome(rec *heatdir.Record) Outcome {
	out := Outcome{Endpoint: rec.Endpoint, HeatDir: l.o.HeatDir, HeatType: rec.HeatType,
		CloudsYAML: l.d.File(heatdir.CloudsYAML), Database: rec.Database, DatabaseLocation: rec.DBLocation}
	if rec.Process != nil {
		out.PID = rec.Process.PID
	}
	if rec.Object != nil {
		out.ObjectName = rec.Object.Name
	}
	return out
}

// backendOf returns a backend for what a record names, and its spec (nil:
// unknown type).
func (l *launcher) backendOf(heatType string) (backend.Backend, *backend.Spec) {
	d, ok := declaration(heatType)
	if !ok {
		return nil, nil
	}
	return d.New(), l.recordedSpec(d)
}

func (l *launcher) start(ctx context.Context) (Outcome, error) {
	o := l.o
	b, spec := l.b, l.bspec
	fp := l.fingerprint(spec)
	rec, err := l.d.ReadRecord()
	if err != nil {
		return Outcome{}, err
	}
	prev, prevSpec := b, spec
	var before View
	if rec != nil {
		if rec.HeatType != o.HeatType {
			if prev, prevSpec = l.backendOf(rec.HeatType); prev == nil {
				return Outcome{}, fmt.Errorf("%s records heat_type %q, which this module does not know: stop that Heat by hand and remove the file",
					l.d.File(heatdir.RecordFile), rec.HeatType)
			}
		}
		alive, why := prev.Alive(ctx, prevSpec, rec)
		switch {
		case alive && rec.State == heatdir.Running && rec.HeatType == o.HeatType && rec.Fingerprint == fp && b.Ready(ctx, spec, rec) == nil:
			out := l.outcome(rec)
			out.Msg = fmt.Sprintf("Heat is already running in %s (%s) at %s", o.HeatDir, rec.Describe(), rec.Endpoint)
			if !o.CheckMode {
				if err := l.ensureWatchdog(rec); err != nil {
					return out, err
				}
			}
			return out, nil
		case alive && (rec.Fingerprint != fp || rec.HeatType != o.HeatType):
			o.Warn("the running Heat (%s) was started with other settings; restarting it with the requested ones", rec.Describe())
		case alive:
			o.Warn("the running Heat (%s) does not answer at %s; restarting it", rec.Describe(), rec.Endpoint)
		default:
			o.Warn("stale launch record in %s: %s; starting Heat afresh", o.HeatDir, why)
		}
		before = l.currentView(ctx, rec, alive)
	} else {
		before = l.idleView(ctx)
	}
	if o.CheckMode {
		msg := "Heat would be started in " + o.HeatDir
		if rec != nil {
			msg = "Heat would be (re)started in " + o.HeatDir
		}
		return Outcome{Changed: true, HeatDir: o.HeatDir, HeatType: o.HeatType, Msg: msg, Before: before, After: l.requestedView()}, nil
	}
	// Only what the previous launch's record names (after its identity
	// checks out), what carries its launch id, and (podman) the objects
	// labelled for this heat_dir.
	if rec != nil {
		if err := l.stopWatchdog(rec); err != nil {
			return Outcome{}, err
		}
		if err := prev.Remove(ctx, prevSpec, rec); err != nil {
			return Outcome{}, fmt.Errorf("stopping the previous Heat: %w", err)
		}
	}
	if prev != b || rec == nil {
		found, err := b.Find(ctx, spec, nil)
		if err != nil {
			return Outcome{}, err
		}
		if len(found) > 0 {
			o.Warn("found %s for %s without a launch record (a crashed run, or the record was removed): removing it",
				strings.Join(found, ", "), o.HeatDir)
			if err := b.Remove(ctx, spec, nil); err != nil {
				return Outcome{}, fmt.Errorf("removing what an earlier launch left: %w", err)
			}
		}
	}
	if err := l.d.RemoveRecord(); err != nil {
		return Outcome{}, err
	}
	out, err := l.launch(ctx, b, spec, fp)
	out.Before = before
	return out, err
}

// launch starts Heat afresh: the record first (it names the launch id that
// everything started carries), then the database, the configuration, the
// backend; it waits until Heat serves. A failure up to there leaves nothing
// running and no record.
func (l *launcher) launch(ctx context.Context, b backend.Backend, spec *backend.Spec, fp string) (Outcome, error) {
	o := l.o
	id, err := heatdir.NewLaunchID()
	if err != nil {
		return Outcome{}, err
	}
	spec.LaunchID = id
	cfg := heatdir.Config{Dir: l.d.Path(), BindHost: o.BindHost, APIPort: o.APIPort, Now: time.Now(),
		Extra: spec.Extra, PythonPath: l.d.File(heatdir.PythonDir)}
	rec := &heatdir.Record{State: heatdir.Starting, LaunchID: id, HeatType: o.HeatType, Fingerprint: fp,
		Endpoint: cfg.Endpoint(), BindHost: o.BindHost, APIPort: o.APIPort, StartedAt: time.Now().UTC()}
	if err := l.d.EnsureSub(heatdir.LogDir); err != nil {
		return Outcome{}, err
	}
	if err := l.d.WriteRecord(rec); err != nil {
		return Outcome{}, err
	}
	restored, err := l.startHeat(ctx, b, spec, &cfg, rec)
	if err != nil {
		// Nothing of a failed launch survives it.
		if rerr := b.Remove(context.WithoutCancel(ctx), spec, rec); rerr != nil {
			o.Warn("removing what the failed launch started: %v", rerr)
		}
		if rerr := l.d.RemoveRecord(); rerr != nil {
			o.Warn("%v", rerr)
		}
		return Outcome{}, err
	}
	out := l.outcome(rec)
	out.Changed = true
	out.After = runningView(rec)
	out.Msg = fmt.Sprintf("Heat started in %s (%s) at %s", o.HeatDir, rec.Describe(), rec.Endpoint)
	// Heat runs from here on: what fails now is reported with it running.
	if err := l.ensureWatchdog(rec); err != nil {
		return out, err
	}
	reset, err := l.settle(ctx, rec)
	for _, s := range reset {
		out.Reset = append(out.Reset, s.Name)
	}
	if len(reset) > 0 {
		out.Msg += fmt.Sprintf("; Heat set %d stack(s) that an interruption had left IN_PROGRESS to FAILED", len(reset))
	}
	if err != nil {
		return out, err
	}
	if restored != nil {
		if err := l.checkRestoredStacks(ctx, rec.Endpoint, restored.Stacks); err != nil {
			return out, fmt.Errorf("restore_db: Heat runs on the restored database, but %w", err)
		}
		out.Restored = restored.Path
		out.Msg += "; database restored from " + restored.Path
	}
	return out, nil
}

// startHeat prepares the database and the configuration, has the backend
// start Heat, records it and waits until it serves.
func (l *launcher) startHeat(ctx context.Context, b backend.Backend, spec *backend.Spec, cfg *heatdir.Config, rec *heatdir.Record) (*dumps.Result, error) {
	o := l.o
	// A Heat that just stopped may hold its socket for a moment longer.
	if !proc.WaitPortFree(o.BindHost, o.APIPort, 5*time.Second) {
		return nil, proc.PortInUse(o.BindHost, o.APIPort)
	}
	if ip := strings.Trim(o.BindHost, "[]"); ip != "127.0.0.1" && ip != "::1" && ip != "localhost" {
		o.Warn("the Heat API has no authentication and is bound to %s: anyone who can reach that address controls it", o.BindHost)
	}
	// database_url's server, or the backend's own database.
	lc := b.Database()
	if l.admin != nil {
		lc = provisioned{l}
	}
	if err := lc.Create(ctx, spec, cfg, rec); err != nil {
		return nil, err
	}
	if err := b.Configure(ctx, spec, cfg, rec); err != nil {
		return nil, err
	}
	if err := l.d.WriteConfig(*cfg); err != nil {
		return nil, err
	}
	var restored *dumps.Result
	var restore func(context.Context) error
	if o.RestoreDB {
		restore = func(ctx context.Context) error {
			r, err := dumps.Restore(ctx, dumps.RestoreOptions{HeatDir: l.d, Dump: o.RestoreFrom, AllowUnverified: o.RestoreUnverified,
				Warn: o.Warn, Secret: o.Secret})
			if err != nil {
				return fmt.Errorf("restore_db: %w", err)
			}
			restored = &r
			return nil
		}
	}
	if err := b.Start(ctx, spec, rec, restore); err != nil {
		return nil, err
	}
	if err := identified(l.decl, rec); err != nil {
		return nil, err
	}
	rec.State = heatdir.Running
	if err := l.d.WriteRecord(rec); err != nil {
		return nil, err
	}
	return restored, l.waitReady(ctx, b, spec, rec)
}

// waitReady waits until the backend says Heat serves, up to the timeout.
func (l *launcher) waitReady(ctx context.Context, b backend.Backend, spec *backend.Spec, rec *heatdir.Record) error {
	o := l.o
	deadline := time.Now().Add(o.Timeout)
	for {
		err := b.Ready(ctx, spec, rec)
		if err == nil {
			return nil
		}
		if !errors.Is(err, backend.ErrNotReady) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Heat did not answer at %s within %s (%v; raise timeout if this host is slow); %s",
				rec.Endpoint, o.Timeout, err, strings.TrimPrefix(b.Logs(ctx, spec, rec), "; "))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for Heat: %w", ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (l *launcher) stop(ctx context.Context) (Outcome, error) {
	o := l.o
	out := Outcome{HeatDir: o.HeatDir, HeatType: o.HeatType}
	rec, err := l.d.ReadRecord()
	if err != nil {
		return out, err
	}
	heatType := o.HeatType
	if rec != nil {
		heatType = rec.HeatType
		out = l.outcome(rec)
	}
	b, spec := l.backendOf(heatType)
	if b == nil {
		return out, fmt.Errorf("%s records heat_type %q, which this module does not know: stop that Heat by hand and remove the file",
			l.d.File(heatdir.RecordFile), heatType)
	}
	alive := false
	if rec != nil {
		var why string
		if alive, why = b.Alive(ctx, spec, rec); !alive {
			o.Warn("stale launch record in %s: %s", o.HeatDir, why)
		}
	}
	found, err := b.Find(ctx, spec, rec)
	if err != nil {
		return out, err
	}
	var dbItems []string
	if o.State == Absent {
		dbItems = l.database().Live(ctx, l.d)
	}
	if len(found) == 0 && rec == nil && len(dbItems) == 0 {
		out.Msg = "no Heat is running for " + o.HeatDir
		return out, nil
	}
	out.Changed = true
	out.Before = l.currentView(ctx, rec, alive)
	if o.CheckMode {
		out.After = l.stoppedView(out.Before)
		out.Msg = "Heat would be stopped in " + o.HeatDir
		if len(dbItems) > 0 && !o.NoDump {
			out.Msg += "; its database dumped into it, then removed"
		}
		out.Removed = dbItems
		return out, nil
	}
	if err := l.stopWatchdog(rec); err != nil {
		return out, err
	}
	if len(dbItems) > 0 && !o.NoDump {
		r, dumped, err := l.dumpAndWipe(ctx, b, spec, rec, "state=absent")
		if err != nil {
			return out, err
		}
		if dumped {
			out.Dumped = r.Path
			out.Removed = append(out.Removed, r.Removed...)
		}
	}
	if err := b.Remove(ctx, spec, rec); err != nil {
		return out, fmt.Errorf("stopping Heat: %w", err)
	}
	if err := l.d.RemoveRecord(); err != nil {
		return out, err
	}
	if rec != nil && !proc.WaitPortFree(rec.BindHost, rec.APIPort, 10*time.Second) {
		o.Warn("api_port %d is still in use after Heat stopped: %v", rec.APIPort, proc.PortInUse(rec.BindHost, rec.APIPort))
	}
	out.Msg = "Heat stopped in " + o.HeatDir
	if len(found) == 0 {
		out.Msg = "no Heat was running for " + o.HeatDir
	}
	if o.State == Absent {
		removed, err := l.database().Teardown(ctx, l.d, o.Warn)
		out.Removed = append(out.Removed, removed...)
		if err != nil {
			return out, err
		}
		out.Msg += "; its database removed"
		if out.Dumped != "" {
			out.Msg += " after it was dumped to " + out.Dumped
		}
	}
	out.PID = 0
	out.After = l.idleView(ctx)
	return out, nil
}

// dumpAndWipe dumps the database heat.conf names (verified and rotated, as
// heat_db_dump does) and, only once the dump is verified, stops Heat's own
// services (rec's, if any; a pod keeps its MariaDB serving) so nothing
// writes to the database, and drops it. A database without data (or whose
// account a wipe already dropped) is not dumped (dumped is false). One
// that cannot be read is not removed: the error says why and what to do.
// why names the caller in messages (state=absent, the watchdog).
func (l *launcher) dumpAndWipe(ctx context.Context, b backend.Backend, spec *backend.Spec, rec *heatdir.Record, why string) (dumps.Result, bool, error) {
	db, err := l.d.Database()
	if err != nil {
		return dumps.Result{}, false, nil // no heat.conf: nothing of ours to dump
	}
	has, err := heatdb.HasData(ctx, db.DB)
	switch {
	case errors.Is(err, heatdb.ErrNoAccess):
		return dumps.Result{}, false, nil
	case err != nil:
		return dumps.Result{}, false, fmt.Errorf("%s dumps the database before removing it, and cannot read it: %w; "+
			"nothing was removed. Start Heat (state: started) and run this again, or give dump: false to remove it without a dump", why, err)
	case !has:
		return dumps.Result{}, false, nil
	}
	r, err := dumps.Dump(ctx, dumps.DumpOptions{HeatDir: l.d, Keep: DefaultKeep, Wipe: true, Warn: l.o.Warn, Secret: l.o.Secret,
		WipeFunc: func(c context.Context) ([]string, error) {
			if rec != nil {
				if err := b.StopHeat(c, spec, rec); err != nil {
					return nil, err
				}
			}
			return l.database().Drop(c, l.d, l.o.Warn)
		}})
	if err != nil {
		return r, false, fmt.Errorf("%s dumps the database before removing it, and the dump failed: %w; the database was kept. "+
			"Fix the cause and run this again, or give dump: false to remove it without a dump", why, err)
	}
	return r, true, nil
}

// DefaultKeep is how many older dumps a teardown's dump keeps (as
// heat_db_dump's keep).
const DefaultKeep = 5
