package dumps_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/mariadbtest"
)

// createStack creates the group stack and waits for CREATE_COMPLETE.

func TestDumpWipeRestoreRoundTrip(t *testing.T) {
	for _, kind := range []string{launch.SQLite, launch.MySQL} {
		t.Run(kind, func(t *testing.T) {
			heattest.RequireHeat(t)
			port, _ := proc.FreePort()
			dir := filepath.Join(t.TempDir(), "heat-launcher")
			o := launch.Options{HeatDir: dir, APIPort: port, Database: kind, Warn: t.Logf}
			var srv *mariadbtest.Server
			if kind == launch.MySQL {
				srv = mariadbtest.Start(t)
				o.DatabaseURL = srv.URL("")
			}
			t.Cleanup(func() {
				c := o
				c.State = launch.Absent
				launch.Run(context.Background(), c)
			})
			o.State = launch.Started
			out, err := launch.Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			id := heattest.CreateGroupStack(t, out.Endpoint, "overcloud")
			before := heattest.Snapshot(t, out.Endpoint, "overcloud", id)

			hd, err := heatdir.At(dir)
			if err != nil {
				t.Fatal(err)
			}
			target, err := hd.Database()
			if err != nil {
				t.Fatal(err)
			}
			var admin *heatdb.DB
			if o.DatabaseURL != "" {
				a, _ := heatdb.ParseAdmin(o.DatabaseURL)
				admin = &a
			}
			r, err := dumps.Dump(context.Background(), dumps.DumpOptions{HeatDir: dir, Keep: 5, Wipe: true,
				WipeFunc: func(ctx context.Context) ([]string, error) {
					return hd.DropDatabase(ctx, admin, t.Logf)
				}})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Changed || !r.Wiped || r.Tables < 10 || r.Rows == 0 || len(r.Stacks) != 1 || r.Stacks[0].Name != "overcloud" || r.Stacks[0].Status != "CREATE_COMPLETE" {
				t.Fatalf("dump result: %+v", r)
			}
			for _, p := range []string{r.Path, r.Path + dumps.SumSuffix, r.Path + dumps.ManifestSuff} {
				st, err := os.Stat(p)
				if err != nil || st.Mode().Perm() != 0o600 {
					t.Fatalf("%s: %v mode %v", p, err, st)
				}
			}
			if exists, err := heatdb.HasData(context.Background(), target.DB); (err != nil && !errors.Is(err, heatdb.ErrNoAccess)) || exists {
				t.Fatalf("live database still there after wipe: %v %v", exists, err)
			}
			// A second dump finds the database gone and the dump saved: no change.
			again, err := dumps.Dump(context.Background(), dumps.DumpOptions{HeatDir: dir, Wipe: true})
			if err != nil || again.Changed || again.Path != r.Path {
				t.Fatalf("second dump: %+v %v", again, err)
			}

			o.State = launch.Stopped
			if _, err := launch.Run(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			o.State = launch.Started
			o.RestoreDB = true
			out, err = launch.Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if out.Restored != r.Path {
				t.Errorf("restored %q, want %q", out.Restored, r.Path)
			}
			if after := heattest.Snapshot(t, out.Endpoint, "overcloud", id); after != before {
				t.Fatalf("stack differs after restore:\nbefore %s\nafter  %s", before, after)
			}
			if srv == nil {
				return
			}
			// A mysqldump file of the same database restores through state=restored.
			target, _ = hd.Database()
			file := filepath.Join(t.TempDir(), "heat.mysqldump.sql")
			cmd := exec.Command("mysqldump", "--defaults-extra-file="+srv.ClientConfig, "--single-transaction", "--result-file="+file, target.Database)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("mysqldump: %v %s", err, b)
			}
			o.State = launch.Stopped
			launch.Run(context.Background(), o)
			var warned []string
			rr, err := dumps.Restore(context.Background(), dumps.RestoreOptions{HeatDir: dir, Dump: file,
				Warn: func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }})
			if err != nil || !rr.Changed || len(rr.Stacks) != 1 || rr.Backup == "" {
				t.Fatalf("restoring the mysqldump file: %+v %v", rr, err)
			}
			if !strings.Contains(strings.Join(warned, "\n"), "has no .sha256") {
				t.Errorf("no warning about the missing checksum: %v", warned)
			}
			o.RestoreDB = false
			o.State = launch.Started
			out, err = launch.Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if after := heattest.Snapshot(t, out.Endpoint, "overcloud", id); after != before {
				t.Fatalf("stack differs after the mysqldump restore")
			}
		})
	}
}

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
