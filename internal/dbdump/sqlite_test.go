package dbdump

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// requireBinary fails the test, naming the Debian package, when name is missing.
func requireBinary(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found (%v): apt-get install -y %s", name, err, pkg)
	}
	return p
}

func openSQLite(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func execAll(t testing.TB, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// makeSQLiteDB creates a database with awkward names, values and schema
// objects. With shellExact set it avoids the few values whose text differs
// between the sqlite3 shell and DumpSQLite (see the report in the package
// tests): reals the shell prints with long-double noise and text with NUL.
func makeSQLiteDB(t testing.TB, path string, shellExact bool) {
	t.Helper()
	db := openSQLite(t, path)
	execAll(t, db,
		`CREATE TABLE "order"(id INTEGER PRIMARY KEY AUTOINCREMENT, a TEXT, b BLOB, c REAL, d, e DATETIME)`,
		"CREATE TABLE plain(x INT, y TEXT -- trailing comment\n)",
		`CREATE TABLE "we""ird"("col one" TEXT, [end] INT)`,
		`CREATE TABLE gen(a INT, b INT GENERATED ALWAYS AS (a*2) VIRTUAL, c INT)`,
		`CREATE TABLE norowid(k TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID`,
		`CREATE TABLE empty(x)`,
		`CREATE TABLE stack(id TEXT PRIMARY KEY, name TEXT, created_at DATETIME, parent_id TEXT REFERENCES stack(id))`,
		`CREATE INDEX ix_plain ON plain(x)`,
		"CREATE VIEW v AS SELECT * FROM plain -- view comment",
		`CREATE TRIGGER tr AFTER INSERT ON plain BEGIN INSERT INTO "order"(a) VALUES('t;r'); END`,
	)
	ins := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ins(`INSERT INTO "order"(a,b,c,d,e) VALUES(?,?,?,?,?)`, "it's\ntwo\\n lines\rx", []byte{0, 0xff, 0x27, '\\'}, 0.1, int64(1)<<62, "2024-01-01 00:00:00")
	ins(`INSERT INTO "order"(a,b,c,d,e) VALUES(?,?,?,?,?)`, nil, []byte{}, 3.0, -5, "2024-02-29 23:59:59.123456")
	ins(`INSERT INTO "order"(a,b,c,d,e) VALUES('',NULL,1e999,-1e999,'x\012 y'||char(10)||'z')`)
	ins(`INSERT INTO "order"(a,b,c,d,e) VALUES(?,?,?,?,?)`, "héllo 😀 日本", []byte("\x00\x27\\"), 0.5, "text in untyped", 12345)
	ins(`INSERT INTO "order"(a,b) VALUES('blob with nul, quote, backslash',?)`, []byte(strings.Repeat("\x00\x27\\", 1000)))
	if !shellExact {
		ins(`INSERT INTO "order"(a,b,c,d,e) VALUES(CAST(X'610062' AS TEXT),NULL,?,?,?)`, 1e300, 0.1+0.2, 1.5e20)
	}
	ins(`INSERT INTO "order"(id,a) VALUES(100,'gap in ids')`)
	ins(`DELETE FROM "order" WHERE id=100`) // sqlite_sequence keeps 100
	ins(`INSERT INTO plain VALUES(1,'a'),(2,NULL),(NULL,'b')`)
	ins(`INSERT INTO "we""ird" VALUES('x"y',1)`)
	ins(`INSERT INTO gen(a,c) VALUES(1,3),(2,NULL)`)
	ins(`INSERT INTO norowid VALUES('k1',X'01'),('k2',NULL)`)
	ins(`INSERT INTO stack VALUES('s1','root','2024-01-01 10:00:00',NULL),('s2','child','2024-01-01 10:00:01','s1')`)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3000; i++ {
		if _, err := tx.Exec(`INSERT INTO plain VALUES(?,?)`, i, strings.Repeat("v", i%50)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	ins(`INSERT INTO plain VALUES(-1,?)`, strings.Repeat("big'\n", 200000)) // 1 MB
	if shellExact {
		// The shell's SQLite has no STAT4: let it compute sqlite_stat1 only.
		db.Close()
		if out, err := exec.Command(requireBinary(t, "sqlite3", "sqlite3"), path, "ANALYZE").CombinedOutput(); err != nil {
			t.Fatalf("sqlite3 ANALYZE: %v\n%s", err, out)
		}
	} else {
		execAll(t, db, "ANALYZE") // modernc has STAT4: sqlite_stat4 must be skipped
	}
}

// sqliteFingerprint returns every table's rows as sorted typeof:hex strings.
func sqliteFingerprint(t testing.TB, path string) map[string][]string {
	t.Helper()
	db := openSQLite(t, path)
	rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type='table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	out := map[string][]string{}
	for _, tb := range tables {
		crows, err := db.Query(`SELECT name FROM pragma_table_xinfo(?)`, tb)
		if err != nil {
			t.Fatal(err)
		}
		var exprs []string
		for crows.Next() {
			var c string
			if err := crows.Scan(&c); err != nil {
				t.Fatal(err)
			}
			q := sqliteQuoteIdent(c)
			exprs = append(exprs, "typeof("+q+")||':'||hex("+q+")")
		}
		crows.Close()
		r, err := db.Query("SELECT " + strings.Join(exprs, "||','||") + " FROM " + sqliteQuoteIdent(tb))
		if err != nil {
			t.Fatal(err)
		}
		var list []string
		for r.Next() {
			var s string
			if err := r.Scan(&s); err != nil {
				t.Fatal(err)
			}
			list = append(list, s)
		}
		r.Close()
		sort.Strings(list)
		out[tb] = list
	}
	var schema []string
	srows, err := db.Query(`SELECT type||' '||name||' '||tbl_name||' '||coalesce(sql,'') FROM sqlite_schema WHERE name != 'sqlite_stat4' ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	for srows.Next() {
		var s string
		if err := srows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		schema = append(schema, s)
	}
	srows.Close()
	out["<schema>"] = schema
	return out
}

func compareFingerprints(t testing.TB, want, got map[string][]string) {
	t.Helper()
	for tb, w := range want {
		if tb == "sqlite_stat4" {
			continue // not dumped, see DumpSQLite
		}
		g, ok := got[tb]
		if !ok {
			t.Errorf("table %s missing", tb)
			continue
		}
		if len(w) != len(g) {
			t.Errorf("table %s: %d rows, want %d", tb, len(g), len(w))
			continue
		}
		for i := range w {
			if w[i] != g[i] {
				t.Errorf("table %s row %d differs:\n got %.200s\nwant %.200s", tb, i, g[i], w[i])
				break
			}
		}
	}
}

func shellDump(t testing.TB, sqlite3, path string) []byte {
	t.Helper()
	out, err := exec.Command(sqlite3, path, ".dump").Output()
	if err != nil {
		t.Fatalf("sqlite3 %s .dump: %v", path, err)
	}
	return out
}

func shellLoad(t testing.TB, sqlite3, path string, dump []byte) {
	t.Helper()
	cmd := exec.Command(sqlite3, "-bail", path)
	cmd.Stdin = bytes.NewReader(dump)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("sqlite3 %s < dump: %v\n%s", path, err, out)
	}
}

func TestDumpSQLiteMatchesShell(t *testing.T) {
	t.Parallel()
	sqlite3 := requireBinary(t, "sqlite3", "sqlite3")
	src := filepath.Join(t.TempDir(), "heat.sqlite")
	makeSQLiteDB(t, src, true)

	var buf bytes.Buffer
	st, err := DumpSQLite(context.Background(), src, &buf)
	if err != nil {
		t.Fatal(err)
	}
	want := shellDump(t, sqlite3, src)
	if !bytes.Equal(buf.Bytes(), want) {
		gl, wl := strings.Split(buf.String(), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("dump differs from sqlite3 .dump at line %d:\n got %.300q\nwant %.300q", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("dump has %d lines, sqlite3 .dump %d", len(gl), len(wl))
	}
	if st.Tables != 7 || st.TableRows["plain"] != 3004 || st.TableRows["order"] != 3009 || st.TableRows["empty"] != 0 || st.Bytes != int64(buf.Len()) {
		t.Errorf("unexpected stats %+v (dump %d bytes)", st, buf.Len())
	}
	if st.Rows != 3004+3009+1+2+2+2 { // the trigger adds a row to "order" per row of plain
		t.Errorf("total rows %d", st.Rows)
	}
}

func TestSQLiteRoundTrips(t *testing.T) {
	t.Parallel()
	sqlite3 := requireBinary(t, "sqlite3", "sqlite3")
	dir := t.TempDir()
	src := filepath.Join(dir, "heat.sqlite")
	makeSQLiteDB(t, src, false)
	want := sqliteFingerprint(t, src)
	ctx := context.Background()

	var mine bytes.Buffer
	dumpStats, err := DumpSQLite(ctx, src, &mine)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("our dump loaded by sqlite3 shell", func(t *testing.T) {
		dst := filepath.Join(dir, "shell-loaded.sqlite")
		shellLoad(t, sqlite3, dst, mine.Bytes())
		compareFingerprints(t, want, sqliteFingerprint(t, dst))
		if a, b := withoutStat4(shellDump(t, sqlite3, src)), shellDump(t, sqlite3, dst); !bytes.Equal(a, b) {
			t.Errorf("sqlite3 .dump of original (%d bytes) and reloaded database (%d bytes) differ", len(a), len(b))
		}
	})
	t.Run("our dump restored by RestoreSQLite", func(t *testing.T) {
		dst := filepath.Join(dir, "restored.sqlite")
		st, err := RestoreSQLite(ctx, bytes.NewReader(mine.Bytes()), dst)
		if err != nil {
			t.Fatal(err)
		}
		compareFingerprints(t, want, sqliteFingerprint(t, dst))
		if st.Tables != dumpStats.Tables || st.Rows != dumpStats.Rows || st.Bytes != int64(mine.Len()) {
			t.Errorf("restore stats %+v, dump stats %+v", st, dumpStats)
		}
		for tb, n := range dumpStats.TableRows {
			if st.TableRows[tb] != n {
				t.Errorf("table %s: restored %d rows, dumped %d", tb, st.TableRows[tb], n)
			}
		}
		fi, err := os.Stat(dst)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("new database has mode %v, want 0600", fi.Mode().Perm())
		}
		assertNoTempFiles(t, dir)
	})
	t.Run("sqlite3 shell dump restored by RestoreSQLite", func(t *testing.T) {
		shell := shellDump(t, sqlite3, src)
		dst := filepath.Join(dir, "from-shell.sqlite")
		if _, err := RestoreSQLite(ctx, bytes.NewReader(shell), dst); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(shellDump(t, sqlite3, dst), shell) {
			t.Error("sqlite3 .dump of restored database differs from the dump loaded")
		}
	})
}

func assertNoTempFiles(t testing.TB, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".restore-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestRestoreSQLiteRefusesAndOverwrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	dump := "PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\nCREATE TABLE t(x);\nINSERT INTO t VALUES(1);\nINSERT INTO t VALUES('two');\nCOMMIT;\n"

	existing := filepath.Join(dir, "existing.sqlite")
	db := openSQLite(t, existing)
	execAll(t, db, "PRAGMA journal_mode=WAL", "CREATE TABLE old(y)", "INSERT INTO old VALUES(42)")
	db.Close()
	if err := os.Chmod(existing, 0o640); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		path    string
		dump    string
		opts    []Option
		wantErr string
		rows    int64
	}{
		{name: "new file", path: filepath.Join(dir, "new.sqlite"), dump: dump, rows: 2},
		{name: "empty existing file", path: filepath.Join(dir, "empty.sqlite"), dump: dump, rows: 2},
		{name: "non-empty refused", path: existing, dump: dump, wantErr: "refusing to overwrite"},
		{name: "truncated dump", path: filepath.Join(dir, "trunc.sqlite"), dump: dump[:len(dump)-8], wantErr: "BEGIN without COMMIT"},
		{name: "incomplete statement", path: filepath.Join(dir, "inc.sqlite"), dump: "CREATE TABLE t(x);\nINSERT INTO t VALUES(1", wantErr: "incomplete"},
		{name: "bad sql reports line", path: filepath.Join(dir, "bad.sqlite"), dump: "CREATE TABLE t(x);\n\nINSERT INTO nope VALUES(1);\n", wantErr: "line 3"},
		{name: "attach refused", path: filepath.Join(dir, "att.sqlite"), dump: "ATTACH '/tmp/x.db' AS x;", wantErr: "ATTACH"},
		{name: "overwrite", path: existing, dump: dump, opts: []Option{WithOverwrite()}, rows: 2},
	}
	if err := os.WriteFile(filepath.Join(dir, "empty.sqlite"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		st, err := RestoreSQLite(ctx, strings.NewReader(tc.dump), tc.path, tc.opts...)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
			}
			if tc.path != existing {
				if _, serr := os.Stat(tc.path); !errors.Is(serr, os.ErrNotExist) {
					t.Errorf("%s: failed restore left %s behind (%v)", tc.name, tc.path, serr)
				}
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if st.Rows != tc.rows || st.TableRows["t"] != tc.rows || st.Tables != 1 {
			t.Errorf("%s: stats %+v", tc.name, st)
		}
	}
	// The refused restore left the old content alone; the overwrite replaced
	// it, kept the mode and removed the stale WAL files.
	fp := sqliteFingerprint(t, existing)
	if _, ok := fp["old"]; ok {
		t.Error("overwrite kept the old table")
	}
	if got := fp["t"]; len(got) != 2 {
		t.Errorf("overwritten database has rows %q", got)
	}
	fi, err := os.Stat(existing)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("overwrite changed mode to %v", fi.Mode().Perm())
	}
	assertNoTempFiles(t, dir)
}

func TestDumpSQLiteMissingFile(t *testing.T) {
	_, err := DumpSQLite(context.Background(), filepath.Join(t.TempDir(), "nope.sqlite"), &bytes.Buffer{})
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("error = %v, want not-exist", err)
	}
}

// TestDumpSQLiteConsistentUnderWriter dumps while another connection keeps
// committing transactions that preserve invariants; every dump must see a
// state from between two commits.
func TestDumpSQLiteConsistentUnderWriter(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"WAL", "DELETE"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "live.sqlite")
			w := openSQLite(t, src+"?_pragma=busy_timeout(10000)&_pragma=journal_mode("+mode+")")
			w.SetMaxOpenConns(1)
			execAll(t, w,
				"CREATE TABLE account(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL)",
				"CREATE TABLE event(id INTEGER PRIMARY KEY, payload TEXT)",
				"CREATE TABLE event_ref(event_id INTEGER PRIMARY KEY REFERENCES event(id))",
			)
			var setup strings.Builder
			setup.WriteString("BEGIN;")
			for i := 0; i < 100; i++ {
				fmt.Fprintf(&setup, "INSERT INTO account VALUES(%d, 1000);", i)
			}
			for i := 0; i < 2000; i++ {
				fmt.Fprintf(&setup, "INSERT INTO event(id,payload) VALUES(%d,'%s'); INSERT INTO event_ref VALUES(%d);", i, strings.Repeat("p", 200), i)
			}
			setup.WriteString("COMMIT;")
			execAll(t, w, setup.String())

			ctx, cancel := context.WithCancel(context.Background())
			var commits atomic.Int64
			var wg sync.WaitGroup
			var werr error
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 2000; ctx.Err() == nil; i++ {
					tx, err := w.Begin()
					if err != nil {
						werr = err
						return
					}
					a, b := i%100, (i*7+3)%100
					_, err1 := tx.Exec("UPDATE account SET balance=balance-5 WHERE id=?", a)
					_, err2 := tx.Exec("INSERT INTO event(id,payload) VALUES(?,'x')", i)
					_, err3 := tx.Exec("UPDATE account SET balance=balance+5 WHERE id=?", b)
					_, err4 := tx.Exec("INSERT INTO event_ref VALUES(?)", i)
					if err := errors.Join(err1, err2, err3, err4); err != nil {
						tx.Rollback()
						werr = err
						return
					}
					if err := tx.Commit(); err != nil {
						werr = err
						return
					}
					commits.Add(1)
				}
			}()
			for commits.Load() < 20 && werr == nil {
				time.Sleep(time.Millisecond)
			}
			for round := 0; round < 3; round++ {
				var buf bytes.Buffer
				before := commits.Load()
				if _, err := DumpSQLite(context.Background(), src, &buf); err != nil {
					cancel()
					wg.Wait()
					t.Fatalf("dump under writer: %v", err)
				}
				after := commits.Load()
				dst := filepath.Join(dir, fmt.Sprintf("restored-%d.sqlite", round))
				if _, err := RestoreSQLite(context.Background(), &buf, dst); err != nil {
					cancel()
					wg.Wait()
					t.Fatal(err)
				}
				r := openSQLite(t, dst)
				var sum, events, refs int64
				if err := r.QueryRow("SELECT (SELECT sum(balance) FROM account), (SELECT count(*) FROM event), (SELECT count(*) FROM event_ref)").Scan(&sum, &events, &refs); err != nil {
					t.Fatal(err)
				}
				if sum != 100*1000 || events != refs {
					t.Errorf("round %d: inconsistent dump: balance sum %d, %d events, %d refs", round, sum, events, refs)
				}
				t.Logf("round %d: %d events in dump, writer committed %d transactions during the dump", round, events, after-before)
			}
			cancel()
			wg.Wait()
			if werr != nil {
				t.Fatalf("writer: %v", werr)
			}
		})
	}
}

// TestSQLiteRealsRoundTripExactly checks that every double, subnormals and
// extreme exponents included, survives DumpSQLite + RestoreSQLite bit for
// bit. (Debian's sqlite3 3.40 shell parses some extreme-exponent literals
// inexactly whatever their format, so this runs through the Go driver.)
func TestSQLiteRealsRoundTripExactly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "reals.sqlite")
	db := openSQLite(t, src)
	execAll(t, db, "CREATE TABLE r(i INTEGER PRIMARY KEY, v REAL)")
	rnd := rand.New(rand.NewSource(1))
	vals := []float64{0, 1, -1, 0.1, 0.1 + 0.2, 1e300, -1e-300, 5e-324, math.MaxFloat64, math.SmallestNonzeroFloat64, 1 << 53, 1 << 63, -(1 << 63), 1.5e20, 123456.5}
	for len(vals) < 5000 {
		f := math.Float64frombits(rnd.Uint64())
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			vals = append(vals, f)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		if _, err := tx.Exec("INSERT INTO r VALUES(?,?)", i, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := DumpSQLite(context.Background(), src, &buf); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "restored.sqlite")
	if _, err := RestoreSQLite(context.Background(), &buf, dst); err != nil {
		t.Fatal(err)
	}
	rows, err := openSQLite(t, dst).Query("SELECT i, v, typeof(v) FROM r ORDER BY i")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var i int
		var v float64
		var typ string
		if err := rows.Scan(&i, &v, &typ); err != nil {
			t.Fatal(err)
		}
		if typ != "real" || math.Float64bits(v) != math.Float64bits(vals[i]) {
			t.Errorf("value %d: stored %v (%s), want %v", i, v, typ, vals[i])
		}
		n++
	}
	if n != len(vals) {
		t.Fatalf("restored %d values, want %d", n, len(vals))
	}
}

// withoutStat4 drops what the shell writes for sqlite_stat4 and DumpSQLite
// leaves out: its rows and its (second) "ANALYZE sqlite_schema;".
func withoutStat4(dump []byte) []byte {
	var out []byte
	analyze := 0
	for _, line := range bytes.SplitAfter(dump, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("INSERT INTO sqlite_stat4 ")) {
			continue
		}
		if string(line) == "ANALYZE sqlite_schema;\n" {
			if analyze++; analyze > 1 {
				continue
			}
		}
		out = append(out, line...)
	}
	return out
}
