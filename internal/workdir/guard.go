package workdir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dirlock"
	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
)

// LockFile is the working dir's lock (dirlock), held by every operation
// that writes the working dir: a deploy, a scale-down, an update or
// upgrade, a backup, the overcloud_workdir actions and overcloud_playbook
// runs in its config-download directory.
const LockFile = "workdir.lock"

// DefaultLockWait is how long an operation waits for another one on the
// same working dir, unless told otherwise.
const DefaultLockWait = 30 * time.Second

// fileLimit bounds what is read of a file of the working dir (the
// outputs of a large deploy are a few MiB).
var fileLimit = fsutil.Limit{Bytes: 256 << 20}

// Guard checks the working dir before anything is read from it to act on,
// or written into it (pathguard's policy, as for heat_dir): an existing one
// must be a directory, not a symlink, owned by the user running the module,
// not writable by group or others, and ours: holding our marker, or empty,
// or holding what only a deploy writes (heat-launcher/, the passwords or
// the deployment status of the stack: working dirs from before the marker,
// and python-tripleoclient's). Its parent (or first existing ancestor) must
// be owned by that user or root and not writable by others unless sticky.
// A working dir that does not exist passes (Ensure creates it).
func (l Layout) Guard() error {
	_, err := pathguard.Dir("work_dir", l.Dir, pathguard.KindWorkDir, l.legacy)
	return err
}

// legacy tells a working dir a deploy filled before the marker.
func (l Layout) legacy(dir string) bool {
	for _, p := range []string{l.HeatDir(), l.Passwords(), l.Status(), l.path(ConfigDownloadDir), l.path(OutputsDir)} {
		if _, err := os.Lstat(p); err == nil {
			return true
		}
	}
	return false
}

// Ensure creates the working dir (mode 0700, each missing parent one at a
// time, never through a symlink) after Guard, and writes its marker. An
// existing one of ours that others may read is made private. It reports
// whether anything was created or changed.
func (l Layout) Ensure() (bool, error) {
	if err := l.Guard(); err != nil {
		return false, err
	}
	created, err := pathguard.MkdirAll("work_dir", l.Dir)
	if err != nil {
		return false, err
	}
	changed := len(created) > 0
	if !changed {
		c, err := pathguard.SubDir("work_dir", l.Dir)
		if err != nil {
			return false, err
		}
		changed = c
	}
	if err := pathguard.WriteMarker(l.Dir, pathguard.KindWorkDir); err != nil {
		return changed, fmt.Errorf("marking work_dir %s as ours: %w", l.Dir, err)
	}
	return changed, nil
}

// ensureSub makes a directory of the working dir (outputs/, environment/)
// a private one of ours (pathguard.SubDir), after Ensure.
func (l Layout) ensureSub(dir string) error {
	_, err := pathguard.SubDir("work_dir", dir)
	return err
}

// readFile reads a file of the working dir: a regular file, never through
// a symlink, bounded. A missing file's error wraps fs.ErrNotExist.
func readFile(path, what string) ([]byte, error) {
	return fsutil.ReadOwn(path, fileLimit, what)
}

// isNotExist tells a missing file.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// LockPath is the path of the working dir's lock file.
func (l Layout) LockPath() string { return l.path(LockFile) }

// LockSubject names the working dir's lock in messages.
func (l Layout) LockSubject() dirlock.Subject {
	return dirlock.Subject{Name: "work_dir " + l.Dir,
		Busy: "another deploy, scale-down, update, upgrade, backup or playbook run is working on it"}
}

// Lock takes the working dir's lock for an operation (creating the working
// dir after Guard when it is missing): under token, the lock a playbook
// holds (Hold), checked and not waited for; without, the lock itself,
// waiting up to wait for its holder. Unlock the result when done.
func (l Layout) Lock(ctx context.Context, token string, wait time.Duration) (*dirlock.Lock, error) {
	if _, err := l.Ensure(); err != nil {
		return nil, err
	}
	return dirlock.Join(ctx, l.LockPath(), token, wait, l.LockSubject())
}

// Hold takes the working dir's lock for a playbook, the process owner: a
// detached holder keeps it until owner ends or Release. It returns the
// token the playbook hands to the modules it runs, and the holder's pid.
// argv runs the holder (nil: this binary, which must call
// dirlock.RunHolder on dirlock.HoldArg).
func (l Layout) Hold(owner int, wait time.Duration, argv []string) (string, int, error) {
	if _, err := l.Ensure(); err != nil {
		return "", 0, err
	}
	return dirlock.Hold(l.LockPath(), owner, wait, l.LockSubject(), argv)
}

// Release ends the holder of token; released is false when no holder of
// that token held the lock.
func (l Layout) Release(token string) (bool, error) {
	if err := l.Guard(); err != nil {
		return false, err
	}
	return dirlock.Release(l.LockPath(), token, 10*time.Second, l.LockSubject())
}

// Holder says who holds the working dir's lock now ("" when nobody does).
func (l Layout) Holder() string { return dirlock.Peek(l.LockPath()) }

// Owning returns the working dir whose config-download directory dir is
// (<work_dir>/config-download/<stack>), when its grandparent is a working
// dir of ours by its marker.
func Owning(dir string) (Layout, bool) {
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	if filepath.Base(parent) != ConfigDownloadDir {
		return Layout{}, false
	}
	root := filepath.Dir(parent)
	kind, err := pathguard.ReadMarker(root)
	if err != nil || kind != pathguard.KindWorkDir {
		return Layout{}, false
	}
	return Layout{Dir: root, Stack: filepath.Base(dir)}, true
}
