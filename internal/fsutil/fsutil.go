// Package fsutil holds the file-system primitives every module relies on:
// atomic, durable writes of files with explicit modes, and private directories.
package fsutil

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
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
func WriteAtomic(path string, mode os.FileMode, fill func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("creating temporary file for %s: %w", path, err)
	}
	tmpName := tmp.Name()
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if err = tmp.Chmod(mode); err != nil {
		return fmt.Errorf("setting mode of %s: %w", tmpName, err)
	}
	if err = fill(tmp); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", tmpName, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmpName, err)
	}
	if err = os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("renaming %s to %s: %w", tmpName, path, err)
	}
	return syncDir(dir)
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
