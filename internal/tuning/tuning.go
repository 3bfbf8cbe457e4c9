// Package tuning holds our heat.conf departures from TripleO's stock
// ephemeral one, for a short-lived, single-user, no-auth Heat: each setting
// with what it changes, what it costs and what it is measured on. The
// native, container and pod launchers all apply them; make bench measures
// each alone (bench/results.md).
package tuning

import (
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
)

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
		Title: "[DEFAULT] convergence_engine = false, [database] connection_parameters = plugin=" + heatdir.LegacyUpdateOutputsPlugin,
		Conf: map[string]map[string]string{
			"DEFAULT":  {"convergence_engine": "false"},
			"database": {"connection_parameters": "plugin=" + heatdir.LegacyUpdateOutputsPlugin},
		},
		What: "New stacks use Heat's legacy (in-memory) engine: one greenthread walks the dependency graph " +
			"instead of a check_resource RPC message, a sync point row and a stack reload per resource. " +
			"It comes with a fix of ours (engine plugin " + heatdir.LegacyUpdateOutputsPlugin + "): Heat 19's legacy update " +
			"keeps a nested stack's outputs as they were before updating it, so an edit that changes only a nested " +
			"template's content never reaches the parents' get_attr values; the plugin makes the update read them anew. " +
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
		Name:  "task_wakeup",
		Title: "[database] connection_parameters = plugin=" + heatdir.TaskWakeupPlugin,
		Conf:  map[string]map[string]string{"database": {"connection_parameters": "plugin=" + heatdir.TaskWakeupPlugin}},
		What: "The legacy engine steps each stack operation and then sleeps 1 s (scheduler.TaskRunner, hard-coded): a resource " +
			"that completes in one step still costs a step, so every link of a dependency chain costs a second, and a parent stack " +
			"notices a finished nested stack only at its next step, at every level of nesting. Our engine plugin (" + heatdir.PythonDir + "/" +
			heatdir.EngineModule + ".py) ends a stack's step sleep early: at once when the previous step changed the state of one of " +
			"its resources or took resources off the dependency graph it walks (an update's cleanup of its backup stack, resources an " +
			"update leaves unchanged: a second per layer of them, at every updated stack, before), and as soon as one of its nested " +
			"stacks has stored its final state and released its lock; otherwise after " +
			"Heat's own second. What a step does, timeouts and cancellation are Heat's code, unchanged. It checks Heat's internals " +
			"first (Heat 19) and, if they differ, logs a warning once and leaves Heat unchanged. Cost: more steps (each polls the " +
			"stack's running resources in the database), only when something changed; with several engine processes (pod) a nested " +
			"stack may finish in another process, and its parent then waits for Heat's own second as before.",
		Effect: EffectCreate,
	},
	{
		Name:  "nested_unchanged",
		Title: "[database] connection_parameters = plugin=" + heatdir.NestedUnchangedPlugin,
		Conf:  map[string]map[string]string{"database": {"connection_parameters": "plugin=" + heatdir.NestedUnchangedPlugin}},
		What: "The legacy engine updates every nested stack of a stack it updates, even one whose inputs are unchanged, and every " +
			"stack below it. ResourceGroup's batch_create (tripleo-heat-templates' role groups, NodeCreateBatchSize 30) creates " +
			"members a batch at a time, each batch an update of the group: every batch updated all earlier members with their " +
			"whole subtrees, so the create of N nodes grew as N². Our engine plugin ends a nested stack's update before it starts " +
			"when Heat's stored state says it has these inputs already: the nested stack is CREATE or UPDATE_COMPLETE and unlocked, " +
			"its stored template, environment, files and timeout equal what the update would send, and no resource of the whole " +
			"stack tree is FAILED (a failed or marked-unhealthy one is still reached, as Heat would). On sqlite that last question " +
			"is answered from a partial index of the FAILED resources (" + heatdir.FailedIndex + ", created when heat-all opens " +
			"the database) instead of a read of every resource of the tree. Legacy engine only. Cost: " +
			"such a nested stack keeps its CREATE_COMPLETE state and updated time (its resource in the parent goes UPDATE_COMPLETE " +
			"as before); a resource inside it whose real state changed without Heat knowing (nothing in an ephemeral Heat) is not " +
			"looked at again, as for any unchanged resource; the index holds only failed resources, and a dump carries it (a " +
			"stock Heat ignores it).",
		Effect: EffectCreate,
	},
	{
		Name:  "provider_unchanged",
		Title: "[database] connection_parameters = plugin=" + heatdir.ProviderUnchangedPlugin,
		Conf:  map[string]map[string]string{"database": {"connection_parameters": "plugin=" + heatdir.ProviderUnchangedPlugin}},
		What: "With nested_unchanged the nested stack is spared, but the legacy update still takes its provider-template resource " +
			"(each member of THT's role groups, each OS::TripleO::* resource) through UPDATE_IN_PROGRESS and UPDATE_COMPLETE, and " +
			"then stores the whole stack's template and its backup's again, each with the environment and its per-node maps: at " +
			"every batch_create batch, for every earlier member, at a cost that grows with the node count. Our engine plugin " +
			"decides with Heat's own checks that such a resource needs no update: COMPLETE, not external, no hook or restricted " +
			"action, Heat's base _needs_update finds its resolved definition and properties unchanged, and its nested stack has " +
			"exactly the inputs the update would send (nested_unchanged's check, from the database). Then it does what Heat does " +
			"after an update that changed nothing, without the state changes, the events and the template stores that would " +
			"write the same rows again. Legacy engine only; any other case is Heat's own code. Cost: such a resource keeps its " +
			"state and updated time, and no UPDATE events are written for it.",
		Effect: EffectCreate,
	},
	{
		Name:  "static_dep_attrs",
		Title: "[database] connection_parameters = plugin=" + heatdir.StaticDepAttrsPlugin,
		Conf:  map[string]map[string]string{"database": {"connection_parameters": "plugin=" + heatdir.StaticDepAttrsPlugin}},
		What: "As each resource of a stack completes, Heat's legacy engine stores its data in the stack's definition and drops " +
			"the memo of referenced attributes of every resource and output definition that names it, in case a get_attr's " +
			"resource name or attribute path is computed from resource data. A ResourceGroup's outputs name every member, so " +
			"after each member all of the group's outputs are walked again: a group costs the square of its size (188 s of a " +
			"Compute 500 create). Our engine plugin keeps the memo of a definition whose get_attr functions all have plain " +
			"resource names, attributes and paths, and whose other functions take their attributes from their arguments only " +
			"(Heat's defaults); any other definition is cleared as Heat does. Checked against Heat's code first, else one " +
			"warning and no change. Cost: a walk of each definition once, when it is first kept.",
		Effect: EffectCreate,
	},
	{
		Name:  "template_store",
		Title: "[database] connection_parameters = plugin=" + heatdir.TemplateStorePlugin,
		Conf:  map[string]map[string]string{"database": {"connection_parameters": "plugin=" + heatdir.TemplateStorePlugin}},
		What: "Heat stores a template already in the database by reading its row back (template and environment decoded), " +
			"comparing, writing what differs and building an object it drops. The legacy update stores a stack's template and " +
			"its backup's after each new or updated resource, and a ResourceGroup's template carries every member's resolved " +
			"properties (3.2 MB at Compute 200): two reads of a template that grows with the group, per member. On sqlite, " +
			"where heat-all is the only writer, our engine plugin remembers the JSON text (Heat's encoding) of what Heat last " +
			"stored in each row through it, and writes only the columns whose text differs, reading nothing; a row it has not " +
			"seen stored, a store inside an open transaction or overlapping another of the same row, and a row written or " +
			"deleted by another path go to Heat's code. The text is put together from the previous store's pieces where an entry " +
			"of a section (a resource, an output, a parameter default) is unchanged, by exact value and type (its marshal bytes), " +
			"so the group's template is not encoded whole after each member. MySQL (several engines) leaves it off. Cost: the " +
			"last stored text of each template row and its pieces are kept in heat-all's memory (128 MB at most; when full, the " +
			"rows stored longest ago are forgotten first, so the group's rows, stored at every member, stay known).",
		Effect: EffectCreate,
	},
	{
		Name:  "env_copy",
		Title: "[database] connection_parameters = plugin=" + heatdir.EnvCopyPlugin,
		Conf:  map[string]map[string]string{"database": {"connection_parameters": "plugin=" + heatdir.EnvCopyPlugin}},
		What: "Every load of a stack copies its stored environment with copy.deepcopy (RawTemplate.from_db_object), and " +
			"tripleo-heat-templates' environment carries the per-node maps of parameter_defaults (HostnameMap, " +
			"DeployedServerPortMap, ...) into each of the ~10 nested stacks a node adds: these copies grow as the square of the " +
			"node count. The environment is JSON read from the database; our engine plugin copies it with a pickle round trip " +
			"(the same values and sharing, done in C, about 4 times faster on THT's environment) and leaves anything pickle " +
			"cannot copy to copy.deepcopy. Checked against Heat's code first, else one warning and no change. Cost: none measured.",
		Effect: EffectCreate,
	},
	{
		Name:  "gc_pace",
		Title: "[database] connection_parameters = plugin=" + heatdir.GCPacePlugin,
		Conf:  map[string]map[string]string{"database": {"connection_parameters": "plugin=" + heatdir.GCPacePlugin}},
		What: "Python runs a full garbage collection when the objects promoted to its oldest generation reach a quarter of " +
			"those it holds, and each walks heat-all's whole heap, which grows with the deploy: at Compute 500 (1 GB) full " +
			"collections took 0.5 s to 1.1 s each, 13.5 % of the create, and each freed about 28,000 objects. Our engine " +
			"plugin paces them by time: after a full collection that took 50 ms or more, the next waits until full collections " +
			"have had at most 5 % of the time since (19 times its duration, 60 s at most), then Python's own rule decides again; " +
			"young collections and an explicit gc.collect() are left alone, and a collector disabled in the process stays so. " +
			"Measured: Compute 200 created in 275.4 s and Compute 500 in 1,089.6 s with it (303.4 s and 1,153.8 s the evening " +
			"before without it, one run each; the spread between runs is about 10 %). Cost: cyclic garbage lives up to that hold " +
			"longer (peak RSS at Compute 500 1,177 MB with it, 1,183 MB without), and a collection held at the end of one " +
			"operation can land in the next one of the same heat-all.",
		Effect: EffectCreate,
	},
	{
		Name:  "yaql_cache",
		Title: "[database] connection_parameters = plugin=" + heatdir.YaqlCachePlugin,
		Conf:  map[string]map[string]string{"database": {"connection_parameters": "plugin=" + heatdir.YaqlCachePlugin}},
		What: "Heat's yaql function parses its expression at every validate and result and evaluates it at every result; " +
			"the Compute 2 create of tripleo-heat-templates evaluates 59 yaql expressions (most once per role's service chain) " +
			"944 times over data of up to 0.5 MB, on 193 distinct pairs of expression and data: a stack's outputs are resolved, " +
			"then its parent's show resolves them again. Our engine plugin keeps " +
			"each parsed expression, and each result by expression and data, the data compared by their marshal bytes (equal " +
			"bytes: equal values of the same exact types in the same order; a type marshal refuses is not cached), and returns a " +
			"fresh copy on a hit; an expression that names now, random or call (which can reach either by name), and an evaluation that raises, go to Heat's code each " +
			"time. Checked against Heat's code first, else one warning and no change. Measured: the Compute 2 create under " +
			"bench/profile 38.8 s with it, 44.7 s without (medians of 7 and 6 runs, mostly alternating, 2026-11-28). Cost: up to 64 MB of kept " +
			"results in each engine process (least recently used go first) and 4,096 parsed expressions.",
		Effect: EffectCreate,
	},
	{
		Name:  "root_id_cache",
		Title: "[database] connection_parameters = plugin=" + heatdir.RootIDCachePlugin,
		Conf:  map[string]map[string]string{"database": {"connection_parameters": "plugin=" + heatdir.RootIDCachePlugin}},
		What: "Before a resource is first stored, Heat asks for the root of its stack, and the database answers by reading " +
			"the stack's owner row, then that one's owner, up to the top: one SELECT per level for every resource created " +
			"in a nested stack (555 questions, about 1,500 statements, in the Compute 2 create of tripleo-heat-templates, more " +
			"with each node). A stack's owner never changes and stack ids are not reused, so our engine plugin keeps each root " +
			"found, by stack id and the asker's project and admin flag (None, a stack the asker may not see, is asked again). " +
			"Checked against Heat's code first, else one warning and no change. Nothing can go stale, so it holds for a pod's " +
			"engines too. Measured under bench/profile: 1,090 of 21,400 statements fewer at Compute 2 (time within the noise) " +
			"and 2,620 of 50,600 at Compute 50, whose create took 2.2 s less in each of two pairs (54.9 and 65.1 s against " +
			"56.7 and 67.6 s, 2026-11-28). Cost: one dict entry per stack asked about (cleared at 200,000).",
		Effect: EffectCreate,
	},
	{
		Name:  "lazy_defn_hash",
		Title: "[database] connection_parameters = plugin=" + heatdir.LazyDefnHashPlugin,
		Conf:  map[string]map[string]string{"database": {"connection_parameters": "plugin=" + heatdir.LazyDefnHashPlugin}},
		What: "Heat hashes every resource definition's properties, metadata and policies when it builds the definition (a " +
			"walk of each snippet, every function in it deep-copied), and builds definitions at every parse of a template: " +
			"each load of a stack, each freeze. It asks for the hash only where it puts definitions in a set (a stack's " +
			"validation). A ResourceGroup's nested stack builds a definition of every member at each load, and batch_create " +
			"loads it at each batch, so the hashing grows faster than the node count (8.5 s at Compute 100, 24.2 s at Compute " +
			"200 under cProfile, for 8,707 and 17,399 definitions of which 2,934 and 4,984 were hashed). Our engine plugin " +
			"computes the same value, with Heat's own function on the same arguments, when the hash is first asked for: " +
			"at Compute 200 under cProfile the hashing took 5.6 s with it against 24.0 s without (2026-11-28). Checked against " +
			"Heat's code first, else one warning and no change. Cost: a tuple per definition until its hash.",
		Effect: EffectCreate,
	},
	{
		Name:  "show_cache",
		Title: "[database] connection_parameters = plugin=" + heatdir.ShowCachePlugin,
		Conf:  map[string]map[string]string{"database": {"connection_parameters": "plugin=" + heatdir.ShowCachePlugin}},
		What: "Showing a stack with its outputs loads it and resolves every output through every nested stack they name (about " +
			"0.5 s for tripleo-heat-templates at Compute 2, growing with the node count), and a deploy asks three times after the " +
			"create (heat_stack's result, the working dir's saved outputs, config-download) with nothing written in between. Our " +
			"engine plugin keeps what the engine's show_stack returned for a stack not IN_PROGRESS and answers the same question " +
			"(stack, outputs or not, tenant, user) with a fresh copy of it while nothing has been written to the database: any " +
			"statement other than SELECT drops the whole cache, and an answer computed while something was written is not kept. " +
			"sqlite only (one heat-all writes it; a pod's engines share MySQL). Cost: up to 64 MB of pickled answers between writes; " +
			"its effect is on reads after an operation (rows deploy_playbook_tht, config_download_tht), not on the create.",
		Effect: EffectCreate,
	},
	{
		Name:  "sqlite_no_ping",
		Title: "[database] connection_parameters = plugin=" + heatdir.SQLiteNoPingPlugin,
		Conf:  map[string]map[string]string{"database": {"connection_parameters": "plugin=" + heatdir.SQLiteNoPingPlugin}},
		What: "oslo.db runs \"SELECT 1\" every time a database session takes a connection, to notice a database server that went " +
			"away; a sqlite file has no server. Our engine plugin skips that ping for sqlite (MySQL keeps it). Cost: none; " +
			"a sqlite file that cannot be read fails the statement itself instead of the ping.",
		Effect: EffectCreate,
	},
	{
		Name:  "sqlite_fk_indexes",
		Title: "[database] connection_parameters = plugin=" + heatdir.SQLiteFKIndexesPlugin,
		Conf:  map[string]map[string]string{"database": {"connection_parameters": "plugin=" + heatdir.SQLiteFKIndexesPlugin}},
		What: "Heat's schema declares foreign keys (resource.stack_id, event.stack_id, resource_data.resource_id, ...) without " +
			"indexes: MySQL's InnoDB indexes every foreign key itself, sqlite does not, so on sqlite each \"resources (or events) of " +
			"this stack\" query reads the whole table, and costs more as the deploy grows. Our engine plugin creates, when heat-all " +
			"opens a sqlite file, the index InnoDB would have on each foreign-key column no index starts with " +
			"(ephemeral_heat_fk_<table>_<column>, read from the database's own schema). Cost: about 15 indexes to keep up to date on " +
			"writes, a little more disk; a dump of the database (heat_db_dump) carries them, and a stock Heat ignores them.",
		Effect: EffectCreate,
	},
	{
		Name:  "sql_cache_json",
		Title: "[database] connection_parameters = plugin=" + heatdir.SQLCacheJSONPlugin,
		Conf:  map[string]map[string]string{"database": {"connection_parameters": "plugin=" + heatdir.SQLCacheJSONPlugin}},
		What: "SQLAlchemy 1.4 caches compiled statements, except those on a column type that does not declare itself cacheable: Heat 19's " +
			"Json type (stacks, resources, events, templates) does not (\"TypeDecorator Json() will not produce a cache key\" in the " +
			"log), so most of Heat's statements are compiled anew each time. Our engine plugin declares it cacheable (cache_ok); " +
			"it has no settings that change the SQL. Cost: SQLAlchemy's statement cache (500 entries by " +
			"default) holds these statements too.",
		Effect: EffectCreate,
	},
	{
		Name:  "fake_rpc_wakeup",
		Title: "[database] connection_parameters = plugin=" + heatdir.FakeRPCWakeupPlugin,
		Conf:  map[string]map[string]string{"database": {"connection_parameters": "plugin=" + heatdir.FakeRPCWakeupPlugin}},
		What: "heat-all on transport_url fake:// passes its RPC messages (API to engine, a stack to its nested stacks) through " +
			"oslo.messaging's in-process fake driver, whose listeners look at their queues every 50 ms: each message waits 25 ms on " +
			"average, and every nested stack create, update or delete is one. Our engine plugin makes a listener wait for a message " +
			"to be delivered (an event), 50 ms at most as before; queues, messages and their order are the driver's. Checked against " +
			"oslo.messaging's internals first, else one warning and no change. Cost: none measured; RabbitMQ (pod) is not affected.",
		Effect: EffectCreate,
	},
	{
		Name:  "graceful_shutdown_timeout",
		Title: "[DEFAULT] graceful_shutdown_timeout = 1",
		Conf:  map[string]map[string]string{"DEFAULT": {"graceful_shutdown_timeout": "1"}},
		What: "heat-all exits within a second of SIGTERM instead of oslo.service's 60 s default (the launcher would kill it after its own grace). " +
			"On SIGTERM heat-all (Heat 19) either exits at once or, depending on the order in which it waits for its services (a set, " +
			"so per process), stops its engine gracefully (about 0.1 s when idle) and then waits in the API's green pool, which never " +
			"empties, until this timeout ends the process: 3 s of every other stop with the value 3 used before. Cost: none for a " +
			"stopped-by-us Heat (no operation in flight: the dump is taken first); work in flight is cut after 1 s either way, and " +
			"a stack it leaves IN_PROGRESS is reset to FAILED at the next launch (settle).",
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
// A query-string setting ([database] connection_parameters, which names our
// SQLAlchemy plugins) is added to, not replaced: several settings each name
// their plugin there.
func Merge(dst, src map[string]map[string]string) map[string]map[string]string {
	if dst == nil {
		dst = map[string]map[string]string{}
	}
	for sec, kv := range src {
		if dst[sec] == nil {
			dst[sec] = map[string]string{}
		}
		for k, v := range kv {
			if old, ok := dst[sec][k]; ok && isQuery(sec, k) {
				v = joinQuery(old, v)
			}
			dst[sec][k] = v
		}
	}
	return dst
}

// isQuery tells a heat.conf key whose value is a URL query string.
func isQuery(sec, key string) bool { return sec == "database" && key == "connection_parameters" }

// joinQuery appends b's parameters to a's, each parameter (name=value) once.
func joinQuery(a, b string) string {
	var out []string
	seen := map[string]bool{}
	for _, q := range []string{a, b} {
		for _, p := range strings.Split(q, "&") {
			if p != "" && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return strings.Join(out, "&")
}
