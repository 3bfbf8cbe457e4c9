// Package dirlock is the exclusive lock of a directory that operations
// write one at a time (a heat_dir's launch.lock, a working dir's
// workdir.lock): an flock on a lock file inside it. The kernel releases an
// flock when its holder exits, however it exits (SIGKILL included), so a
// lock is never stale: a dead holder's lock is simply free. The file only
// says who holds the lock, for whoever waits.
//
// A lock can also be held across many processes, for a whole playbook, by
// a small detached holder process bound to the playbook's process (Hold):
// the modules the playbook runs are handed the holder's token and act
// under it instead of waiting for it (Join), and the holder lets go when
// the playbook ends, however it ends, or on Release.
package dirlock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// Subject says, in messages, what a lock guards.
type Subject struct {
	// Name is the parameter and path, e.g. "work_dir /home/stack/overcloud-deploy/overcloud".
	Name string
	// Busy says what a holder may be doing, e.g. "another deploy, scale-down or
	// update is working on it".
	Busy string
}

// FileMode is the lock file's mode.
const FileMode = 0o600

// recordLimit bounds what is read of a lock file.
const recordLimit = 4096

// Lock is a held lock. Unlock releases it.
type Lock struct {
	f      *os.File
	joined bool // held by a playbook's holder: Unlock leaves it
}

// Joined reports whether the lock is the holder's of a token (Join), not
// this process's own.
func (l *Lock) Joined() bool { return l != nil && l.joined }

// Unlock releases a lock this process took; a joined lock stays with its
// holder.
func (l *Lock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	_ = l.f.Truncate(0)
	_ = unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	l.f.Close()
	l.f = nil
}

// record is what a lock file says of its holder: one line,
// "PID START_TICKS TOKEN OWNER_PID COMMAND...", TOKEN "-" and OWNER_PID 0
// for a process that holds the lock for itself.
type record struct {
	pid        int
	startTicks uint64
	token      string
	owner      int
	cmdline    string
}

func (r record) String() string {
	tok := r.token
	if tok == "" {
		tok = "-"
	}
	return fmt.Sprintf("%d %d %s %d %s\n", r.pid, r.startTicks, tok, r.owner, r.cmdline)
}

func parseRecord(b []byte) (record, bool) {
	f := strings.Fields(string(b))
	if len(f) < 4 {
		return record{}, false
	}
	var r record
	var err error
	if r.pid, err = strconv.Atoi(f[0]); err != nil || r.pid <= 0 {
		return record{}, false
	}
	if r.startTicks, err = strconv.ParseUint(f[1], 10, 64); err != nil {
		return record{}, false
	}
	if f[2] != "-" {
		r.token = f[2]
	}
	if r.owner, err = strconv.Atoi(f[3]); err != nil {
		return record{}, false
	}
	r.cmdline = strings.Join(f[4:], " ")
	return r, true
}

// alive reports whether the process a record names still runs (same pid
// and start time).
func (r record) alive() bool {
	info, err := proc.Inspect(r.pid)
	return err == nil && !info.Zombie() && info.StartTicks == r.startTicks
}

// describe names the holder a record names, for a message.
func (r record) describe() string {
	if !r.alive() {
		return "another process"
	}
	if r.owner > 0 {
		owner := fmt.Sprintf("pid %d", r.owner)
		if info, err := proc.Inspect(r.owner); err == nil && len(info.Cmdline) > 0 {
			owner += " (" + shorten(strings.Join(info.Cmdline, " "), 200) + ")"
		}
		return fmt.Sprintf("%s, through its lock holder pid %d", owner, r.pid)
	}
	s := fmt.Sprintf("pid %d", r.pid)
	if r.cmdline != "" {
		s += " (" + shorten(r.cmdline, 200) + ")"
	}
	return s
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// self is this process's record.
func self(token string, owner int) record {
	r := record{pid: os.Getpid(), token: token, owner: owner}
	if info, err := proc.Inspect(r.pid); err == nil {
		r.startTicks = info.StartTicks
		r.cmdline = strings.Join(info.Cmdline, " ")
	}
	return r
}

// open opens (creating it, mode 0600) the lock file at path: never through
// a symlink, and only a regular file of this user's.
func open(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, FileMode)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("the lock %s is a symlink: remove it", path)
		}
		return nil, fmt.Errorf("opening the lock %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || pathguard.Owner(st) != os.Geteuid() {
		f.Close()
		return nil, fmt.Errorf("the lock %s is not a regular file of ours: remove it", path)
	}
	return f, nil
}

// namesFile reports whether path still names the open file f (not a
// removed one, nor another file put in its place); the error is path's.
func namesFile(path string, f *os.File) (bool, error) {
	var open, now unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &open); err != nil {
		return false, err
	}
	if err := unix.Lstat(path, &now); err != nil {
		return false, err
	}
	return open.Ino == now.Ino && open.Dev == now.Dev, nil
}

// readRecord reads the record of an open lock file.
func readRecord(f *os.File) (record, bool) {
	b := make([]byte, recordLimit)
	n, _ := f.ReadAt(b, 0)
	return parseRecord(b[:n])
}

// Acquire takes the lock at path, waiting up to wait for its holder (0: not
// at all). The error names the holder.
func Acquire(ctx context.Context, path string, wait time.Duration, s Subject) (*Lock, error) {
	return acquire(ctx, path, wait, s, "", 0)
}

func acquire(ctx context.Context, path string, wait time.Duration, s Subject, token string, owner int) (*Lock, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			// The holder may have removed the lock file (the directory
			// deleted) or another file may have taken its name while this
			// waited: a lock on a file the path no longer names guards
			// nothing.
			if current, _ := namesFile(path, f); current {
				break
			}
			f.Close()
			var err error
			if f, err = open(path); err != nil {
				if _, serr := os.Lstat(filepath.Dir(path)); errors.Is(serr, fs.ErrNotExist) {
					return nil, fmt.Errorf("%s was removed while this waited for its lock: check that it should still exist, and run again", s.Name)
				}
				return nil, err
			}
			continue
		}
		if err != unix.EWOULDBLOCK {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if !time.Now().Before(deadline) {
			who := "another process"
			if r, ok := readRecord(f); ok {
				who = r.describe()
			}
			f.Close()
			return nil, &BusyError{Subject: s, Holder: who, Waited: wait}
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the lock of %s: %w", s.Name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(self(token, owner).String()), 0)
	}
	return &Lock{f: f}, nil
}

// BusyError is a lock another process held for longer than the wait.
type BusyError struct {
	Subject Subject
	Holder  string
	Waited  time.Duration
}

func (e *BusyError) Error() string {
	busy := e.Subject.Busy
	if busy == "" {
		busy = "another operation is working on it"
	}
	return fmt.Sprintf("%s is in use by %s (waited %s): %s; wait for it to finish, or stop that process",
		e.Subject.Name, e.Holder, e.Waited, busy)
}

// Peek says who holds the lock at path now ("" when nobody does), without
// taking it.
func Peek(path string) string {
	f, err := openExisting(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return ""
	}
	if r, ok := readRecord(f); ok {
		return r.describe()
	}
	return "another process"
}

// openExisting opens an existing lock file for reading and flock, never
// through a symlink; only a regular file.
func openExisting(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path)
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("the lock %s is not a regular file", path)
	}
	return f, nil
}

// Join returns the lock at path for an operation: with a token, the lock a
// playbook's holder holds under that token (checked: the holder runs and
// holds it; nothing is waited for), whose Unlock leaves it with the holder;
// without, the lock taken by this process (Acquire).
func Join(ctx context.Context, path, token string, wait time.Duration, s Subject) (*Lock, error) {
	if token == "" {
		return Acquire(ctx, path, wait, s)
	}
	if err := CheckToken(path, token, s); err != nil {
		return nil, err
	}
	return &Lock{joined: true}, nil
}

// CheckToken checks that the holder of token holds the lock at path now.
func CheckToken(path, token string, s Subject) error {
	f, err := openExisting(path)
	if err != nil {
		return fmt.Errorf("lock_token: %s is not locked (%v): take the lock first (overcloud_workdir action=lock), or give no lock_token", s.Name, errNoPath(err))
	}
	defer f.Close()
	r, ok := readRecord(f)
	free := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) == nil
	if free {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	}
	switch {
	case free && ok && r.token == token:
		return fmt.Errorf("lock_token: the lock of %s was let go (its holder pid %d ended: the playbook that took it ended or it was stopped): take it again", s.Name, r.pid)
	case free:
		return fmt.Errorf("lock_token: nobody holds the lock of %s under this token: take the lock first (overcloud_workdir action=lock), or give no lock_token", s.Name)
	case !ok || r.token != token:
		who := "another process"
		if ok {
			who = r.describe()
		}
		return fmt.Errorf("lock_token: %s is locked by %s, not under this token: wait for it to finish, or stop that process", s.Name, who)
	case !r.alive():
		return fmt.Errorf("lock_token: the holder of the lock of %s (pid %d) is gone", s.Name, r.pid)
	}
	return nil
}

func errNoPath(err error) error {
	if errors.Is(err, unix.ENOENT) {
		return errors.New("no lock file")
	}
	return err
}
