package dumps

// Adoption of the dumps python-tripleoclient leaves (stable/wallaby,
// tripleoclient/heat_launcher.py, HeatPodLauncher): do_backup_db runs
// `mysqldump heat` in the undercloud's mysql container into
// <heat_dir>/heat-db.sql, then tar_file() writes
// tarfile.open("heat-db.sql-<time.time()>.tar.bzip2", "w:bz2") holding that
// one file under the name "heat-db.sql" (tf.add(path, basename(path))) and
// deletes heat-db.sql. heat_dir is <working dir>/heat-launcher, the working
// dir ~/overcloud-deploy/<stack> (v1/overcloud_deploy.py). The stamp is the
// launcher's start time as Python prints a float (1700000000.1234567).
// do_restore_db takes the newest by mtime, untars it and feeds it to mysql.
//
// Such a dump carries no checksum: it is checked by what it carries (the
// bzip2 stream's CRCs, a tar holding exactly heat-db.sql, mysqldump's
// closing "-- Dump completed" line, a Heat database inside) and, once
// loaded, every row is checked against it. The working dir it comes from is
// only read (often another user's, mode 0755): the dump is copied into our
// heat_dir and loaded from there.

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/bzip2"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dbdump"
	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
)

// Names of a tripleoclient dump.
const (
	TripleOPrefix = "heat-db.sql-"
	TripleOSuffix = ".tar.bzip2"
	TripleOMember = "heat-db.sql"
	// TripleOHeatDir is the heat_dir inside a tripleoclient working dir.
	TripleOHeatDir = "heat-launcher"
	// dumpCompleted starts the last line mysqldump writes (--comments, the default).
	dumpCompleted = "-- Dump completed"
)

var tripleoStampRE = regexp.MustCompile(`^([0-9]{1,12})(?:\.([0-9]{1,9}))?$`)

// isTripleOName reports whether name is a tripleoclient dump's name.
func isTripleOName(name string) bool {
	return strings.HasPrefix(name, TripleOPrefix) && strings.HasSuffix(name, TripleOSuffix) && len(name) > len(TripleOPrefix)+len(TripleOSuffix)
}

// tripleoStamp parses the time.time() a tripleoclient dump's name carries.
func tripleoStamp(name string) (time.Time, bool) {
	if !isTripleOName(name) {
		return time.Time{}, false
	}
	m := tripleoStampRE.FindStringSubmatch(strings.TrimSuffix(strings.TrimPrefix(name, TripleOPrefix), TripleOSuffix))
	if m == nil {
		return time.Time{}, false
	}
	sec, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	ns := int64(0)
	if m[2] != "" {
		ns, _ = strconv.ParseInt((m[2] + "000000000")[:9], 10, 64)
	}
	return time.Unix(sec, ns).UTC(), true
}

// openRegular opens a dump for reading through the one bounded reader of
// inputs (fsutil.OpenInput): only a regular file, a FIFO or device refused
// by its type without blocking on it.
func openRegular(path string) (*os.File, error) {
	f, _, err := fsutil.OpenInput(path, "dump")
	return f, err
}

// TripleODump is a tripleoclient dump that passed CheckTripleO.
type TripleODump struct {
	Path    string
	SHA256  string // of the archive
	Size    int64  // of the archive
	SQLSize int64  // of heat-db.sql
	Stacks  []Stack
	// SQL is what the dump holds: tables, rows, and the digests its load is
	// checked against.
	SQL *dbdump.MySQLDump
}

// errTripleO marks a dump that is not a complete tripleoclient dump.
var errTripleO = errors.New("not a complete tripleoclient Heat dump")

// CheckTripleO reads a tripleoclient dump through, only reading it, and
// checks it by what it carries: an intact bzip2 stream (its block and
// stream CRCs), a tar archive holding exactly one regular file named
// heat-db.sql, a MySQL dump in it that parses to its end and ends with
// mysqldump's "-- Dump completed" line, and a Heat database (a stack
// table). A truncated or foreign file is refused with the reason.
func CheckTripleO(path string) (*TripleODump, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return checkTripleO(path, f, io.Discard)
}

// checkTripleO checks the archive read from r and copies every byte read
// to copyTo.
func checkTripleO(path string, r io.Reader, copyTo io.Writer) (*TripleODump, error) {
	refuse := func(format string, a ...any) error {
		return fmt.Errorf("refusing %s: %w: %s", path, errTripleO, fmt.Sprintf(format, a...))
	}
	h := sha256.New()
	counted := &countingWriter{}
	src := io.TeeReader(r, io.MultiWriter(h, copyTo, counted))
	br := bufio.NewReaderSize(src, 64<<10)
	if magic, _ := br.Peek(3); !bytes.Equal(magic, []byte("BZh")) {
		return nil, refuse("it is not bzip2-compressed (tripleoclient writes heat-db.sql-<time>.tar.bzip2 with tarfile mode w:bz2)")
	}
	bz := &firstErrReader{r: bzip2.NewReader(br)}
	tr := tar.NewReader(bz)
	for {
		hdr, err := tr.Next()
		if err != nil {
			return nil, refuse("%s", archiveProblem(err, bz.err, "its tar archive holds no file"))
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader { // pax global header: not a member
			continue
		}
		if hdr.Name != TripleOMember || hdr.Typeflag != tar.TypeReg {
			return nil, refuse("its tar archive holds %q (type %c), where a tripleoclient dump holds exactly the regular file %s", hdr.Name, hdr.Typeflag, TripleOMember)
		}
		break
	}
	tail := &lastLine{}
	member := &firstErrReader{r: io.TeeReader(tr, tail)}
	var stacks []Stack
	sqlDump, scanErr := dbdump.ScanMySQLDump(member, func(table string, get func(string) (string, bool)) error {
		if table != "stack" {
			return nil
		}
		if _, null := get("owner_id"); !null {
			return nil
		}
		if _, null := get("deleted_at"); !null {
			return nil
		}
		id, _ := get("id")
		name, _ := get("name")
		action, _ := get("action")
		status, _ := get("status")
		stacks = append(stacks, Stack{ID: id, Name: name, Status: action + "_" + status})
		return nil
	})
	if member.err != nil || bz.err != nil {
		return nil, refuse("%s", archiveProblem(member.err, bz.err, ""))
	}
	if scanErr != nil {
		return nil, refuse("%s is not a complete MySQL dump: %v", TripleOMember, scanErr)
	}
	if !strings.HasPrefix(tail.line(), dumpCompleted) {
		return nil, refuse("%s does not end with mysqldump's %q line (last line: %q): the dump was cut short", TripleOMember, dumpCompleted, abbreviate(tail.line()))
	}
	if !contains(sqlDump.Tables, "stack") {
		return nil, refuse("%s holds no Heat database (no stack table; tables: %s)", TripleOMember, strings.Join(sqlDump.Tables, ", "))
	}
	if next, err := tr.Next(); err != io.EOF {
		if err == nil {
			return nil, refuse("its tar archive holds %q after %s: a tripleoclient dump holds only %s", next.Name, TripleOMember, TripleOMember)
		}
		return nil, refuse("%s", archiveProblem(err, bz.err, ""))
	}
	// The rest of the bzip2 stream (tar padding) and of the file: every
	// CRC is checked and nothing may follow the stream.
	if _, err := io.Copy(io.Discard, bz); err != nil {
		return nil, refuse("%s", archiveProblem(err, bz.err, ""))
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return &TripleODump{Path: path, SHA256: hex.EncodeToString(h.Sum(nil)), Size: counted.n, SQLSize: tail.n, Stacks: stacks, SQL: sqlDump}, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// archiveProblem says what a read error of the archive means.
func archiveProblem(err, bzErr error, eofMsg string) string {
	if bzErr != nil {
		err = bzErr
	}
	var se bzip2.StructuralError
	switch {
	case err == io.EOF && eofMsg != "":
		return eofMsg
	case errors.Is(err, io.ErrUnexpectedEOF), err == io.EOF:
		return "it ends too early (truncated: the copy or the dump was interrupted)"
	case errors.As(err, &se) && strings.Contains(string(se), "checksum"):
		return fmt.Sprintf("its bzip2 data is corrupt (%v)", err)
	case errors.As(err, &se):
		return fmt.Sprintf("its bzip2 data is invalid (%v)", err)
	case errors.Is(err, tar.ErrHeader):
		return "it is bzip2 data but not a tar archive"
	}
	return err.Error()
}

// firstErrReader remembers the first error other than io.EOF.
type firstErrReader struct {
	r   io.Reader
	err error
}

func (f *firstErrReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF && f.err == nil {
		f.err = err
	}
	return n, err
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// lastLine keeps the last non-empty line written to it (at most 256 bytes).
type lastLine struct {
	cur, last []byte
	n         int64
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.n += int64(len(p))
	for _, c := range p {
		if c == '\n' {
			if len(bytes.TrimSpace(l.cur)) > 0 {
				l.last = append(l.last[:0], l.cur...)
			}
			l.cur = l.cur[:0]
			continue
		}
		if len(l.cur) < 256 {
			l.cur = append(l.cur, c)
		}
	}
	return len(p), nil
}

func (l *lastLine) line() string {
	if len(bytes.TrimSpace(l.cur)) > 0 {
		return string(bytes.TrimSpace(l.cur))
	}
	return string(bytes.TrimSpace(l.last))
}

func abbreviate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// adoptTripleO checks the tripleoclient dump src and, when it is not in
// heatDir already, copies it there under its own name (mode 0600; the copy
// gets its name only once the whole file passed the checks). It only reads
// src and its directory. It returns the dump in heatDir and whether it was
// copied now.
func adoptTripleO(src, heatDir string) (*TripleODump, bool, error) {
	base := filepath.Base(src)
	dst := filepath.Join(heatDir, base)
	f, err := openRegular(src)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	if fi, err := os.Stat(dst); err == nil {
		sfi, _ := f.Stat()
		if os.SameFile(fi, sfi) {
			d, err := checkTripleO(src, f, io.Discard)
			return d, false, err
		}
	}
	if fi, err := os.Lstat(dst); err == nil {
		// The same name in heat_dir: fine if it is the same dump.
		if !fi.Mode().IsRegular() {
			return nil, false, fmt.Errorf("cannot copy %s into heat_dir: %s exists and is not a regular file", src, dst)
		}
		d, err := checkTripleO(src, f, io.Discard)
		if err != nil {
			return nil, false, err
		}
		have, _, err := fileSHA256(dst)
		if err != nil {
			return nil, false, err
		}
		if have != d.SHA256 {
			return nil, false, fmt.Errorf("cannot copy %s into heat_dir: %s exists with other content (move one of them away, or give dest: %s)", src, dst, dst)
		}
		d.Path = dst
		return d, false, nil
	} else if !os.IsNotExist(err) {
		return nil, false, err
	}

	unlock, err := lockDumpDir(heatDir)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	if _, err := fsutil.RemoveStaleTemps(heatDir, TripleOPrefix); err != nil {
		return nil, false, fmt.Errorf("cleaning up after an interrupted copy into %s: %w", heatDir, err)
	}
	pending, err := fsutil.NewPending(heatDir, base, fsutil.SecretFileMode)
	if err != nil {
		return nil, false, fmt.Errorf("copying %s into %s: %w", src, heatDir, err)
	}
	defer pending.Discard()
	d, err := checkTripleO(src, f, pending.File())
	if err != nil {
		return nil, false, err
	}
	if err := pending.Publish(dst); err != nil {
		return nil, false, fmt.Errorf("copying %s into %s: %w", src, heatDir, err)
	}
	d.Path = dst
	return d, true, nil
}

// openTripleOSQL opens the heat-db.sql inside a (checked) tripleoclient dump.
func openTripleOSQL(path string) (io.Reader, func() error, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, nil, err
	}
	tr := tar.NewReader(bzip2.NewReader(bufio.NewReaderSize(f, 64<<10)))
	for {
		hdr, err := tr.Next()
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("reading %s: %w", path, err)
		}
		if hdr.Typeflag == tar.TypeReg && hdr.Name == TripleOMember {
			return tr, f.Close, nil
		}
	}
}

// restoreTripleO is Restore for a tripleoclient dump.
func restoreTripleO(ctx context.Context, o RestoreOptions, t heatdb.DB, path string) (Result, error) {
	var d *TripleODump
	var err error
	copied := false
	if o.Idle != nil {
		// The dump first (a bad one is named whatever runs), then whether
		// the restore may go on, before the dump is copied.
		if _, err := CheckTripleO(path); err != nil {
			return Result{}, err
		}
		if err := o.Idle(ctx); err != nil {
			return Result{}, err
		}
	}
	if o.CheckMode {
		d, err = CheckTripleO(path)
	} else {
		d, copied, err = adoptTripleO(path, o.HeatDir.Path())
	}
	if err != nil {
		return Result{}, err
	}
	r := Result{Path: d.Path, SHA256: d.SHA256, Size: d.Size, Tables: len(d.SQL.Tables), Rows: d.SQL.Rows, Stacks: d.Stacks, Changed: copied}
	if copied {
		r.CopiedFrom = path
	}
	o.Warn("%s is a tripleoclient dump (mysqldump in a bzip2 tar): it carries no checksum; it was checked by its bzip2 CRCs, "+
		"its tar layout and mysqldump's closing line, and every row is checked after loading", d.Path)
	for _, n := range d.SQL.Notes {
		if t.Kind == heatdb.SQLite {
			o.Warn("converting for SQLite: %s", n)
		}
	}

	exists, err := heatdb.HasData(ctx, t)
	if errors.Is(err, heatdb.ErrNoAccess) {
		return r, fmt.Errorf("%w: the database user of heat.conf does not exist any more; relaunch with ephemeral_heat_launch restore_db: true, which recreates it", err)
	}
	if err != nil {
		return r, err
	}
	if exists && verifyLoaded(ctx, d.SQL, t) == nil {
		r.Msg = fmt.Sprintf("%s already holds the content of %s", t, d.Path)
		return r, nil
	}
	before := restoreBefore(ctx, t, exists, "")
	if o.CheckMode {
		r.Before, r.After = predictRestore(t, r, before, "")
		r.Changed = true
		r.Msg = fmt.Sprintf("would restore %s into %s", path, t)
		if filepath.Dir(path) != o.HeatDir.Path() {
			r.Msg = fmt.Sprintf("would copy %s into %s and restore it into %s", path, o.HeatDir, t)
		}
		return r, nil
	}
	if exists {
		b, err := Dump(ctx, DumpOptions{HeatDir: o.HeatDir, Keep: 1 << 20, Warn: o.Warn, Secret: o.Secret})
		if err != nil {
			return r, fmt.Errorf("saving the current database before the restore: %w", err)
		}
		r.Backup = b.Path
		if b.Changed {
			o.Warn("the database held other data; it was saved to %s before the restore", b.Path)
		}
	}
	rd, closeFn, err := openTripleOSQL(d.Path)
	if err != nil {
		return r, err
	}
	defer closeFn()
	var st dbdump.Stats
	if t.Kind == heatdb.SQLite {
		st, _, err = dbdump.RestoreMySQLDumpSQLite(ctx, rd, t.Path, dbdump.WithOverwrite())
	} else if err = heatdb.Empty(ctx, t, exists); err == nil {
		if st, err = dbdump.RestoreMySQL(ctx, t.DSN(), rd, dbdump.WithOverwrite()); err == nil {
			err = verifyLoaded(ctx, d.SQL, t)
		}
	}
	if err != nil {
		return r, fmt.Errorf("restoring %s into %s: %w", d.Path, t, err)
	}
	r.Changed = true
	r.Tables, r.Rows = st.Tables, st.Rows
	stacks, err := heatdb.ListStacks(ctx, t)
	if err != nil {
		return r, err
	}
	r.Stacks = stacks
	if err := SameStacks(d.Stacks, stacks); err != nil {
		return r, fmt.Errorf("after restoring %s: %w", d.Path, err)
	}
	r.Msg = fmt.Sprintf("restored the tripleoclient dump %s into %s (%d tables, %d rows, %d stacks, every row checked)", d.Path, t, st.Tables, st.Rows, len(stacks))
	if copied {
		r.Msg += "; copied from " + path
	}
	after := restoreAfter(t, r, "")
	r.Before, r.After = &before, &after
	return r, nil
}

// verifyLoaded checks every row of t against the dump's.
func verifyLoaded(ctx context.Context, d *dbdump.MySQLDump, t heatdb.DB) error {
	if t.Kind == heatdb.SQLite {
		return d.VerifySQLite(ctx, t.Path)
	}
	return d.VerifyMySQL(ctx, t.DSN())
}
