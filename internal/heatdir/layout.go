// Package heatdir is the heat_dir of an ephemeral Heat, and the only code
// that knows its layout: the names and modes of what it holds, the
// configuration Heat reads there (heat.conf and the files beside it; this
// package alone reads and writes heat.conf's [database]), the launch record
// (one versioned type, one decoder), and the guards that keep it ours: a
// heat_dir (or a parent created for it) that is a symlink, is owned by
// another user or is writable by others is refused, and an exclusive lock
// serialises the launches, stops and restores that change it.
//
// What a heat_dir holds (files 0600, directories 0700):
//
//	.ephemeral-heat         the marker: this heat_dir is ours (pathguard.Marker)
//	heat.conf api-paste.ini token_file.json clouds.yaml heatrc   configuration (conf.go)
//	python/                 our SQLAlchemy plugin, on Heat's PYTHONPATH (python.go)
//	launch.json             the launch record (record.go)
//	launch.lock             the lock of launches, stops and restores (lock.go)
//	log/                    Heat's logs, the launcher's and the watchdog's (the
//	                        overcloud_stack role adds heat_stack's progress log and
//	                        async/, its background job's result, by its defaults)
//	heat.sqlite             the sqlite database (database: sqlite)
//	heat-pod.yaml mariadb-init.sql rabbitmq.conf mysql/ run/   a pod (heat_type pod)
//	heat-db-*.sql[.gz] (+ .sha256, .manifest.json)   dumps (package dumps names them)
package heatdir

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// Names inside a heat_dir.
const (
	HeatConf   = "heat.conf"
	APIPaste   = "api-paste.ini"
	TokenFile  = "token_file.json"
	CloudsYAML = "clouds.yaml"
	HeatRC     = "heatrc"
	// PythonDir is the directory heat-all and heat-manage get on their
	// PYTHONPATH: it holds our SQLAlchemy plugin (python.go).
	PythonDir  = "python"
	LogDir     = "log"
	RecordFile = "launch.json"
	LockFile   = "launch.lock"
	SQLiteFile = "heat.sqlite"
	// A pod's spec, the init file (credentials) of its own MariaDB, its
	// RabbitMQ's configuration, the MariaDB datadir, and the directory of
	// the markers its containers wait on.
	PodYAML     = "heat-pod.yaml"
	MariaDBInit = "mariadb-init.sql"
	RabbitConf  = "rabbitmq.conf"
	MariaDBDir  = "mysql"
	RunDir      = "run"
	// DBSyncDone, in RunDir, tells heat-api that heat-engine's db_sync is done.
	DBSyncDone = "db_sync.done"
	// RestorePending, in RunDir, holds heat-engine back while the launcher
	// restores a dump into the pod's MariaDB.
	RestorePending = "restore.pending"
	// WatchdogLog, in LogDir, is the watchdog's log.
	WatchdogLog = "watchdog.log"
)

// Modes of everything in a heat_dir: it holds secrets.
const (
	DirMode  = fsutil.PrivateDirMode
	FileMode = fsutil.SecretFileMode
)

// Dir is a heat_dir: an absolute, clean path. At makes one without touching
// the file system; Guard and Ensure check (and create) it.
type Dir struct{ root string }

// At names the heat_dir at path, which must be absolute.
func At(path string) (Dir, error) {
	if path == "" {
		return Dir{}, errors.New("heat_dir is required")
	}
	if !filepath.IsAbs(path) {
		return Dir{}, fmt.Errorf("heat_dir must be an absolute path, got %q", path)
	}
	return Dir{root: filepath.Clean(path)}, nil
}

// Path is the heat_dir itself.
func (d Dir) Path() string { return d.root }

// String is the heat_dir's path.
func (d Dir) String() string { return d.root }

// File is the path of name (slash-separated) inside the heat_dir.
func (d Dir) File(name string) string { return filepath.Join(d.root, filepath.FromSlash(name)) }

// Log is the path of a log file in LogDir.
func (d Dir) Log(name string) string { return filepath.Join(d.root, LogDir, name) }

// Run is the path of a marker in RunDir.
func (d Dir) Run(name string) string { return filepath.Join(d.root, RunDir, name) }

// StdoutLog is the name, in LogDir, of what a service prints.
func StdoutLog(service string) string { return service + ".stdout.log" }

// ServiceLog is the name, in LogDir, of the log a Heat service (or MariaDB,
// RabbitMQ) writes itself.
func ServiceLog(service string) string { return service + ".log" }
