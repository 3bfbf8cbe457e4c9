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

	"github.com/ephemeral-heat/ephemeral-heat/internal/dbdump"
	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// Compression choices.
const (
	Gzip = "gzip"
	None = "none"
)

// DumpOptions are heat_db_dump's parameters for state=dumped.
type DumpOptions struct {
	HeatDir   string
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
func registerSecrets(t dbdump.Target, secret func(string)) {
	if t.Kind == dbdump.KindMySQL {
		if c, err := mysql.ParseDSN(t.DSN); err == nil {
			secret(c.Passwd)
		}
		secret(t.DSN)
	}
}

// newDumpPath picks a fresh timestamped name in dir.
func newDumpPath(dir string, now time.Time, compress string) string {
	ext := ".sql"
	if compress == Gzip {
		ext = ".sql.gz"
	}
	base := Prefix + now.UTC().Format(StampLayout)
	p := filepath.Join(dir, base+ext)
	for i := 1; ; i++ {
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			return p
		}
		p = filepath.Join(dir, fmt.Sprintf("%s-%02d%s", base, i, ext))
	}
}

// Dump writes a verified dump of heat_dir's database and optionally wipes it.
func Dump(ctx context.Context, o DumpOptions) (Result, error) {
	o.defaults()
	t, err := Target(o.HeatDir)
	if err != nil {
		return Result{}, err
	}
	registerSecrets(t, o.Secret)
	dir := o.HeatDir
	if o.Dest != "" {
		dir = filepath.Dir(o.Dest)
	}
	exists, err := Exists(ctx, t)
	gone := errors.Is(err, ErrNoAccess)
	if err != nil && !gone {
		return Result{}, err
	}
	if !exists {
		// Already dumped and wiped: report the newest dump, change nothing.
		if prev, _ := List(dir); len(prev) > 0 {
			r := Result{Path: prev[0], Msg: fmt.Sprintf("the database %s is already gone; the newest dump is %s", Describe(t), prev[0])}
			if gone {
				r.Msg = fmt.Sprintf("Heat's database user is gone (wiped?), so %s is taken as gone; the newest dump is %s", Describe(t), prev[0])
			}
			if m, _ := ReadManifest(prev[0]); m != nil {
				r.SHA256, r.Size, r.Tables, r.Rows, r.Stacks = m.SHA256, m.Size, m.Tables, m.Rows, m.Stacks
			}
			return r, nil
		}
		if gone {
			return Result{}, err
		}
		return Result{}, fmt.Errorf("the database %s does not exist and %s holds no dump: launch Heat (ephemeral_heat_launch) before dumping", Describe(t), dir)
	}
	if o.CheckMode {
		r := Result{Changed: true, Path: o.Dest, Msg: "would dump " + Describe(t)}
		if r.Path == "" {
			r.Path = newDumpPath(dir, o.Now(), o.Compress)
		}
		if o.Wipe {
			r.Msg += " and wipe it"
		}
		return r, nil
	}
	if _, err := fsutil.EnsurePrivateDir(dir); err != nil {
		return Result{}, err
	}

	path := o.Dest
	if path == "" {
		path = newDumpPath(dir, o.Now(), o.Compress)
	}
	fileHash := sha256.New()
	content := newContentHasher()
	var stats dbdump.Stats
	err = fsutil.WriteAtomicHook(path, fsutil.SecretFileMode, func(w io.Writer) error {
		out := io.MultiWriter(w, fileHash)
		var sqlw io.Writer = out
		var zw *gzip.Writer
		if o.Compress == Gzip {
			zw, _ = gzip.NewWriterLevel(out, gzip.BestSpeed)
			sqlw = zw
		}
		var err error
		stats, err = dumpTo(ctx, t, io.MultiWriter(sqlw, content))
		if err != nil {
			return err
		}
		if zw != nil {
			return zw.Close()
		}
		return nil
	}, func(p string) error { return rotateAside(p, o.Warn) })
	if err != nil {
		return Result{}, fmt.Errorf("dumping %s: %w", Describe(t), err)
	}
	sum := hex.EncodeToString(fileHash.Sum(nil))
	r := Result{Changed: true, Path: path, SHA256: sum, Tables: stats.Tables, Rows: stats.Rows}

	// Verify what is on disk before anything relies on it.
	got, size, err := fileSHA256(path)
	if err != nil {
		return r, err
	}
	if got != sum {
		return r, fmt.Errorf("verifying %s: sha256 on disk %s differs from the written %s", path, got, sum)
	}
	if err := verifyContent(path, content.Sum()); err != nil {
		return r, err
	}
	r.Size = size

	stacks, err := ListStacks(ctx, t)
	if err != nil {
		return r, err
	}
	r.Stacks = stacks

	// Identical content to the newest earlier dump: keep that one.
	if o.Dest == "" {
		if prev, _ := List(dir); len(prev) > 1 && prev[0] == path {
			if m, _ := ReadManifest(prev[1]); m != nil && m.SQLSHA256 == content.Sum() {
				if _, err := VerifyChecksum(prev[1]); err == nil {
					os.Remove(path)
					r.Changed, r.Path, r.SHA256, r.Size = false, prev[1], m.SHA256, m.Size
					r.Msg = "the database is unchanged since " + prev[1]
				}
			}
		}
	}
	if r.Changed {
		m := Manifest{Format: 1, Created: o.Now().UTC(), Database: string(t.Kind), Source: Describe(t), Compress: o.Compress,
			Size: size, SHA256: sum, SQLSHA256: content.Sum(), Tables: stats.Tables, Rows: stats.Rows,
			TableRows: stats.TableRows, Stacks: stacks}
		if err := writeSidecars(path, m); err != nil {
			return r, err
		}
		r.Msg = fmt.Sprintf("dumped %s to %s (%d tables, %d rows, %d stacks)", Describe(t), path, stats.Tables, stats.Rows, len(stacks))
		if o.Dest == "" {
			rotated, err := rotate(dir, o.Keep)
			r.Rotated = rotated
			if err != nil {
				return r, err
			}
		}
	}

	if o.Wipe {
		if o.WipeFunc == nil {
			return r, fmt.Errorf("wipe requested but no way to drop %s was given", Describe(t))
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
	return r, nil
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

// rotateAside moves an existing file at p (an explicit dest) out of the way,
// with its sidecars, so it is never silently overwritten.
func rotateAside(p string, warn func(string, ...any)) error {
	st, err := os.Stat(p)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	aside := p + "." + st.ModTime().UTC().Format(StampLayout)
	for i := 1; ; i++ {
		if _, err := os.Lstat(aside); os.IsNotExist(err) {
			break
		}
		aside = fmt.Sprintf("%s.%s-%02d", p, st.ModTime().UTC().Format(StampLayout), i)
	}
	for _, suf := range []string{"", SumSuffix, ManifestSuff} {
		if err := os.Rename(p+suf, aside+suf); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("moving the existing %s aside: %w", p+suf, err)
		}
	}
	warn("%s existed; moved it to %s", p, aside)
	return nil
}

// rotate removes dumps (and sidecars) beyond the newest keep+1.
func rotate(dir string, keep int) ([]string, error) {
	all, err := List(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for i, p := range all {
		if i <= keep {
			continue
		}
		for _, suf := range []string{"", SumSuffix, ManifestSuff} {
			if err := os.Remove(p + suf); err != nil && !os.IsNotExist(err) {
				return removed, fmt.Errorf("rotating old dump %s: %w", p+suf, err)
			}
		}
		removed = append(removed, p)
	}
	return removed, nil
}
