package dumps

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dbdump"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
)

// RestoreOptions are heat_db_dump's parameters for state=restored.
type RestoreOptions struct {
	HeatDir   heatdir.Dir
	Dump      string // "" = the newest dump in HeatDir
	CheckMode bool
	// AllowUnverified loads a dump that has no .sha256 to check it against
	// (heat_db_dump verify: false), with a warning; by default it is
	// refused. A checksum that does not match is refused either way.
	AllowUnverified bool
	Warn            func(string, ...any)
	Secret          func(string)
	// Idle, when given, is asked once the dump is found good and before
	// anything is written (in check mode too): an error (a Heat still
	// running on the database) refuses the restore. So a bad dump is
	// named first, whatever runs.
	Idle func(context.Context) error
}

// Newest returns the newest dump in dir that restore can load (see
// Candidates), or an error saying how to get one.
func Newest(dir string) (string, error) {
	all, err := Candidates(dir)
	if err != nil {
		return "", err
	}
	if len(all) == 0 {
		return "", fmt.Errorf("no database dump (%s*.sql[.gz], or tripleoclient's %s*%s) in %s: dump one first with heat_db_dump state=dumped, or give its path", Prefix, TripleOPrefix, TripleOSuffix, dir)
	}
	return all[0], nil
}

// Candidates returns the dumps in dir that restore can load, newest first:
// ours (List) and tripleoclient's heat-db.sql-<time>.tar.bzip2, ordered
// together by the creation time their names carry, so the last state
// written wins whichever tool wrote it (at equal times ours, which carry a
// checksum, come first). Names that carry no time come last.
func Candidates(dir string) ([]string, error) {
	ours, err := List(dir)
	if err != nil {
		return nil, err
	}
	type cand struct {
		path string
		t    time.Time
		ok   bool
		ours bool
	}
	var all []cand
	for _, p := range ours {
		t, _, ok := stampOf(filepath.Base(p))
		all = append(all, cand{p, t, ok, true})
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing dumps in %s: %w", dir, err)
	}
	for _, e := range ents {
		if n := e.Name(); e.Type().IsRegular() && isTripleOName(n) {
			t, ok := tripleoStamp(n)
			all = append(all, cand{filepath.Join(dir, n), t, ok, false})
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		switch {
		case a.ok != b.ok:
			return a.ok
		case a.ok && !a.t.Equal(b.t):
			return a.t.After(b.t)
		case a.ours != b.ours:
			return a.ours
		}
		return false // List's order among ours, name order among the rest
	})
	out := make([]string, len(all))
	for i, c := range all {
		out[i] = c.path
	}
	return out, nil
}

// resolveDump turns the dump a caller gave into a file: a directory stands
// for its newest dump, or for the newest in its heat-launcher/ (a
// tripleoclient working dir such as ~/overcloud-deploy/overcloud).
func resolveDump(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("dump to restore: %w", err)
	}
	if !fi.IsDir() {
		return path, nil
	}
	for _, dir := range []string{path, filepath.Join(path, TripleOHeatDir)} {
		if all, err := Candidates(dir); err == nil && len(all) > 0 {
			return all[0], nil
		}
	}
	return "", fmt.Errorf("dump to restore: %s holds no dump (%s*.sql[.gz], or tripleoclient's %s*%s, also looked in %s/)",
		path, Prefix, TripleOPrefix, TripleOSuffix, TripleOHeatDir)
}

// Restore loads a dump into the database heat.conf names. A database that
// already holds exactly the dump's content is left alone (changed=false);
// one that holds something else is dumped first (Backup), so nothing is lost.
// After loading, the stacks in the database must be those of the manifest.
func Restore(ctx context.Context, o RestoreOptions) (Result, error) {
	if o.Warn == nil {
		o.Warn = func(string, ...any) {}
	}
	if o.Secret == nil {
		o.Secret = func(string) {}
	}
	t, err := target(o.HeatDir)
	if err != nil {
		return Result{}, err
	}
	registerSecrets(t, o.Secret)
	path := o.Dump
	if path == "" {
		path, err = Newest(o.HeatDir.Path())
	} else {
		path, err = resolveDump(path)
	}
	if err != nil {
		return Result{}, err
	}
	switch kind, err := sniffDump(path); {
	case err != nil:
		return Result{}, err
	case kind == kindTripleO:
		// Adoption: the one exception to the refusal of a dump without
		// our checksum below (issue 24, decision c); checked by what it holds.
		return restoreTripleO(ctx, o, t, path)
	case kind != kindSQL:
		return Result{}, fmt.Errorf("refusing %s: it is %s, not a dump restore loads (%s*.sql[.gz] written by heat_db_dump, "+
			"or tripleoclient's %s*%s)", path, kind, Prefix, TripleOPrefix, TripleOSuffix)
	}
	sum, err := VerifyChecksum(path)
	if errors.Is(err, errNoChecksum) {
		if !o.AllowUnverified {
			return Result{}, fmt.Errorf("refusing %s: it has no %s%s, so its integrity cannot be checked (a dump heat_db_dump was killed writing, "+
				"or one from elsewhere); restore another dump, or give verify: false (heat_db_dump) or restore_verify: false "+
				"(ephemeral_heat_launch) to load it anyway", path, filepath.Base(path), SumSuffix)
		}
		o.Warn("%s has no %s file: its integrity cannot be checked; loading it anyway (verify: false)", path, SumSuffix)
		sum, _, err = fileSHA256(path)
	}
	if err != nil {
		return Result{}, err
	}
	m, err := ReadManifest(path)
	if err != nil {
		return Result{}, err
	}
	if m != nil && m.Database != string(t.Kind) {
		return Result{}, fmt.Errorf("%s is a %s dump but heat.conf in %s names a %s database", path, m.Database, o.HeatDir, t.Kind)
	}
	r := Result{Path: path, SHA256: sum}
	if m != nil {
		r.Size, r.Tables, r.Rows, r.Stacks = m.Size, m.Tables, m.Rows, m.Stacks
	}
	if o.Idle != nil {
		if err := o.Idle(ctx); err != nil {
			return Result{}, err
		}
	}

	exists, err := heatdb.HasData(ctx, t)
	if errors.Is(err, heatdb.ErrNoAccess) {
		return r, fmt.Errorf("%w: the database user of heat.conf does not exist any more; relaunch with ephemeral_heat_launch restore_db: true, which recreates it", err)
	}
	if err != nil {
		return r, err
	}
	var cur, want string
	if m != nil {
		want = m.SQLSHA256
	}
	if exists {
		if cur, err = ContentHash(ctx, t); err != nil {
			cur = ""
		}
		if cur != "" && cur == want {
			r.Msg = fmt.Sprintf("%s already holds the content of %s", t, path)
			return r, nil
		}
	}
	before := restoreBefore(ctx, t, exists, cur)
	if o.CheckMode {
		r.Changed = true
		r.Msg = fmt.Sprintf("would restore %s into %s", path, t)
		r.Before, r.After = predictRestore(t, r, before, want)
		return r, nil
	}
	if exists {
		// Nothing lost: keep what is being replaced.
		b, err := Dump(ctx, DumpOptions{HeatDir: o.HeatDir, Keep: 1 << 20, Warn: o.Warn, Secret: o.Secret})
		if err != nil {
			return r, fmt.Errorf("saving the current database before the restore: %w", err)
		}
		r.Backup = b.Path
		if b.Changed {
			o.Warn("the database held other data; it was saved to %s before the restore", b.Path)
		}
	}
	rd, closeFn, err := openSQL(path)
	if err != nil {
		return r, err
	}
	defer closeFn()
	var st dbdump.Stats
	if t.Kind == heatdb.SQLite {
		st, err = dbdump.RestoreSQLite(ctx, rd, t.Path, dbdump.WithOverwrite())
	} else {
		// Start from an empty database: tables the dump does not have must not survive.
		if err = heatdb.Empty(ctx, t, exists); err == nil {
			st, err = dbdump.RestoreMySQL(ctx, t.DSN(), rd, dbdump.WithOverwrite())
		}
	}
	if err != nil {
		return r, fmt.Errorf("restoring %s into %s: %w", path, t, err)
	}
	r.Changed = true
	r.Tables, r.Rows = st.Tables, st.Rows
	stacks, err := heatdb.ListStacks(ctx, t)
	if err != nil {
		return r, err
	}
	r.Stacks = stacks
	if m != nil {
		if err := SameStacks(m.Stacks, stacks); err != nil {
			return r, fmt.Errorf("after restoring %s: %w", path, err)
		}
	}
	r.Msg = fmt.Sprintf("restored %s into %s (%d tables, %d rows, %d stacks)", path, t, st.Tables, st.Rows, len(stacks))
	after := restoreAfter(t, r, want)
	r.Before, r.After = &before, &after
	return r, nil
}

// SameStacks compares the stacks a dump holds (its manifest's, or those of
// a tripleoclient dump's stack table) with those found.
func SameStacks(want, got []Stack) error {
	key := func(s Stack) string { return s.ID + " " + s.Name + " " + s.Status }
	w := map[string]bool{}
	for _, s := range want {
		w[key(s)] = true
	}
	g := map[string]bool{}
	for _, s := range got {
		g[key(s)] = true
	}
	var missing, extra []string
	for k := range w {
		if !g[k] {
			missing = append(missing, k)
		}
	}
	for k := range g {
		if !w[k] {
			extra = append(extra, k)
		}
	}
	if len(missing)+len(extra) > 0 {
		return fmt.Errorf("the stacks differ from the dump's: missing %v, unexpected %v", missing, extra)
	}
	return nil
}

// What sniffDump finds in a file.
const (
	kindSQL     = "SQL text"
	kindTripleO = "bzip2 data"
)

// sniffDump says what a file to restore holds, from its first bytes: SQL
// text (plain or gzip-compressed: ours, or any SQL dump), bzip2 data (a
// tripleoclient dump, checked by restoreTripleO), or something restore
// does not load, named for the error message.
func sniffDump(path string) (string, error) {
	f, err := openRegular(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	head = head[:n]
	has := func(magic string) bool { return bytes.HasPrefix(head, []byte(magic)) }
	switch {
	case n == 0:
		return "an empty file", nil
	case len(head) >= 4 && has("BZh") && head[3] >= '1' && head[3] <= '9':
		return kindTripleO, nil
	case has("\xfd7zXZ\x00"):
		return "xz-compressed data", nil
	case has("\x28\xb5\x2f\xfd"):
		return "zstd-compressed data", nil
	case has("PK\x03\x04"):
		return "a zip archive", nil
	case isTar(head):
		return "a tar archive", nil
	case has("\x1f\x8b"):
		zr, err := gzip.NewReader(bytes.NewReader(head))
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", path, err)
		}
		plain := make([]byte, 4096)
		m, _ := io.ReadFull(zr, plain)
		switch plain = plain[:m]; {
		case isTar(plain):
			return "a gzip-compressed tar archive", nil
		case bytes.IndexByte(plain, 0) >= 0:
			return "gzip-compressed binary data", nil
		}
		return kindSQL, nil
	case bytes.IndexByte(head, 0) >= 0:
		return "binary data", nil
	}
	return kindSQL, nil
}

func isTar(b []byte) bool {
	return len(b) >= 262 && bytes.Equal(b[257:262], []byte("ustar"))
}
