// Package fsutil holds the file-system primitives every module relies on:
// atomic, durable writes of files with explicit modes, and private directories.
package fsutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// PrivateDirMode is the mode of every directory that may hold secrets.
const PrivateDirMode os.FileMode = 0o700

// SecretFileMode is the mode of every file that may hold secrets.
const SecretFileMode os.FileMode = 0o600

// EnsurePrivateDir creates dir (and missing parents) and makes sure dir itself
// has mode 0700, tightening an existing directory if needed. It reports
// whether anything was created or changed.
func EnsurePrivateDir(dir string) (bool, error) {
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return false, fmt.Errorf("%s exists and is not a directory: remove it or choose another path", dir)
	case err == nil:
		if st.Mode().Perm() == PrivateDirMode {
			return false, nil
		}
		if err := os.Chmod(dir, PrivateDirMode); err != nil {
			return false, fmt.Errorf("restricting %s to mode 0700: %w", dir, err)
		}
		return true, nil
	case os.IsNotExist(err):
		if err := os.MkdirAll(dir, PrivateDirMode); err != nil {
			return false, fmt.Errorf("creating directory %s: %w", dir, err)
		}
		// MkdirAll is subject to the umask; make the mode exact.
		if err := os.Chmod(dir, PrivateDirMode); err != nil {
			return false, fmt.Errorf("restricting %s to mode 0700: %w", dir, err)
		}
		return true, nil
	default:
		return false, fmt.Errorf("inspecting %s: %w", dir, err)
	}
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory that is fsynced and then renamed over path, so a reader (or a crash)
// sees either the old content or the new one, never a partial file. The file
// gets exactly the given mode.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	return WriteAtomic(path, mode, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteAtomic is WriteFileAtomic for content produced by a function writing to
// a stream. If fill returns an error, the temporary file is removed and path is
// left untouched.
//
// The content is written to an unnamed file (Linux O_TMPFILE) that gets a
// name only once complete: a process killed mid-write, even by SIGKILL,
// leaves no partial file behind. Where the file system lacks O_TMPFILE, a
// named temporary file is used and removed on error.
func WriteAtomic(path string, mode os.FileMode, fill func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, named, err := createTemp(dir, filepath.Base(path), mode)
	if err != nil {
		return fmt.Errorf("creating temporary file for %s: %w", path, err)
	}
	tmpName := ""
	if named {
		tmpName = tmp.Name()
	}
	defer func() {
		if err != nil {
			tmp.Close()
			if tmpName != "" {
				os.Remove(tmpName)
			}
		}
	}()
	if err = tmp.Chmod(mode); err != nil {
		return fmt.Errorf("setting mode of the temporary file for %s: %w", path, err)
	}
	if err = fill(tmp); err != nil {
		return DiskFull(fmt.Errorf("writing %s: %w", path, err), dir, 0)
	}
	if err = tmp.Sync(); err != nil {
		return DiskFull(fmt.Errorf("syncing the temporary file for %s: %w", path, err), dir, 0)
	}
	if !named {
		// Give the complete file a temporary name, then rename it over path.
		tmpName = filepath.Join(dir, strings.TrimSuffix(tempPrefix(filepath.Base(path)), "*")+strconv.FormatInt(time.Now().UnixNano(), 10))
		if err = unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", tmp.Fd()), unix.AT_FDCWD, tmpName, unix.AT_SYMLINK_FOLLOW); err != nil {
			tmpName = ""
			return fmt.Errorf("naming the temporary file for %s: %w", path, err)
		}
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("closing the temporary file for %s: %w", path, err)
	}
	if err = os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("renaming %s to %s: %w", tmpName, path, err)
	}
	return syncDir(dir)
}

// createTemp opens an unnamed O_TMPFILE in dir (read-write), or a named
// temporary file (TempName) where the file system does not support that.
func createTemp(dir, base string, mode os.FileMode) (*os.File, bool, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, uint32(mode.Perm()))
	if err == nil {
		return os.NewFile(uintptr(fd), filepath.Join(dir, "(unnamed)")), false, nil
	}
	if err != unix.EOPNOTSUPP && err != unix.EISDIR && err != unix.EINVAL {
		return nil, false, &os.PathError{Op: "open O_TMPFILE", Path: dir, Err: err}
	}
	f, err := os.CreateTemp(dir, tempPrefix(base))
	return f, true, err
}

// MaxNameLen is the longest name of one directory entry that Linux file
// systems take (NAME_MAX), in bytes.
const MaxNameLen = 255

// TempNameExtra is the most a temporary name of WriteAtomic adds to the
// name of the file it becomes: ".NAME.tmp-PID-" (tempPrefix; a PID has at
// most 7 digits) and up to 19 digits. A file whose name is longer than
// MaxNameLen - TempNameExtra cannot always be written atomically.
const TempNameExtra = len("..tmp--") + 7 + 19

// tempPrefix is the os.CreateTemp pattern of a named temporary file for
// base: ".BASE.tmp-PID-*", so RemoveStaleTemps can tell a dead writer's
// leftovers from a live one's.
func tempPrefix(base string) string {
	return fmt.Sprintf(".%s.tmp-%d-*", base, os.Getpid())
}

// Pending is a file being written that has no name yet: an unnamed
// O_TMPFILE (or, where the file system lacks it, a named temporary file that
// RemoveStaleTemps cleans up after a crash). Publish gives it its final name
// in one step; until then no reader can see it, and a writer killed even by
// SIGKILL leaves nothing under a final name.
type Pending struct {
	f       *os.File
	dir     string
	tmpName string // named fallback only
	done    bool
}

// NewPending opens a pending file in dir with the given mode. base is used
// only for the name of the fallback temporary file.
func NewPending(dir, base string, mode os.FileMode) (*Pending, error) {
	f, named, err := createTemp(dir, base, mode)
	if err != nil {
		return nil, fmt.Errorf("creating a temporary file in %s: %w", dir, err)
	}
	p := &Pending{f: f, dir: dir}
	if named {
		p.tmpName = f.Name()
	}
	if err := f.Chmod(mode); err != nil {
		p.Discard()
		return nil, fmt.Errorf("setting mode of the temporary file in %s: %w", dir, err)
	}
	return p, nil
}

// File is the open file (read-write) to fill and read back.
func (p *Pending) File() *os.File { return p.f }

// Sync flushes the content to disk.
func (p *Pending) Sync() error {
	if err := p.f.Sync(); err != nil {
		return fmt.Errorf("syncing the temporary file in %s: %w", p.dir, err)
	}
	return nil
}

// Publish syncs the file and links it into place as path, which must not
// exist (an existing path is never replaced: the error wraps fs.ErrExist),
// then syncs the directory. path must be in the pending file's directory.
func (p *Pending) Publish(path string) error {
	if p.done {
		return fmt.Errorf("publishing %s: the temporary file is already closed", path)
	}
	if filepath.Dir(path) != filepath.Clean(p.dir) {
		return fmt.Errorf("publishing %s: not in the directory %s of its temporary file", path, p.dir)
	}
	if err := p.Sync(); err != nil {
		return err
	}
	var err error
	if p.tmpName != "" {
		err = os.Link(p.tmpName, path)
	} else {
		err = unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", p.f.Fd()), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
		if err != nil {
			err = &os.LinkError{Op: "link", Old: "(unnamed)", New: path, Err: err}
		}
	}
	if err != nil {
		return fmt.Errorf("publishing %s: %w", path, err)
	}
	p.Discard()
	return syncDir(p.dir)
}

// PublishFirstFree publishes the file under the first of name(0),
// name(1), ... up to name(tries-1) that does not exist yet (names for the
// seconds from now on, so that files written in one second never replace
// one another), and returns it.
func (p *Pending) PublishFirstFree(name func(i int) string, tries int) (string, error) {
	for i := 0; ; i++ {
		path := name(i)
		err := p.Publish(path)
		if err == nil {
			return path, nil
		}
		if !errors.Is(err, fs.ErrExist) || i+1 >= tries {
			return "", err
		}
	}
}

// Discard closes the file; an unpublished one is gone with it. Safe to call
// more than once.
func (p *Pending) Discard() {
	if p.done {
		return
	}
	p.done = true
	p.f.Close()
	if p.tmpName != "" {
		os.Remove(p.tmpName)
	}
}

// RemoveStaleTemps removes, in dir, the named temporary files WriteAtomic and
// Pending leave when their writer was killed on a file system without
// O_TMPFILE (".NAME.tmp-PID-*" whose PID no longer runs), where NAME starts
// with namePrefix. It returns what it removed.
func RemoveStaleTemps(dir, namePrefix string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	var removed []string
	for _, e := range ents {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(n, "."+namePrefix) {
			continue
		}
		i := strings.LastIndex(n, ".tmp-")
		if i < 0 {
			continue
		}
		pidStr, _, ok := strings.Cut(n[i+len(".tmp-"):], "-")
		pid, err := strconv.Atoi(pidStr)
		if !ok || err != nil || pid <= 0 {
			continue
		}
		if err := unix.Kill(pid, 0); pid == os.Getpid() || err == nil || errors.Is(err, unix.EPERM) {
			continue // its writer may still run
		}
		p := filepath.Join(dir, n)
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return removed, fmt.Errorf("removing the leftover %s: %w", p, err)
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("opening directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	return nil
}

// SameContent reports whether path is a regular file (not a symlink) with
// exactly data as its content and mode as its permission bits. Only a
// regular file of that size is read, never through a symlink.
func SameContent(path string, data []byte, mode os.FileMode) bool {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != mode || st.Size() != int64(len(data)) {
		return false
	}
	old, err := ReadOwn(path, Limit{Bytes: int64(len(data))}, "file")
	return err == nil && string(old) == string(data)
}

// ErrDirLocked is LockDir's error when another holder kept the lock for
// the whole wait; callers say who that is likely to be.
var ErrDirLocked = errors.New("locked by another writer")

// LockDir takes an exclusive advisory lock (flock) on the directory itself
// (never through a symlink), waiting up to timeout; it creates nothing.
// The returned function releases it. Writers that publish several files
// into one directory hold it so that none of them sees another's
// half-published set. A lock still held after timeout is an error
// wrapping ErrDirLocked.
func LockDir(dir string, timeout time.Duration) (func(), error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	deadline := time.Now().Add(timeout)
	for {
		err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { unix.Flock(fd, unix.LOCK_UN); unix.Close(fd) }, nil
		}
		if err != unix.EWOULDBLOCK || !time.Now().Before(deadline) {
			unix.Close(fd)
			if err == unix.EWOULDBLOCK {
				return nil, fmt.Errorf("%s is %w for more than %s", dir, ErrDirLocked, timeout)
			}
			return nil, fmt.Errorf("locking %s: %w", dir, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// FreeBytes is the space available to this user on the file system of path.
func FreeBytes(path string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// DiskFull says, for an error that is a full disk (ENOSPC, EDQUOT), which
// directory it is about, how much is free there and how much is needed
// (need <= 0: unknown); other errors are returned as they are.
func DiskFull(err error, dir string, need int64) error {
	if err == nil || (!errors.Is(err, unix.ENOSPC) && !errors.Is(err, unix.EDQUOT)) {
		return err
	}
	free, ferr := FreeBytes(dir)
	what := fmt.Sprintf("%d bytes are free there", free)
	if ferr != nil {
		what = "its free space is unknown"
	}
	needs := ""
	if need > 0 {
		needs = fmt.Sprintf(", and this needs about %d bytes (%s)", need, HumanBytes(need))
	}
	return fmt.Errorf("%w: the file system of %s is full (%s%s): free space there, or use a directory on another file system", err, dir, what, needs)
}

// HumanBytes writes n as KiB, MiB or GiB.
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
