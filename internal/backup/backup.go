// Package backup writes a deployment's working dir into one archive and
// unpacks such an archive into a new working dir, on another path or as
// another user (ephemeral.heat.backup and ephemeral.heat.restore, the
// overcloud_workdir actions backup and restore). It owns the archive's
// format:
//
//	<backup_dir>/<stack>-backup-<UTC %Y%m%dT%H%M%SZ>.tar.gz   mode 0600
//	<archive>.sha256                                          "<hex>  <name>", the archive's sha256
//
// The tar (gzip) holds manifest.json first (Manifest: the format version,
// the stack, the working dir it was taken of, and every member with its
// type, mode, size and sha256), then the working dir's files under
// work_dir/, in the manifest's order.
//
// A backup verifies every database dump against its checksum first
// (package dumps), refuses while a Heat of the working dir runs, and leaves
// out the lock and what a heat_dir holds of a live Heat or writes again at
// every launch (heatdir.Portable). An archive identical in content to the
// newest one of the stack in backup_dir is not written again.
//
// A restore checks everything before it writes anything: the target (new,
// or an empty directory), the archive's sha256, the manifest (its format
// and stack), and every member (a relative path without "..", a file,
// directory or a symlink that stays inside, its size and sha256 as listed,
// nothing missing or added). It then unpacks into a private directory
// beside the target, rewrites the old working dir's path in the text files
// that name it, and renames the directory into place in one step.
package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
)

// Format is the version of the archive this code writes and reads.
const Format = 1

// Names in and of an archive.
const (
	ManifestName = "manifest.json"
	MemberPrefix = "work_dir/"
	Suffix       = ".tar.gz"
	SumSuffix    = ".sha256"
	stampLayout  = "20060102T150405Z"
)

// Member types.
const (
	TypeFile    = "file"
	TypeDir     = "dir"
	TypeSymlink = "symlink"
)

// Member is one entry of the working dir in an archive.
type Member struct {
	Name   string `json:"name"` // relative to the working dir, slash-separated
	Type   string `json:"type"`
	Mode   uint32 `json:"mode"` // permission bits
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Target string `json:"target,omitempty"` // a symlink's
}

// Manifest is manifest.json, the archive's first member.
type Manifest struct {
	Format  int       `json:"format"`
	Stack   string    `json:"stack"`
	WorkDir string    `json:"work_dir"`
	Created time.Time `json:"created"`
	Members []Member  `json:"members"`
	LeftOut []string  `json:"left_out"`
}

// same says whether two manifests describe the same content of the same
// working dir (not when they were made).
func (m *Manifest) same(o *Manifest) bool {
	return m.Format == o.Format && m.Stack == o.Stack && m.WorkDir == o.WorkDir && reflect.DeepEqual(m.Members, o.Members)
}

// Lines lists the members one a line, for a diff.
func (m *Manifest) Lines() string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	for _, x := range m.Members {
		switch x.Type {
		case TypeFile:
			fmt.Fprintf(&b, "%s %04o %d %s\n", x.Name, x.Mode, x.Size, x.SHA256)
		case TypeSymlink:
			fmt.Fprintf(&b, "%s -> %s\n", x.Name, x.Target)
		default:
			fmt.Fprintf(&b, "%s/\n", x.Name)
		}
	}
	return b.String()
}

// FileName is the archive of stack's working dir taken at t.
func FileName(stack string, t time.Time) string {
	return stack + "-backup-" + t.UTC().Format(stampLayout) + Suffix
}

// Options of a backup.
type Options struct {
	Layout workdir.Layout
	// Dir is backup_dir: created (0700) if missing; an existing one must
	// be a private directory of the running user.
	Dir   string
	Now   time.Time
	Check bool
	// Running says what Heat of heat_dir runs ("" when none); the module
	// gives launch/backend's answer. nil: not asked.
	Running func(ctx context.Context, heatDir string) (string, error)
}

// Result is what a backup did (or, in check mode, would do).
type Result struct {
	File     string
	SHA256   string
	Changed  bool
	Bytes    int64
	Dumps    []string
	Manifest *Manifest
	// Previous is the manifest of the newest earlier backup of the stack
	// in Dir (nil when none), for a diff.
	Previous *Manifest
}

// Backup archives o.Layout's working dir into o.Dir. Every refusal comes
// before anything is written and names the parameter.
func Backup(ctx context.Context, o Options) (*Result, error) {
	l := o.Layout
	if err := l.Guard(); err != nil {
		return nil, err
	}
	st, err := os.Lstat(l.Dir)
	if err != nil {
		return nil, fmt.Errorf("work_dir %s: %w: give the working dir of a deployment", l.Dir, err)
	}
	if !st.IsDir() || !l.Deployed() {
		return nil, fmt.Errorf("work_dir %s holds no deployment of stack %s (no %s nor %s): check work_dir and stack_name",
			l.Dir, l.Stack, filepath.Base(l.Passwords()), filepath.Base(l.Status()))
	}
	if !filepath.IsAbs(o.Dir) {
		return nil, fmt.Errorf("backup_dir must be an absolute path, got %q", o.Dir)
	}
	dir := filepath.Clean(o.Dir)
	if rel, err := filepath.Rel(l.Dir, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return nil, fmt.Errorf("backup_dir %s is inside work_dir %s: the backup would hold itself; choose a directory outside it", dir, l.Dir)
	}
	if err := checkBackupDir(dir); err != nil {
		return nil, err
	}
	if o.Running != nil {
		if _, err := os.Lstat(l.HeatDir()); err == nil {
			live, err := o.Running(ctx, l.HeatDir())
			if err != nil {
				return nil, fmt.Errorf("work_dir %s: cannot tell whether its Heat runs: %w", l.Dir, err)
			}
			if live != "" {
				return nil, fmt.Errorf("work_dir %s: its Heat runs (%s); a backup of a working dir under a running Heat would not be "+
					"the deployment's state. Stop it first (the kill_heat playbook with this work_dir), then back up", l.Dir, live)
			}
		}
	}
	res := &Result{}
	if res.Dumps, err = verifyDumps(l); err != nil {
		return nil, err
	}
	m, paths, err := collect(l)
	if err != nil {
		return nil, err
	}
	m.Created = o.Now.UTC()
	res.Manifest = m
	prev, prevSum, err := newest(dir, l.Stack)
	if err != nil {
		return nil, err
	}
	if prev != "" {
		if pm, err := readManifestOf(prev); err == nil {
			res.Previous = pm
			if pm.same(m) && prevSum != "" {
				res.File, res.SHA256 = prev, prevSum
				return res, nil
			}
		}
	}
	res.Changed = true
	if o.Check {
		res.File = filepath.Join(dir, FileName(l.Stack, o.Now))
		return res, nil
	}
	if _, err := pathguard.MkdirAll("backup_dir", dir); err != nil {
		return nil, err
	}
	if err := write(dir, l.Stack, o.Now, m, paths, res); err != nil {
		return nil, err
	}
	return res, nil
}

// checkBackupDir refuses a backup_dir that is not a private directory of
// ours (or, missing, whose parent is not safe to create it in).
func checkBackupDir(dir string) error {
	st, err := os.Lstat(dir)
	if os.IsNotExist(err) {
		return pathguard.Parent("backup_dir", dir)
	}
	if err != nil {
		return fmt.Errorf("backup_dir %s: %w", dir, err)
	}
	if err := pathguard.Parent("backup_dir", dir); err != nil {
		return err
	}
	return pathguard.OwnDir("backup_dir", dir, st)
}

// verifyDumps checks every dump of the working dir's heat_dir against its
// checksum: a backup never carries a dump that would not restore.
func verifyDumps(l workdir.Layout) ([]string, error) {
	if _, err := os.Lstat(l.HeatDir()); os.IsNotExist(err) {
		return []string{}, nil
	}
	list, err := dumps.List(l.HeatDir())
	if err != nil {
		return nil, fmt.Errorf("work_dir %s: %w", l.Dir, err)
	}
	out := []string{}
	for _, d := range list {
		if _, err := dumps.VerifyChecksum(d); err != nil {
			return nil, fmt.Errorf("work_dir %s: dump %s cannot be verified (%v): refusing to back up a dump that would not restore; "+
				"remove it (an older dump is used then) or run a deploy or heat_db_dump to write a good one", l.Dir, d, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// leftOut says why a member of the working dir stays out of a backup ("" when it goes in).
func leftOut(rel string, d fs.DirEntry) string {
	switch {
	case rel == workdir.LockFile:
		return "lock"
	case strings.HasPrefix(rel, workdir.HeatLauncherDir+"/"):
		if ok, why := heatdir.Portable(strings.TrimPrefix(rel, workdir.HeatLauncherDir+"/")); !ok {
			return why
		}
	}
	t := d.Type()
	if !t.IsRegular() && !t.IsDir() && t&fs.ModeSymlink == 0 {
		return "not a file, directory or symlink"
	}
	return ""
}

// collect lists and hashes what the backup holds.
func collect(l workdir.Layout) (*Manifest, map[string]string, error) {
	m := &Manifest{Format: Format, Stack: l.Stack, WorkDir: l.Dir, Members: []Member{}}
	paths := map[string]string{}
	left, err := l.Walk(leftOut, func(rel, p string, d fs.DirEntry) error {
		info, err := d.Info()
		if err != nil {
			return err
		}
		mem := Member{Name: rel, Mode: uint32(info.Mode().Perm())}
		switch {
		case info.IsDir():
			mem.Type = TypeDir
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := linkInside(rel, target); err != nil {
				return fmt.Errorf("work_dir %s: %w: a restore could not recreate it; replace it by the file it names", l.Dir, err)
			}
			mem.Type, mem.Target, mem.Mode = TypeSymlink, target, 0o777
		default:
			sum, n, err := hashFile(p)
			if err != nil {
				return err
			}
			mem.Type, mem.Size, mem.SHA256 = TypeFile, n, sum
		}
		m.Members = append(m.Members, mem)
		paths[rel] = p
		return nil
	})
	m.LeftOut = left
	if err != nil {
		return nil, nil, fmt.Errorf("reading work_dir %s: %w", l.Dir, err)
	}
	sort.Slice(m.Members, func(i, j int) bool { return m.Members[i].Name < m.Members[j].Name })
	return m, paths, nil
}

// linkInside refuses a symlink target that leaves the working dir.
func linkInside(rel, target string) error {
	if target == "" || path.IsAbs(target) {
		return fmt.Errorf("%s is a symlink to %q, outside the working dir", rel, target)
	}
	if j := path.Join(path.Dir(rel), target); j == ".." || strings.HasPrefix(j, "../") {
		return fmt.Errorf("%s is a symlink to %q, outside the working dir", rel, target)
	}
	return nil
}

func hashFile(p string) (string, int64, error) { return fsutil.HashOwn(p, "file to back up") }

// newest returns the newest archive of stack in dir and the sha256 its
// sidecar records if the archive matches it ("" otherwise).
func newest(dir, stack string) (string, string, error) {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("backup_dir %s: %w", dir, err)
	}
	prefix := stack + "-backup-"
	var names []string
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasPrefix(n, prefix) && strings.HasSuffix(n, Suffix) {
			if _, err := time.Parse(stampLayout, strings.TrimSuffix(strings.TrimPrefix(n, prefix), Suffix)); err == nil {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		return "", "", nil
	}
	sort.Strings(names)
	p := filepath.Join(dir, names[len(names)-1])
	sum, err := CheckSum(p)
	if err != nil {
		return p, "", nil
	}
	return p, sum, nil
}

// sumLimit bounds a sidecar read.
var sumLimit = fsutil.Limit{Bytes: 4096}

// CheckSum checks an archive against its .sha256 sidecar and returns its
// sha256. Errors name backup_file.
func CheckSum(file string) (string, error) {
	b, err := fsutil.ReadInput(file+SumSuffix, sumLimit, "backup_file's checksum")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("backup_file %s has no checksum %s beside it: it cannot be told whole; copy the .sha256 file with the archive", file, file+SumSuffix)
		}
		return "", fmt.Errorf("backup_file %s: %w", file, err)
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 || len(fields[0]) != 64 {
		return "", fmt.Errorf("backup_file %s: %s%s is not a sha256 file", file, file, SumSuffix)
	}
	got, _, err := fsutil.HashInput(file, "backup_file")
	if err != nil {
		return "", err // names backup_file and the file
	}
	if got != strings.ToLower(fields[0]) {
		return "", fmt.Errorf("backup_file %s: its sha256 is %s but %s%s records %s: the archive is truncated or was changed; "+
			"refusing it (nothing was written)", file, got, file, SumSuffix, fields[0])
	}
	return strings.ToLower(fields[0]), nil
}

// write writes the archive and its sidecar.
func write(dir, stack string, now time.Time, m *Manifest, paths map[string]string, res *Result) error {
	pend, err := fsutil.NewPending(dir, FileName(stack, now), fsutil.SecretFileMode)
	if err != nil {
		return fmt.Errorf("backup_dir %s: %w", dir, err)
	}
	defer pend.Discard()
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(pend.File(), h)}
	if err := writeTar(cw, m, paths); err != nil {
		return fsutil.DiskFull(fmt.Errorf("writing the backup in backup_dir %s: %w", dir, err), dir, 0)
	}
	res.SHA256, res.Bytes = hex.EncodeToString(h.Sum(nil)), cw.n
	res.File, err = pend.PublishFirstFree(func(i int) string {
		return filepath.Join(dir, FileName(stack, now.Add(time.Duration(i)*time.Second)))
	}, 3600)
	if err != nil {
		return fmt.Errorf("writing the backup in backup_dir %s: %w", dir, err)
	}
	sum := []byte(res.SHA256 + "  " + filepath.Base(res.File) + "\n")
	if err := fsutil.WriteFileAtomic(res.File+SumSuffix, sum, fsutil.SecretFileMode); err != nil {
		os.Remove(res.File) // ours, just made: no archive without its checksum
		return fmt.Errorf("writing %s%s: %w", res.File, SumSuffix, err)
	}
	return nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func writeTar(w io.Writer, m *Manifest, paths map[string]string) error {
	zw, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	hdr := &tar.Header{Name: ManifestName, Mode: 0o600, Size: int64(len(mb)), ModTime: m.Created, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := tw.Write(mb); err != nil {
		return err
	}
	for _, x := range m.Members {
		hdr := &tar.Header{Name: MemberPrefix + x.Name, Mode: int64(x.Mode), ModTime: m.Created, Format: tar.FormatPAX}
		switch x.Type {
		case TypeDir:
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
		case TypeSymlink:
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, x.Target
		default:
			hdr.Typeflag, hdr.Size = tar.TypeReg, x.Size
		}
		if st, err := os.Lstat(paths[x.Name]); err == nil {
			hdr.ModTime = st.ModTime()
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if x.Type != TypeFile {
			continue
		}
		if err := copyMember(tw, paths[x.Name], x); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// copyMember copies a file into the archive, checking that it is still
// what the manifest lists.
func copyMember(w io.Writer, p string, x Member) error {
	f, _, err := fsutil.OpenOwn(p, "file to back up")
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(f, x.Size+1))
	if err != nil {
		return fmt.Errorf("archiving %s: %w", x.Name, err)
	}
	if n != x.Size || hex.EncodeToString(h.Sum(nil)) != x.SHA256 {
		return fmt.Errorf("%s changed while it was backed up: run the backup again when nothing writes the working dir", p)
	}
	return nil
}

// manifestLimit bounds manifest.json.
const manifestLimit = 64 << 20

// readManifestOf reads the manifest (the first member) of an archive.
func readManifestOf(file string) (*Manifest, error) {
	m, _, done, err := openArchive(file)
	if err != nil {
		return nil, err
	}
	done()
	return m, nil
}

// openArchive opens backup_file and reads its manifest, the first member:
// the tar reader is then at the member after it. done closes the file.
func openArchive(file string) (*Manifest, *tar.Reader, func(), error) {
	f, _, err := fsutil.OpenInput(file, "backup_file")
	if err != nil {
		return nil, nil, nil, err
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, nil, nil, fmt.Errorf("backup_file %s is not a gzip archive: %w", file, err)
	}
	tr := tar.NewReader(zr)
	m, err := firstManifest(tr, file)
	if err != nil {
		f.Close()
		return nil, nil, nil, err
	}
	return m, tr, func() { f.Close() }, nil
}

func firstManifest(tr *tar.Reader, file string) (*Manifest, error) {
	hdr, err := tr.Next()
	if err != nil {
		return nil, fmt.Errorf("backup_file %s: reading its manifest: %w", file, err)
	}
	if hdr.Name != ManifestName || hdr.Typeflag != tar.TypeReg || hdr.Size > manifestLimit {
		return nil, fmt.Errorf("backup_file %s is not an ephemeral.heat backup (its first member is %q, not %s)", file, hdr.Name, ManifestName)
	}
	b, err := io.ReadAll(io.LimitReader(tr, manifestLimit))
	if err != nil {
		return nil, fmt.Errorf("backup_file %s: reading its manifest: %w", file, err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("backup_file %s: its manifest is corrupt: %w", file, err)
	}
	if m.Format != Format {
		return nil, fmt.Errorf("backup_file %s has format %d; this version reads format %d: restore it with the version that wrote it", file, m.Format, Format)
	}
	return &m, nil
}
