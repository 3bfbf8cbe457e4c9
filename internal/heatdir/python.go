package heatdir

import (
	_ "embed"
	"path"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// SQLitePoolPlugin is the name of our SQLAlchemy engine plugin, which gives a
// sqlite file database a connection pool (see python/*.py). heat.conf names
// it in [database] connection_parameters as "plugin=" + SQLitePoolPlugin.
const SQLitePoolPlugin = "ephemeral_heat_sqlite_pool"

//go:embed python/ephemeral_heat_sqlite_pool.py
var sqlitePoolSource []byte

// The levers on Heat's engine (package tuning): SQLAlchemy engine plugins
// of the module EngineModule, each named in [database]
// connection_parameters as "plugin=" + its name.
const (
	EngineModule = "ephemeral_heat_engine"
	// TaskWakeupPlugin ends the legacy engine's step sleeps early when
	// there is work (python/ephemeral_heat_engine.py, _task_wakeup).
	TaskWakeupPlugin = "ephemeral_heat_task_wakeup"
	// SQLiteNoPingPlugin skips oslo.db's per-session ping on sqlite.
	SQLiteNoPingPlugin = "ephemeral_heat_sqlite_no_ping"
	// SQLiteFKIndexesPlugin indexes the foreign keys of a sqlite database
	// as MySQL does.
	SQLiteFKIndexesPlugin = "ephemeral_heat_sqlite_fk_indexes"
	// FKIndexPrefix starts the name of every index SQLiteFKIndexesPlugin
	// creates (FK_INDEX_PREFIX in python/ephemeral_heat_engine.py).
	FKIndexPrefix = "ephemeral_heat_fk_"
	// FailedIndex is the partial index of FAILED resources that
	// NestedUnchangedPlugin and ProviderUnchangedPlugin give a sqlite
	// database (FAILED_INDEX in python/ephemeral_heat_engine.py).
	FailedIndex = "ephemeral_heat_failed_resource"
	// SQLCacheJSONPlugin lets SQLAlchemy cache the statements on Heat's
	// Json columns.
	SQLCacheJSONPlugin = "ephemeral_heat_sql_cache_json"
	// FakeRPCWakeup makes oslo.messaging's in-process fake driver hand a
	// message over when it is sent, not at its next 50 ms poll.
	FakeRPCWakeupPlugin = "ephemeral_heat_fake_rpc_wakeup"
	// LegacyUpdateOutputsPlugin makes the legacy engine's stack update
	// read a nested stack's outputs after updating it (a correctness fix
	// that goes with convergence_engine = false).
	LegacyUpdateOutputsPlugin = "ephemeral_heat_legacy_update_outputs"
	// NestedUnchangedPlugin makes the legacy engine leave alone a nested
	// stack whose stored inputs equal the ones an update would send.
	NestedUnchangedPlugin = "ephemeral_heat_nested_unchanged"
	// ProviderUnchangedPlugin makes the legacy engine's stack update leave
	// alone a provider-template resource whose definition and nested
	// stack's inputs are unchanged (no state change, no template store).
	ProviderUnchangedPlugin = "ephemeral_heat_provider_unchanged"
	// StaticDepAttrsPlugin makes the legacy engine keep, as each resource
	// completes, the memo of referenced attributes of a definition whose
	// get_attr arguments are plain values (a ResourceGroup's outputs).
	StaticDepAttrsPlugin = "ephemeral_heat_static_dep_attrs"
	// TemplateStorePlugin makes a store of a template already in a sqlite
	// database compare with what this process last stored there instead of
	// reading the row back.
	TemplateStorePlugin = "ephemeral_heat_template_store"
	// EnvCopyPlugin makes a stack load copy its stored environment with a
	// pickle round trip instead of copy.deepcopy.
	EnvCopyPlugin = "ephemeral_heat_env_copy"
	// ShowCachePlugin answers a repeated show of a stack (its outputs) from
	// the last answer until the next write to a sqlite database.
	ShowCachePlugin = "ephemeral_heat_show_cache"
	// GCPacePlugin makes Python's full garbage collections, once they take
	// long, wait until they have had at most a twentieth of the time.
	GCPacePlugin = "ephemeral_heat_gc_pace"
	// YaqlCachePlugin makes Heat's yaql function keep each parsed
	// expression, and each result by expression and data (not for
	// expressions that name now, random or call).
	YaqlCachePlugin = "ephemeral_heat_yaql_cache"
	// RootIDCachePlugin makes Heat keep the root stack it found for a
	// stack (a stack's owner never changes).
	RootIDCachePlugin = "ephemeral_heat_root_id_cache"
	// LazyDefnHashPlugin makes a resource definition hash its snippets
	// when its hash is first asked for instead of when it is built.
	LazyDefnHashPlugin = "ephemeral_heat_lazy_defn_hash"
)

// enginePlugins are EngineModule's plugins: name and class.
var enginePlugins = [][2]string{
	{TaskWakeupPlugin, "TaskWakeup"},
	{SQLiteNoPingPlugin, "SQLiteNoPing"},
	{SQLiteFKIndexesPlugin, "SQLiteFKIndexes"},
	{SQLCacheJSONPlugin, "SQLCacheJSON"},
	{FakeRPCWakeupPlugin, "FakeRPCWakeup"},
	{LegacyUpdateOutputsPlugin, "LegacyUpdateOutputs"},
	{NestedUnchangedPlugin, "NestedUnchanged"},
	{ProviderUnchangedPlugin, "ProviderUnchanged"},
	{StaticDepAttrsPlugin, "StaticDepAttrs"},
	{TemplateStorePlugin, "TemplateStore"},
	{EnvCopyPlugin, "EnvCopy"},
	{ShowCachePlugin, "ShowCache"},
	{GCPacePlugin, "GCPace"},
	{YaqlCachePlugin, "YaqlCache"},
	{RootIDCachePlugin, "RootIDCache"},
	{LazyDefnHashPlugin, "LazyDefnHash"},
}

//go:embed python/ephemeral_heat_engine.py
var engineSource []byte

// PythonFiles returns the files of PythonDir, by path relative to the
// heat_dir: the plugin modules and the distribution metadata through which
// SQLAlchemy finds their entry points.
func PythonFiles() map[string][]byte {
	dist := path.Join(PythonDir, SQLitePoolPlugin+"-1.0.dist-info")
	engineDist := path.Join(PythonDir, EngineModule+"-1.0.dist-info")
	eps := "[sqlalchemy.plugins]\n"
	for _, p := range enginePlugins {
		eps += p[0] + " = " + EngineModule + ":" + p[1] + "\n"
	}
	return map[string][]byte{
		path.Join(PythonDir, SQLitePoolPlugin+".py"): sqlitePoolSource,
		path.Join(dist, "METADATA"): []byte("Metadata-Version: 2.1\nName: " + SQLitePoolPlugin + "\nVersion: 1.0\n" +
			"Summary: ephemeral.heat: a connection pool for Heat's sqlite database\n"),
		path.Join(dist, "entry_points.txt"): []byte("[sqlalchemy.plugins]\n" + SQLitePoolPlugin + " = " +
			SQLitePoolPlugin + ":SQLitePool\n"),
		path.Join(PythonDir, EngineModule+".py"): engineSource,
		path.Join(engineDist, "METADATA"): []byte("Metadata-Version: 2.1\nName: " + EngineModule + "\nVersion: 1.0\n" +
			"Summary: ephemeral.heat: levers on Heat's engine\n"),
		path.Join(engineDist, "entry_points.txt"): []byte(eps),
	}
}

// WritePythonFiles writes PythonFiles into the heat_dir (directories 0700,
// files 0600, each written atomically).
func (d Dir) WritePythonFiles() error {
	if err := d.EnsureSub(PythonDir); err != nil {
		return err
	}
	for name, data := range PythonFiles() {
		p := d.File(name)
		if err := d.EnsureSub(path.Dir(name)); err != nil {
			return err
		}
		if err := fsutil.WriteFileAtomic(p, data, fsutil.SecretFileMode); err != nil {
			return err
		}
	}
	return nil
}

// PythonEnvVars are the environment variables, in order, with which heat-all
// and heat-manage find the files of pythonDir (a heat_dir's PythonDir): it
// goes first on PYTHONPATH, and Python writes no bytecode beside it. A
// container's shell script exports them; a process started from Go gets
// them through PythonEnv.
func PythonEnvVars(pythonDir string) [][2]string {
	return [][2]string{{"PYTHONPATH", pythonDir}, {"PYTHONDONTWRITEBYTECODE", "1"}}
}

// PythonEnv returns environ with PythonEnvVars(pythonDir) set: pythonDir is
// put before any PYTHONPATH environ already has, other variables are kept.
func PythonEnv(environ []string, pythonDir string) []string {
	vars := PythonEnvVars(pythonDir)
	env := make([]string, 0, len(environ)+len(vars))
	old := ""
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		switch name {
		case "PYTHONPATH":
			old = value
			continue
		case "PYTHONDONTWRITEBYTECODE":
			continue
		}
		env = append(env, kv)
	}
	for _, v := range vars {
		if v[0] == "PYTHONPATH" && old != "" {
			v[1] += ":" + old
		}
		env = append(env, v[0]+"="+v[1])
	}
	return env
}
