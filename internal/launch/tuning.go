package launch

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

// tuningSettings are our defaults. Only settings that keep updates,
// deletes, failures, nested stacks and the restore of a dump working.
var tuningSettings = []Setting{
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
		Name:   "graceful_shutdown_timeout",
		Title:  "[DEFAULT] graceful_shutdown_timeout = 3",
		Conf:   map[string]map[string]string{"DEFAULT": {"graceful_shutdown_timeout": "3"}},
		What:   "heat-all exits within seconds of SIGTERM instead of oslo.service's 60 s default (the launcher would kill it after its own grace). Cost: none for a stopped-by-us Heat; work in flight is cut after 3 s either way.",
		Effect: EffectStop,
	},
}

// tuning is every setting of tuningSettings merged.
var tuning = func() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, s := range tuningSettings {
		for sec, kv := range s.Conf {
			if out[sec] == nil {
				out[sec] = map[string]string{}
			}
			for k, v := range kv {
				out[sec][k] = v
			}
		}
	}
	return out
}()

// TuningSettings returns a copy of our default settings, for benchmarks.
func TuningSettings() []Setting {
	out := make([]Setting, len(tuningSettings))
	for i, s := range tuningSettings {
		s.Conf = copyConf(s.Conf)
		out[i] = s
	}
	return out
}

// Tuning returns our default heat.conf changes merged (a copy).
func Tuning() map[string]map[string]string { return copyConf(tuning) }

func copyConf(m map[string]map[string]string) map[string]map[string]string {
	out := make(map[string]map[string]string, len(m))
	for s, kv := range m {
		out[s] = make(map[string]string, len(kv))
		for k, v := range kv {
			out[s][k] = v
		}
	}
	return out
}

// mergedExtra is our tuning (unless StockConf) plus the caller's extra settings.
func (o *Options) mergedExtra() map[string]map[string]string {
	out := map[string]map[string]string{}
	add := func(m map[string]map[string]string) {
		for s, kv := range m {
			if out[s] == nil {
				out[s] = map[string]string{}
			}
			for k, v := range kv {
				out[s][k] = v
			}
		}
	}
	if !o.StockConf {
		add(tuning)
	}
	add(o.ExtraConf)
	return out
}
