package heatdir

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// DefaultLockWait is how long a caller waits for another launch, stop or
// restore on the same heat_dir to finish, unless told otherwise.
const DefaultLockWait = 5 * time.Minute

// Lock is the exclusive lock of a heat_dir, held by one launch, stop,
// restore or teardown at a time. It is an flock on LockFile: the kernel
// releases it when its holder exits, however it exits, so a lock is never
// stale; the file only tells who holds it.
type Lock struct {
	f *os.File
}

// Lock takes the heat_dir's lock, waiting up to wait for its holder. The
// heat_dir must exist (Ensure). The error names the process that holds it.
// The lock is not inherited by processes the holder starts.
func (d Dir) Lock(ctx context.Context, wait time.Duration) (*Lock, error) {
	p := d.File(LockFile)
	fd, err := unix.Open(p, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(FileMode))
	if err != nil {
		return nil, fmt.Errorf("opening the lock %s: %w", p, err)
	}
	f := os.NewFile(uintptr(fd), p)
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || owner(st) != os.Geteuid() {
		f.Close()
		return nil, fmt.Errorf("the lock %s is not a regular file of ours: remove it", p)
	}
	deadline := time.Now().Add(wait)
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if err != unix.EWOULDBLOCK {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", p, err)
		}
		if time.Now().After(deadline) {
			who := holder(f)
			f.Close()
			return nil, fmt.Errorf("heat_dir %s is in use by %s (waited %s): another launch, stop, restore or watchdog "+
				"teardown is working on it; wait for it to finish, or stop that process", d.root, who, wait)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the lock of heat_dir %s: %w", d.root, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	// Who holds it, for whoever waits: "PID START_TICKS COMMAND".
	me := fmt.Sprintf("%d", os.Getpid())
	if info, err := proc.Inspect(os.Getpid()); err == nil {
		me = fmt.Sprintf("%d %d %s", info.PID, info.StartTicks, strings.Join(info.Cmdline, " "))
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(me+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	_ = l.f.Truncate(0)
	_ = unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	l.f.Close()
	l.f = nil
}

// holder describes the process a lock file names, as "pid N (command)".
func holder(f *os.File) string {
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	fields := strings.Fields(string(b[:n]))
	if len(fields) == 0 {
		return "another process"
	}
	pid, err := strconv.Atoi(fields[0])
	if err != nil {
		return "another process"
	}
	s := "pid " + fields[0]
	if len(fields) > 2 {
		s += " (" + strings.Join(fields[2:], " ") + ")"
	}
	if len(fields) > 1 {
		if ticks, err := strconv.ParseUint(fields[1], 10, 64); err == nil {
			if info, err := proc.Inspect(pid); err != nil || info.StartTicks != ticks {
				// The recorded holder is gone: whoever holds the lock now
				// took it without writing (it is about to).
				return "another process"
			}
		}
	}
	return s
}
