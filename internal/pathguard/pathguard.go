// Package pathguard is the policy every module follows on the paths it
// writes (heat_dir, heat_db_dump's dest, config_download's dest, heat_stack's
// progress_file): nothing is renamed, deleted, chmodded or written through
// that the module did not create.
//
//   - The directory that holds a path, or the first ancestor that exists,
//     must be a directory owned by the running user or root that no other
//     user may write to (unless sticky, as /tmp): otherwise someone else
//     could swap what we create (Parent).
//   - Missing directories are created one at a time, mode 0700, each
//     checked after mkdir; an existing one is never changed (MkdirAll).
//   - A directory a module fills, swaps or removes in must be new, empty,
//     or recognisably ours: a Marker naming what it is (or a legacy sign,
//     such as a launch record) (Dir). Markers are written by the module
//     that created the directory (WriteMarker).
//   - A file a module would replace must be a regular file of ours: its
//     own sidecar says so (a dump's manifest, a progress log's first line)
//     (File). Symlinks, devices, FIFOs and sockets are refused by their
//     type, never followed or opened.
//
// Every refusal names the parameter and says what to do.
package pathguard

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// Marker is the file, in a directory a module created, that names which
// module's directory it is (its content is "ephemeral.heat KIND\n").
const Marker = ".ephemeral-heat"

// Kinds of directories a Marker names.
const (
	KindHeatDir        = "heat_dir"
	KindConfigDownload = "config_download"
	KindWorkDir        = "work_dir"
)

const markerPrefix = "ephemeral.heat "

// Owner is the uid owning a file (-1 when unknown).
func Owner(st os.FileInfo) int {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid)
	}
	return -1
}

// Parent checks the directory that holds path, or the first ancestor of
// path that exists: a directory (symlinks followed: a system's /tmp or
// /home may be one, but what they point to is checked), owned by the
// running user or root, and not writable by other users unless sticky.
func Parent(param, path string) error {
	parent := filepath.Dir(filepath.Clean(path))
	for {
		st, err := os.Stat(parent)
		if os.IsNotExist(err) && parent != filepath.Dir(parent) {
			parent = filepath.Dir(parent)
			continue
		}
		if err != nil {
			return fmt.Errorf("%s %s: its parent %s: %w", param, path, parent, err)
		}
		if !st.IsDir() {
			return fmt.Errorf("%s %s: %s is %s, not a directory: choose another path", param, path, parent, fsutil.ModeName(st.Mode()))
		}
		if uid := Owner(st); uid != os.Geteuid() && uid != 0 {
			return fmt.Errorf("%s %s is inside %s, which is owned by uid %d: that user could replace what this module writes there; "+
				"choose a path inside a directory of yours", param, path, parent, uid)
		}
		if st.Mode().Perm()&0o022 != 0 && st.Mode()&os.ModeSticky == 0 {
			return fmt.Errorf("%s %s is inside %s (mode %04o), which other users may write to without the sticky bit: "+
				"they could replace what this module writes there; choose a path inside a private directory", param, path, parent, st.Mode().Perm())
		}
		return nil
	}
}

// OwnDir refuses an existing path that is not a directory of ours private
// to us: a symlink (never followed), anything but a directory, another
// user's, or one others may write to.
func OwnDir(param, path string, st os.FileInfo) error {
	switch {
	case st.Mode()&os.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return fmt.Errorf("%s %s is a symlink (to %s): refusing to write through it; give the real directory, or a path that does not exist yet", param, path, target)
	case !st.IsDir():
		return fmt.Errorf("%s %s exists and is %s, not a directory: choose another path", param, path, fsutil.ModeName(st.Mode()))
	}
	if uid := Owner(st); uid != os.Geteuid() {
		return fmt.Errorf("%s %s is owned by uid %d, not by the user running this module (uid %d): refusing to use "+
			"another user's directory; run as its owner or choose another path", param, path, uid, os.Geteuid())
	}
	if st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s %s has mode %04o: writable by other users, who could plant files there; "+
			"make it private (chmod 700 %s) or choose another path", param, path, st.Mode().Perm(), path)
	}
	return nil
}

// MkdirAll creates dir and its missing parents one at a time, mode 0700
// (exactly: not subject to the umask), after Parent; each is checked after
// mkdir (a symlink or another user's directory planted meanwhile is
// refused). Existing directories are left as they are. It returns what it
// created, outermost first.
func MkdirAll(param, dir string) ([]string, error) {
	dir = filepath.Clean(dir)
	var missing []string
	for p := dir; ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			break
		} else if !os.IsNotExist(err) {
			return nil, fmt.Errorf("%s %s: %w", param, dir, err)
		}
		missing = append(missing, p)
		if p == filepath.Dir(p) {
			break
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	if err := Parent(param, missing[len(missing)-1]); err != nil {
		return nil, err
	}
	var created []string
	for i := len(missing) - 1; i >= 0; i-- {
		p := missing[i]
		if err := os.Mkdir(p, fsutil.PrivateDirMode); err != nil && !errors.Is(err, os.ErrExist) {
			return created, fmt.Errorf("creating %s for %s %s: %w", p, param, dir, err)
		}
		st, err := os.Lstat(p)
		if err != nil {
			return created, fmt.Errorf("creating %s for %s %s: %w", p, param, dir, err)
		}
		if err := OwnDir(param, p, st); err != nil {
			return created, err
		}
		if err := os.Chmod(p, fsutil.PrivateDirMode); err != nil { // mkdir is subject to the umask
			return created, fmt.Errorf("restricting %s to mode 0700: %w", p, err)
		}
		created = append(created, p)
	}
	return created, nil
}

// SubDir makes sure path, a directory inside a directory of ours that a
// module writes in (a working dir's outputs/, a heat_dir's log/), is a
// private directory of ours: a missing one is created with mode 0700; an
// existing one must pass OwnDir (a symlink, another user's, or one others
// may write to is refused, never chmodded); one of ours that others may
// read is made private. It reports whether it created or changed it.
func SubDir(param, path string) (bool, error) {
	st, err := os.Lstat(path)
	if os.IsNotExist(err) {
		if err := os.Mkdir(path, fsutil.PrivateDirMode); err != nil && !errors.Is(err, os.ErrExist) {
			return false, fmt.Errorf("creating %s (%s): %w", path, param, err)
		}
		if st, err = os.Lstat(path); err != nil {
			return false, fmt.Errorf("creating %s (%s): %w", path, param, err)
		}
		if err := OwnDir(param, path, st); err != nil {
			return false, err
		}
		// mkdir is subject to the umask: make it exact.
		if err := os.Chmod(path, fsutil.PrivateDirMode); err != nil {
			return false, fmt.Errorf("restricting %s to mode 0700: %w", path, err)
		}
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s %s: %w", param, path, err)
	}
	if err := OwnDir(param, path, st); err != nil {
		return false, err
	}
	if st.Mode().Perm() == fsutil.PrivateDirMode {
		return false, nil
	}
	if err := os.Chmod(path, fsutil.PrivateDirMode); err != nil {
		return false, fmt.Errorf("restricting %s to mode 0700: %w", path, err)
	}
	return true, nil
}

// Dir checks a directory a module fills, swaps or removes things in: if it
// exists, it must pass OwnDir and be ours: hold a Marker naming kind, or be
// empty, or pass legacy (a sign, from before markers, that this module
// made it; nil for none). Its parent must pass Parent. It reports whether
// the directory exists.
func Dir(param, path, kind string, legacy func(dir string) bool) (bool, error) {
	if err := Parent(param, path); err != nil {
		return false, err
	}
	st, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s %s: %w", param, path, err)
	}
	if err := OwnDir(param, path, st); err != nil {
		return true, err
	}
	got, err := ReadMarker(path)
	if err != nil {
		return true, fmt.Errorf("%s %s: %w", param, path, err)
	}
	switch {
	case got == kind:
		return true, nil
	case got != "":
		return true, fmt.Errorf("%s %s is the %s of another task (%s says %q): refusing to use it as a %s; choose another path",
			param, path, got, filepath.Join(path, Marker), got, kind)
	}
	empty, err := isEmpty(path)
	if err != nil {
		return true, fmt.Errorf("%s %s: %w", param, path, err)
	}
	if empty || (legacy != nil && legacy(path)) {
		return true, nil
	}
	return true, fmt.Errorf("%s %s exists, is not empty and is not a %s this collection made (it has no %s file): refusing to write there, "+
		"as that could replace or remove files that are not ours; choose a new or empty directory (or, if it is one of ours from an "+
		"older version, create the marker: echo '%s%s' > %s)", param, path, kind, Marker, markerPrefix, kind, filepath.Join(path, Marker))
}

// ReadMarker returns the kind a directory's Marker names ("" when there is
// none). A Marker that is not a small regular file is an error.
func ReadMarker(dir string) (string, error) {
	p := filepath.Join(dir, Marker)
	st, err := os.Lstat(p)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is %s, not the marker file this collection writes", p, fsutil.ModeName(st.Mode()))
	}
	b, err := fsutil.ReadInput(p, fsutil.Limit{Bytes: 4096}, "marker")
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	kind, ok := strings.CutPrefix(s, markerPrefix)
	if !ok || kind == "" {
		return "", fmt.Errorf("%s holds %q, not %q followed by what the directory is", p, truncate(s, 60), markerPrefix)
	}
	return kind, nil
}

// WriteMarker writes dir's Marker naming kind (mode 0600), unless it is
// there already.
func WriteMarker(dir, kind string) error {
	if got, err := ReadMarker(dir); err == nil && got == kind {
		return nil
	}
	return fsutil.WriteFileAtomic(filepath.Join(dir, Marker), []byte(markerPrefix+kind+"\n"), fsutil.SecretFileMode)
}

// MarkerContent is what WriteMarker writes for kind (for a tree written
// elsewhere first and swapped in).
func MarkerContent(kind string) []byte { return []byte(markerPrefix + kind + "\n") }

// isEmpty tells a directory with nothing in it but, at most, the marker
// another process of ours is writing there this instant (fsutil's
// temporary name for it, before its rename): two launches on a new
// heat_dir at once must not refuse each other's.
func isEmpty(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	for {
		names, err := f.Readdirnames(16)
		for _, n := range names {
			if !strings.HasPrefix(n, "."+Marker+".tmp-") {
				return false, nil
			}
		}
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// File checks a file a module would replace or truncate: if it exists it
// must be a regular file (a symlink, device, FIFO or socket is refused by
// its type, never opened), owned by the running user, and ours by isOurs
// (what names what it should be, in the message). Its parent must pass
// Parent. It reports whether the file exists.
func File(param, path, what string, isOurs func(path string) bool) (bool, error) {
	if err := Parent(param, path); err != nil {
		return false, err
	}
	st, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s %s: %w", param, path, err)
	}
	switch {
	case st.Mode()&os.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return true, fmt.Errorf("%s %s is a symlink (to %s): refusing to write through it; give a path that does not exist yet", param, path, target)
	case !st.Mode().IsRegular():
		return true, fmt.Errorf("%s %s exists and is %s: refusing to touch it; give a path that does not exist yet", param, path, fsutil.ModeName(st.Mode()))
	case Owner(st) != os.Geteuid():
		return true, fmt.Errorf("%s %s is owned by uid %d, not by the user running this module: refusing to replace another user's file; choose another path",
			param, path, Owner(st))
	case isOurs == nil || !isOurs(path):
		return true, fmt.Errorf("%s %s exists and is not %s: refusing to replace it; choose a path that does not exist yet, or remove it yourself", param, path, what)
	}
	return true, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
