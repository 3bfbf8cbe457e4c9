// Package fsutil holds the file-system primitives every module relies on:
// atomic, durable writes of files with explicit modes, and private directories.
package fsutil

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
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
func WriteAtomic(path string, mode os.FileMode, fill func(w io.Writer) error) error {
	return WriteAtomicHook(path, mode, fill, nil)
}

// WriteAtomicHook is WriteAtomic with a hook that runs once the new content
// is complete and synced, just before the rename (for example to move an
// existing file at path aside). If the hook fails, path is left untouched.
//
// The content is written to an unnamed file (Linux O_TMPFILE) that gets a
// name only once complete: a process killed mid-write, even by SIGKILL,
// leaves no partial file behind. Where the file system lacks O_TMPFILE, a
// named temporary file is used and removed on error.
func WriteAtomicHook(path string, mode os.FileMode, fill func(w io.Writer) error, beforeRename func(path string) error) (err error) {
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
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("syncing the temporary file for %s: %w", path, err)
	}
	if !named {
		// Give the complete file a temporary name, then rename it over path.
		tmpName = filepath.Join(dir, fmt.Sprintf(".%s.tmp-%d-%d", filepath.Base(path), os.Getpid(), time.Now().UnixNano()))
		if err = unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", tmp.Fd()), unix.AT_FDCWD, tmpName, unix.AT_SYMLINK_FOLLOW); err != nil {
			tmpName = ""
			return fmt.Errorf("naming the temporary file for %s: %w", path, err)
		}
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("closing the temporary file for %s: %w", path, err)
	}
	if beforeRename != nil {
		if err = beforeRename(path); err != nil {
			return err
		}
	}
	if err = os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("renaming %s to %s: %w", tmpName, path, err)
	}
	return syncDir(dir)
}

// createTemp opens an unnamed O_TMPFILE in dir, or a named temporary file
// where the file system does not support that.
func createTemp(dir, base string, mode os.FileMode) (*os.File, bool, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, uint32(mode.Perm()))
	if err == nil {
		return os.NewFile(uintptr(fd), filepath.Join(dir, "(unnamed)")), false, nil
	}
	if err != unix.EOPNOTSUPP && err != unix.EISDIR && err != unix.EINVAL {
		return nil, false, &os.PathError{Op: "open O_TMPFILE", Path: dir, Err: err}
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	return f, true, err
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

// SameContent reports whether path exists with exactly data as its content and
// mode as its permission bits.
func SameContent(path string, data []byte, mode os.FileMode) bool {
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != mode || st.Size() != int64(len(data)) {
		return false
	}
	old, err := os.ReadFile(path)
	return err == nil && string(old) == string(data)
}
