package launch_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/mariadbtest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/tripleotest"
)

// TestAdoptTripleODump: a stack made on a real Heat with MySQL, dumped the
// way python-tripleoclient does (mysqldump heat → heat-db.sql → tarfile
// w:bz2, named heat-db.sql-<time.time()>.tar.bzip2, in
// <working dir>/heat-launcher), is adopted by relaunching Heat on it with
// sqlite (through the conversion) and with MySQL (as it is): Heat lists
// the stack, and every resource and event reads the same through Heat's
// API and row by row in the database; the working dir is only read. A
// truncated dump is refused.
func TestAdoptTripleODump(t *testing.T) {
	heattest.RequireHeat(t)
	ctx := context.Background()
	srv := mariadbtest.Start(t)

	// The deployment tripleoclient made: Heat on MySQL, a stack, a
	// deleted stack, Heat stopped, then the dump.
	srcDir := filepath.Join(t.TempDir(), "source", "heat-launcher")
	src := startHeat(t, launch.Options{HeatDir: srcDir, Database: launch.MySQL, DatabaseURL: srv.URL("")})
	id := heattest.CreateGroupStack(t, src.Endpoint, "overcloud")
	goneID := heattest.CreateGroupStack(t, src.Endpoint, "gone")
	if code, b := heattest.API(t, "DELETE", src.Endpoint+"/stacks/gone/"+goneID, ""); code != 204 {
		t.Fatalf("delete: %d %s", code, b)
	}
	waitGone(t, src.Endpoint, "gone")
	before := apiState(t, src.Endpoint, id)
	stop(t, srcDir)
	srcDB := database(t, srcDir)
	work := filepath.Join(t.TempDir(), "overcloud-deploy", "overcloud") // tripleoclient's working dir
	archive := tripleotest.DumpHeat(t, srv, srcDB.Database, filepath.Join(work, "heat-launcher"), "", tripleotest.PAX)
	if !strings.HasPrefix(filepath.Base(archive), "heat-db.sql-") || !strings.HasSuffix(archive, ".tar.bzip2") {
		t.Fatalf("not tripleoclient's name: %s", archive)
	}
	for _, p := range []string{work, filepath.Dir(work), filepath.Join(work, "heat-launcher")} {
		os.Chmod(p, 0o755)
	}
	os.Chmod(archive, 0o644)
	workBefore := treeState(t, work)
	srcRows := readTables(t, "mysql", srcDB.DSN(), false)

	for _, kind := range []string{launch.SQLite, launch.MySQL} {
		t.Run("relaunch on "+kind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "adopted", "heat-launcher")
			o := launch.Options{HeatDir: dir, Database: kind, RestoreFrom: work}
			if kind == launch.MySQL {
				o.DatabaseURL = srv.URL("")
			}
			out := startHeat(t, o)
			copied := filepath.Join(dir, filepath.Base(archive))
			if out.Restored != copied {
				t.Errorf("restored %q, want the copy %q", out.Restored, copied)
			}
			if fi, err := os.Stat(copied); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("the copy in heat_dir: %v %v", fi, err)
			}
			// The stack list, and every resource and event, through Heat.
			if code, b := heattest.API(t, "GET", out.Endpoint+"/stacks", ""); code != 200 || !strings.Contains(string(b), `"stack_name": "overcloud"`) || strings.Contains(string(b), `"gone"`) {
				t.Errorf("stack list: %d %s", code, b)
			}
			if after := apiState(t, out.Endpoint, id); !reflect.DeepEqual(after, before) {
				for k := range before {
					if !reflect.DeepEqual(after[k], before[k]) {
						t.Errorf("%s differs after adoption:\nbefore %s\nafter  %s", k, jsonText(before[k]), jsonText(after[k]))
					}
				}
			}
			// Every row of the stack, resource and event tables, read back
			// from the database, and the row count of every table.
			target := database(t, dir)
			var got map[string][][]string
			if kind == launch.SQLite {
				got = readTables(t, "sqlite", "file:"+target.Path+"?mode=ro", true)
			} else {
				got = readTables(t, "mysql", target.DSN(), false)
			}
			for table, rows := range srcRows {
				switch {
				case table == "service": // each Heat registers its own engine
				case table == "stack" || table == "resource" || table == "event" || table == "raw_template":
					if !reflect.DeepEqual(got[table], rows) {
						t.Errorf("table %s differs:\nsource %q\nadopted %q", table, rows, got[table])
					}
				case len(got[table]) != len(rows):
					t.Errorf("table %s: %d rows, source %d", table, len(got[table]), len(rows))
				}
			}
			if len(srcRows["event"]) < 10 || len(srcRows["resource"]) != 5 {
				t.Errorf("too little to compare: %d events, %d resources", len(srcRows["event"]), len(srcRows["resource"]))
			}
			if kind == launch.SQLite {
				compareWithDBSync(t, target.Path)
			}
		})
	}
	if after := treeState(t, work); after != workBefore {
		t.Errorf("the tripleoclient working dir changed:\n%s\nwas\n%s", after, workBefore)
	}

	t.Run("a truncated dump is refused", func(t *testing.T) {
		b, err := os.ReadFile(archive)
		if err != nil {
			t.Fatal(err)
		}
		bad := filepath.Join(t.TempDir(), filepath.Base(archive))
		if err := os.WriteFile(bad, b[:len(b)*2/3], 0o644); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "heat-launcher")
		port, _ := proc.FreePort()
		o := launch.Options{State: launch.Started, HeatDir: dir, APIPort: port, RestoreFrom: bad, Warn: t.Logf}
		t.Cleanup(func() { o.State = launch.Absent; launch.Run(ctx, o) })
		_, err = launch.Run(ctx, o)
		if err == nil || !strings.Contains(err.Error(), "restore_db: refusing "+bad+": not a complete tripleoclient Heat dump: it ends too early") {
			t.Fatalf("error = %v", err)
		}
		if d, err := heatdir.At(dir); err == nil {
			if rec, _ := d.ReadRecord(); rec != nil && rec.State == heatdir.Running {
				t.Errorf("Heat runs after a refused restore: %+v", rec)
			}
		}
		if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port)); err == nil {
			resp.Body.Close()
			t.Errorf("something answers on Heat's port %d after a refused restore", port)
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.Base(bad))); !os.IsNotExist(err) {
			t.Errorf("the refused dump was copied into heat_dir: %v", err)
		}
	})
}

// database is the Heat database heat.conf in dir names.
func database(t *testing.T, dir string) heatdb.DB {
	t.Helper()
	hd, err := heatdir.At(dir)
	if err != nil {
		t.Fatal(err)
	}
	db, err := hd.Database()
	if err != nil {
		t.Fatal(err)
	}
	return db.DB
}

func startHeat(t *testing.T, o launch.Options) launch.Outcome {
	t.Helper()
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	o.State, o.APIPort, o.Warn = launch.Started, port, t.Logf
	t.Cleanup(func() {
		c := o
		c.State = launch.Absent
		if _, err := launch.Run(context.Background(), c); err != nil {
			t.Errorf("removing the Heat of %s: %v", o.HeatDir, err)
		}
	})
	out, err := launch.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func stop(t *testing.T, dir string) {
	t.Helper()
	if _, err := launch.Run(context.Background(), launch.Options{State: launch.Stopped, HeatDir: dir, Warn: t.Logf}); err != nil {
		t.Fatal(err)
	}
}

func waitGone(t *testing.T, endpoint, name string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		code, b := heattest.API(t, "GET", endpoint+"/stacks/"+name, "")
		if code == 404 {
			return
		}
		if time.Now().After(deadline) || strings.Contains(string(b), "DELETE_FAILED") {
			t.Fatalf("stack %s not deleted: %d %s", name, code, b)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// apiState is what Heat's API says of stack id: the stack list, the stack
// (outputs included), every resource and every event, nested ones too,
// without the links (they name the host and port).
func apiState(t *testing.T, endpoint, id string) map[string]any {
	t.Helper()
	get := func(path, key string, sortKeys ...string) any {
		code, b := heattest.API(t, "GET", endpoint+path, "")
		if code != 200 {
			t.Fatalf("GET %s: %d %s", path, code, b)
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		x := dropLinks(v[key])
		if list, ok := x.([]any); ok {
			sort.Slice(list, func(i, j int) bool {
				return sortKey(list[i], sortKeys) < sortKey(list[j], sortKeys)
			})
		}
		return x
	}
	base := "/stacks/overcloud/" + id
	stack := get(base, "stack").(map[string]any)
	if outs, ok := stack["outputs"].([]any); ok { // in no particular order
		sort.Slice(outs, func(i, j int) bool {
			return sortKey(outs[i], []string{"output_key"}) < sortKey(outs[j], []string{"output_key"})
		})
	}
	st := map[string]any{
		"stacks":    get("/stacks", "stacks", "id"),
		"stack":     stack,
		"resources": get(base+"/resources?nested_depth=5&with_detail=true", "resources", "stack_name", "resource_name"),
		"events":    get(base+"/events?nested_depth=5", "events", "id"),
	}
	if n := len(st["events"].([]any)); n < 10 {
		t.Fatalf("only %d events", n)
	}
	return st
}

func sortKey(v any, keys []string) string {
	m, _ := v.(map[string]any)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprint(m[k]))
	}
	return strings.Join(parts, "|")
}

func dropLinks(v any) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "links")
		for k, e := range x {
			x[k] = dropLinks(e)
		}
	case []any:
		for i, e := range x {
			x[i] = dropLinks(e)
		}
	}
	return v
}

func jsonText(v any) string {
	b, _ := json.MarshalIndent(v, "", " ")
	return string(b)
}

// readTables reads every row of every table as text, rows sorted: NULL as
// "NULL", DATETIME values without SQLAlchemy's sqlite microseconds
// (".000000": MySQL's DATETIME keeps whole seconds).
func readTables(t *testing.T, driver, dsn string, sqlite bool) map[string][][]string {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"
	if sqlite {
		q = "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
	}
	names := queryStrings(t, db, q)
	out := map[string][][]string{}
	for _, table := range names {
		sel := "SELECT * FROM `" + table + "`"
		if sqlite {
			cols := queryStrings(t, db, "SELECT name FROM pragma_table_info('"+table+"')")
			for i, c := range cols {
				cols[i] = `+"` + c + `"` // the stored value, not the driver's time.Time
			}
			sel = "SELECT " + strings.Join(cols, ",") + ` FROM "` + table + `"`
		}
		rows, err := db.Query(sel)
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		cols, _ := rows.Columns()
		var all [][]string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			row := make([]string, len(cols))
			for i, v := range vals {
				switch x := v.(type) {
				case nil:
					row[i] = "NULL"
				case []byte:
					row[i] = string(x)
				default:
					row[i] = fmt.Sprint(x)
				}
				if sqlite && len(row[i]) == 26 && strings.HasSuffix(row[i], ".000000") && row[i][4] == '-' && row[i][13] == ':' {
					row[i] = strings.TrimSuffix(row[i], ".000000")
				}
			}
			all = append(all, row)
		}
		rows.Close()
		sort.Slice(all, func(i, j int) bool { return strings.Join(all[i], "\x00") < strings.Join(all[j], "\x00") })
		out[table] = all
	}
	return out
}

func queryStrings(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// compareWithDBSync checks that the converted database has the schema
// `heat-manage db_sync` makes on sqlite: the same tables, columns (name,
// type, NOT NULL, default, primary key), foreign keys and indexes, and the
// same migration version.
func compareWithDBSync(t *testing.T, converted string) {
	t.Helper()
	dir := t.TempDir()
	fresh := filepath.Join(dir, "heat.sqlite")
	conf := filepath.Join(dir, "heat.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("[DEFAULT]\nlog_file = %s/heat-manage.log\n[database]\nconnection = sqlite:///%s\n", dir, fresh)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("heat-manage", "--config-file", conf, "db_sync").CombinedOutput(); err != nil {
		t.Fatalf("heat-manage db_sync: %v\n%s", err, out)
	}
	want, got := sqliteSchema(t, fresh), sqliteSchema(t, converted)
	if len(want) < 1+3*15 || len(want["table event columns"]) < 10 || len(want["table resource indexes"]) < 2 {
		t.Fatalf("db_sync's schema was not read: %q", want)
	}
	for k := range want {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("%s:\n converted %q\n db_sync   %q", k, got[k], want[k])
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("the converted database has %s: %q", k, got[k])
		}
	}
}

func sqliteSchema(t *testing.T, path string) map[string][]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string][]string{}
	rowsOf := func(q string) [][]string {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var all [][]string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rows.Scan(ptrs...)
			row := make([]string, len(cols))
			for i, v := range vals {
				row[i] = fmt.Sprint(v)
			}
			all = append(all, row)
		}
		return all
	}
	out["migrate_version"] = []string{fmt.Sprint(rowsOf("SELECT repository_id, version FROM migrate_version"))}
	for _, table := range queryStrings(t, db, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name") {
		var cols, fks, idx []string
		for _, c := range rowsOf("SELECT name, upper(type), \"notnull\", coalesce(dflt_value, ''), pk FROM pragma_table_info('" + table + "')") {
			cols = append(cols, strings.Join(c, " "))
		}
		for _, f := range rowsOf("SELECT \"table\", \"from\", \"to\", on_update, on_delete FROM pragma_foreign_key_list('" + table + "')") {
			fks = append(fks, strings.Join(f, " "))
		}
		for _, x := range rowsOf("SELECT name, \"unique\", origin FROM pragma_index_list('" + table + "')") {
			ic := queryStrings(t, db, "SELECT name FROM pragma_index_info('"+x[0]+"') ORDER BY seqno")
			name := x[0]
			if x[2] != "c" { // sqlite_autoindex_*: named by position
				name = ""
			}
			if strings.HasPrefix(name, heatdir.FKIndexPrefix) || name == heatdir.FailedIndex {
				continue // heat-all's engine plugins add these to any sqlite database it opens
			}
			idx = append(idx, fmt.Sprintf("%s unique=%s origin=%s (%s)", name, x[1], x[2], strings.Join(ic, ",")))
		}
		sort.Strings(fks)
		sort.Strings(idx)
		out["table "+table+" columns"] = cols
		out["table "+table+" foreign keys"] = fks
		out["table "+table+" indexes"] = idx
	}
	return out
}

// treeState is what must not change in a directory adoption only reads:
// every entry's name, mode, size, modification and change time.
func treeState(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		lines = append(lines, fmt.Sprintf("%s %v %d %d %d.%d", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), st.Ctim.Sec, st.Ctim.Nsec))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
