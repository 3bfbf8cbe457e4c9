package launch

import (
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
)

// schemaOf is a sqlite database's schema (sqlite_master's SQL) and
// migrate_version rows.
func schemaOf(t *testing.T, path string) []string {
	t.Helper()
	// Heat may be writing to it (its service records): wait for its locks.
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(30000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out []string
	rows, err := db.Query("SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master ORDER BY type, name")
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for rows.Next() {
		var s string
		rows.Scan(&s)
		out = append(out, s)
	}
	rows.Close()
	var version string
	if err := db.QueryRow("SELECT repository_id || ' ' || version FROM migrate_version").Scan(&version); err != nil {
		t.Fatalf("%s: migrate_version: %v", path, err)
	}
	return append(out, "migrate_version "+version)
}

func dbSyncLog(t *testing.T, o Options) string {
	t.Helper()
	d, _ := heatdir.At(o.HeatDir)
	b, err := os.ReadFile(d.Log("db_sync.log"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The first fresh launch of a Heat runs db_sync and keeps its result; the
// next copies it (db_sync not run) and gets the schema db_sync makes, and
// serves; schema_cache false, or an entry that does not match its record,
// runs db_sync.
func TestSchemaCache(t *testing.T) {
	requireHeat(t)
	cacheHome := filepath.Join(t.TempDir(), "xdg")
	t.Setenv("XDG_CACHE_HOME", cacheHome)
	entries := func() []string {
		m, _ := filepath.Glob(filepath.Join(cacheHome, "ephemeral-heat", "heat-schema", "*.sqlite"))
		return m
	}
	var w warnings
	first := newOpts(t, &w)
	run(t, first, Started)
	if log := dbSyncLog(t, first); strings.Contains(log, "db_sync not run") {
		t.Fatalf("the first launch did not run db_sync: %s", log)
	}
	if len(entries()) != 1 {
		t.Fatalf("cache entries after the first launch: %v", entries())
	}
	firstDB := filepath.Join(first.HeatDir, heatdir.SQLiteFile)

	second := newOpts(t, &w)
	out := run(t, second, Started)
	if log := dbSyncLog(t, second); !strings.Contains(log, "db_sync not run") {
		t.Fatalf("the second launch ran db_sync: %s", log)
	}
	createStack(t, out.Endpoint, "cached")
	if !stackListed(t, out.Endpoint, "cached") {
		t.Fatal("a stack created on the cached schema is not listed")
	}
	// Both running: the first on db_sync's own result, the second on the
	// cached copy (each with what Heat adds when it starts, e.g. our
	// foreign key indexes).
	if a, b := schemaOf(t, firstDB), schemaOf(t, filepath.Join(second.HeatDir, heatdir.SQLiteFile)); !reflect.DeepEqual(a, b) {
		t.Errorf("the cached schema differs from db_sync's:\n%v\n%v", a, b)
	}
	if st, _ := os.Stat(filepath.Join(second.HeatDir, heatdir.SQLiteFile)); st.Mode().Perm() != 0o600 {
		t.Errorf("copied database mode %o", st.Mode().Perm())
	}

	off := newOpts(t, &w)
	off.Backend = backend.Values{"schema_cache": false}
	run(t, off, Started)
	if log := dbSyncLog(t, off); strings.Contains(log, "db_sync not run") {
		t.Errorf("schema_cache false did not run db_sync: %s", log)
	}

	os.WriteFile(entries()[0], []byte("not a database"), 0o600)
	var tw warnings
	tampered := newOpts(t, &tw)
	run(t, tampered, Started)
	if log := dbSyncLog(t, tampered); strings.Contains(log, "db_sync not run") {
		t.Errorf("a tampered entry was used: %s", log)
	}
	if !tw.has("does not match its record") {
		t.Errorf("no warning for the tampered entry: %v", tw)
	}
	// db_sync's result replaced it: the next launch copies it again.
	again := newOpts(t, &w)
	run(t, again, Started)
	if log := dbSyncLog(t, again); !strings.Contains(log, "db_sync not run") {
		t.Errorf("the replaced entry was not used: %s", log)
	}
}
