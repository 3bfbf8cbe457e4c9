package dumps_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
)

// fakeHeatDir makes a heat_dir whose heat.conf names a sqlite database with
// a stack table and size bytes of filler.
func fakeHeatDir(t *testing.T, fillerBytes int) string {
	t.Helper()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "heat.sqlite")
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{
		"CREATE TABLE stack (id VARCHAR(36) PRIMARY KEY, name VARCHAR(255), action VARCHAR(255), status VARCHAR(255), owner_id VARCHAR(36), deleted_at DATETIME)",
		"INSERT INTO stack VALUES ('id-1', 'overcloud', 'CREATE', 'COMPLETE', NULL, NULL)",
		"INSERT INTO stack VALUES ('id-2', 'nested', 'CREATE', 'COMPLETE', 'id-1', NULL)",
		"CREATE TABLE filler (id INTEGER PRIMARY KEY, data TEXT)",
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	tx, _ := db.Begin()
	row := strings.Repeat("x", 4000)
	for i := 0; i < fillerBytes/4000; i++ {
		tx.Exec("INSERT INTO filler (data) VALUES (?)", row)
	}
	tx.Commit()
	conf := fmt.Sprintf("[database]\nconnection = sqlite:///%s\n", dbPath)
	os.WriteFile(filepath.Join(dir, heatdir.HeatConf), []byte(conf), 0o600)
	return dir
}

func TestDumpRotationIdempotenceAndChecksum(t *testing.T) {
	dir := fakeHeatDir(t, 0)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(time.Minute); return now }
	first, err := dumps.Dump(context.Background(), dumps.DumpOptions{HeatDir: hdir(dir), Keep: 2, Now: clock})
	if err != nil || !first.Changed || len(first.Stacks) != 1 {
		t.Fatalf("first dump: %+v %v", first, err)
	}
	// Unchanged database: no new dump.
	same, err := dumps.Dump(context.Background(), dumps.DumpOptions{HeatDir: hdir(dir), Keep: 2, Now: clock})
	if err != nil || same.Changed || same.Path != first.Path {
		t.Fatalf("unchanged dump: %+v %v", same, err)
	}
	// Changes make new dumps; rotation keeps keep+1.
	db, _ := sql.Open("sqlite", filepath.Join(dir, "heat.sqlite"))
	var paths []string
	for i := 0; i < 4; i++ {
		db.Exec("INSERT INTO filler (data) VALUES (?)", fmt.Sprint(i))
		r, err := dumps.Dump(context.Background(), dumps.DumpOptions{HeatDir: hdir(dir), Keep: 2, Now: clock})
		if err != nil || !r.Changed {
			t.Fatalf("dump %d: %+v %v", i, r, err)
		}
		paths = append(paths, r.Path)
	}
	db.Close()
	list, _ := dumps.List(dir)
	if len(list) != 3 || list[0] != paths[3] {
		t.Fatalf("after rotation: %v", list)
	}
	// A corrupted dump is refused on restore, naming the problem.
	b, _ := os.ReadFile(list[0])
	b[len(b)/2] ^= 0xff
	os.WriteFile(list[0], b, 0o600)
	_, err = dumps.Restore(context.Background(), dumps.RestoreOptions{HeatDir: hdir(dir)})
	if err == nil || !strings.Contains(err.Error(), "refusing") || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("corrupt dump accepted: %v", err)
	}
	// The intact older one restores; the replaced database is saved first.
	r, err := dumps.Restore(context.Background(), dumps.RestoreOptions{HeatDir: hdir(dir), Dump: list[1]})
	if err != nil || !r.Changed || r.Backup == "" {
		t.Fatalf("restore: %+v %v", r, err)
	}
	// Restoring again is a no-op.
	r, err = dumps.Restore(context.Background(), dumps.RestoreOptions{HeatDir: hdir(dir), Dump: list[1]})
	if err != nil || r.Changed {
		t.Fatalf("second restore: %+v %v", r, err)
	}
	// An explicit dest: written; again unchanged; once the database
	// changed, our earlier dump there is moved aside, not overwritten.
	dest := filepath.Join(t.TempDir(), "mine.sql")
	var warned []string
	warn := func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }
	for i, wantChanged := range []bool{true, false, true} {
		if i == 2 {
			db, _ := sql.Open("sqlite", filepath.Join(dir, "heat.sqlite"))
			db.Exec("INSERT INTO filler (data) VALUES ('later')")
			db.Close()
		}
		r, err := dumps.Dump(context.Background(), dumps.DumpOptions{HeatDir: hdir(dir), Dest: dest, Compress: dumps.None, Warn: warn})
		if err != nil || r.Changed != wantChanged || r.Path != dest {
			t.Fatalf("dump %d to dest: %+v %v", i, r, err)
		}
	}
	matches, _ := filepath.Glob(dest + ".*Z")
	if len(matches) != 1 || len(warned) != 1 {
		t.Fatalf("our earlier dump at dest not moved aside: %v %v", matches, warned)
	}
	if b, _ := os.ReadFile(matches[0]); strings.Contains(string(b), "later") || !strings.Contains(string(b), "CREATE TABLE") {
		t.Fatalf("moved-aside content is not the earlier dump")
	}
	if b, _ := os.ReadFile(dest); !strings.Contains(string(b), "CREATE TABLE") || !strings.Contains(string(b), "later") {
		t.Fatalf("dest is not a plain SQL dump of the changed database")
	}
	// sqlite3 loads the dump.
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Fatal("sqlite3 is not installed: apt-get install -y sqlite3")
	}
	cmd := exec.Command("sqlite3", filepath.Join(t.TempDir(), "x.db"), ".read "+dest, "SELECT name FROM stack WHERE owner_id IS NULL;")
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "overcloud" {
		t.Fatalf("sqlite3 could not load the dump: %v %s", err, out)
	}
}

// A dest that exists and is not a dump of ours (nor free) is refused and
// left exactly as it was; so is the directory that holds it.
func TestDumpDestNotOursRefused(t *testing.T) {
	dir := fakeHeatDir(t, 0)
	tests := []struct {
		name  string
		setup func(t *testing.T, d string) string // returns dest
		want  string
	}{
		{"a file of someone else's", func(t *testing.T, d string) string {
			p := filepath.Join(d, "precious.sql")
			os.WriteFile(p, []byte("precious"), 0o644)
			return p
		}, "is not a dump heat_db_dump wrote"},
		{"a symlink", func(t *testing.T, d string) string {
			p := filepath.Join(d, "link.sql.gz")
			os.Symlink(filepath.Join(d, "elsewhere"), p)
			return p
		}, "is a symlink"},
		{"a directory", func(t *testing.T, d string) string {
			p := filepath.Join(d, "adir.sql")
			os.Mkdir(p, 0o755)
			os.WriteFile(filepath.Join(p, "inside"), []byte("x"), 0o644)
			return p
		}, "is a directory"},
		{"a FIFO", func(t *testing.T, d string) string {
			p := filepath.Join(d, "fifo.sql")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}, "is a FIFO"},
		{"a device", func(t *testing.T, d string) string {
			p := filepath.Join(d, "null.sql")
			if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
				t.Fatalf("mknod (this test needs root): %v", err)
			}
			return p
		}, "is a character device"},
		{"a foreign checksum beside it", func(t *testing.T, d string) string {
			p := filepath.Join(d, "x.sql.gz")
			os.WriteFile(p+dumps.SumSuffix, []byte("not a checksum of ours\n"), 0o600)
			return p
		}, "is not the checksum file of a dump"},
		{"a foreign manifest beside it", func(t *testing.T, d string) string {
			p := filepath.Join(d, "y.sql.gz")
			os.WriteFile(p+dumps.ManifestSuff, []byte(`{"hello": "world"}`), 0o600)
			return p
		}, "is not the manifest of a dump"},
		{"a name that is not a dump's", func(t *testing.T, d string) string { return filepath.Join(d, "passwd") }, "ends in .sql or .sql.gz"},
		{"inside a world-writable directory without the sticky bit", func(t *testing.T, d string) string {
			w := filepath.Join(d, "shared")
			os.Mkdir(w, 0o777)
			os.Chmod(w, 0o777)
			return filepath.Join(w, "d.sql.gz")
		}, "without the sticky bit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			os.Chmod(d, 0o755)
			dest := tc.setup(t, d)
			before := snapshot(t, d)
			_, err := dumps.Dump(context.Background(), dumps.DumpOptions{HeatDir: hdir(dir), Dest: dest})
			if err == nil || !strings.Contains(err.Error(), "dest") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("dest %s: %v, want a refusal naming dest with %q", dest, err, tc.want)
			}
			if after := snapshot(t, d); after != before {
				t.Errorf("the refused dest's directory changed:\n%s\nbecame\n%s", before, after)
			}
		})
	}
	// A dest in a directory that does not exist yet: created 0700, and the
	// existing ancestor keeps its mode.
	top := t.TempDir()
	os.Chmod(top, 0o755)
	dest := filepath.Join(top, "a", "b", "d.sql.gz")
	if _, err := dumps.Dump(context.Background(), dumps.DumpOptions{HeatDir: hdir(dir), Dest: dest}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{top: 0o755, filepath.Join(top, "a"): 0o700, filepath.Join(top, "a", "b"): 0o700, dest: 0o600} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %o", p, st.Mode().Perm(), err, want)
		}
	}
}

// snapshot lists a directory tree's names, types and modes.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil {
			fmt.Fprintf(&b, "%s %v %d\n", p, info.Mode(), info.Size())
		}
		return nil
	})
	return b.String()
}

// hdir is the heat_dir at dir (the zero Dir, which Dump and Restore refuse,
// when dir is not absolute).
func hdir(dir string) heatdir.Dir {
	d, _ := heatdir.At(dir)
	return d
}
