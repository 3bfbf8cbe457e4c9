package backup

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
)

// RestoreOptions say what to restore where.
type RestoreOptions struct {
	File    string // backup_file
	WorkDir string // the new working dir: missing or empty
	// Stack, when given, is the stack the archive must hold.
	Stack string
	Check bool
	Now   time.Time
}

// RestoreResult is what a restore did (or would do).
type RestoreResult struct {
	Changed  bool
	Stack    string
	WorkDir  string
	From     string // the working dir the backup was taken of
	SHA256   string
	Manifest *Manifest
	// Rewritten are the files whose text named From, now WorkDir.
	Rewritten []string
}

// record is workdir's Restored file.
type record struct {
	BackupFile string    `json:"backup_file"`
	SHA256     string    `json:"sha256"`
	Stack      string    `json:"stack"`
	From       string    `json:"from_work_dir"`
	Restored   time.Time `json:"restored"`
	Rewritten  []string  `json:"rewritten"`
}

// Restore unpacks o.File into o.WorkDir. Everything is checked before
// anything is written; the working dir appears whole or not at all.
func Restore(o RestoreOptions) (*RestoreResult, error) {
	if o.File == "" {
		return nil, errors.New("backup_file is required")
	}
	if o.WorkDir == "" || !filepath.IsAbs(o.WorkDir) {
		return nil, fmt.Errorf("work_dir must be an absolute path (the new working dir), got %q", o.WorkDir)
	}
	dir := filepath.Clean(o.WorkDir)
	if err := pathguard.Parent("work_dir", dir); err != nil {
		return nil, err
	}
	exists, err := targetState(dir)
	if err != nil {
		return nil, err
	}
	sum, err := CheckSum(o.File)
	if err != nil {
		return nil, err
	}
	res := &RestoreResult{WorkDir: dir, SHA256: sum}
	if exists == stateRestored {
		rec, err := readRecord(dir)
		if err == nil && rec.SHA256 == sum && (o.Stack == "" || o.Stack == rec.Stack) {
			res.Stack, res.From, res.Rewritten = rec.Stack, rec.From, rec.Rewritten
			return res, nil
		}
		return nil, fmt.Errorf("work_dir %s holds a deployment (of another backup, or changed since): a restore never writes over one; "+
			"choose a new or empty work_dir, or move %s away", dir, dir)
	}
	m, err := verify(o.File)
	if err != nil {
		return nil, err
	}
	if o.Stack != "" && o.Stack != m.Stack {
		return nil, fmt.Errorf("stack_name %s: backup_file %s is a backup of stack %s, not of %s: give the backup of %s, or stack_name=%s",
			o.Stack, o.File, m.Stack, o.Stack, o.Stack, m.Stack)
	}
	if _, err := workdir.New(dir, m.Stack); err != nil {
		return nil, fmt.Errorf("backup_file %s: %w", o.File, err)
	}
	res.Stack, res.From, res.Manifest, res.Changed = m.Stack, m.WorkDir, m, true
	if o.Check {
		return res, nil
	}
	if _, err := pathguard.MkdirAll("work_dir", filepath.Dir(dir)); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".restore-")
	if err != nil {
		return nil, fmt.Errorf("work_dir %s: making a directory to unpack into: %w", dir, err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp) // ours, made above
		}
	}()
	if err := os.Chmod(tmp, fsutil.PrivateDirMode); err != nil {
		return nil, err
	}
	if err := extract(o.File, m, tmp); err != nil {
		return nil, fsutil.DiskFull(fmt.Errorf("restoring backup_file %s into work_dir %s: %w", o.File, dir, err), filepath.Dir(dir), 0)
	}
	if res.Rewritten, err = rewrite(tmp, m, dir); err != nil {
		return nil, err
	}
	if err := pathguard.WriteMarker(tmp, pathguard.KindWorkDir); err != nil {
		return nil, err
	}
	rb, _ := json.MarshalIndent(record{BackupFile: o.File, SHA256: sum, Stack: m.Stack, From: m.WorkDir, Restored: o.Now.UTC(), Rewritten: res.Rewritten}, "", "  ")
	l := workdir.Layout{Dir: tmp, Stack: m.Stack}
	if err := fsutil.WriteFileAtomic(l.Restored(), append(rb, '\n'), fsutil.SecretFileMode); err != nil {
		return nil, err
	}
	// rename(2) replaces a missing or empty directory only: whatever
	// appeared at work_dir meanwhile is never written over. (os.Rename
	// refuses any existing directory, an empty one too.)
	if err := syscall.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("work_dir %s: moving the restored working dir into place: %w (something was written there meanwhile; nothing of it was changed)", dir, err)
	}
	done = true
	return res, nil
}

type state int

const (
	stateNew state = iota
	stateRestored
)

// targetState refuses a work_dir that a restore may not fill: not a
// private directory of ours, or holding anything (a deployment, or files
// that are not ours), except the working dir this restore already wrote.
func targetState(dir string) (state, error) {
	st, err := os.Lstat(dir)
	if os.IsNotExist(err) {
		return stateNew, nil
	}
	if err != nil {
		return 0, fmt.Errorf("work_dir %s: %w", dir, err)
	}
	if err := pathguard.OwnDir("work_dir", dir, st); err != nil {
		return 0, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("work_dir %s: %w", dir, err)
	}
	if len(ents) == 0 {
		return stateNew, nil
	}
	if _, err := os.Lstat(filepath.Join(dir, filepath.Base(workdir.Layout{Dir: dir}.Restored()))); err == nil {
		return stateRestored, nil
	}
	return 0, fmt.Errorf("work_dir %s is not empty (it holds %s): a restore writes only into a new or empty directory and never "+
		"over an existing deployment; choose another work_dir, or move %s away", dir, ents[0].Name(), dir)
}

func readRecord(dir string) (*record, error) {
	b, err := fsutil.ReadOwn(workdir.Layout{Dir: dir}.Restored(), fsutil.Limit{Bytes: 1 << 20}, "restore record")
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// memberName checks a member's name and returns its path in the working
// dir: under work_dir/, relative, clean, without "..".
func memberName(hdr *tar.Header) (string, error) {
	name := strings.TrimSuffix(hdr.Name, "/")
	rel, ok := strings.CutPrefix(name, MemberPrefix)
	if !ok || rel == "" || path.IsAbs(rel) || path.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") ||
		strings.Contains(rel, "/../") || strings.ContainsRune(rel, 0) {
		return "", fmt.Errorf("member %q is not a path inside the working dir", hdr.Name)
	}
	return rel, nil
}

// verify reads the whole archive (after CheckSum): the manifest first,
// then every member against it. Nothing is written.
func verify(file string) (*Manifest, error) {
	m, tr, done, err := openArchive(file)
	if err != nil {
		return nil, err
	}
	defer done()
	want := map[string]Member{}
	for _, x := range m.Members {
		want[x.Name] = x
	}
	seen := map[string]bool{}
	links := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("backup_file %s is truncated or corrupt: %w", file, err)
		}
		rel, err := memberName(hdr)
		if err != nil {
			return nil, fmt.Errorf("backup_file %s: %w; refusing it", file, err)
		}
		x, ok := want[rel]
		if !ok || seen[rel] {
			return nil, fmt.Errorf("backup_file %s: member %s is not in its manifest (or is there twice): the archive was changed; refusing it", file, rel)
		}
		seen[rel] = true
		for p := path.Dir(rel); p != "."; p = path.Dir(p) {
			if links[p] {
				return nil, fmt.Errorf("backup_file %s: member %s lies under the symlink %s; refusing it", file, rel, p)
			}
		}
		if err := checkMember(tr, hdr, x); err != nil {
			return nil, fmt.Errorf("backup_file %s: member %s: %w; the archive was changed, refusing it", file, rel, err)
		}
		if x.Type == TypeSymlink {
			links[rel] = true
		}
	}
	if len(seen) != len(want) {
		for _, x := range m.Members {
			if !seen[x.Name] {
				return nil, fmt.Errorf("backup_file %s is truncated or was changed: its manifest lists %s, which it does not hold; refusing it", file, x.Name)
			}
		}
	}
	return m, nil
}

// checkMember compares a member with its manifest entry, reading its content.
func checkMember(r io.Reader, hdr *tar.Header, x Member) error {
	switch hdr.Typeflag {
	case tar.TypeDir:
		if x.Type != TypeDir {
			return fmt.Errorf("a directory, listed as a %s", x.Type)
		}
	case tar.TypeSymlink:
		if x.Type != TypeSymlink || hdr.Linkname != x.Target {
			return fmt.Errorf("a symlink to %q, not as listed", hdr.Linkname)
		}
		if err := linkInside(x.Name, x.Target); err != nil {
			return err
		}
	case tar.TypeReg:
		if x.Type != TypeFile || hdr.Size != x.Size || uint32(hdr.Mode)&0o777 != x.Mode {
			return fmt.Errorf("a file of %d bytes and mode %04o, not as listed", hdr.Size, hdr.Mode&0o777)
		}
		h := sha256.New()
		n, err := io.Copy(h, r)
		if err != nil {
			return err
		}
		if n != x.Size || hex.EncodeToString(h.Sum(nil)) != x.SHA256 {
			return errors.New("its content is not what the manifest lists")
		}
	default:
		return fmt.Errorf("type %q is not a file, directory or symlink", string(hdr.Typeflag))
	}
	if x.Mode&^0o777 != 0 {
		return fmt.Errorf("mode %o has more than permission bits", x.Mode)
	}
	return nil
}

// extract unpacks the archive's members into tmp (a new private
// directory): directories 0700, files with their listed mode, created
// anew (never through a symlink), each checked again as it is written.
func extract(file string, m *Manifest, tmp string) error {
	_, tr, done, err := openArchive(file)
	if err != nil {
		return err
	}
	defer done()
	want := map[string]Member{}
	for _, x := range m.Members {
		want[x.Name] = x
	}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := memberName(hdr)
		if err != nil {
			return err
		}
		x, ok := want[rel]
		if !ok {
			return fmt.Errorf("member %s is not in the manifest (the archive changed since it was checked)", rel)
		}
		dst := filepath.Join(tmp, filepath.FromSlash(rel))
		switch x.Type {
		case TypeDir:
			if err := os.Mkdir(dst, fsutil.PrivateDirMode); err != nil {
				return err
			}
			if err := os.Chmod(dst, fsutil.PrivateDirMode); err != nil {
				return err
			}
		case TypeSymlink:
			if err := os.Symlink(x.Target, dst); err != nil {
				return err
			}
		case TypeFile:
			if err := writeMember(tr, dst, x); err != nil {
				return err
			}
			_ = os.Chtimes(dst, hdr.ModTime, hdr.ModTime)
		}
	}
}

func writeMember(r io.Reader, dst string, x Member) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, os.FileMode(x.Mode)&0o700)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), io.LimitReader(r, x.Size+1))
	if err == nil {
		err = out.Chmod(os.FileMode(x.Mode))
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	if n != x.Size || hex.EncodeToString(h.Sum(nil)) != x.SHA256 {
		return fmt.Errorf("member %s changed since the archive was checked", x.Name)
	}
	return nil
}

// textLimit bounds the files a restore rewrites.
const textLimit = 64 << 20

// noRewrite says which members keep their bytes even if they name the old
// working dir: git's objects and history, logs (a record of what ran
// where), database dumps with their sidecars, and archives.
func noRewrite(rel string) bool {
	base := path.Base(rel)
	return strings.Contains("/"+rel+"/", "/.git/") || strings.HasSuffix(base, ".log") ||
		strings.HasPrefix(rel, workdir.HeatLauncherDir+"/"+heatdir.LogDir+"/") ||
		strings.HasPrefix(rel, workdir.HeatLauncherDir+"/") && strings.HasPrefix(base, dumps.Prefix) ||
		strings.HasSuffix(base, workdir.ArchiveSuffix) || strings.HasSuffix(base, Suffix)
}

// rewrite replaces the old working dir's path by the new one in the text
// files of tmp that name it (as a whole path element: /old/dir is not
// rewritten inside /old/dir2).
func rewrite(tmp string, m *Manifest, dir string) ([]string, error) {
	out := []string{}
	old := m.WorkDir
	if old == "" || old == dir || !filepath.IsAbs(old) {
		return out, nil
	}
	for _, x := range m.Members {
		if x.Type != TypeFile || x.Size > textLimit || noRewrite(x.Name) {
			continue
		}
		p := filepath.Join(tmp, filepath.FromSlash(x.Name))
		b, err := fsutil.ReadOwn(p, fsutil.Limit{Bytes: textLimit}, "restored file")
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(b, []byte(old)) || !utf8.Valid(b) {
			continue
		}
		nb, n := replacePath(b, old, dir)
		if n == 0 {
			continue
		}
		if err := fsutil.WriteFileAtomic(p, nb, os.FileMode(x.Mode)); err != nil {
			return nil, err
		}
		out = append(out, x.Name)
	}
	return out, nil
}

// replacePath replaces old by new in b where old is a whole path: not
// followed by a byte that continues a file name.
func replacePath(b []byte, old, new string) ([]byte, int) {
	var out bytes.Buffer
	n := 0
	for {
		i := bytes.Index(b, []byte(old))
		if i < 0 {
			out.Write(b)
			return out.Bytes(), n
		}
		end := i + len(old)
		if end < len(b) && nameByte(b[end]) {
			out.Write(b[:end])
			b = b[end:]
			continue
		}
		out.Write(b[:i])
		out.WriteString(new)
		b = b[end:]
		n++
	}
}

func nameByte(c byte) bool {
	return c >= 0x80 || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' || c == '+' || c == '@'
}
