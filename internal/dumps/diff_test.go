package dumps_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
)

// change adds a row to the fake heat_dir's database and, with a name, a
// top-level stack.
func change(t *testing.T, dir, stack string) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(dir, "heat.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("INSERT INTO filler (data) VALUES (?)", time.Now().String()); err != nil {
		t.Fatal(err)
	}
	if stack != "" {
		if _, err := db.Exec("INSERT INTO stack VALUES (?, ?, 'UPDATE', 'FAILED', NULL, NULL)", "id-"+stack, stack); err != nil {
			t.Fatal(err)
		}
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The diff of a dump: the dumps (with their recorded sha256) and the
// database's state before and after, in check mode as predicted and for
// real as found; check mode predicts what the real run then does.
func TestDumpDiff(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	clock := func() time.Time { return at }
	wipe := func(dir string) func(context.Context) ([]string, error) {
		return func(context.Context) ([]string, error) {
			p := filepath.Join(dir, "heat.sqlite")
			return []string{p}, os.Remove(p)
		}
	}
	tests := []struct {
		name string
		// earlier dumps, each after a change of the database; then a
		// last change unless same.
		earlier int
		same    bool
		keep    int
		wipe    bool
		dest    bool
		// want: changed; how many dumps before and after, and of those
		// before how many are gone after; the database state after.
		changed                  bool
		nBefore, nAfter, dropped int
		dataAfter                string
		newDump, movedAside      bool
	}{
		{name: "first dump", changed: true, nBefore: 0, nAfter: 1, dataAfter: dumps.DataPresent, newDump: true},
		{name: "a change, kept beside the earlier dumps", earlier: 2, keep: 5, changed: true, nBefore: 2, nAfter: 3,
			dataAfter: dumps.DataPresent, newDump: true},
		{name: "a change, rotation drops the oldest", earlier: 3, keep: 1, changed: true, nBefore: 2, nAfter: 2, dropped: 1,
			dataAfter: dumps.DataPresent, newDump: true},
		{name: "unchanged: no dump, no diff", earlier: 1, same: true, keep: 5, changed: false},
		{name: "unchanged, wiped", earlier: 1, same: true, keep: 5, wipe: true, changed: true, nBefore: 1, nAfter: 1,
			dataAfter: dumps.DataAbsent},
		{name: "a change, dumped and wiped", earlier: 1, keep: 5, wipe: true, changed: true, nBefore: 1, nAfter: 2,
			dataAfter: dumps.DataAbsent, newDump: true},
		{name: "dest holding our earlier dump: moved aside", earlier: 1, dest: true, changed: true, nBefore: 1, nAfter: 2,
			dataAfter: dumps.DataPresent, newDump: true, movedAside: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := fakeHeatDir(t, 0)
			o := dumps.DumpOptions{HeatDir: mustHeatDir(t, dir), Keep: tc.keep, Now: clock}
			if tc.dest {
				o.Dest = filepath.Join(t.TempDir(), "mine.sql.gz")
			}
			for i := 0; i < tc.earlier; i++ {
				e := o
				e.Now = func() time.Time { return at.Add(-time.Duration(tc.earlier-i) * time.Hour) }
				if i > 0 {
					change(t, dir, "")
				}
				if _, err := dumps.Dump(ctx, e); err != nil {
					t.Fatal(err)
				}
			}
			if !tc.same && tc.earlier > 0 {
				change(t, dir, "")
			}
			if tc.wipe {
				o.Wipe, o.WipeFunc = true, wipe(dir)
			}
			listed, _ := dumps.List(dir)

			co := o
			co.CheckMode = true
			pred, err := dumps.Dump(ctx, co)
			if err != nil {
				t.Fatal(err)
			}
			if now, _ := dumps.List(dir); !reflect.DeepEqual(now, listed) {
				t.Fatalf("check mode wrote dumps: %v, was %v", now, listed)
			}
			if pred.Before != nil {
				for p, sum := range pred.Before.Dumps {
					if got, err := dumps.VerifyChecksum(p); err != nil || got != sum {
						t.Errorf("before: %s has sha256 %s, the diff says %s (%v)", p, got, sum, err)
					}
				}
			}
			real, err := dumps.Dump(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []dumps.Result{pred, real} {
				if r.Changed != tc.changed {
					t.Fatalf("changed %v, want %v: %+v", r.Changed, tc.changed, r)
				}
				if !tc.changed {
					if r.Before != nil || r.After != nil {
						t.Errorf("no change, but a diff: %+v %+v", r.Before, r.After)
					}
					continue
				}
				if r.Before == nil || r.After == nil {
					t.Fatalf("changed without before and after: %+v", r)
				}
				b, a := r.Before, r.After
				if b.Database != filepath.Join(dir, "heat.sqlite") || a.Database != b.Database {
					t.Errorf("database %q -> %q", b.Database, a.Database)
				}
				if b.Data != dumps.DataPresent || a.Data != tc.dataAfter {
					t.Errorf("database state %s -> %s, want present -> %s", b.Data, a.Data, tc.dataAfter)
				}
				if len(b.Dumps) != tc.nBefore || len(a.Dumps) != tc.nAfter {
					t.Errorf("dumps %v -> %v, want %d -> %d", b.Dumps, a.Dumps, tc.nBefore, tc.nAfter)
				}
				dropped := 0
				for p := range b.Dumps {
					if _, ok := a.Dumps[p]; !ok {
						dropped++
					}
				}
				if dropped != tc.dropped {
					t.Errorf("%d dumps of before are gone after, want %d: %v -> %v", dropped, tc.dropped, keys(b.Dumps), keys(a.Dumps))
				}
				if _, ok := b.Dumps[r.Path]; tc.newDump && ok && !tc.dest {
					t.Errorf("the new dump %s is in before", r.Path)
				}
			}
			if !tc.changed {
				if real.Path != listed[0] || pred.Path != listed[0] {
					t.Errorf("unchanged: paths %s, %s, want the newest %s", pred.Path, real.Path, listed[0])
				}
				return
			}
			// What check mode predicts is what the run does.
			if !reflect.DeepEqual(keys(pred.After.Dumps), keys(real.After.Dumps)) {
				t.Errorf("check mode predicted the dumps %v, the run left %v", keys(pred.After.Dumps), keys(real.After.Dumps))
			}
			if !reflect.DeepEqual(pred.Before, real.Before) {
				t.Errorf("before: check mode %+v, run %+v", pred.Before, real.Before)
			}
			if tc.newDump {
				if pred.After.Dumps[pred.Path] != dumps.NotWrittenYet {
					t.Errorf("check mode: the new dump %s is %q", pred.Path, pred.After.Dumps[pred.Path])
				}
				if real.After.Dumps[real.Path] != real.SHA256 || real.SHA256 == "" {
					t.Errorf("the new dump %s is %q in after, its sha256 is %s", real.Path, real.After.Dumps[real.Path], real.SHA256)
				}
			}
			if tc.movedAside {
				old := real.Before.Dumps[o.Dest]
				var aside string
				for p, sum := range real.After.Dumps {
					if p != o.Dest {
						aside = p
						if sum != old {
							t.Errorf("moved aside %s has %s, was %s", p, sum, old)
						}
					}
				}
				if _, err := os.Stat(aside); err != nil {
					t.Errorf("the dump moved aside: %v", err)
				}
			}
			if m := real.After.Map(); m["database_state"] != tc.dataAfter || m["dumps"] == nil {
				t.Errorf("the diff's after: %v", m)
			}
		})
	}
}

// The diff of a restore: what the database held (stacks, content sha256)
// and what it holds after, the dump restored and the backup of what it
// replaced.
func TestRestoreDiff(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		prep      func(t *testing.T, dir string) // after the dump of stack overcloud
		changed   bool
		before    []string
		dataFirst string
		backup    bool
	}{
		{name: "another stack since the dump", prep: func(t *testing.T, dir string) { change(t, dir, "extra") }, changed: true,
			before: []string{"extra (UPDATE_FAILED)", "overcloud (CREATE_COMPLETE)"}, dataFirst: dumps.DataPresent, backup: true},
		{name: "the database gone", prep: func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "heat.sqlite")) }, changed: true,
			dataFirst: dumps.DataAbsent},
		{name: "the dump's content already", prep: func(*testing.T, string) {}, changed: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := fakeHeatDir(t, 0)
			d, err := dumps.Dump(ctx, dumps.DumpOptions{HeatDir: mustHeatDir(t, dir)})
			if err != nil {
				t.Fatal(err)
			}
			m, _ := dumps.ReadManifest(d.Path)
			tc.prep(t, dir)
			for _, check := range []bool{true, false} {
				r, err := dumps.Restore(ctx, dumps.RestoreOptions{HeatDir: mustHeatDir(t, dir), Dump: d.Path, CheckMode: check})
				if err != nil {
					t.Fatal(err)
				}
				if r.Changed != tc.changed {
					t.Fatalf("check %v: changed %v, want %v", check, r.Changed, tc.changed)
				}
				if !tc.changed {
					if r.Before != nil || r.After != nil {
						t.Errorf("no change, but a diff: %+v %+v", r.Before, r.After)
					}
					continue
				}
				b, a := r.Before, r.After
				if b.Data != tc.dataFirst || !reflect.DeepEqual(b.Stacks, tc.before) {
					t.Errorf("check %v: before %s %v, want %s %v", check, b.Data, b.Stacks, tc.dataFirst, tc.before)
				}
				if (b.Content != "") != (tc.dataFirst == dumps.DataPresent) || b.Content == m.SQLSHA256 {
					t.Errorf("check %v: content before %q (the dump's is %s)", check, b.Content, m.SQLSHA256)
				}
				want := []string{"overcloud (CREATE_COMPLETE)"}
				if a.Data != dumps.DataPresent || !reflect.DeepEqual(a.Stacks, want) || a.Content != m.SQLSHA256 ||
					a.RestoredFrom != d.Path || a.RestoredSHA256 != d.SHA256 {
					t.Errorf("check %v: after %+v, want stacks %v, content %s, from %s (%s)", check, a, want, m.SQLSHA256, d.Path, d.SHA256)
				}
				switch {
				case !tc.backup && a.Backup != "":
					t.Errorf("check %v: a backup of nothing: %s", check, a.Backup)
				case tc.backup && check && a.Backup != dumps.NotWrittenYet:
					t.Errorf("check mode: backup %q", a.Backup)
				case tc.backup && !check && (a.Backup != r.Backup || r.Backup == ""):
					t.Errorf("backup %q, the result's %q", a.Backup, r.Backup)
				}
				if !check {
					// Restored: the database holds the dump's stacks.
					if again, err := dumps.Restore(ctx, dumps.RestoreOptions{HeatDir: mustHeatDir(t, dir), Dump: d.Path}); err != nil || again.Changed {
						t.Errorf("restore again: %+v %v", again, err)
					}
				}
			}
		})
	}
}

// mustHeatDir is dir as a heat_dir.
func mustHeatDir(t *testing.T, dir string) heatdir.Dir {
	t.Helper()
	d, err := heatdir.At(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
