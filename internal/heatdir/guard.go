package heatdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// Guard checks an existing heat_dir before anything is read from it to act
// on, or written into it: it must be a directory, not a symlink, owned by
// the user running the module, and not writable by group or others; its
// parent must be owned by that user or root, and not writable by others
// unless sticky (as /tmp is), so nobody else can swap the heat_dir for
// something of theirs. A heat_dir that does not exist passes (Ensure creates
// it).
func (d Dir) Guard() error {
	st, err := os.Lstat(d.root)
	if os.IsNotExist(err) {
		return d.guardParent(filepath.Dir(d.root))
	}
	if err != nil {
		return fmt.Errorf("heat_dir %s: %w", d.root, err)
	}
	if err := checkOwnDir(d.root, st); err != nil {
		return err
	}
	return d.guardParent(filepath.Dir(d.root))
}

// checkOwnDir refuses a path that is not a directory of ours, private to us.
func checkOwnDir(path string, st os.FileInfo) error {
	switch {
	case st.Mode()&os.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return fmt.Errorf("heat_dir %s is a symlink (to %s): refusing to write through it; give the real directory, or a path that does not exist yet", path, target)
	case !st.IsDir():
		return fmt.Errorf("heat_dir %s exists and is not a directory: remove it or choose another path", path)
	}
	if uid := owner(st); uid != os.Geteuid() {
		return fmt.Errorf("heat_dir %s is owned by uid %d, not by the user running this module (uid %d): refusing to use "+
			"another user's heat_dir; run as its owner or choose another path", path, uid, os.Geteuid())
	}
	if st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("heat_dir %s has mode %04o: writable by other users, who could plant files there; "+
			"make it private (chmod 700 %s) or choose another path", path, st.Mode().Perm(), path)
	}
	return nil
}

// guardParent checks the directory that holds the heat_dir (or the first
// part of it that exists): someone who may write there can replace what we
// create. It is followed if it is a symlink (a system's /tmp or /home may
// be), but what it points to must be owned by us or root.
func (d Dir) guardParent(parent string) error {
	for {
		st, err := os.Stat(parent)
		if os.IsNotExist(err) && parent != filepath.Dir(parent) {
			parent = filepath.Dir(parent)
			continue
		}
		if err != nil {
			return fmt.Errorf("heat_dir %s: its parent %s: %w", d.root, parent, err)
		}
		if !st.IsDir() {
			return fmt.Errorf("heat_dir %s: %s is not a directory", d.root, parent)
		}
		uid := owner(st)
		if uid != os.Geteuid() && uid != 0 {
			return fmt.Errorf("heat_dir %s is inside %s, which is owned by uid %d: that user could replace the heat_dir; "+
				"choose a path inside a directory of yours", d.root, parent, uid)
		}
		if st.Mode().Perm()&0o022 != 0 && st.Mode()&os.ModeSticky == 0 {
			return fmt.Errorf("heat_dir %s is inside %s (mode %04o), which other users may write to without the sticky bit: "+
				"they could replace the heat_dir; choose a path inside a private directory", d.root, parent, st.Mode().Perm())
		}
		return nil
	}
}

// Ensure creates the heat_dir with mode 0700, and each missing parent, one
// at a time (never through a symlink: each is checked after mkdir), after
// Guard. An existing heat_dir of ours that others may read is made private.
// It reports whether anything was created or changed.
func (d Dir) Ensure() (bool, error) {
	if err := d.Guard(); err != nil {
		return false, err
	}
	var missing []string
	for p := d.root; ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			break
		} else if !os.IsNotExist(err) {
			return false, fmt.Errorf("heat_dir %s: %w", d.root, err)
		}
		missing = append(missing, p)
		if p == filepath.Dir(p) {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		p := missing[i]
		if err := os.Mkdir(p, DirMode); err != nil && !errors.Is(err, os.ErrExist) {
			return false, fmt.Errorf("creating %s for heat_dir %s: %w", p, d.root, err)
		}
		st, err := os.Lstat(p)
		if err != nil {
			return false, fmt.Errorf("creating %s for heat_dir %s: %w", p, d.root, err)
		}
		if err := checkOwnDir(p, st); err != nil {
			return false, err
		}
		if err := os.Chmod(p, DirMode); err != nil { // mkdir is subject to the umask
			return false, fmt.Errorf("restricting %s to mode 0700: %w", p, err)
		}
	}
	changed := len(missing) > 0
	if !changed {
		c, err := fsutil.EnsurePrivateDir(d.root)
		if err != nil {
			return false, err
		}
		changed = c
	}
	return changed, nil
}

// EnsureSub creates a directory inside the heat_dir (LogDir, RunDir,
// MariaDBDir ...) with mode 0700; an existing one must be a directory of
// ours, not a symlink.
func (d Dir) EnsureSub(name string) error {
	p := d.File(name)
	st, err := os.Lstat(p)
	if os.IsNotExist(err) {
		if err := os.Mkdir(p, DirMode); err != nil {
			return fmt.Errorf("creating %s: %w", p, err)
		}
		return os.Chmod(p, DirMode)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if st.Mode()&os.ModeSymlink != 0 || !st.IsDir() || owner(st) != os.Geteuid() {
		return fmt.Errorf("%s is not a directory of ours (a symlink, a file, or another user's): remove it", p)
	}
	if st.Mode().Perm() != DirMode {
		return os.Chmod(p, DirMode)
	}
	return nil
}

// Exists reports whether the heat_dir exists (as anything).
func (d Dir) Exists() bool {
	_, err := os.Lstat(d.root)
	return err == nil
}

func owner(st os.FileInfo) int {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid)
	}
	return -1
}
