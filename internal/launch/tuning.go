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
		Name:  "max_resources_per_stack_unlimited",
		Title: "[DEFAULT] max_resources_per_stack = -1",
		Conf:  map[string]map[string]string{"DEFAULT": {"max_resources_per_stack": "-1"}},
		What: "Heat no longer counts every resource of the whole stack tree (queries over all nested stacks) " +
			"each time a nested stack is created or updated, to enforce its 1000-resource limit. TripleO's own " +
			"undercloud Heat sets the same. Cost: no limit on the size of one stack tree; a single-user, " +
			"ephemeral Heat protects nobody with it.",
		Effect: EffectCreate,
	},
	{
		Name:  "max_events_per_stack_unlimited",
		Title: "[DEFAULT] max_events_per_stack = 0",
		Conf:  map[string]map[string]string{"DEFAULT": {"max_events_per_stack": "0"}},
		What: "Heat keeps every event instead of checking, on a random share of event writes, whether a stack " +
			"has more than 1000 and purging the oldest. Cost: none for a Heat that lives for one deploy; a stack " +
			"with more than 1000 events keeps them all in the database and its dump.",
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
