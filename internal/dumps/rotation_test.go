package dumps_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	first, err := dumps.Dump(context.Background(), dumps.DumpOptions{HeatDir: dir, Keep: 2, Now: clock})
	if err != nil || !first.Changed || len(first.Stacks) != 1 {
		t.Fatalf("first dump: %+v %v", first, err)
	}
	// Unchanged database: no new dump.
	same, err := dumps.Dump(context.Background(), dumps.DumpOptions{HeatDir: dir, Keep: 2, Now: clock})
	if err != nil || same.Changed || same.Path != first.Path {
		t.Fatalf("unchanged dump: %+v %v", same, err)
	}
	// Changes make new dumps; rotation keeps keep+1.
	db, _ := sql.Open("sqlite", filepath.Join(dir, "heat.sqlite"))
	var paths []string
	for i := 0; i < 4; i++ {
		db.Exec("INSERT INTO filler (data) VALUES (?)", fmt.Sprint(i))
		r, err := dumps.Dump(context.Background(), dumps.DumpOptions{HeatDir: dir, Keep: 2, Now: clock})
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
	_, err = dumps.Restore(context.Background(), dumps.RestoreOptions{HeatDir: dir})
	if err == nil || !strings.Contains(err.Error(), "refusing") || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("corrupt dump accepted: %v", err)
	}
	// The intact older one restores; the replaced database is saved first.
	r, err := dumps.Restore(context.Background(), dumps.RestoreOptions{HeatDir: dir, Dump: list[1]})
	if err != nil || !r.Changed || r.Backup == "" {
		t.Fatalf("restore: %+v %v", r, err)
	}
	// Restoring again is a no-op.
	r, err = dumps.Restore(context.Background(), dumps.RestoreOptions{HeatDir: dir, Dump: list[1]})
	if err != nil || r.Changed {
		t.Fatalf("second restore: %+v %v", r, err)
	}
	// An explicit dest that exists is moved aside, not overwritten.
	dest := filepath.Join(t.TempDir(), "mine.sql")
	os.WriteFile(dest, []byte("precious"), 0o600)
	var warned []string
	if _, err := dumps.Dump(context.Background(), dumps.DumpOptions{HeatDir: dir, Dest: dest, Compress: dumps.None,
		Warn: func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }}); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(dest + ".*Z")
	if len(matches) != 1 || len(warned) != 1 {
		t.Fatalf("existing dest not moved aside: %v %v", matches, warned)
	}
	if b, _ := os.ReadFile(matches[0]); string(b) != "precious" {
		t.Fatalf("moved-aside content changed")
	}
	if b, _ := os.ReadFile(dest); !strings.Contains(string(b), "CREATE TABLE") {
		t.Fatalf("dest is not a plain SQL dump")
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
