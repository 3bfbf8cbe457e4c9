package heatdir_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/tuning"
)

// heatPython is the interpreter heat-all runs with (its #! line).
func heatPython(t *testing.T) string {
	t.Helper()
	heattest.RequireHeat(t)
	p, _ := exec.LookPath("heat-all")
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	fields := strings.Fields(strings.TrimPrefix(line, "#!"))
	if len(fields) == 0 {
		t.Fatalf("%s has no #! line", p)
	}
	return fields[0]
}

// pluginHeatDir is a fresh heat_dir with our Python files written into it,
// as the launcher writes them.
func pluginHeatDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	hd, err := heatdir.At(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := hd.WritePythonFiles(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runPluginScript runs testdata/SCRIPT with Heat's interpreter, the engine
// plugins written to a fresh heat_dir and on PYTHONPATH as the launcher puts
// them, with args (the heat_dir first when withDir), and decodes the JSON it
// prints into out.
func runPluginScript(t *testing.T, script string, withDir bool, out any, args ...string) {
	t.Helper()
	py := heatPython(t)
	dir := pluginHeatDir(t)
	path, err := filepath.Abs(filepath.Join("testdata", script))
	if err != nil {
		t.Fatal(err)
	}
	if withDir {
		args = append([]string{dir}, args...)
	}
	cmd := exec.Command(py, append([]string{path}, args...)...)
	cmd.Env = heatdir.PythonEnv(os.Environ(), filepath.Join(dir, heatdir.PythonDir))
	b, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("%s %v: %v\n%s", script, args, err, ee.Stderr)
		}
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s %v: %v in %q", script, args, err, b)
	}
}

// checkGuardOff runs testdata/SCRIPT in its "guard" mode, where the Heat
// function the lever replaces has been swapped for one of another shape
// first, and checks that the lever stayed off, left that function in
// place and logged exactly one warning naming it ("LEVER is off"); what
// names the swapped function in the failure message.
func checkGuardOff(t *testing.T, script string, withDir bool, plugin, lever, what string) {
	t.Helper()
	var g struct {
		On            bool     `json:"on"`
		Warnings      []string `json:"warnings"`
		LeftUnchanged bool     `json:"left_unchanged"`
	}
	runPluginScript(t, script, withDir, &g, plugin, "guard")
	if g.On || len(g.Warnings) != 1 || !strings.Contains(g.Warnings[0], lever+" is off") || !g.LeftUnchanged {
		t.Errorf("%s with %s: on=%v, warnings %q, that function left in place %v (want off, one warning, true)",
			lever, what, g.On, g.Warnings, g.LeftUnchanged)
	}
}

// The plugin, loaded the way Heat loads it (oslo.db's create_engine with
// [database] connection_parameters), pools sqlite file databases only.
func TestSQLitePoolPlugin(t *testing.T) {
	py := heatPython(t)
	dir := pluginHeatDir(t)
	for name := range heatdir.PythonFiles() {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", name, st, err)
		}
	}
	db := filepath.Join(dir, "heat.sqlite")
	script := `
import json, sys
from oslo_db.sqlalchemy import engines
from sqlalchemy import text
out = {}
for name, url, params in json.loads(sys.argv[1]):
    e = engines.create_engine(url, connection_parameters=params, max_retries=0)
    r = {"pool": type(e.pool).__name__}
    if r["pool"] == "QueuePool":
        r["overflow"] = e.pool._max_overflow
    if e.dialect.name == "sqlite":
        with e.connect() as c:
            first = c.connection.dbapi_connection
            c.execute(text("select 1"))
        with e.connect() as c:
            r["reused"] = c.connection.dbapi_connection is first
    out[name] = r
print(json.dumps(out))
`
	cases := [][3]string{
		{"file", "sqlite:///" + db, "plugin=" + heatdir.SQLitePoolPlugin},
		{"file_stock", "sqlite:///" + db, ""},
		{"memory", "sqlite://", "plugin=" + heatdir.SQLitePoolPlugin},
		{"mysql", "mysql+pymysql://heat:pw@127.0.0.1:1/heat", "plugin=" + heatdir.SQLitePoolPlugin},
	}
	arg, _ := json.Marshal(cases)
	cmd := exec.Command(py, "-c", script, string(arg))
	cmd.Env = heatdir.PythonEnv(os.Environ(), filepath.Join(dir, heatdir.PythonDir))
	b, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("%s: %v\n%s", py, err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var got map[string]map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	want := map[string]map[string]any{
		// Pooled, no overflow limit, the connection reused.
		"file": {"pool": "QueuePool", "overflow": -1.0, "reused": true},
		// SQLAlchemy 1.4's own choice, what Heat gets without the plugin.
		"file_stock": {"pool": "NullPool", "reused": false},
		// oslo.db's own choice for :memory:, untouched.
		"memory": {"pool": "StaticPool", "reused": true},
		// MySQL keeps SQLAlchemy's pool and its overflow limit.
		"mysql": {"pool": "QueuePool", "overflow": 10.0},
	}
	for name, w := range want {
		for k, v := range w {
			if got[name][k] != v {
				t.Errorf("%s: %s = %v, want %v (all: %v)", name, k, got[name][k], v, got[name])
			}
		}
	}
}

// heat.conf and heatrc tell an operator about the PYTHONPATH Heat needs.
func TestPythonPathRendered(t *testing.T) {
	c := heatdir.Config{Dir: "/srv/heat", APIPort: 8006, Database: heatdb.DB{Kind: heatdb.SQLite, Path: "/srv/heat/heat.sqlite"}, PythonPath: "/srv/heat/python"}
	if conf := string(c.RenderHeatConf()); !strings.Contains(conf, "PYTHONPATH=/srv/heat/python") {
		t.Errorf("heat.conf does not mention PYTHONPATH:\n%s", conf)
	}
	if rc := string(c.RenderHeatRC()); !strings.Contains(rc, "export PYTHONPATH='/srv/heat/python'${PYTHONPATH:+:$PYTHONPATH}") {
		t.Errorf("heatrc does not export PYTHONPATH:\n%s", rc)
	}
	c.PythonPath = ""
	if rc := string(c.RenderHeatRC()); strings.Contains(rc, "PYTHONPATH") {
		t.Errorf("heatrc exports PYTHONPATH without one:\n%s", rc)
	}
}

func TestPythonEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ []string
		want    []string
	}{
		{"empty", nil, []string{"PYTHONPATH=/h/python", "PYTHONDONTWRITEBYTECODE=1"}},
		{"kept", []string{"HOME=/root", "PATH=/usr/bin"},
			[]string{"HOME=/root", "PATH=/usr/bin", "PYTHONPATH=/h/python", "PYTHONDONTWRITEBYTECODE=1"}},
		{"prepended", []string{"PYTHONPATH=/opt/lib:/x", "LANG=C"},
			[]string{"LANG=C", "PYTHONPATH=/h/python:/opt/lib:/x", "PYTHONDONTWRITEBYTECODE=1"}},
		{"empty PYTHONPATH", []string{"PYTHONPATH="}, []string{"PYTHONPATH=/h/python", "PYTHONDONTWRITEBYTECODE=1"}},
		{"bytecode setting replaced", []string{"PYTHONDONTWRITEBYTECODE=", "A=PYTHONPATH=z"},
			[]string{"A=PYTHONPATH=z", "PYTHONPATH=/h/python", "PYTHONDONTWRITEBYTECODE=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := heatdir.PythonEnv(tc.environ, "/h/python")
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("PythonEnv(%q) = %q, want %q", tc.environ, got, tc.want)
			}
		})
	}
}

// The engine levers (python/ephemeral_heat_engine.py), loaded as Heat loads
// them, in a Heat engine process (testdata/engine_plugins.py):
// sqlite_no_ping drops oslo.db's per-session ping, sqlite_fk_indexes
// indexes exactly the unindexed foreign keys, sql_cache_json marks Heat's
// Json type cacheable, fake_rpc_wakeup keeps RPC calls and casts answered in
// order, and task_wakeup stays off with one warning when
// Heat's internals differ, and else ends a parent stack's step sleep when a
// nested stack stores its final state, after a resource changed state, and
// after a step took nodes off a dependency graph walked in its greenthread,
// and env_copy copies a loaded template's environment (equal, independent,
// sharing and tuples kept, deepcopy for what pickle cannot copy), and
// show_cache answers a repeated show_stack until the next write (sqlite
// only), and provider_unchanged stays off with one warning when Heat's
// update differs and else hands Heat's update every resource its check
// cannot place or whose check raises (its effect on a real Heat:
// internal/stack's batch-create test).
func TestEnginePlugins(t *testing.T) {
	var got struct {
		StockStatements    []string `json:"stock_statements"`
		PluginStatements   []string `json:"plugin_statements"`
		StockIndexes       []string `json:"stock_indexes"`
		PluginIndexes      []string `json:"plugin_indexes"`
		IndexesAgain       []string `json:"indexes_again"`
		JSONCacheOKBefore  any      `json:"json_cache_ok_before"`
		JSONCacheOKAfter   any      `json:"json_cache_ok_after"`
		GuardLeftUnchanged bool     `json:"guard_left_unchanged"`
		GuardWarnings      []string `json:"guard_warnings"`
		WakeupOn           bool     `json:"wakeup_on"`
		AsleepBeforeWake   bool     `json:"asleep_before_wake"`
		Woken              bool     `json:"woken"`
		WokenAfterS        float64  `json:"woken_after_s"`
		AfterChangeS       float64  `json:"after_change_s"`
		OtherRunnerS       float64  `json:"other_runner_s"`
		OtherGraphS        float64  `json:"other_greenthread_graph_s"`
		AfterGraphS        float64  `json:"after_graph_step_s"`
		RPCPollReplaced    bool     `json:"rpc_poll_replaced"`
		RPCAnswers         []int    `json:"rpc_answers"`
		RPCCasts           []int    `json:"rpc_casts"`
		LegacyGuardLeft    bool     `json:"legacy_guard_left_unchanged"`
		LegacyGuardWarns   []string `json:"legacy_guard_warnings"`
		LegacyOn           bool     `json:"legacy_on"`
		LegacyOutputsAfter any      `json:"legacy_nested_outputs_after"`
		LegacyResets       []string `json:"legacy_resets"`
		LegacyPassedOn     []bool   `json:"legacy_passed_on"`
		ProviderGuardLeft  bool     `json:"provider_guard_left_unchanged"`
		ProviderGuardWarns []string `json:"provider_guard_warnings"`
		ProviderOn         bool     `json:"provider_on"`
		ProviderToHeat     []string `json:"provider_to_heat"`
		ProviderCheckWarns []string `json:"provider_check_warnings"`
		EnvCopyGuardLeft   bool     `json:"env_copy_guard_left_unchanged"`
		EnvCopyGuardWarns  []string `json:"env_copy_guard_warnings"`
		EnvCopyOn          bool     `json:"env_copy_on"`
		EnvCopyEqual       bool     `json:"env_copy_equal"`
		EnvCopyIndependent bool     `json:"env_copy_independent"`
		EnvCopySharing     bool     `json:"env_copy_sharing_kept"`
		EnvCopyTuple       bool     `json:"env_copy_tuple_kept"`
		EnvCopyFallback    string   `json:"env_copy_fallback"`
		ShowCacheMySQL     bool     `json:"show_cache_mysql"`
		ShowCacheOn        bool     `json:"show_cache_on"`
		ShowCacheRepeat    int      `json:"show_cache_calls_after_repeat"`
		ShowCacheIntact    []any    `json:"show_cache_copy_intact"`
		ShowCacheOthers    int      `json:"show_cache_calls_other_questions"`
		ShowCacheSelect    int      `json:"show_cache_calls_after_select"`
		ShowCacheWrite     int      `json:"show_cache_calls_after_write"`
		ShowCacheEnd       int      `json:"show_cache_calls_end"`
	}
	runPluginScript(t, "engine_plugins.py", true, &got, heatdir.SQLiteNoPingPlugin, heatdir.SQLiteFKIndexesPlugin,
		heatdir.SQLCacheJSONPlugin, heatdir.TaskWakeupPlugin, heatdir.FakeRPCWakeupPlugin, heatdir.LegacyUpdateOutputsPlugin,
		heatdir.EnvCopyPlugin, heatdir.ShowCachePlugin, heatdir.ProviderUnchangedPlugin)
	hasPing := func(stmts []string) bool {
		for _, s := range stmts {
			if strings.EqualFold(strings.TrimSpace(s), "SELECT 1") {
				return true
			}
		}
		return false
	}
	if !hasPing(got.StockStatements) {
		t.Errorf("without the plugin oslo.db should ping (SELECT 1): %q", got.StockStatements)
	}
	if hasPing(got.PluginStatements) {
		t.Errorf("sqlite_no_ping: still pinged: %q", got.PluginStatements)
	}
	if strings.Join(got.StockIndexes, ",") != "ix_child_other" {
		t.Errorf("indexes before the plugin: %q", got.StockIndexes)
	}
	want := "ephemeral_heat_fk_child_parent_id,ix_child_other"
	if strings.Join(got.PluginIndexes, ",") != want || strings.Join(got.IndexesAgain, ",") != want {
		t.Errorf("sqlite_fk_indexes: indexes %q, then %q; want %s", got.PluginIndexes, got.IndexesAgain, want)
	}
	if got.JSONCacheOKBefore != nil || got.JSONCacheOKAfter != true {
		t.Errorf("sql_cache_json: Json.cache_ok %v before, %v after", got.JSONCacheOKBefore, got.JSONCacheOKAfter)
	}
	if !got.GuardLeftUnchanged || len(got.GuardWarnings) != 1 || !strings.Contains(got.GuardWarnings[0], "Heat is left unchanged") {
		t.Errorf("task_wakeup guard: left unchanged %v, warnings %q (want exactly one)", got.GuardLeftUnchanged, got.GuardWarnings)
	}
	if !got.WakeupOn {
		t.Fatalf("task_wakeup did not apply to Heat's own internals")
	}
	if !got.AsleepBeforeWake || !got.Woken || got.WokenAfterS >= 30 {
		t.Errorf("task_wakeup: asleep %v, woken %v after %.1f s of a 30 s step sleep", got.AsleepBeforeWake, got.Woken, got.WokenAfterS)
	}
	if got.AfterChangeS >= 30 {
		t.Errorf("task_wakeup: a changed resource did not end the sleep (%.1f s)", got.AfterChangeS)
	}
	if got.AfterGraphS >= 30 {
		t.Errorf("task_wakeup: a step that took nodes off a dependency graph did not end the sleep (%.1f s)", got.AfterGraphS)
	}
	if got.OtherGraphS < 0.45 {
		t.Errorf("task_wakeup: a graph walked in another greenthread ended this runner's sleep (%.2f s of 0.5 s)", got.OtherGraphS)
	}
	if !got.RPCPollReplaced || fmt.Sprint(got.RPCAnswers) != "[1 2 3 4 5]" || fmt.Sprint(got.RPCCasts) != "[0 1 2]" {
		t.Errorf("fake_rpc_wakeup: poll replaced %v, calls answered %v, casts seen %v", got.RPCPollReplaced, got.RPCAnswers, got.RPCCasts)
	}
	if !got.LegacyGuardLeft || len(got.LegacyGuardWarns) != 1 || !strings.Contains(got.LegacyGuardWarns[0], "Heat is left unchanged") {
		t.Errorf("legacy_update_outputs guard: left unchanged %v, warnings %q (want exactly one)", got.LegacyGuardLeft, got.LegacyGuardWarns)
	}
	if !got.LegacyOn {
		t.Fatalf("legacy_update_outputs did not apply to Heat's own internals")
	}
	if got.LegacyOutputsAfter != nil || fmt.Sprint(got.LegacyResets) != "[reset]" || fmt.Sprint(got.LegacyPassedOn) != "[true true]" {
		t.Errorf("legacy_update_outputs: a StackResource's outputs after %v (want none), attribute resets %v (want one), passed on to Heat's %v (want both)",
			got.LegacyOutputsAfter, got.LegacyResets, got.LegacyPassedOn)
	}
	if !got.EnvCopyGuardLeft || len(got.EnvCopyGuardWarns) != 1 || !strings.Contains(got.EnvCopyGuardWarns[0], "Heat is left unchanged") {
		t.Errorf("env_copy guard: left unchanged %v, warnings %q (want exactly one)", got.EnvCopyGuardLeft, got.EnvCopyGuardWarns)
	}
	if !got.EnvCopyOn {
		t.Fatalf("env_copy did not apply to Heat's own internals")
	}
	if !got.EnvCopyEqual || !got.EnvCopyIndependent || !got.EnvCopySharing || !got.EnvCopyTuple || got.EnvCopyFallback != "deep-copied" {
		t.Errorf("env_copy: copy equal %v, independent of the row %v, sharing kept %v, tuple kept %v, unpicklable value %q (want deep-copied)",
			got.EnvCopyEqual, got.EnvCopyIndependent, got.EnvCopySharing, got.EnvCopyTuple, got.EnvCopyFallback)
	}
	if got.ShowCacheMySQL || !got.ShowCacheOn {
		t.Fatalf("show_cache: applies to MySQL %v (want false), on for sqlite %v (want true)", got.ShowCacheMySQL, got.ShowCacheOn)
	}
	// Heat's show_stack calls: 1 for the first question and none for its
	// repeat; 2 more for other questions (no outputs, another tenant); none
	// after a SELECT; 1 after a write; 2 for an answer computed while
	// writing (not kept); 2 for a stack in progress (not kept).
	if got.ShowCacheRepeat != 1 || fmt.Sprint(got.ShowCacheIntact) != "[1 2]" || got.ShowCacheOthers != 3 ||
		got.ShowCacheSelect != 3 || got.ShowCacheWrite != 4 || got.ShowCacheEnd != 8 {
		t.Errorf("show_cache: Heat's show_stack called %d, %d, %d, %d, %d times (want 1, 3, 3, 4, 8); repeated answer %v (want [1 2])",
			got.ShowCacheRepeat, got.ShowCacheOthers, got.ShowCacheSelect, got.ShowCacheWrite, got.ShowCacheEnd, got.ShowCacheIntact)
	}
	if !got.ProviderGuardLeft || len(got.ProviderGuardWarns) != 1 || !strings.Contains(got.ProviderGuardWarns[0], "Heat is left unchanged") {
		t.Errorf("provider_unchanged guard: left unchanged %v, warnings %q (want exactly one)", got.ProviderGuardLeft, got.ProviderGuardWarns)
	}
	if !got.ProviderOn {
		t.Fatalf("provider_unchanged did not apply to Heat's own internals")
	}
	if fmt.Sprint(got.ProviderToHeat) != "[absent raises raises]" || len(got.ProviderCheckWarns) != 1 ||
		!strings.Contains(got.ProviderCheckWarns[0], "cannot load raises") {
		t.Errorf("provider_unchanged: passed to Heat's update %v (want [absent raises raises]), warnings %q (want one, naming the error)",
			got.ProviderToHeat, got.ProviderCheckWarns)
	}
	if got.OtherRunnerS < 0.3 {
		t.Errorf("a TaskRunner that is not a stack's slept %.2f s of 0.3 s: its sleep must stay Heat's", got.OtherRunnerS)
	}
}

// static_dep_attrs, on Heat's own parser and stack definitions: when a
// resource's data is stored, a definition whose get_attr arguments are plain
// values (a ResourceGroup's outputs, under list_join or repeat too) keeps
// its memo of referenced attributes, equal to what Heat computes again;
// one whose attribute, path or resource name is computed loses it, as in
// Heat. With an update_resource_data that no longer drops memos it stays
// off with one warning and leaves Heat's function in place.
func TestStaticDepAttrs(t *testing.T) {
	type result struct {
		On            bool     `json:"on"`
		Warnings      []string `json:"warnings"`
		KeptAfterA    []string `json:"kept_after_a"`
		KeptEqualHeat bool     `json:"kept_equal_heat"`
		KeptAfterB    []string `json:"kept_after_b"`
		DataStored    []string `json:"data_stored"`
		OddDropped    bool     `json:"odd_dropped"`
		OddDataStored bool     `json:"odd_data_stored"`
		OddWarnings   []string `json:"odd_warnings"`
	}
	run := func(mode string) (r result) {
		runPluginScript(t, "static_dep_attrs.py", false, &r, heatdir.StaticDepAttrsPlugin, mode)
		return r
	}
	on := run("on")
	if !on.On || len(on.Warnings) != 0 {
		t.Fatalf("static_dep_attrs with Heat's own internals: on=%v, warnings %q", on.On, on.Warnings)
	}
	// a and b name no resource: Heat never drops their memo.
	if want := []string{"a", "b", "joined", "output group", "plain", "repeated"}; fmt.Sprint(on.KeptAfterA) != fmt.Sprint(want) {
		t.Errorf("after a's data: memos kept %v, want %v", on.KeptAfterA, want)
	}
	if want := []string{"a", "b", "computed_name", "joined", "output group", "plain", "repeated"}; fmt.Sprint(on.KeptAfterB) != fmt.Sprint(want) {
		t.Errorf("after b's data: memos kept %v, want %v", on.KeptAfterB, want)
	}
	if !on.KeptEqualHeat {
		t.Errorf("a kept memo differs from what Heat computes again")
	}
	if fmt.Sprint(on.DataStored) != "[a b]" {
		t.Errorf("resource data stored for %v, want [a b] (Heat's own update_resource_data must still run)", on.DataStored)
	}
	if !on.OddDropped || !on.OddDataStored || len(on.OddWarnings) != 1 || !strings.Contains(on.OddWarnings[0], "Heat drops their memos as before") {
		t.Errorf("a definition it cannot look at: memo dropped %v, data stored %v, warnings %q (want true, true, one naming Heat's way)",
			on.OddDropped, on.OddDataStored, on.OddWarnings)
	}
	checkGuardOff(t, "static_dep_attrs.py", false, heatdir.StaticDepAttrsPlugin, "static_dep_attrs", "another update_resource_data")
}

// template_store, with Heat's own database API on a sqlite file: the first
// update of a template row is Heat's (it reads the row); after it, a store
// writes only what changed, without reading the row, and nothing when
// nothing changed; the row then holds exactly the stored values. A row
// written by another path, a store inside an open transaction and a deleted
// row go back to Heat's own code; a row object held by the session is seen
// fresh afterwards. MySQL (several writers) leaves it off, and so does a
// Template.store of another shape (one warning, Heat's function kept).
func TestTemplateStore(t *testing.T) {
	type row struct {
		Resources []string `json:"resources"`
		P         string   `json:"p"`
		Files     *string  `json:"files"`
		UpdatedAt string   `json:"updated_at"`
	}
	type step struct {
		Statements []string `json:"statements"`
		Row        row      `json:"row"`
	}
	type result struct {
		AppliesMySQL     bool     `json:"applies_mysql"`
		On               bool     `json:"on"`
		Replaced         bool     `json:"replaced"`
		Warnings         []string `json:"warnings"`
		Create           step     `json:"create"`
		FirstUpdate      step     `json:"first_update"`
		KnownUpdate      step     `json:"known_update"`
		Unchanged        step     `json:"unchanged"`
		EnvChanged       step     `json:"env_changed"`
		AfterOther       step     `json:"after_other_writer"`
		WithRowHeld      step     `json:"with_row_held"`
		HeldRowAfter     []string `json:"held_row_after"`
		InTransaction    step     `json:"in_transaction"`
		StoreAfterDelete string   `json:"store_after_delete"`
		CapReads         struct {
			C, B, A, BAgain, CAgain, TooLarge, TooLargeAgain int
		} `json:"cap_reads"`
	}
	run := func(mode string) (r result) {
		runPluginScript(t, "template_store.py", true, &r, heatdir.TemplateStorePlugin, mode)
		return r
	}
	// The statements on raw_template (not oslo.db's ping, BEGIN, ...).
	onRows := func(s step) string {
		var on []string
		for _, st := range s.Statements {
			if strings.HasSuffix(st, " raw_template") {
				on = append(on, st)
			}
		}
		return fmt.Sprint(on)
	}
	reads := func(s step) int {
		n := 0
		for _, st := range s.Statements {
			if st == "SELECT raw_template" {
				n++
			}
		}
		return n
	}
	r := run("on")
	if !r.On || !r.Replaced || len(r.Warnings) != 0 || r.AppliesMySQL {
		t.Fatalf("template_store on sqlite: on=%v replaced=%v warnings %q; applies to MySQL %v (want on, replaced, none, false)",
			r.On, r.Replaced, r.Warnings, r.AppliesMySQL)
	}
	if reads(r.FirstUpdate) == 0 || fmt.Sprint(r.FirstUpdate.Row.Resources) != "[r0 r1]" {
		t.Errorf("first update of a row: %v, row %+v (want Heat's read, then the new template)", r.FirstUpdate.Statements, r.FirstUpdate.Row)
	}
	if onRows(r.KnownUpdate) != "[UPDATE raw_template]" || fmt.Sprint(r.KnownUpdate.Row.Resources) != "[r0 r1 r2]" ||
		r.KnownUpdate.Row.UpdatedAt == r.FirstUpdate.Row.UpdatedAt {
		t.Errorf("known row, template changed: %v, row %+v (want one UPDATE, no read, the new template and updated time)", r.KnownUpdate.Statements, r.KnownUpdate.Row)
	}
	if onRows(r.Unchanged) != "[]" || r.Unchanged.Row.UpdatedAt != r.KnownUpdate.Row.UpdatedAt {
		t.Errorf("known row, nothing changed: %v (want no statement)", r.Unchanged.Statements)
	}
	if onRows(r.EnvChanged) != "[UPDATE raw_template]" || r.EnvChanged.Row.P != "b" || fmt.Sprint(r.EnvChanged.Row.Resources) != "[r0 r1 r2]" {
		t.Errorf("known row, environment changed: %v, row %+v (want one UPDATE, p=b)", r.EnvChanged.Statements, r.EnvChanged.Row)
	}
	if reads(r.AfterOther) == 0 || fmt.Sprint(r.AfterOther.Row.Resources) != "[r0 r1 r2]" {
		t.Errorf("after another writer: %v, row %+v (want Heat's read and the template written back)", r.AfterOther.Statements, r.AfterOther.Row)
	}
	if reads(r.WithRowHeld) != 0 || fmt.Sprint(r.HeldRowAfter) != "[r0 r1 r2 r3]" {
		t.Errorf("row object held by the session: store %v, Heat's next read %v (want no read, then [r0 r1 r2 r3])", r.WithRowHeld.Statements, r.HeldRowAfter)
	}
	if reads(r.InTransaction) == 0 || fmt.Sprint(r.InTransaction.Row.Resources) != "[r0 r1 r2 r3 r4]" {
		t.Errorf("store in an open transaction: %v, row %+v (want Heat's read and the new template)", r.InTransaction.Statements, r.InTransaction.Row)
	}
	// Three known rows where the cap holds two: the one stored longest ago
	// is forgotten (Heat's read at its next store), the two stored since
	// stay known; a row larger than the cap is never kept.
	if cr := r.CapReads; cr.C != 0 || cr.B != 0 || cr.A != 1 || cr.BAgain != 0 || cr.CAgain != 1 || cr.TooLarge != 1 || cr.TooLargeAgain != 1 {
		t.Errorf("reads of known rows under the cap (c, b, a, b, c, too large twice): %+v (want 0 0 1 0 1 1 1: the row stored longest ago forgotten first)", cr)
	}
	if r.StoreAfterDelete != "NotFound" {
		t.Errorf("store after the row's delete: %s (want Heat's NotFound)", r.StoreAfterDelete)
	}
	checkGuardOff(t, "template_store.py", true, heatdir.TemplateStorePlugin, "template_store", "another Template.store")
}

// nested_unchanged and provider_unchanged give a sqlite database a partial
// index of its FAILED resources when Heat opens it with its tables (none,
// and no warning, on a database without them yet), and their question "is
// a resource of this tree FAILED" is answered from that index: it finds a
// failed and a marked-unhealthy resource of the tree asked about, none of
// another tree, and sqlite's plan uses the index.
func TestFailedIndex(t *testing.T) {
	type result struct {
		Indexes     []string `json:"indexes"`
		Applied     *bool    `json:"applied"`
		ANoneFailed *int     `json:"a_none_failed"`
		BFailed     bool     `json:"b_failed"`
		Missing     *int     `json:"missing_tree"`
		Plan        string   `json:"plan"`
		AUnhealthy  bool     `json:"a_unhealthy"`
		Warnings    []string `json:"warnings"`
	}
	for _, plugin := range []string{heatdir.NestedUnchangedPlugin, heatdir.ProviderUnchangedPlugin} {
		var r result
		runPluginScript(t, "failed_index.py", true, &r, plugin, "schema")
		if len(r.Indexes) != 1 || !strings.Contains(r.Indexes[0], "WHERE status = 'FAILED'") || r.Applied == nil || !*r.Applied {
			t.Errorf("%s, Heat's tables present: indexes %q, applied %v (want the partial index of FAILED resources)", plugin, r.Indexes, r.Applied)
		}
		if r.ANoneFailed != nil || !r.BFailed || r.Missing != nil || !r.AUnhealthy {
			t.Errorf("%s: failed resource in tree a (none failed) %v, tree b found %v, tree c %v, tree a after marking one unhealthy found %v (want nil, true, nil, true)",
				plugin, r.ANoneFailed, r.BFailed, r.Missing, r.AUnhealthy)
		}
		if !strings.Contains(r.Plan, "INDEX "+heatdir.FailedIndex) {
			t.Errorf("%s: sqlite's plan for the question: %q (want it to use %s)", plugin, r.Plan, heatdir.FailedIndex)
		}
		if len(r.Warnings) != 0 {
			t.Errorf("%s: warnings %q", plugin, r.Warnings)
		}
		var e result
		runPluginScript(t, "failed_index.py", true, &e, plugin, "empty")
		if len(e.Indexes) != 0 || e.Applied == nil || *e.Applied || len(e.Warnings) != 0 {
			t.Errorf("%s, no tables yet: indexes %q, applied %v, warnings %q (want none, false, none)", plugin, e.Indexes, e.Applied, e.Warnings)
		}
	}
}

// FKIndexPrefix is the prefix the Python plugin gives its indexes.
func TestFKIndexPrefix(t *testing.T) {
	src := string(heatdir.PythonFiles()[filepath.Join(heatdir.PythonDir, heatdir.EngineModule+".py")])
	for _, want := range []string{
		"FK_INDEX_PREFIX = \"" + heatdir.FKIndexPrefix + "\"",
		"FAILED_INDEX = \"" + heatdir.FailedIndex + "\"",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("python/%s.py does not say %s", heatdir.EngineModule, want)
		}
	}
}

// SQLAlchemy finds the first of our plugins that heat.conf names with one
// scan of the installed entry points; the engine module then registers the
// plugins its neighbouring distributions declare, so the other names need
// no scan of their own, and each name still loads the class declared for it.
func TestPluginLookup(t *testing.T) {
	params := tuning.Merged()["database"]["connection_parameters"]
	if strings.Count(params, "plugin=") < 2 {
		t.Fatalf("want several plugins in our connection_parameters, got %q", params)
	}
	var got struct {
		Scans    int               `json:"scans"`
		Names    []string          `json:"names"`
		Declared map[string]string `json:"declared"`
		Resolved map[string]string `json:"resolved"`
	}
	runPluginScript(t, "plugin_lookup.py", true, &got, params)
	if got.Scans != 1 {
		t.Errorf("entry-point scans while loading %d plugins: %d, want 1", len(got.Names), got.Scans)
	}
	if len(got.Names) != strings.Count(params, "plugin=") {
		t.Errorf("loaded %v, want every plugin of %q", got.Names, params)
	}
	for _, name := range got.Names {
		if got.Resolved[name] == "" || got.Resolved[name] != got.Declared[name] {
			t.Errorf("plugin %s resolved to %q, declared %q", name, got.Resolved[name], got.Declared[name])
		}
	}
}

// template_store builds a template's text from the previous store's pieces:
// the text must be Heat's encoding of the whole document at every step, and
// only the entries that changed (by value and exact type) are encoded again.
func TestEncodePieces(t *testing.T) {
	var steps []struct {
		Name    string `json:"name"`
		Equal   bool   `json:"equal"`
		Encoded int    `json:"encoded"`
		Pieces  int    `json:"pieces"`
	}
	runPluginScript(t, "encode_pieces.py", false, &steps)
	// encoded: dicts and lists given to Heat's encoding: the entries
	// encoded again, or the whole document (whole: no pieces kept).
	want := []struct {
		name    string
		encoded int
		whole   bool
	}{
		{"first", 50 + 1, false},
		{"unchanged", 0, false},
		{"member_added", 1, false},
		{"int_to_float", 1, false},
		{"int_to_bool", 2, false},
		{"list_to_tuple", 1, false},
		{"nested_change", 1, false},
		{"reordered", 0, false},
		{"member_removed", 0, false},
		{"not_marshallable", 1, true},
		{"dict_subclass", 1, true},
		{"back_to_plain", 50 + 1, false},
		{"int_key", 1, true},
		{"unicode_and_none", 50 + 1, false},
		{"shared_object", 1, false},
		{"unshared_copy", 0, false},
		{"empty_section", 0, false},
		{"list_document", 1, true},
		{"after_list", 50 + 1, false},
	}
	if len(steps) != len(want) {
		t.Fatalf("got %d steps, want %d: %+v", len(steps), len(want), steps)
	}
	for i, w := range want {
		s := steps[i]
		if s.Name != w.name {
			t.Fatalf("step %d is %s, want %s", i, s.Name, w.name)
		}
		if !s.Equal {
			t.Errorf("%s: the text differs from Heat's encoding of the document", s.Name)
		}
		if w.whole != (s.Pieces == 0) {
			t.Errorf("%s: %d pieces, want the whole document encoded: %v", s.Name, s.Pieces, w.whole)
		}
		if s.Encoded != w.encoded {
			t.Errorf("%s: encoded %d dicts and lists, want %d", s.Name, s.Encoded, w.encoded)
		}
	}
}

// gc_pace holds Python's next full collection after a long one, for 19
// times its duration (60 s at most), and Python's own rule decides again
// after that; a short one ends a hold; a pacer that fails stops, once; a
// disabled collector stays so.
func TestGCPace(t *testing.T) {
	var got struct {
		Defaults        []int    `json:"defaults"`
		On              bool     `json:"on"`
		Pacers          int      `json:"pacers"`
		AfterShortReal  int      `json:"after_short_real"`
		Held            int      `json:"held_threshold"`
		HoldSeconds     float64  `json:"hold_seconds"`
		HeldFull        int      `json:"held_full_collections"`
		HeldOrphanAlive bool     `json:"held_orphan_alive"`
		HeldAfterChurn  int      `json:"held_threshold_after_churn"`
		ReleasedFull    int      `json:"released_full_collections"`
		ReleasedOrphan  bool     `json:"released_orphan_alive"`
		ReleasedAfter   int      `json:"released_threshold_after_churn"`
		AfterShortFake  int      `json:"after_short_fake"`
		AfterShortUntil *float64 `json:"after_short_until"`
		LongHold        float64  `json:"long_hold_seconds"`
		Final           int      `json:"final_threshold"`
		WarningsAfter   []string `json:"warnings_after"`
		BeforeFailure   int      `json:"before_failure_threshold"`
		FailedOff       bool     `json:"failed_off"`
		FailedThreshold int      `json:"failed_threshold"`
		FailedWarnings  []string `json:"failed_warnings"`
	}
	runPluginScript(t, "gc_pace.py", false, &got, "on")
	if !got.On || got.Pacers != 1 || len(got.WarningsAfter) != 0 {
		t.Fatalf("gc_pace on %v with %d pacers (want 1), warnings %q", got.On, got.Pacers, got.WarningsAfter)
	}
	python := got.Defaults[2]
	if got.AfterShortReal != python {
		t.Errorf("after a short full collection the oldest generation's threshold is %d, want Python's %d", got.AfterShortReal, python)
	}
	if got.Held <= python || got.HoldSeconds != 38 || got.HeldAfterChurn != got.Held {
		t.Errorf("after a 2 s full collection: threshold %d (Python's %d), hold %.1f s (want 38), after allocations %d",
			got.Held, python, got.HoldSeconds, got.HeldAfterChurn)
	}
	if got.HeldFull != 0 || !got.HeldOrphanAlive {
		t.Errorf("within the hold: %d full collections (want 0), orphaned cycle alive %v (want true)", got.HeldFull, got.HeldOrphanAlive)
	}
	if got.ReleasedFull < 1 || got.ReleasedOrphan || got.ReleasedAfter != got.Held {
		t.Errorf("after the hold: %d full collections (want Python's rule to run one), orphaned cycle alive %v, threshold %d (want held again, %d)",
			got.ReleasedFull, got.ReleasedOrphan, got.ReleasedAfter, got.Held)
	}
	if got.AfterShortFake != python || got.AfterShortUntil != nil {
		t.Errorf("a short full collection left threshold %d (want %d), hold until %v (want none)", got.AfterShortFake, python, got.AfterShortUntil)
	}
	if got.LongHold != 60 || got.Final != python {
		t.Errorf("a 10 s full collection holds %.1f s (want 60, the cap); final threshold %d (want %d)", got.LongHold, got.Final, python)
	}
	if got.BeforeFailure != got.Held || !got.FailedOff || got.FailedThreshold != python ||
		len(got.FailedWarnings) != 1 || !strings.Contains(got.FailedWarnings[0], "gc_pace failed and is off") {
		t.Errorf("a pacer failing inside the collector (held threshold %d before): off %v, threshold %d (want Python's %d), logged %q (want one error)",
			got.BeforeFailure, got.FailedOff, got.FailedThreshold, python, got.FailedWarnings)
	}

	var off struct {
		On       bool     `json:"on"`
		Pacers   int      `json:"pacers"`
		Warnings []string `json:"warnings"`
		Enabled  bool     `json:"enabled_after"`
	}
	runPluginScript(t, "gc_pace.py", false, &off, "disabled")
	if off.On || off.Pacers != 0 || off.Enabled || len(off.Warnings) != 1 || !strings.Contains(off.Warnings[0], "Heat is left unchanged") {
		t.Errorf("collector disabled: gc_pace on %v, %d pacers, collector enabled %v, warnings %q (want off, none, false, one)",
			off.On, off.Pacers, off.Enabled, off.Warnings)
	}
}

// yaql_cache, on Heat's own yaql function: each (expression, data) is
// evaluated once and answered again from what was kept, equal to Heat's
// answer and of the same type, for data that differ only in type (1, 1.0,
// true, "1"), key order or nesting; a hit is a fresh copy; now(),
// random() and call() are evaluated every time, and so are data marshal refuses; a
// failing expression raises Heat's error each time; a text is parsed once;
// the kept results stay within their byte bound, least recently used out
// first. With a Yaql.result that is not Heat 19's it stays off with one
// warning and leaves Heat's functions in place.
func TestYaqlCache(t *testing.T) {
	var got struct {
		On               bool     `json:"on"`
		Warnings         []string `json:"warnings"`
		EqualHeat        bool     `json:"equal_heat"`
		Evaluations      int      `json:"evaluations"`
		Cases            int      `json:"cases"`
		CopyIntact       []int    `json:"copy_intact"`
		Impure           int      `json:"impure_evaluations"`
		Refused          int      `json:"refused_evaluations"`
		Ordered          int      `json:"ordered_evaluations"`
		Errors           []string `json:"errors"`
		ErrorsEqualHeat  bool     `json:"errors_equal_heat"`
		Parses           int      `json:"parses"`
		BoundEvaluations int      `json:"bounded_evaluations"`
	}
	runPluginScript(t, "yaql_cache.py", false, &got, heatdir.YaqlCachePlugin, "on")
	if !got.On || len(got.Warnings) != 0 {
		t.Fatalf("yaql_cache on %v, warnings %q", got.On, got.Warnings)
	}
	if !got.EqualHeat || got.Evaluations != got.Cases {
		t.Errorf("%d cases asked twice: answers equal to Heat's (type too) %v, %d evaluations (want %d: the second from the cache)",
			got.Cases, got.EqualHeat, got.Evaluations, got.Cases)
	}
	if fmt.Sprint(got.CopyIntact) != "[2 3]" {
		t.Errorf("after the caller changed an answer, the next one is %v, want [2 3]", got.CopyIntact)
	}
	if got.Impure != 9 || got.Refused != 4 || got.Ordered != 1 {
		t.Errorf("evaluations: now()/random()/call() %d (want 9 of 9), str/int subclass data %d (want 4 of 4), OrderedDict (a dict once resolved) %d (want 1 of 2)",
			got.Impure, got.Refused, got.Ordered)
	}
	if !got.ErrorsEqualHeat || len(got.Errors) != 6 || !strings.HasPrefix(got.Errors[5], "TypeError") {
		t.Errorf("failing expressions raised %q, equal to Heat's twice each: %v", got.Errors, got.ErrorsEqualHeat)
	}
	if got.Parses != 1 {
		t.Errorf("one text validated and resolved 3 times each was parsed %d times, want 1", got.Parses)
	}
	if got.BoundEvaluations != 11 {
		t.Errorf("with a 20,000-byte bound, 10 results of 4 KB, the newest again and the oldest again: %d evaluations, want 11", got.BoundEvaluations)
	}

	checkGuardOff(t, "yaql_cache.py", false, heatdir.YaqlCachePlugin, "yaql_cache", "another Yaql.result")
}

// root_id_cache, on Heat's own database API: the root of every stack of a
// chain equals Heat's answer, the second time without a statement; a stack
// the asker may not see, or one that does not exist, is None each time and
// asked each time; a full cache starts again; another get_root_id is left
// alone (one warning).
func TestRootIDCache(t *testing.T) {
	var got struct {
		On             bool     `json:"on"`
		Warnings       []string `json:"warnings"`
		Replaced       bool     `json:"replaced"`
		Heat           bool     `json:"heat"`
		EqualHeat      bool     `json:"equal_heat"`
		FirstSelects   int      `json:"first_selects"`
		SecondSelects  int      `json:"second_selects"`
		OtherProject   []any    `json:"other_project"`
		Missing        []any    `json:"missing"`
		BoundedSelects int      `json:"bounded_selects"`
	}
	runPluginScript(t, "root_id_cache.py", true, &got, heatdir.RootIDCachePlugin, "on")
	if !got.On || !got.Replaced || len(got.Warnings) != 0 {
		t.Fatalf("root_id_cache on %v, replaced %v, warnings %q", got.On, got.Replaced, got.Warnings)
	}
	if !got.Heat || !got.EqualHeat {
		t.Errorf("roots: Heat's as expected %v, ours equal to Heat's twice %v", got.Heat, got.EqualHeat)
	}
	// Heat reads a stack's row and each owner's: 1+2+3+4 for root..c, 2 for x.
	if got.FirstSelects != 12 || got.SecondSelects != 0 {
		t.Errorf("stack SELECTs: first ask %d (want 12, Heat's), second %d (want 0)", got.FirstSelects, got.SecondSelects)
	}
	if fmt.Sprint(got.OtherProject) != "[<nil> <nil> true true]" {
		t.Errorf("another project's ask of a p1 stack: %v, want None twice, each from the database", got.OtherProject)
	}
	if fmt.Sprint(got.Missing) != "[<nil> <nil> true true]" {
		t.Errorf("a stack that does not exist: %v, want None twice, each from the database", got.Missing)
	}
	// Bound 2 on a cache of 5: a new stack y (2) empties it, c is read
	// again (4), y is kept.
	if got.BoundedSelects != 6 {
		t.Errorf("with a bound of 2 on a full cache, asking y (new), c, y took %d stack SELECTs, want 6", got.BoundedSelects)
	}
	checkGuardOff(t, "root_id_cache.py", true, heatdir.RootIDCachePlugin, "root_id_cache", "another get_root_id")
}

// lazy_defn_hash, on Heat's own template parser: definitions of every
// section Heat hashes (functions, a macro, an external id), built by a parse,
// a freeze, a reparse and a deep copy, walk nothing until their hash is
// asked for; then each hash equals the one Heat computed when it built the
// same definition, a second ask walks nothing, a set keeps as many
// definitions as Heat's did, and a stack's validation (Heat's set of
// definitions) passes; a definition Heat fails to build (a set in it) is
// built and fails at each hash with Heat's error. Another __hash__ is left
// alone (one warning).
func TestLazyDefnHash(t *testing.T) {
	var got struct {
		On             bool     `json:"on"`
		Warnings       []string `json:"warnings"`
		Replaced       bool     `json:"replaced"`
		HeatBuildWalks int      `json:"heat_build_walks"`
		HeatDistinct   int      `json:"heat_distinct"`
		BuildWalks     int      `json:"build_walks"`
		HashWalks      int      `json:"hash_walks"`
		Names          []string `json:"names"`
		EqualHeat      []string `json:"equal_heat"`
		AgainEqual     bool     `json:"again_equal"`
		AgainWalks     int      `json:"again_walks"`
		Distinct       int      `json:"distinct"`
		Retain         string   `json:"retain"`
		Validated      bool     `json:"validated"`
		HeatUnhashable string   `json:"heat_unhashable"`
		Unhashable     []string `json:"unhashable"`
	}
	runPluginScript(t, "lazy_defn_hash.py", false, &got, heatdir.LazyDefnHashPlugin, "on")
	if !got.On || !got.Replaced || len(got.Warnings) != 0 {
		t.Fatalf("lazy_defn_hash on %v, replaced %v, warnings %q", got.On, got.Replaced, got.Warnings)
	}
	// 6 resources, each as parsed, frozen, reparsed and copied.
	if len(got.Names) != 24 || len(got.EqualHeat) != 0 {
		t.Errorf("%d definitions hashed, these differ from Heat's hash of the same definition: %q (want 24, none)", len(got.Names), got.EqualHeat)
	}
	if got.HeatBuildWalks == 0 || got.BuildWalks != 0 || got.HashWalks != got.HeatBuildWalks {
		t.Errorf("hashing walks: Heat's build %d, ours %d at build and %d when hashed (want 0, then Heat's count)",
			got.HeatBuildWalks, got.BuildWalks, got.HashWalks)
	}
	if !got.AgainEqual || got.AgainWalks != 0 {
		t.Errorf("a second hash: equal %v, %d walks (want true, 0: the value is kept)", got.AgainEqual, got.AgainWalks)
	}
	if got.HeatDistinct != 4 || got.Distinct != got.HeatDistinct {
		t.Errorf("a set of the 6 definitions (3 alike) keeps %d, Heat's kept %d (want 4)", got.Distinct, got.HeatDistinct)
	}
	if got.Retain != "Retain" || !got.Validated {
		t.Errorf("external id's deletion policy %q (want Retain, as Heat sets it), stack validated %v", got.Retain, got.Validated)
	}
	// The one difference: what Heat fails to build (a set in the
	// properties) is built, and fails at every hash with Heat's error.
	if !strings.HasPrefix(got.HeatUnhashable, "TypeError") || len(got.Unhashable) != 2 ||
		got.Unhashable[0] != got.HeatUnhashable || got.Unhashable[1] != got.HeatUnhashable {
		t.Errorf("a definition with a set: Heat's build %q, our two hashes %q (want Heat's TypeError each time)", got.HeatUnhashable, got.Unhashable)
	}
	checkGuardOff(t, "lazy_defn_hash.py", false, heatdir.LazyDefnHashPlugin, "lazy_defn_hash", "another __hash__")
}

// Importing the engine module drops oslo.messaging's warning about a
// manually built RPC client (Heat 19 builds every client that way: 747 of
// heat-all's 3,792 log lines in a Compute 2 create of THT), and only that
// message of its logger; importing it again adds no second filter.
func TestManualRPCClientWarning(t *testing.T) {
	var got struct {
		Before  []string `json:"before"`
		After   []string `json:"after"`
		Filters int      `json:"filters_after_reload"`
	}
	runPluginScript(t, "rpc_client_warning.py", false, &got)
	other := "another warning of this logger"
	if len(got.Before) != 3 || !strings.HasPrefix(got.Before[0], "Using RPCClient manually") || got.Before[2] != other {
		t.Fatalf("before the import, 2 clients logged %q: want oslo.messaging's warning twice, then %q", got.Before, other)
	}
	if len(got.After) != 1 || got.After[0] != other {
		t.Errorf("after the import, 3 clients and another warning logged %q, want only %q", got.After, other)
	}
	if got.Filters != 1 {
		t.Errorf("after a second import the logger has %d of our filters, want 1", got.Filters)
	}
}
