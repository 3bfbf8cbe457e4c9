// Package dumps manages the database dumps of an ephemeral Heat as artifacts:
// timestamped, optionally gzip-compressed SQL files written atomically with
// mode 0600, a sha256 file and a manifest (tables, rows, stacks) beside each,
// rotation of older dumps, verification before a wipe, and restore of the
// newest (or a given) dump into the database heat.conf names; restore also
// adopts the dumps python-tripleoclient leaves (tripleo.go).
package dumps

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dbdump"
	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
)

// Dump file naming inside heat_dir: Prefix + UTC time in StampLayout +
// ".sql" or ".sql.gz". Each new dump's time is strictly later than every
// dump already there (see newDumpPath), so "newest" is always the last one
// written, whatever the clock did.
const (
	Prefix       = "heat-db-"
	StampLayout  = "20060102T150405.000000Z"
	SumSuffix    = ".sha256"
	ManifestSuff = ".manifest.json"
	// legacyStampLayout is the whole-second stamp of older dumps, with an
	// optional "-NN" sequence for dumps within one second.
	legacyStampLayout = "20060102T150405Z"
)

// Stack is a top-level stack a dump holds.
type Stack = heatdb.Stack

// Manifest describes a dump; it is written beside it as NAME.manifest.json.
type Manifest struct {
	Format    int              `json:"format"`
	Created   time.Time        `json:"created"`
	Database  string           `json:"database"` // sqlite | mysql
	Source    string           `json:"source"`   // file or mysql://user@host/db, no password
	Compress  string           `json:"compress"` // gzip | none
	Size      int64            `json:"size"`
	SHA256    string           `json:"sha256"`     // of the file as stored
	SQLSHA256 string           `json:"sql_sha256"` // of the SQL text without comment lines
	Tables    int              `json:"tables"`
	Rows      int64            `json:"rows"`
	TableRows map[string]int64 `json:"table_rows"`
	Stacks    []Stack          `json:"stacks"`
}

// target is the database heat_dir's heat.conf names, as the host reaches it.
func target(d heatdir.Dir) (heatdb.DB, error) {
	if d.Path() == "" {
		return heatdb.DB{}, errors.New("heat_dir is required")
	}
	db, err := d.Database()
	return db.DB, err
}

// contentHasher hashes SQL text without its "--" comment lines, which carry
// times and hosts, so identical database content gives the same hash.
type contentHasher struct {
	h                                hash.Hash
	lineStart, skipping, pendingDash bool
	buf                              []byte
}

func newContentHasher() *contentHasher {
	return &contentHasher{h: sha256.New(), lineStart: true, buf: make([]byte, 0, 64*1024)}
}

func (c *contentHasher) Write(p []byte) (int, error) {
	buf := c.buf[:0]
	for _, b := range p {
		switch {
		case c.skipping:
			if b == '\n' {
				c.skipping, c.lineStart = false, true
			}
			continue
		case c.pendingDash:
			c.pendingDash = false
			if b == '-' {
				c.skipping = true
				continue
			}
			buf = append(buf, '-')
		case c.lineStart && b == '-':
			c.pendingDash, c.lineStart = true, false
			continue
		}
		buf = append(buf, b)
		c.lineStart = b == '\n'
	}
	c.h.Write(buf)
	c.buf = buf
	return len(p), nil
}

func (c *contentHasher) Sum() string { return hex.EncodeToString(c.h.Sum(nil)) }

// dumpTo streams the database as SQL into w.
func dumpTo(ctx context.Context, t heatdb.DB, w io.Writer) (dbdump.Stats, error) {
	if t.Kind == heatdb.SQLite {
		return dbdump.DumpSQLite(ctx, t.Path, w)
	}
	return dbdump.DumpMySQL(ctx, t.DSN(), w)
}

// ContentHash dumps the database to a hash only (no file).
func ContentHash(ctx context.Context, t heatdb.DB) (string, error) {
	h := newContentHasher()
	if _, err := dumpTo(ctx, t, h); err != nil {
		return "", err
	}
	return h.Sum(), nil
}

// dumpExt returns the extension of a dump file name (".sql" or ".sql.gz"),
// or "" when the name is not a dump's.
func dumpExt(name string) string {
	if !strings.HasPrefix(name, Prefix) {
		return ""
	}
	for _, ext := range []string{".sql.gz", ".sql"} {
		if strings.HasSuffix(name, ext) {
			return ext
		}
	}
	return ""
}

// stampOf parses the time and sequence a dump's name carries. ok is false
// for a name in neither the current nor the legacy layout.
func stampOf(name string) (t time.Time, seq int, ok bool) {
	ext := dumpExt(name)
	if ext == "" {
		return time.Time{}, 0, false
	}
	stamp := strings.TrimSuffix(strings.TrimPrefix(name, Prefix), ext)
	if t, err := time.Parse(StampLayout, stamp); err == nil {
		return t, 0, true
	}
	base, suffix, hasSeq := strings.Cut(stamp, "-")
	t, err := time.Parse(legacyStampLayout, base)
	if err != nil {
		return time.Time{}, 0, false
	}
	if hasSeq {
		if seq, err = strconv.Atoi(suffix); err != nil || seq < 0 {
			return time.Time{}, 0, false
		}
	}
	return t, seq, true
}

// List returns the dumps in dir (regular files named heat-db-*.sql or
// *.sql.gz), newest first: by the time and sequence their names carry;
// names that carry none (renamed by hand) come last, in reverse name order.
func List(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing dumps in %s: %w", dir, err)
	}
	type entry struct {
		name string
		t    time.Time
		seq  int
		ok   bool
	}
	var all []entry
	for _, e := range ents {
		n := e.Name()
		if !e.Type().IsRegular() || dumpExt(n) == "" {
			continue
		}
		t, seq, ok := stampOf(n)
		all = append(all, entry{n, t, seq, ok})
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		switch {
		case a.ok != b.ok:
			return a.ok
		case !a.ok:
			return a.name > b.name
		case !a.t.Equal(b.t):
			return a.t.After(b.t)
		case a.seq != b.seq:
			return a.seq > b.seq
		}
		return a.name > b.name
	})
	out := make([]string, len(all))
	for i, e := range all {
		out[i] = filepath.Join(dir, e.name)
	}
	return out, nil
}

// sidecarLimit bounds a sidecar read: a manifest lists tables and stacks.
var sidecarLimit = fsutil.Limit{Bytes: 16 << 20}

// readSidecar reads a dump's sidecar (nil, nil when there is none): a
// regular file only, of bounded size.
func readSidecar(path, what string) ([]byte, error) {
	if _, err := os.Lstat(path); os.IsNotExist(err) {
		return nil, nil
	}
	return fsutil.ReadInput(path, sidecarLimit, what)
}

// ReadManifest reads the manifest beside a dump (nil if there is none).
func ReadManifest(dumpPath string) (*Manifest, error) {
	b, err := readSidecar(dumpPath+ManifestSuff, "dump manifest")
	if b == nil || err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s%s is corrupt: %w", dumpPath, ManifestSuff, err)
	}
	return &m, nil
}

// fileSHA256 hashes a file.
func fileSHA256(path string) (string, int64, error) { return fsutil.HashInput(path, "dump") }

// VerifyChecksum checks a dump against its .sha256 file. It returns
// errNoChecksum when there is none.
func VerifyChecksum(dumpPath string) (string, error) {
	b, err := readSidecar(dumpPath+SumSuffix, "dump checksum")
	if err != nil {
		return "", err
	}
	if b == nil {
		return "", errNoChecksum
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return "", fmt.Errorf("%s%s is empty", dumpPath, SumSuffix)
	}
	got, _, err := fileSHA256(dumpPath)
	if err != nil {
		return "", err
	}
	if got != fields[0] {
		return "", fmt.Errorf("refusing %s: its sha256 is %s but %s%s records %s; the file is corrupt or was changed (restore another dump, or delete the .sha256 file if you trust this one)",
			dumpPath, got, dumpPath, SumSuffix, fields[0])
	}
	return got, nil
}

var errNoChecksum = errors.New("no checksum file")

// openSQL opens a dump for reading, decompressing gzip (detected by its magic bytes).
func openSQL(path string) (io.Reader, func() error, error) {
	f, _, err := fsutil.OpenInput(path, "dump")
	if err != nil {
		return nil, nil, err
	}
	rd, closeFn, err := sqlReader(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("dump %s: %w", path, err)
	}
	return rd, func() error { closeFn(); return f.Close() }, nil
}

// sqlReader reads SQL text from r, decompressing gzip (detected by its magic
// bytes). The returned function releases the decompressor, not r.
func sqlReader(r io.Reader) (io.Reader, func(), error) {
	br := bufio.NewReaderSize(r, 256*1024)
	magic, _ := br.Peek(2)
	if bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		return zr, func() { zr.Close() }, nil
	}
	return br, func() {}, nil
}
