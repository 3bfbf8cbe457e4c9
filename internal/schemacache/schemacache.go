// Package schemacache keeps the sqlite database that `heat-manage db_sync`
// makes on a fresh file, one per Heat installation and database
// configuration, so that the next fresh launch copies it instead of running
// Heat's migrations again (db_sync is about half of a native launch).
//
// Every entry is db_sync's own result: the first launch of a key runs
// db_sync as always and then stores the file it made (Put); a later launch
// of the same key copies it (Get), checked against the sha256 recorded when
// it was stored. The key (Key) covers everything db_sync's result depends
// on: Heat's version and every file of its heat/db package (the
// migrations), the [database] options of heat.conf but the file's path
// (engine plugins that add indexes run during db_sync too), and our Python
// files on its path. A Heat whose package cannot be found, or a caller's
// PYTHONPATH that could shadow it, gets no key: db_sync runs.
//
// The cache is $XDG_CACHE_HOME/ephemeral-heat/heat-schema (else
// ~/.cache/...): a directory of ours (0700, our owner, no symlink), its
// files 0600. Another one is refused, never fixed.
package schemacache

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
)

// keyVersion changes when the key's recipe changes.
const keyVersion = "ephemeral-heat heat-schema v1\n"

// maxDBFile bounds an entry (a fresh Heat schema is about 200 KiB).
const maxDBFile = 64 << 20

// ErrMismatch is an entry whose file does not match its record: Put
// replaces it.
var ErrMismatch = errors.New("does not match its record")

// Cache is a directory of entries: KEY.sqlite and its record KEY.json.
type Cache struct{ Dir string }

// Record is what an entry's KEY.json holds.
type Record struct {
	Key         string    `json:"key"`
	SHA256      string    `json:"sha256"`
	Size        int64     `json:"size"`
	HeatVersion string    `json:"heat_version"`
	HeatPackage string    `json:"heat_package"`
	Created     time.Time `json:"created"`
}

// Default is the cache under $XDG_CACHE_HOME, else $HOME/.cache.
func Default() (Cache, error) {
	base := os.Getenv("XDG_CACHE_HOME")
	if !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return Cache{}, fmt.Errorf("no cache directory: %w", err)
		}
		base = filepath.Join(home, ".cache")
	}
	return Cache{Dir: filepath.Join(base, "ephemeral-heat", "heat-schema")}, nil
}

// Inputs are what a key is made of.
type Inputs struct {
	// HeatManage is the heat-manage executable that would run db_sync.
	HeatManage string
	// HeatConf is the heat.conf db_sync would read.
	HeatConf []byte
	// Python are the files of our own on Heat's Python path (by name).
	Python map[string][]byte
	// PythonPath is the caller's PYTHONPATH (a non-empty one gives no key).
	PythonPath string
}

// Key returns the cache key of in, with Heat's version and package
// directory; an error says why there is none (db_sync then runs).
func Key(in Inputs) (key, version, pkg string, err error) {
	if in.PythonPath != "" {
		return "", "", "", errors.New("PYTHONPATH is set: it could shadow Heat's migrations")
	}
	pkg, err = HeatPackage(in.HeatManage)
	if err != nil {
		return "", "", "", err
	}
	version = heatVersion(filepath.Dir(pkg))
	h := sha256.New()
	io.WriteString(h, keyVersion)
	fmt.Fprintf(h, "version %q\n", version)
	if err := hashTree(h, filepath.Join(pkg, "db")); err != nil {
		return "", "", "", err
	}
	fmt.Fprintf(h, "database %q\n", databaseOptions(in.HeatConf))
	names := make([]string, 0, len(in.Python))
	for n := range in.Python {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sum := sha256.Sum256(in.Python[n])
		fmt.Fprintf(h, "python %q %x\n", n, sum)
	}
	return hex.EncodeToString(h.Sum(nil)), version, pkg, nil
}

// HeatPackage finds the heat package that heatManage imports: beside the
// interpreter of its #! line (a Debian /usr/bin/python3, a virtualenv's
// bin/python), in its lib/python3*/{dist,site}-packages or Debian's
// lib/python3/dist-packages.
func HeatPackage(heatManage string) (string, error) {
	f, err := os.Open(heatManage)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", heatManage, err)
	}
	line, err := bufio.NewReader(io.LimitReader(f, 4096)).ReadString('\n')
	f.Close()
	if err != nil && line == "" {
		return "", fmt.Errorf("reading %s: %w", heatManage, err)
	}
	fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "#!"))
	if !strings.HasPrefix(line, "#!") || len(fields) == 0 {
		return "", fmt.Errorf("%s is not a Python script (no #! line)", heatManage)
	}
	interp := fields[0]
	if filepath.Base(interp) == "env" && len(fields) > 1 {
		return "", fmt.Errorf("%s runs %q through env: its Python is not known", heatManage, fields[1])
	}
	prefix := filepath.Dir(filepath.Dir(interp))
	var candidates []string
	for _, pat := range []string{"lib/python3/dist-packages", "lib/python3*/site-packages", "lib/python3*/dist-packages",
		"local/lib/python3*/dist-packages"} {
		m, _ := filepath.Glob(filepath.Join(prefix, pat, "heat"))
		candidates = append(candidates, m...)
	}
	for _, c := range candidates {
		if st, err := os.Stat(filepath.Join(c, "db")); err == nil && st.IsDir() {
			return c, nil
		}
	}
	return "", fmt.Errorf("no heat package with a db directory beside %s's Python %s", heatManage, interp)
}

// heatVersion is the Version of the openstack_heat distribution in
// site (egg-info PKG-INFO or dist-info METADATA), or "unknown".
func heatVersion(site string) string {
	for _, pat := range []string{"openstack_heat-*.egg-info/PKG-INFO", "openstack_heat-*.dist-info/METADATA"} {
		m, _ := filepath.Glob(filepath.Join(site, pat))
		for _, p := range m {
			data, err := fsutil.ReadInput(p, fsutil.Limit{Bytes: 1 << 20}, "Heat's package metadata")
			if err != nil {
				continue
			}
			for _, l := range strings.Split(string(data), "\n") {
				if v, ok := strings.CutPrefix(l, "Version:"); ok {
					return strings.TrimSpace(v)
				}
			}
		}
	}
	return "unknown"
}

// hashTree adds every regular file under dir (no __pycache__, no .pyc)
// by relative path and content.
func hashTree(h io.Writer, dir string) error {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "__pycache__" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && !strings.HasSuffix(p, ".pyc") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading Heat's database package %s: %w", dir, err)
	}
	sort.Strings(files)
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("reading %s: %w", p, err)
		}
		rel, _ := filepath.Rel(dir, p)
		sum := sha256.Sum256(data)
		fmt.Fprintf(h, "file %q %x\n", filepath.ToSlash(rel), sum)
	}
	return nil
}

// databaseOptions is heat.conf's [database] section, sorted, without its
// connection (a path of each heat_dir's own).
func databaseOptions(conf []byte) string {
	var out []string
	in := false
	for _, l := range strings.Split(string(conf), "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			in = strings.EqualFold(t, "[database]")
			continue
		}
		if !in || t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		k, v, _ := strings.Cut(t, "=")
		if strings.TrimSpace(k) == "connection" {
			continue
		}
		out = append(out, strings.TrimSpace(k)+"="+strings.TrimSpace(v))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func (c Cache) db(key string) string     { return filepath.Join(c.Dir, key+".sqlite") }
func (c Cache) record(key string) string { return filepath.Join(c.Dir, key+".json") }

// check refuses a cache directory that is not ours: a symlink, another
// user's, or one others may write to.
func (c Cache) check() error {
	st, err := os.Lstat(c.Dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("the schema cache %s is not a directory: remove it", c.Dir)
	}
	if o := pathguard.Owner(st); o != os.Getuid() {
		return fmt.Errorf("the schema cache %s belongs to uid %d, not to us: remove it", c.Dir, o)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("the schema cache %s has mode %o; ours are 0700: remove it", c.Dir, st.Mode().Perm())
	}
	return nil
}

// Get copies the entry of key to dst (which must not exist), checked
// against its record. It reports false, with no error, when there is no
// entry; an error means the entry or the directory is not usable (dst is
// then not there).
func (c Cache) Get(key, dst string, mode os.FileMode) (bool, error) {
	if err := c.check(); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	recData, err := fsutil.ReadOwn(c.record(key), fsutil.Limit{Bytes: 1 << 16}, "a schema cache record")
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var rec Record
	if err := json.Unmarshal(recData, &rec); err != nil || rec.Key != key {
		return false, fmt.Errorf("the schema cache record %s is not one of ours: remove it", c.record(key))
	}
	data, err := fsutil.ReadOwn(c.db(key), fsutil.Limit{Bytes: maxDBFile}, "a cached Heat schema")
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != rec.SHA256 || int64(len(data)) != rec.Size {
		return false, fmt.Errorf("the cached Heat schema %s %w (sha256 %x, recorded %s)", c.db(key), ErrMismatch, sum, rec.SHA256)
	}
	p, err := fsutil.NewPending(filepath.Dir(dst), filepath.Base(dst), mode)
	if err != nil {
		return false, err
	}
	defer p.Discard()
	if _, err := p.File().Write(data); err != nil {
		return false, fmt.Errorf("writing %s: %w", dst, err)
	}
	if err := p.Publish(dst); err != nil {
		return false, err
	}
	return true, nil
}

// Put stores src, a database db_sync just made, under key. An entry that
// is already there is kept, unless replace (it did not match its record).
func (c Cache) Put(key, src string, rec Record, replace bool) error {
	if _, err := pathguard.MkdirAll("schema cache", c.Dir); err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return err
	}
	for _, side := range []string{"-journal", "-wal"} {
		if _, err := os.Lstat(src + side); err == nil {
			return fmt.Errorf("%s has a %s file: db_sync did not close it cleanly", src, side)
		}
	}
	data, err := fsutil.ReadOwn(src, fsutil.Limit{Bytes: maxDBFile}, "the database db_sync made")
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	rec.Key, rec.SHA256, rec.Size = key, hex.EncodeToString(sum[:]), int64(len(data))
	if rec.Created.IsZero() {
		rec.Created = time.Now().UTC()
	}
	recData, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	// The record goes last: an entry without one is no entry (Get), and
	// is written again here.
	if _, err := os.Lstat(c.record(key)); err == nil {
		if !replace {
			return nil
		}
		if err := os.Remove(c.record(key)); err != nil {
			return fmt.Errorf("replacing the schema cache entry %s: %w", key, err)
		}
	}
	if err := fsutil.WriteFileAtomic(c.db(key), data, fsutil.SecretFileMode); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(c.record(key), append(recData, '\n'), fsutil.SecretFileMode)
}
