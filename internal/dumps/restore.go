package dumps

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dbdump"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
)

// RestoreOptions are heat_db_dump's parameters for state=restored.
type RestoreOptions struct {
	HeatDir   string
	Dump      string // "" = the newest dump in HeatDir
	CheckMode bool
	// AllowUnverified loads a dump that has no .sha256 to check it against
	// (heat_db_dump verify: false), with a warning; by default it is
	// refused. A checksum that does not match is refused either way.
	AllowUnverified bool
	Warn            func(string, ...any)
	Secret          func(string)
}

// Newest returns the newest dump in dir, or an error saying how to get one.
func Newest(dir string) (string, error) {
	all, err := List(dir)
	if err != nil {
		return "", err
	}
	if len(all) == 0 {
		return "", fmt.Errorf("no database dump (%s*.sql[.gz]) in %s: dump one first with heat_db_dump state=dumped, or give its path", Prefix, dir)
	}
	return all[0], nil
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
		if path, err = Newest(o.HeatDir); err != nil {
			return Result{}, err
		}
	}
	if err := checkDumpFile(path); err != nil {
		return Result{}, err
	}
	// Adoption of a tripleoclient dump, which carries no checksum of ours,
	// is the one exception to the refusal below (checked by what it holds).
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

	exists, err := heatdb.HasData(ctx, t)
	if errors.Is(err, heatdb.ErrNoAccess) {
		return r, fmt.Errorf("%w: the database user of heat.conf does not exist any more; relaunch with ephemeral_heat_launch restore_db: true, which recreates it", err)
	}
	if err != nil {
		return r, err
	}
	if exists {
		cur, err := ContentHash(ctx, t)
		if err == nil && m != nil && cur == m.SQLSHA256 {
			r.Msg = fmt.Sprintf("%s already holds the content of %s", t, path)
			return r, nil
		}
	}
	if o.CheckMode {
		r.Changed = true
		r.Msg = fmt.Sprintf("would restore %s into %s", path, t)
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
	return r, nil
}

// SameStacks compares the stacks a manifest lists with those found.
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
		return fmt.Errorf("the stacks differ from the dump's manifest: missing %v, unexpected %v", missing, extra)
	}
	return nil
}
