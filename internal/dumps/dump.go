package dumps

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
)

// Compression choices.
const (
	Gzip = "gzip"
	None = "none"
)

// DumpOptions are heat_db_dump's parameters for state=dumped.
type DumpOptions struct {
	HeatDir heatdir.Dir
	// Source, when set, is the database to dump instead of the one
	// HeatDir's heat.conf names (a migrate's installed Heat: only read).
	Source    *heatdb.DB
	Dest      string // "" = timestamped file in HeatDir
	Compress  string // gzip | none
	Keep      int    // older dumps to keep beside the new one
	Wipe      bool
	CheckMode bool
	Now       func() time.Time
	// WipeFunc drops the live database (given by the caller, who knows how).
	WipeFunc func(ctx context.Context) ([]string, error)
	Warn     func(string, ...any)
	Secret   func(string)
}

// Result is what a dump or restore reports.
type Result struct {
	Changed bool
	Msg     string
	Path    string
	Size    int64
	SHA256  string
	Tables  int
	Rows    int64
	Stacks  []Stack
	Wiped   bool
	Removed []string // wiped database items
	Rotated []string // older dumps removed by rotation
	Backup  string   // restore: the safety dump of the replaced database
	// CopiedFrom is where a tripleoclient dump was copied into heat_dir from.
	CopiedFrom string
	// Before and After are what the dump or restore changed (in check
	// mode, After is the prediction): heat_db_dump's diff. Both are set
	// when Changed and no error.
	Before, After *Snapshot

	// movedAside is where an existing dump at dest was moved.
	movedAside string
}

func (o *DumpOptions) defaults() {
	if o.Compress == "" {
		o.Compress = Gzip
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Warn == nil {
		o.Warn = func(string, ...any) {}
	}
	if o.Secret == nil {
		o.Secret = func(string) {}
	}
	if o.Keep < 0 {
		o.Keep = 0
	}
}

// registerSecrets masks the database password in results.
func registerSecrets(t heatdb.DB, secret func(string)) {
	if t.Kind == heatdb.MySQL {
		if c, err := mysql.ParseDSN(t.DSN()); err == nil {
			secret(c.Passwd)
		}
		secret(t.DSN())
	}
}

// newDumpPath picks the name of a new dump in dir: its time is now, or
// just after the newest dump already there if the clock says otherwise, so
// the new dump is strictly the newest; no dump or sidecar has that name yet.
func newDumpPath(dir string, now time.Time, compress string) string {
	ext := ".sql"
	if compress == Gzip {
		ext = ".sql.gz"
	}
	at := now.UTC().Truncate(time.Microsecond)
	if prev, _ := List(dir); len(prev) > 0 {
		if t, _, ok := stampOf(filepath.Base(prev[0])); ok && !at.After(t) {
			at = t.Add(time.Microsecond)
		}
	}
	for {
		p := filepath.Join(dir, Prefix+at.Format(StampLayout)+ext)
		if !anyExists(p, p+SumSuffix, p+ManifestSuff) {
			return p
		}
		at = at.Add(time.Microsecond)
	}
}

func anyExists(paths ...string) bool {
	for _, p := range paths {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			return true
		}
	}
	return false
}

// stepHook is called at each step of writing and publishing a dump; tests
// set it to kill the process there. Steps, in order: "created", "writing",
// "written", "verified", "sidecars", "published", "rotated".
var stepHook = func(step string) {}

// A dump is published in this order, so that a process killed at any point
// leaves either no new dump or a complete, verified one as the newest:
//  1. the SQL is written to an unnamed temporary file in the dump's
//     directory (O_TMPFILE: nothing to see or clean up if killed), synced,
//     and read back to verify it;
//  2. NAME.sha256 and NAME.manifest.json are written (each atomically)
//     while NAME itself does not exist yet: List ignores them;
//  3. the temporary file is linked as NAME (never replacing a file) and the
//     directory synced: the dump exists, with both sidecars.
// Sidecars left by a dump killed between 2 and 3, and named temporary files
// of a file system without O_TMPFILE, are removed by the next dump
// (removeLeftovers). Writers of one directory take turns (fsutil.LockDir).

// lockDumpDir takes the turn of a dump writer in dir (fsutil.LockDir),
// waiting up to 10 minutes.
func lockDumpDir(dir string) (func(), error) {
	unlock, err := fsutil.LockDir(dir, 10*time.Minute)
	if errors.Is(err, fsutil.ErrDirLocked) {
		return nil, fmt.Errorf("%w (another dump?): wait for it, or find it with 'fuser %s'", err, dir)
	}
	return unlock, err
}

// Dump writes a verified dump of heat_dir's database and optionally wipes it.
func Dump(ctx context.Context, o DumpOptions) (Result, error) {
	o.defaults()
	t, err := target(o.HeatDir)
	if o.Source != nil {
		t, err = *o.Source, nil
	}
	if err != nil {
		return Result{}, err
	}
	registerSecrets(t, o.Secret)
	dir := o.HeatDir.Path()
	if o.Dest != "" {
		dir = filepath.Dir(o.Dest)
		if err := checkDest(o.Dest); err != nil {
			return Result{}, err
		}
	}
	exists, err := heatdb.HasData(ctx, t)
	gone := errors.Is(err, heatdb.ErrNoAccess)
	if err != nil && !gone {
		return Result{}, err
	}
	if !exists {
		// Already dumped and wiped: report the newest dump, change nothing.
		if prev, _ := List(dir); len(prev) > 0 {
			r := Result{Path: prev[0], Msg: fmt.Sprintf("the database %s is already gone; the newest dump is %s", t, prev[0])}
			if gone {
				r.Msg = fmt.Sprintf("Heat's database user is gone (wiped?), so %s is taken as gone; the newest dump is %s", t, prev[0])
			}
			if m, _ := ReadManifest(prev[0]); m != nil {
				r.SHA256, r.Size, r.Tables, r.Rows, r.Stacks = m.SHA256, m.Size, m.Tables, m.Rows, m.Stacks
			}
			return r, nil
		}
		if gone {
			return Result{}, err
		}
		return Result{}, fmt.Errorf("the database %s does not exist and %s holds no dump: launch Heat (ephemeral_heat_launch) before dumping", t, dir)
	}
	before := Snapshot{Database: t.String(), Data: DataPresent, Dumps: dumpSums(dir, o.Dest)}
	if o.CheckMode {
		return predict(ctx, o, t, dir, before), nil
	}
	if o.Dest == "" {
		// The heat_dir, which the caller guarded.
		if _, err := fsutil.EnsurePrivateDir(dir); err != nil {
			return Result{}, err
		}
	} else if _, err := pathguard.MkdirAll("dest", dir); err != nil {
		// Only what is created is made private; an existing directory is
		// left as it is.
		return Result{}, err
	}
	unlock, err := lockDumpDir(dir)
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	if removed, err := removeLeftovers(dir); err != nil {
		o.Warn("cleaning up after an interrupted dump: %v", err)
	} else if len(removed) > 0 {
		o.Warn("removed what an interrupted dump left: %s", strings.Join(removed, ", "))
	}

	r, err := writeDump(ctx, o, t, dir)
	if err != nil {
		return r, err
	}

	if o.Wipe {
		if o.WipeFunc == nil {
			return r, fmt.Errorf("wipe requested but no way to drop %s was given", t)
		}
		removed, err := o.WipeFunc(ctx)
		r.Removed = removed
		if err != nil {
			return r, fmt.Errorf("the dump %s is complete and verified, but wiping the database failed: %w", r.Path, err)
		}
		r.Wiped = true
		r.Changed = true
		r.Msg += "; wiped " + strings.Join(removed, ", ")
	}
	if r.Changed {
		after := Snapshot{Database: t.String(), Data: DataPresent, Dumps: dumpSums(dir, o.Dest, r.movedAside)}
		if r.Wiped {
			after.Data = DataAbsent
		}
		r.Before, r.After = &before, &after
	}
	return r, nil
}

// predict is Dump in check mode: what a dump would find (the database
// unchanged since the newest dump, which it keeps) and write, and the
// snapshot after it; nothing is written.
func predict(ctx context.Context, o DumpOptions, t heatdb.DB, dir string, before Snapshot) Result {
	if same, m := unchangedSince(ctx, t, o.Dest, dir); same != "" {
		r := Result{Path: same, SHA256: m.SHA256, Size: m.Size, Tables: m.Tables, Rows: m.Rows, Stacks: m.Stacks,
			Msg: "the database is unchanged since " + same}
		if o.Wipe {
			after := before
			after.Data = DataAbsent
			r.Changed, r.Before, r.After = true, &before, &after
			r.Msg += "; would wipe " + t.String()
		}
		return r
	}
	r := Result{Changed: true, Path: o.Dest, Msg: "would dump " + t.String()}
	if r.Path == "" {
		r.Path = newDumpPath(dir, o.Now(), o.Compress)
	}
	if o.Wipe {
		r.Msg += " and wipe it"
	}
	after := predictDump(o, before, dir, r.Path)
	r.Before, r.After = &before, &after
	return r
}

// writeDump writes, verifies and publishes one dump of t into dir (see the
// order above), unless its content equals the newest dump's there.
func writeDump(ctx context.Context, o DumpOptions, t heatdb.DB, dir string) (Result, error) {
	base := Prefix + "new"
	if o.Dest != "" {
		base = filepath.Base(o.Dest)
	}
	pending, err := fsutil.NewPending(dir, base, fsutil.SecretFileMode)
	if err != nil {
		return Result{}, fmt.Errorf("dumping %s: %w", t, err)
	}
	defer pending.Discard()
	stepHook("created")

	fileHash := sha256.New()
	content := newContentHasher()
	out := io.MultiWriter(pending.File(), fileHash)
	var sqlw io.Writer = out
	var zw *gzip.Writer
	if o.Compress == Gzip {
		zw, _ = gzip.NewWriterLevel(out, gzip.BestSpeed)
		sqlw = zw
	}
	stats, err := dumpTo(ctx, t, &hookWriter{w: io.MultiWriter(sqlw, content)})
	if err == nil && zw != nil {
		err = zw.Close()
	}
	if err == nil {
		err = pending.Sync()
	}
	if err != nil {
		return Result{}, fsutil.DiskFull(fmt.Errorf("dumping %s into %s: %w", t, dir, err), dir, dumpSizeHint(dir, t))
	}
	stepHook("written")
	sum := hex.EncodeToString(fileHash.Sum(nil))

	// Verify what is on disk before anything relies on it.
	size, err := verifyFile(pending.File(), sum, content.Sum())
	if err != nil {
		return Result{}, fmt.Errorf("verifying the dump of %s: %w", t, err)
	}
	stepHook("verified")
	stacks, err := heatdb.ListStacks(ctx, t)
	if err != nil {
		return Result{}, err
	}
	r := Result{Changed: true, SHA256: sum, Size: size, Tables: stats.Tables, Rows: stats.Rows, Stacks: stacks}

	// Identical content to the newest earlier dump (or to the dump at
	// dest): keep that one.
	prev := []string{o.Dest}
	if o.Dest == "" {
		prev, _ = List(dir)
	}
	if len(prev) > 0 {
		if m, _ := ReadManifest(prev[0]); m != nil && m.SQLSHA256 == content.Sum() {
			if _, err := VerifyChecksum(prev[0]); err == nil {
				r.Changed, r.Path, r.SHA256, r.Size = false, prev[0], m.SHA256, m.Size
				r.Msg = "the database is unchanged since " + prev[0]
				return r, nil
			}
		}
	}

	path := o.Dest
	if path == "" {
		path = newDumpPath(dir, o.Now(), o.Compress)
	} else if err := checkDest(path); err != nil {
		return Result{}, err
	} else if r.movedAside, err = moveAside(path, o.Warn); err != nil {
		return Result{}, err
	}
	r.Path = path
	m := Manifest{Format: 1, Created: o.Now().UTC(), Database: string(t.Kind), Source: t.String(), Compress: o.Compress,
		Size: size, SHA256: sum, SQLSHA256: content.Sum(), Tables: stats.Tables, Rows: stats.Rows,
		TableRows: stats.TableRows, Stacks: stacks}
	if err := writeSidecars(path, m); err != nil {
		return r, err
	}
	stepHook("sidecars")
	if err := pending.Publish(path); err != nil {
		os.Remove(path + SumSuffix)
		os.Remove(path + ManifestSuff)
		return r, fmt.Errorf("dumping %s: %w", t, err)
	}
	stepHook("published")
	r.Msg = fmt.Sprintf("dumped %s to %s (%d tables, %d rows, %d stacks)", t, path, stats.Tables, stats.Rows, len(stacks))
	if o.Dest == "" {
		rotated, err := rotate(dir, o.Keep)
		r.Rotated = rotated
		if err != nil {
			return r, err
		}
	}
	stepHook("rotated")
	return r, nil
}

// dumpSizeHint estimates the room a dump of t needs in dir: the newest
// earlier dump's size, else (sqlite) the database file's; 0 when unknown.
func dumpSizeHint(dir string, t heatdb.DB) int64 {
	if prev, _ := List(dir); len(prev) > 0 {
		if st, err := os.Stat(prev[0]); err == nil {
			return st.Size()
		}
	}
	if t.Kind == heatdb.SQLite {
		if st, err := os.Stat(t.Path); err == nil {
			return st.Size()
		}
	}
	return 0
}

// hookWriter reports the "writing" step once, after the first write.
type hookWriter struct {
	w       io.Writer
	started bool
}

func (h *hookWriter) Write(p []byte) (int, error) {
	n, err := h.w.Write(p)
	if !h.started {
		h.started = true
		stepHook("writing")
	}
	return n, err
}

// verifyFile re-reads a written dump from its start: its sha256 must be
// sum, and its SQL (decompressed) must have the content hash want. It
// returns the file's size.
func verifyFile(f *os.File, sum, want string) (int64, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	h := sha256.New()
	size, err := io.Copy(h, f)
	if err != nil {
		return 0, fmt.Errorf("re-reading: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return 0, fmt.Errorf("sha256 on disk %s differs from the written %s", got, sum)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	rd, closeFn, err := sqlReader(f)
	if err != nil {
		return 0, err
	}
	defer closeFn()
	c := newContentHasher()
	if _, err := io.Copy(c, rd); err != nil {
		return 0, fmt.Errorf("re-reading: %w", err)
	}
	if got := c.Sum(); got != want {
		return 0, fmt.Errorf("its content hash %s differs from the dumped %s", got, want)
	}
	return size, nil
}

// removeLeftovers removes what a dump killed before publishing left in dir:
// sidecars of a dump name that does not exist, and named temporary files of
// a writer that no longer runs. The caller holds the directory's lock.
func removeLeftovers(dir string) ([]string, error) {
	removed, err := fsutil.RemoveStaleTemps(dir, Prefix)
	if err != nil {
		return removed, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return removed, fmt.Errorf("listing %s: %w", dir, err)
	}
	for _, e := range ents {
		n := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		var main string
		for _, suf := range []string{SumSuffix, ManifestSuff} {
			if strings.HasSuffix(n, suf) && dumpExt(strings.TrimSuffix(n, suf)) != "" {
				main = strings.TrimSuffix(n, suf)
			}
		}
		if main == "" {
			continue
		}
		// Only this user's (dest may be in a shared, sticky directory).
		if info, err := e.Info(); err != nil || pathguard.Owner(info) != os.Geteuid() {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, main)); !os.IsNotExist(err) {
			continue
		}
		p := filepath.Join(dir, n)
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return removed, fmt.Errorf("removing %s: %w", p, err)
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// writeSidecars writes NAME.sha256 (sha256sum format) and NAME.manifest.json.
func writeSidecars(path string, m Manifest) error {
	line := fmt.Sprintf("%s  %s\n", m.SHA256, filepath.Base(path))
	if err := fsutil.WriteFileAtomic(path+SumSuffix, []byte(line), fsutil.SecretFileMode); err != nil {
		return err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path+ManifestSuff, append(b, '\n'), fsutil.SecretFileMode)
}

// checkDest refuses an explicit dest that is not free or a dump of ours:
// what exists at dest, dest.sha256 or dest.manifest.json must be a regular
// file of this user that heat_db_dump wrote (a dump with our manifest
// beside it, or one of our sidecars), since moveAside renames them; a
// symlink, a device, a directory or another file is refused untouched.
// The directory that holds dest (or its first existing ancestor) must not
// be writable by other users (pathguard.Parent).
func checkDest(dest string) error {
	if !strings.HasSuffix(dest, ".sql") && !strings.HasSuffix(dest, ".sql.gz") {
		return fmt.Errorf("dest %s: a dump's name ends in .sql or .sql.gz (e.g. %s.sql.gz)", dest, dest)
	}
	what := "a dump heat_db_dump wrote (it has no " + filepath.Base(dest) + ManifestSuff + " of ours beside it)"
	if _, err := pathguard.File("dest", dest, what, ourDump); err != nil {
		return err
	}
	if _, err := pathguard.File("dest", dest+ManifestSuff, "the manifest of a dump heat_db_dump wrote", ourManifest); err != nil {
		return err
	}
	_, err := pathguard.File("dest", dest+SumSuffix, "the checksum file of a dump heat_db_dump wrote", ourChecksum)
	return err
}

// ourDump tells a dump heat_db_dump wrote: our manifest is beside it.
func ourDump(path string) bool { return ourManifest(path + ManifestSuff) }

// ourManifest tells a manifest heat_db_dump wrote.
func ourManifest(path string) bool {
	m, err := ReadManifest(strings.TrimSuffix(path, ManifestSuff))
	return err == nil && m != nil && m.Format >= 1 && len(m.SHA256) == 64
}

// ourChecksum tells a checksum file heat_db_dump wrote ("HEX  NAME\n").
func ourChecksum(path string) bool {
	b, err := readSidecar(path, "dump checksum")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || len(f[0]) != 64 || f[1] != strings.TrimSuffix(filepath.Base(path), SumSuffix) {
		return false
	}
	_, err = hex.DecodeString(f[0])
	return err == nil
}

// asideName is where moveAside moves p: p.<its modification time> (with
// -NN when taken); found is false when neither p nor its sidecars exist.
func asideName(p string) (aside string, found bool) {
	var stamp time.Time
	for _, suf := range []string{"", SumSuffix, ManifestSuff} {
		if st, err := os.Lstat(p + suf); err == nil {
			if !found || suf == "" {
				stamp = st.ModTime()
			}
			found = true
		}
	}
	if !found {
		return "", false
	}
	aside = p + "." + stamp.UTC().Format(legacyStampLayout)
	for i := 1; anyExists(aside, aside+SumSuffix, aside+ManifestSuff); i++ {
		aside = fmt.Sprintf("%s.%s-%02d", p, stamp.UTC().Format(legacyStampLayout), i)
	}
	return aside, true
}

// moveAside moves an existing file at p (an explicit dest) and its
// sidecars out of the way, so nothing is ever silently overwritten; sidecars
// without the file (left by an interrupted dump) are moved too. checkDest
// has made sure they are ours. It returns where they went ("" when there
// was nothing).
func moveAside(p string, warn func(string, ...any)) (string, error) {
	aside, found := asideName(p)
	if !found {
		return "", nil
	}
	for _, suf := range []string{"", SumSuffix, ManifestSuff} {
		if err := os.Rename(p+suf, aside+suf); err != nil && !os.IsNotExist(err) {
			return "", fmt.Errorf("moving the existing %s aside: %w", p+suf, err)
		}
	}
	warn("%s existed; moved it to %s", p, aside)
	return aside, nil
}

// beyondKeep are the dumps of all (newest first) that rotation removes:
// those beyond the newest keep+1.
func beyondKeep(all []string, keep int) []string {
	if keep < 0 {
		keep = 0
	}
	if len(all) <= keep+1 {
		return nil
	}
	return all[keep+1:]
}

// rotate removes dumps (and sidecars) beyond the newest keep+1.
func rotate(dir string, keep int) ([]string, error) {
	all, err := List(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, p := range beyondKeep(all, keep) {
		for _, suf := range []string{"", SumSuffix, ManifestSuff} {
			if err := os.Remove(p + suf); err != nil && !os.IsNotExist(err) {
				return removed, fmt.Errorf("rotating old dump %s: %w", p+suf, err)
			}
		}
		removed = append(removed, p)
	}
	return removed, nil
}
