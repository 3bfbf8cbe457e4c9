package dumps

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

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
)

// Every step at which a dump can be killed, in the order Dump reaches them.
var publishSteps = []string{"created", "writing", "written", "verified", "sidecars", "published", "rotated"}

// killEnv names the step at which the helper process kills itself.
const killEnv = "EPHEMERAL_HEAT_TEST_DUMP_KILL_AT"

// TestHelperDumpKilledAt is not a test: TestKilledDumpAtEveryStep runs the
// test binary again with killEnv set, and this dumps the heat_dir it is
// given and SIGKILLs itself at that step.
func TestHelperDumpKilledAt(t *testing.T) {
	step := os.Getenv(killEnv)
	if step == "" {
		return
	}
	stepHook = func(s string) {
		if s == step {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal arrives
		}
	}
	_, err := Dump(context.Background(), DumpOptions{HeatDir: hdir(os.Getenv("EPHEMERAL_HEAT_TEST_DIR")), Keep: 1, Wipe: false})
	fmt.Fprintf(os.Stderr, "dump was not killed at %q: %v\n", step, err)
	os.Exit(3)
}

// sqliteHeatDir makes a heat_dir whose heat.conf names a sqlite database
// with one top-level stack and some filler rows.
func sqliteHeatDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "heat.sqlite")
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range []string{
		"CREATE TABLE stack (id VARCHAR(36) PRIMARY KEY, name VARCHAR(255), action VARCHAR(255), status VARCHAR(255), owner_id VARCHAR(36), deleted_at DATETIME)",
		"INSERT INTO stack VALUES ('id-1', 'overcloud', 'CREATE', 'COMPLETE', NULL, NULL)",
		"CREATE TABLE filler (id INTEGER PRIMARY KEY, data TEXT)",
		"INSERT INTO filler (data) VALUES ('" + strings.Repeat("x", 100000) + "')",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	conf := fmt.Sprintf("[database]\nconnection = sqlite:///%s\n", dbPath)
	if err := os.WriteFile(filepath.Join(dir, heatdir.HeatConf), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func changeDB(t *testing.T, dir, value string) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(dir, "heat.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("INSERT INTO filler (data) VALUES (?)", value); err != nil {
		t.Fatal(err)
	}
}

// names lists the entries of dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestKilledDumpAtEveryStep kills a dump (SIGKILL, in a child process) at
// each step of its writing and publication. Whatever the step, the newest
// dump must be complete and verified: the previous one before "published",
// the new one from then on; the previous dump still restores; and the next
// dump leaves nothing of the killed one behind.
func TestKilledDumpAtEveryStep(t *testing.T) {
	for i, step := range publishSteps {
		t.Run(step, func(t *testing.T) {
			dir := sqliteHeatDir(t)
			// Two dumps before, so rotation (keep 1) has one to remove.
			var prev Result
			for j := 0; j < 2; j++ {
				changeDB(t, dir, fmt.Sprint("before ", j))
				r, err := Dump(context.Background(), DumpOptions{HeatDir: hdir(dir), Keep: 1})
				if err != nil || !r.Changed {
					t.Fatalf("dump before the kill: %+v %v", r, err)
				}
				prev = r
			}
			changeDB(t, dir, "killed")

			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperDumpKilledAt$", "-test.count=1")
			cmd.Env = append(os.Environ(), killEnv+"="+step, "EPHEMERAL_HEAT_TEST_DIR="+dir)
			out, err := cmd.CombinedOutput()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if err == nil || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("the dump was not killed at %s: %v %s", step, err, out)
			}

			list, err := List(dir)
			if err != nil || len(list) == 0 {
				t.Fatalf("no dump after a kill at %s: %v %v", step, list, err)
			}
			published := i >= indexOf(publishSteps, "published")
			if !published && list[0] != prev.Path {
				t.Fatalf("killed at %s: the newest dump is %s, want the previous %s (files: %v)", step, list[0], prev.Path, names(t, dir))
			}
			if published && list[0] == prev.Path {
				t.Fatalf("killed at %s: the published dump is not the newest: %v", step, list)
			}
			if _, err := VerifyChecksum(list[0]); err != nil {
				t.Fatalf("killed at %s: the newest dump %s is not verified: %v (files: %v)", step, list[0], err, names(t, dir))
			}
			if m, err := ReadManifest(list[0]); err != nil || m == nil {
				t.Fatalf("killed at %s: the newest dump has no manifest: %v", step, err)
			}

			// The previous dump restores into a fresh database.
			other := t.TempDir()
			conf := fmt.Sprintf("[database]\nconnection = sqlite:///%s\n", filepath.Join(other, "heat.sqlite"))
			os.WriteFile(filepath.Join(other, heatdir.HeatConf), []byte(conf), 0o600)
			rr, err := Restore(context.Background(), RestoreOptions{HeatDir: hdir(other), Dump: prev.Path})
			if err != nil || len(rr.Stacks) != 1 || rr.Stacks[0].Name != "overcloud" {
				t.Fatalf("killed at %s: the previous dump does not restore: %+v %v", step, rr, err)
			}

			// The next dump removes the leftovers and publishes a new newest.
			changeDB(t, dir, "after")
			var warned []string
			r, err := Dump(context.Background(), DumpOptions{HeatDir: hdir(dir), Keep: 5,
				Warn: func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }})
			if err != nil || !r.Changed {
				t.Fatalf("dump after a kill at %s: %+v %v", step, r, err)
			}
			if list, _ := List(dir); list[0] != r.Path {
				t.Fatalf("after a kill at %s: the new dump %s is not the newest: %v", step, r.Path, list)
			}
			for _, n := range names(t, dir) {
				if strings.Contains(n, ".tmp-") {
					t.Errorf("after a kill at %s: temporary file left: %s", step, n)
				}
				for _, suf := range []string{SumSuffix, ManifestSuff} {
					if main := strings.TrimSuffix(n, suf); main != n {
						if _, err := os.Stat(filepath.Join(dir, main)); err != nil {
							t.Errorf("after a kill at %s: %s has no dump beside it", step, n)
						}
					}
				}
			}
			if step == "sidecars" && len(warned) == 0 {
				t.Errorf("the orphan sidecars of a dump killed at %s were removed without a warning", step)
			}
		})
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// TestDumpNamesOrderByCreation: dumps made within one second, or with a
// clock that goes back, still sort newest first in the order they were
// written; legacy whole-second names sort by time and sequence.
func TestDumpNamesOrderByCreation(t *testing.T) {
	dir := sqliteHeatDir(t)
	fixed := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clocks := []time.Time{fixed, fixed, fixed.Add(-time.Hour), fixed.Add(500 * time.Millisecond)}
	var written []string
	for i, at := range clocks {
		changeDB(t, dir, fmt.Sprint(i))
		r, err := Dump(context.Background(), DumpOptions{HeatDir: hdir(dir), Keep: 10, Now: func() time.Time { return at }})
		if err != nil || !r.Changed {
			t.Fatalf("dump %d: %+v %v", i, r, err)
		}
		written = append(written, r.Path)
		list, _ := List(dir)
		if list[0] != r.Path {
			t.Fatalf("dump %d (clock %s) is not the newest: %v", i, at, list)
		}
	}
	list, _ := List(dir)
	for i := range written {
		if list[len(list)-1-i] != written[i] {
			t.Fatalf("order %v, written %v", list, written)
		}
	}

	// Keep 0: rotation never removes the dump just written.
	changeDB(t, dir, "last")
	r, err := Dump(context.Background(), DumpOptions{HeatDir: hdir(dir), Keep: 0, Now: func() time.Time { return fixed }})
	if err != nil || len(r.Rotated) != len(written) {
		t.Fatalf("keep 0: %+v %v", r, err)
	}
	if list, _ := List(dir); len(list) != 1 || list[0] != r.Path {
		t.Fatalf("keep 0 left %v, want only %s", list, r.Path)
	}
}

func TestListOrder(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  []string // newest first
	}{
		{"legacy sequence is newer within its second",
			[]string{"heat-db-20260101T000000Z.sql.gz", "heat-db-20260101T000000Z-01.sql.gz", "heat-db-20260101T000000Z-02.sql"},
			[]string{"heat-db-20260101T000000Z-02.sql", "heat-db-20260101T000000Z-01.sql.gz", "heat-db-20260101T000000Z.sql.gz"}},
		{"sub-second names, and legacy ones of the same second",
			[]string{"heat-db-20260101T000000.000002Z.sql.gz", "heat-db-20260101T000000Z.sql.gz", "heat-db-20260101T000000.000010Z.sql", "heat-db-20251231T235959Z-05.sql.gz"},
			[]string{"heat-db-20260101T000000.000010Z.sql", "heat-db-20260101T000000.000002Z.sql.gz", "heat-db-20260101T000000Z.sql.gz", "heat-db-20251231T235959Z-05.sql.gz"}},
		{"names without a time come last; other files are not dumps",
			[]string{"heat-db-mine.sql", "heat-db-20260101T000000Z.sql.gz", "heat-db-20260101T000000Z.sql.gz.sha256", "notes.sql", "heat-db-x.txt"},
			[]string{"heat-db-20260101T000000Z.sql.gz", "heat-db-mine.sql"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600)
			}
			list, err := List(dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range list {
				got = append(got, filepath.Base(p))
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
