package heatdir

import (
	"context"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dirlock"
)

// DefaultLockWait is how long a caller waits for another launch, stop or
// restore on the same heat_dir to finish, unless told otherwise.
const DefaultLockWait = 5 * time.Minute

// Lock is the exclusive lock of a heat_dir, held by one launch, stop,
// restore or teardown at a time: a dirlock on LockFile (released by the
// kernel when its holder exits, however it exits, so never stale).
type Lock = dirlock.Lock

// LockSubject names the heat_dir's lock in messages.
func (d Dir) LockSubject() dirlock.Subject {
	return dirlock.Subject{Name: "heat_dir " + d.root,
		Busy: "another launch, stop, restore or watchdog teardown is working on it"}
}

// Lock takes the heat_dir's lock, waiting up to wait for its holder. The
// heat_dir must exist (Ensure). The error names the process that holds it.
// The lock is not inherited by processes the holder starts.
func (d Dir) Lock(ctx context.Context, wait time.Duration) (*Lock, error) {
	return dirlock.Acquire(ctx, d.File(LockFile), wait, d.LockSubject())
}
