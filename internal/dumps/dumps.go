// Package dumps manages the database dumps of an ephemeral Heat as artifacts:
// timestamped, optionally gzip-compressed SQL files written atomically with
// mode 0600, a sha256 file and a manifest (tables, rows, stacks) beside each,
// rotation of older dumps, verification before a wipe, and restore of the
// newest (or a given) dump into the database heat.conf names.
package dumps

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
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
	"syscall"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/ephemeral-heat/ephemeral-heat/internal/dbdump"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatconf"
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
type Stack struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
}

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

// HostConnectionKey is the heat.conf [database] option holding the URL by
// which the host reaches Heat's database when Heat itself reaches it by
// another (the pod's own MariaDB, published on the host's loopback). Heat
// ignores it; Target prefers it.
const HostConnectionKey = "host_connection"

// Target reads heat.conf in heatDir and returns its database, as the host
// reaches it: [database] host_connection when present, else connection.
func Target(heatDir string) (dbdump.Target, error) {
	p := filepath.Join(heatDir, heatconf.HeatConf)
	ini, err := heatconf.ReadINI(p)
	if err != nil {
		return dbdump.Target{}, fmt.Errorf("finding Heat's database: %w (is %s a heat_dir written by ephemeral_heat_launch?)", err, heatDir)
	}
	key := HostConnectionKey
	conn := ini.Get("database", key)
	if conn == "" {
		key = "connection"
		conn = ini.Get("database", key)
	}
	if conn == "" {
		return dbdump.Target{}, fmt.Errorf("%s has no [database] connection", p)
	}
	t, err := dbdump.ParseHeatConnection(conn)
	if err != nil {
		return dbdump.Target{}, fmt.Errorf("%s [database] %s: %w", p, key, err)
	}
	return t, nil
}

// Describe names a target without credentials.
func Describe(t dbdump.Target) string {
	if t.Kind == dbdump.KindSQLite {
		return t.Path
	}
	return fmt.Sprintf("mysql://%s@%s/%s", t.User, t.Addr, t.Database)
}

// Exists reports whether the target database exists and is not empty.
func Exists(ctx context.Context, t dbdump.Target) (bool, error) {
	if t.Kind == dbdump.KindSQLite {
		st, err := os.Stat(t.Path)
		if os.IsNotExist(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return st.Size() > 0, nil
	}
	db, err := sql.Open("mysql", t.DSN)
	if err != nil {
		return false, err
	}
	defer db.Close()
	err = db.PingContext(ctx)
	if err != nil {
		// Unknown database (1049) means it is gone; a refused login (1045)
		// usually means a wipe dropped Heat's user with it.
		if strings.Contains(err.Error(), "1049") {
			return false, nil
		}
		if strings.Contains(err.Error(), "1045") {
			return false, fmt.Errorf("%w: connecting to %s: %v", ErrNoAccess, Describe(t), err)
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			return false, fmt.Errorf("connecting to %s: %w: the database server is not running. A pod's own MariaDB runs only "+
				"while its Heat runs: start Heat first (ephemeral_heat_launch state: started; the pod's data is kept in the "+
				"heat_dir), then dump or restore; an external MySQL must be started by whoever runs it", Describe(t), err)
		}
		return false, fmt.Errorf("connecting to %s: %w", Describe(t), err)
	}
	// A database without tables holds nothing to dump or to keep.
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()").Scan(&n); err != nil {
		return false, fmt.Errorf("counting tables in %s: %w", Describe(t), err)
	}
	return n > 0, nil
}

// ListStacks reads the live top-level stacks from the database.
func ListStacks(ctx context.Context, t dbdump.Target) ([]Stack, error) {
	var db *sql.DB
	var err error
	if t.Kind == dbdump.KindSQLite {
		db, err = sql.Open("sqlite", "file:"+t.Path+"?mode=ro")
	} else {
		db, err = sql.Open("mysql", t.DSN)
	}
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT id, name, action, status FROM stack WHERE deleted_at IS NULL AND owner_id IS NULL ORDER BY name, id")
	if err != nil {
		return nil, fmt.Errorf("listing stacks in %s: %w", Describe(t), err)
	}
	defer rows.Close()
	out := []Stack{}
	for rows.Next() {
		var s Stack
		var action, status sql.NullString
		if err := rows.Scan(&s.ID, &s.Name, &action, &status); err != nil {
			return nil, fmt.Errorf("listing stacks in %s: %w", Describe(t), err)
		}
		s.Status = action.String + "_" + status.String
		out = append(out, s)
	}
	return out, rows.Err()
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
func dumpTo(ctx context.Context, t dbdump.Target, w io.Writer) (dbdump.Stats, error) {
	if t.Kind == dbdump.KindSQLite {
		return dbdump.DumpSQLite(ctx, t.Path, w)
	}
	return dbdump.DumpMySQL(ctx, t.DSN, w)
}

// ContentHash dumps the database to a hash only (no file).
func ContentHash(ctx context.Context, t dbdump.Target) (string, error) {
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

// ReadManifest reads the manifest beside a dump (nil if there is none).
func ReadManifest(dumpPath string) (*Manifest, error) {
	b, err := os.ReadFile(dumpPath + ManifestSuff)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s%s is corrupt: %w", dumpPath, ManifestSuff, err)
	}
	return &m, nil
}

// fileSHA256 hashes a file.
func fileSHA256(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// VerifyChecksum checks a dump against its .sha256 file. It returns
// errNoChecksum when there is none.
func VerifyChecksum(dumpPath string) (string, error) {
	b, err := os.ReadFile(dumpPath + SumSuffix)
	if os.IsNotExist(err) {
		return "", errNoChecksum
	}
	if err != nil {
		return "", err
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

// ErrNoAccess means the database refused Heat's credentials: its user was
// dropped (by a wipe) or its password changed.
var ErrNoAccess = errors.New("the database refused Heat's credentials")

// openSQL opens a dump for reading, decompressing gzip (detected by its magic bytes).
func openSQL(path string) (io.Reader, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("opening dump %s: %w", path, err)
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
