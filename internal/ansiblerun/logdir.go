package ansiblerun

// The log directory of a run (log_dir, or dir when it is the log dir):
// pathguard's policy, the lock of a run, and the log of each run, a file
// of its own.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
)

// prepareLogDir checks the log directory (named param in messages) by
// pathguard's policy and creates it (mode 0700, each missing parent too)
// when missing: an existing one must be a directory of the user running
// the module, not a symlink, not writable by group or others, inside a
// directory others cannot write to (unless sticky). Nothing existing is
// chmodded. It reports whether it created the directory.
func prepareLogDir(param, dir string) (bool, error) {
	if err := pathguard.Parent(param, dir); err != nil {
		return false, err
	}
	st, err := os.Lstat(dir)
	if os.IsNotExist(err) {
		created, err := pathguard.MkdirAll(param, dir)
		return len(created) > 0, err
	}
	if err != nil {
		return false, fmt.Errorf("%s %s: %w", param, dir, err)
	}
	return false, pathguard.OwnDir(param, dir, st)
}

// checkRunFile refuses a name in the log directory that a run writes
// (replaces, or links its log to) when it is not a regular file of the
// user running the module: a symlink (never followed, never replaced), a
// directory, a FIFO, a device, another user's file.
func checkRunFile(param, dir, name string) error {
	p := filepath.Join(dir, name)
	st, err := os.Lstat(p)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return fmt.Errorf("%s %s: %s: %w", param, dir, name, err)
	case st.Mode()&os.ModeSymlink != 0:
		target, _ := os.Readlink(p)
		return fmt.Errorf("%s %s holds %s, a symlink (to %s): refusing to write through it or replace it; "+
			"remove it (or choose another %s)", param, dir, name, target, param)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s %s holds %s, which is %s: refusing to replace it; remove it (or choose another %s)",
			param, dir, name, fsutil.ModeName(st.Mode()), param)
	case pathguard.Owner(st) != os.Geteuid():
		return fmt.Errorf("%s %s holds %s, owned by uid %d, not by the user running this module (uid %d): "+
			"refusing to replace another user's file; remove it (or choose another %s)", param, dir, name, pathguard.Owner(st), os.Geteuid(), param)
	}
	return nil
}

// LogName is the name that always leads to the log of the latest run (a
// hard link to it): tail -f it.
const LogName = configdownload.AnsibleLogFile

// LogRotationLayout is the time suffix of a run's own log and of an
// earlier log renamed aside (tripleo-common's ansible.log-<datetime.now()
// %Y-%m-%dT%H:%M:%S>).
const LogRotationLayout = "2006-01-02T15:04:05"

// startLog gives a run starting at now its own log in dir and returns its
// path: ansible.log-<now, UTC, LogRotationLayout>, or with ".N" added
// when that name is taken, created new (O_EXCL, no symlink followed), mode
// 0600; LogName is then made a hard link to it, in one rename.
//
// What LogName was before: the hard link to an earlier run's own log (more
// than one link) loses only that name; a log written under LogName alone
// (tripleo-common's convention, or ours before run logs) is first kept
// under ansible.log-<now, local time> as tripleo-common renames it; an
// empty one is dropped. LogName must have passed checkRunFile; the
// directory must be the run's to write (the lock held).
func startLog(dir string, now time.Time) (string, error) {
	cur := filepath.Join(dir, LogName)
	st, err := os.Lstat(cur)
	switch {
	case os.IsNotExist(err):
	case err != nil:
		return "", fmt.Errorf("the log %s: %w", cur, err)
	case !st.Mode().IsRegular():
		return "", fmt.Errorf("the log %s is %s: refusing to replace it", cur, fsutil.ModeName(st.Mode()))
	case links(st) == 1 && st.Size() > 0:
		// Keep it by a second name; LogName is replaced below.
		if _, err := linkFree(cur, cur+"-"+now.Format(LogRotationLayout)); err != nil {
			return "", fmt.Errorf("keeping the previous log %s: %w", cur, err)
		}
	}
	run, err := createFree(cur + "-" + now.UTC().Format(LogRotationLayout))
	if err != nil {
		return "", fmt.Errorf("creating the log of this run in %s: %w", dir, err)
	}
	tmp, err := linkFree(run, filepath.Join(dir, fmt.Sprintf(".%s.tmp-%d-%d", LogName, os.Getpid(), now.UnixNano())))
	if err != nil {
		return "", fmt.Errorf("linking %s to the log of this run: %w", cur, err)
	}
	if err := os.Rename(tmp, cur); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("linking %s to the log of this run: %w", cur, err)
	}
	return run, nil
}

// links is a file's number of hard links.
func links(st os.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink)
	}
	return 1
}

// linkFree hard-links old to name, or to name.1, name.2 ... when taken,
// and returns the name used (an existing name is never replaced).
func linkFree(old, name string) (string, error) {
	for i := 0; i < 1000; i++ {
		p := numbered(name, i)
		err := os.Link(old, p)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("%s and a thousand numbered names after it are taken", name)
}

// createFree creates name (or name.1, name.2 ... when taken) new, mode
// 0600, through no symlink, and returns the name used.
func createFree(name string) (string, error) {
	for i := 0; i < 1000; i++ {
		p := numbered(name, i)
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, fsutil.SecretFileMode)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if err := f.Chmod(fsutil.SecretFileMode); err != nil { // the umask
			f.Close()
			os.Remove(p)
			return "", err
		}
		return p, f.Close()
	}
	return "", fmt.Errorf("%s and a thousand numbered names after it are taken", name)
}

func numbered(name string, i int) string {
	if i == 0 {
		return name
	}
	return fmt.Sprintf("%s.%d", name, i)
}

// appendLog adds a line to the run's log, after ansible-playbook is gone,
// in the form of ansible's own lines.
func appendLog(path, msg string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s p=%d n=ephemeral.heat | %s\n", time.Now().Format("2006-01-02 15:04:05,000"), os.Getpid(), msg)
}

// AcquireLock takes the lock of the directory a run writes in (its log
// directory, once it exists and passed the guard, before any file is
// written there), waiting up to wait for another holder; token is the
// lock_token a caller holding that lock handed over (the run must not wait
// on its own caller). The returned function releases it. A log directory
// that is a working dir's config-download directory
// (<work_dir>/config-download/<stack>) takes the working dir's lock (a
// deploy, scale-down or update playbook holding it hands its token);
// another one an exclusive flock on the directory itself.
var AcquireLock func(dir, token string, wait time.Duration) (release func(), err error) = lockRunDir

// lockRunDir takes the working dir's lock of a config-download directory,
// else the log directory's own.
func lockRunDir(dir, token string, wait time.Duration) (func(), error) {
	if l, ok := workdir.Owning(dir); ok {
		lk, err := l.Lock(context.Background(), token, wait)
		if err != nil {
			return nil, err
		}
		return lk.Unlock, nil
	}
	if token != "" {
		return nil, fmt.Errorf("lock_token: it is not the config-download directory of a working dir (<work_dir>/config-download/<stack>), " +
			"so no working dir lock covers it: give no lock_token")
	}
	return lockLogDir(dir, token, wait)
}

// lockLogDir is fsutil.LockDir's flock on dir, with a message about runs.
func lockLogDir(dir, _ string, wait time.Duration) (func(), error) {
	unlock, err := fsutil.LockDir(dir, wait)
	if errors.Is(err, fsutil.ErrDirLocked) {
		return nil, fmt.Errorf("another run (overcloud_playbook) is writing its log there: waited %s for it to end (lock_wait); "+
			"wait for it, raise lock_wait, or find it with 'fuser -v %s'", wait, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("locking it: %w", err)
	}
	return unlock, nil
}
