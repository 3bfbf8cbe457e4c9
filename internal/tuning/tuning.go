// Package tuning holds our heat.conf departures from TripleO's stock
// ephemeral one, for a short-lived, single-user, no-auth Heat: each setting
// with what it changes, what it costs and what it is measured on. The
// native, container and pod launchers all apply them; make bench measures
// each alone (bench/results.md).
package tuning

import "github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"

// What a tuning setting is measured on (bench/results.md).
const (
	// EffectCreate: stack create time (scale test (b)).
	EffectCreate = "create"
	// EffectStop: the time state=stopped/absent takes.
	EffectStop = "stop"
)

// Setting is one choice of our heat.conf against TripleO's stock ephemeral
// one, for a short-lived, single-user, no-auth, single-process Heat. Each
// is measured alone and explained in bench/results.md (make bench).
type Setting struct {
	Name  string // stable, for benchmark row names
	Title string // the heat.conf keys, for humans
	Conf  map[string]map[string]string
	// What it changes and what it costs in behaviour.
	What   string
	Effect string
}

// settings are our defaults. Only settings that keep updates,
// deletes, failures, nested stacks and the restore of a dump working.
var settings = []Setting{
	{
		Name:  "legacy_engine",
		Title: "[DEFAULT] convergence_engine = false",
		Conf:  map[string]map[string]string{"DEFAULT": {"convergence_engine": "false"}},
		What: "New stacks use Heat's legacy (in-memory) engine: one greenthread walks the dependency graph " +
			"instead of a check_resource RPC message, a sync point row and a stack reload per resource. " +
			"Cost: an update of a stack that is still IN_PROGRESS is refused (convergence accepts it); " +
			"an interrupted legacy stack is reset to FAILED when Heat starts again. The engine mode is stored " +
			"per stack, so stacks created by convergence (e.g. restored from a TripleO dump) keep using it.",
		Effect: EffectCreate,
	},
	{
		Name:  "sqlite_synchronous_off",
		Title: "[database] sqlite_synchronous = false",
		Conf:  map[string]map[string]string{"database": {"sqlite_synchronous": "false"}},
		What: "oslo.db opens every sqlite connection with PRAGMA synchronous=OFF: a commit no longer waits for " +
			"fsync of the journal and the database (Heat commits a few thousand times for 50 nodes, and the disk " +
			"is shared). Cost: none while the machine stays up (a killed heat-all loses nothing: the data is in the " +
			"OS page cache); a power loss or kernel crash during a deploy may corrupt the live database, which is " +
			"then replaced from the last dump (restore_db). MySQL databases are not affected.",
		Effect: EffectCreate,
	},
	{
		Name:  "sqlite_pool",
		Title: "[database] connection_parameters = plugin=" + heatdir.SQLitePoolPlugin,
		Conf:  map[string]map[string]string{"database": {"connection_parameters": "plugin=" + heatdir.SQLitePoolPlugin}},
		What: "A SQLAlchemy engine plugin of ours (" + heatdir.PythonDir + "/" + heatdir.SQLitePoolPlugin + ".py in the heat_dir, " +
			"on heat-all's and heat-manage's PYTHONPATH) gives the sqlite file database a connection pool (QueuePool, " +
			"5 kept, no overflow limit) instead of SQLAlchemy 1.4's NullPool, which opens and closes a sqlite connection " +
			"(PRAGMAs, oslo.db's ping, a parse of the schema) for every database session, thousands per deploy. " +
			"SQLAlchemy 2.0 pools sqlite files the same way by default. Cost: up to 5 idle connections stay open; they " +
			"hold no locks (autocommit mode, rolled back on return to the pool). heat-manage run by hand on this heat.conf " +
			"needs the same PYTHONPATH (`. heatrc` sets it). Other databases are left alone.",
		Effect: EffectCreate,
	},
	{
		Name:   "graceful_shutdown_timeout",
		Title:  "[DEFAULT] graceful_shutdown_timeout = 3",
		Conf:   map[string]map[string]string{"DEFAULT": {"graceful_shutdown_timeout": "3"}},
		What:   "heat-all exits within seconds of SIGTERM instead of oslo.service's 60 s default (the launcher would kill it after its own grace). Cost: none for a stopped-by-us Heat; work in flight is cut after 3 s either way.",
		Effect: EffectStop,
	},
}

// Settings returns a copy of our default settings, for benchmarks.
func Settings() []Setting {
	out := make([]Setting, len(settings))
	for i, s := range settings {
		s.Conf = Merge(nil, s.Conf)
		out[i] = s
	}
	return out
}

// Merged returns every setting of ours merged (a copy).
func Merged() map[string]map[string]string {
	var out map[string]map[string]string
	for _, s := range settings {
		out = Merge(out, s.Conf)
	}
	return out
}

// Apply returns our settings (none with stock, TripleO's stock heat.conf)
// with extra merged over them: what a launcher adds to heat.conf.
func Apply(extra map[string]map[string]string, stock bool) map[string]map[string]string {
	var out map[string]map[string]string
	if !stock {
		out = Merged()
	}
	return Merge(out, extra)
}

// Merge copies src's settings over dst (allocated when nil) and returns it.
func Merge(dst, src map[string]map[string]string) map[string]map[string]string {
	if dst == nil {
		dst = map[string]map[string]string{}
	}
	for sec, kv := range src {
		if dst[sec] == nil {
			dst[sec] = map[string]string{}
		}
		for k, v := range kv {
			dst[sec][k] = v
		}
	}
	return dst
}
