package heatdir

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
)

// Guard checks the heat_dir before anything is read from it to act on, or
// written into it (pathguard's policy): an existing one must be a
// directory, not a symlink, owned by the user running the module, not
// writable by group or others, and ours: holding our marker (Marker), or
// empty, or holding what only our launcher writes (a launch record, heatrc,
// python/, a dump manifest: heat_dirs from before the marker). Its parent
// (or first existing ancestor) must be owned by that user or root, and not
// writable by others unless sticky (as /tmp is), so nobody else can swap
// the heat_dir for something of theirs. A heat_dir that does not exist
// passes (Ensure creates it).
func (d Dir) Guard() error {
	_, err := pathguard.Dir("heat_dir", d.root, pathguard.KindHeatDir, legacyHeatDir)
	return err
}

// legacyHeatDir tells a heat_dir our launcher filled before it wrote the
// marker: it holds a file only we write (a tripleoclient heat-launcher
// directory, with its own heat.conf, holds none of them).
func legacyHeatDir(dir string) bool {
	for _, name := range []string{RecordFile, HeatRC, LockFile, PythonDir} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	m, _ := filepath.Glob(filepath.Join(dir, "heat-db-*.manifest.json"))
	return len(m) > 0
}

// Ensure creates the heat_dir with mode 0700, and each missing parent, one
// at a time (never through a symlink: each is checked after mkdir), after
// Guard, and writes its marker. An existing heat_dir of ours that others
// may read is made private. It reports whether anything was created or
// changed.
func (d Dir) Ensure() (bool, error) {
	if err := d.Guard(); err != nil {
		return false, err
	}
	created, err := pathguard.MkdirAll("heat_dir", d.root)
	if err != nil {
		return false, err
	}
	changed := len(created) > 0
	if !changed {
		c, err := fsutil.EnsurePrivateDir(d.root)
		if err != nil {
			return false, err
		}
		changed = c
	}
	if err := pathguard.WriteMarker(d.root, pathguard.KindHeatDir); err != nil {
		return changed, fmt.Errorf("marking heat_dir %s as ours: %w", d.root, err)
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

func owner(st os.FileInfo) int { return pathguard.Owner(st) }
