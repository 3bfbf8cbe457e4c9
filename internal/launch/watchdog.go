package launch

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/native"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// WatchdogArg is the first argument that makes the launcher binary run as
// the watchdog of a heat_dir instead of as a module.
const WatchdogArg = "__watchdog"

// teardownLockWait is how long the watchdog waits for the heat_dir's lock
// before its teardown (a launch or dump of the dying owner may hold it).
const teardownLockWait = 10 * time.Minute

// ownerRecord identifies the owner process now.
func ownerRecord(pid int) (proc.Record, error) {
	info, err := proc.Inspect(pid)
	if err != nil || info.Zombie() {
		return proc.Record{}, fmt.Errorf("owner_pid %d is not a running process", pid)
	}
	return proc.Record{PID: pid, PGID: info.PGID, StartTicks: info.StartTicks, BootID: proc.BootID(), Cmdline: info.Cmdline}, nil
}

// ensureWatchdog starts a watchdog for the owner unless one already watches
// it, and records it in the launch record; with no owner, it ends the
// recorded one. A watchdog that cannot be recorded (a full disk) is stopped
// at once: nothing runs unrecorded.
func (l *launcher) ensureWatchdog(rec *heatdir.Record) error {
	o := l.o
	if o.OwnerPID <= 0 {
		if rec.Watchdog == nil {
			return nil
		}
		if err := l.stopWatchdog(rec); err != nil {
			return err
		}
		rec.Watchdog = nil
		return l.d.WriteRecord(rec)
	}
	owner, err := ownerRecord(o.OwnerPID)
	if err != nil {
		return err
	}
	if w := rec.Watchdog; w != nil {
		if alive, _ := w.Process.Check(); alive && w.Owner.PID == owner.PID && w.Owner.StartTicks == owner.StartTicks {
			return nil
		}
	}
	if err := l.stopWatchdog(rec); err != nil {
		return err
	}
	argv := o.WatchdogCommand
	if len(argv) == 0 {
		argv = []string{"/proc/self/exe"}
	}
	argv = append(append([]string(nil), argv...), WatchdogArg, l.d.Path(), strconv.Itoa(owner.PID), strconv.FormatUint(owner.StartTicks, 10))
	s, err := proc.Start(argv, l.d.Path(), l.d.Log(heatdir.WatchdogLog), native.Env(""), rec.Tag())
	if err != nil {
		return fmt.Errorf("starting the watchdog of owner_pid %d: %w", owner.PID, err)
	}
	rec.Watchdog = &heatdir.Watchdog{Process: s.Record, Owner: owner}
	if err := l.d.WriteRecord(rec); err != nil {
		_ = proc.StopGroup(s.Record.PGID, 2*time.Second, 5*time.Second)
		rec.Watchdog = nil
		return fmt.Errorf("recording the watchdog of owner_pid %d (stopped it): %w", owner.PID, err)
	}
	return nil
}

// stopWatchdog ends the watchdog rec names, if it checks out (never the
// caller itself: the watchdog tears down through stop).
func (l *launcher) stopWatchdog(rec *heatdir.Record) error {
	if rec == nil || rec.Watchdog == nil {
		return nil
	}
	w := rec.Watchdog.Process
	if alive, _ := w.Check(); alive && w.PID != os.Getpid() {
		if err := proc.StopGroup(w.PGID, 2*time.Second, 5*time.Second); err != nil {
			return fmt.Errorf("stopping the watchdog: %w", err)
		}
	}
	return nil
}

// WatchdogOf returns the process record of heatDir's watchdog, if one was
// started (it may have exited since: see proc.Record.Check).
func WatchdogOf(heatDir string) (proc.Record, bool) {
	d, err := heatdir.At(heatDir)
	if err != nil {
		return proc.Record{}, false
	}
	rec, err := d.ReadRecord()
	if err != nil || rec == nil || rec.Watchdog == nil {
		return proc.Record{}, false
	}
	return rec.Watchdog.Process, true
}

// Watchdog runs until heat_dir's Heat is gone, another launch replaced the
// one it watches, or the owner process exits. When the owner exits first
// (an interrupted ansible-playbook), it takes the heat_dir's lock, dumps
// and wipes Heat's database, then stops Heat and removes what is left of
// the database, so nothing runs on and the dump is saved. A container or
// pod is dumped through heat.conf's host database when it has one, its Heat
// services stopped before the wipe, and then removed.
func Watchdog(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: "+WatchdogArg+" HEAT_DIR OWNER_PID OWNER_START_TICKS")
		return 2
	}
	d, err := heatdir.At(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	pid, _ := strconv.Atoi(args[1])
	ticks, _ := strconv.ParseUint(args[2], 10, 64)
	launchID := os.Getenv(proc.TagVar)
	logf := func(f string, a ...any) {
		fmt.Fprintf(os.Stderr, "%s watchdog: %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(f, a...))
	}
	logf("watching owner pid %d for %s", pid, d)
	for {
		time.Sleep(time.Second)
		rec, err := d.ReadRecord()
		if err != nil || rec == nil {
			logf("Heat was stopped normally; exiting")
			return 0
		}
		if rec.LaunchID != launchID {
			logf("another launch replaced the one this watchdog watched; exiting")
			return 0
		}
		// A container or pod runs as long as its launch record exists (a
		// stop removes it); a native Heat is checked by its process.
		if rec.Process != nil {
			if alive, _ := rec.Process.Check(); !alive {
				logf("Heat is gone; exiting")
				return 0
			}
		}
		info, err := proc.Inspect(pid)
		if err == nil && !info.Zombie() && info.StartTicks == ticks {
			continue
		}
		logf("owner pid %d exited while Heat runs: saving the database and stopping Heat", pid)
		return teardownAfterOwner(d, launchID, logf)
	}
}

func teardownAfterOwner(d heatdir.Dir, launchID string, logf func(string, ...any)) int {
	ctx := context.Background()
	lock, err := d.Lock(ctx, teardownLockWait)
	if err != nil {
		logf("%v", err)
		return 1
	}
	defer lock.Unlock()
	rec, err := d.ReadRecord()
	if err != nil || rec == nil || rec.LaunchID != launchID {
		logf("Heat was stopped or relaunched meanwhile; exiting")
		return 0
	}
	o := Options{State: Stopped, HeatDir: d.Path(), Warn: logf}
	o.defaults()
	l := &launcher{o: &o, d: d}
	b, spec := l.backendOf(rec.HeatType)
	if b == nil {
		logf("%s records heat_type %q, which this module does not know", d.File(heatdir.RecordFile), rec.HeatType)
		return 1
	}
	code := 0
	// Heat is stopped once the dump is verified, so nothing writes to the
	// database being dropped. A pod keeps its MariaDB running: the
	// database is dropped through heat.conf's host database.
	r, dumped, err := l.dumpAndWipe(ctx, b, spec, rec, "the watchdog")
	switch {
	case err != nil:
		logf("dump failed, keeping the database: %v", err)
		code = 1
	case dumped:
		logf("%s", r.Msg)
	default:
		logf("the database holds nothing to dump")
	}
	if _, err := l.stop(ctx); err != nil {
		logf("stopping Heat: %v", err)
		code = 1
	}
	return code
}
