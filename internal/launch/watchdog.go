package launch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatconf"
	"github.com/ephemeral-heat/ephemeral-heat/internal/podheat"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// WatchdogArg is the first argument that makes the launcher binary run as
// the watchdog of a heat_dir instead of as a module.
const WatchdogArg = "__watchdog"

// WatchdogFile records the running watchdog in heat_dir.
const WatchdogFile = "watchdog.json"

// watchdogRecord is what watchdog.json holds.
type watchdogRecord struct {
	Process proc.Record `json:"process"`
	Owner   proc.Record `json:"owner"`
}

// ownerRecord identifies the owner process now.
func ownerRecord(pid int) (proc.Record, error) {
	info, err := proc.Inspect(pid)
	if err != nil || info.Zombie() {
		return proc.Record{}, fmt.Errorf("owner_pid %d is not a running process", pid)
	}
	return proc.Record{PID: pid, PGID: info.PGID, StartTicks: info.StartTicks, BootID: proc.BootID(), Cmdline: info.Cmdline}, nil
}

// ensureWatchdog starts a watchdog for the owner unless one already watches it.
func (o *Options) ensureWatchdog() error {
	if o.OwnerPID <= 0 {
		return o.stopWatchdog()
	}
	owner, err := ownerRecord(o.OwnerPID)
	if err != nil {
		return err
	}
	if w := o.readWatchdog(); w != nil {
		if alive, _ := w.Process.Check(); alive && w.Owner.PID == owner.PID && w.Owner.StartTicks == owner.StartTicks {
			return nil
		}
	}
	if err := o.stopWatchdog(); err != nil {
		return err
	}
	argv := o.WatchdogCommand
	if len(argv) == 0 {
		argv = []string{"/proc/self/exe"}
	}
	argv = append(append([]string(nil), argv...), WatchdogArg, o.HeatDir, strconv.Itoa(owner.PID), strconv.FormatUint(owner.StartTicks, 10))
	s, err := proc.Start(argv, o.HeatDir, o.path(filepath.Join(heatconf.LogDir, "watchdog.log")), heatEnv(""))
	if err != nil {
		return fmt.Errorf("starting the watchdog of owner_pid %d: %w", owner.PID, err)
	}
	b, _ := json.MarshalIndent(watchdogRecord{Process: s.Record, Owner: owner}, "", "  ")
	return fsutil.WriteFileAtomic(o.path(WatchdogFile), append(b, '\n'), fsutil.SecretFileMode)
}

func (o *Options) readWatchdog() *watchdogRecord {
	b, err := os.ReadFile(o.path(WatchdogFile))
	if err != nil {
		return nil
	}
	var w watchdogRecord
	if json.Unmarshal(b, &w) != nil {
		return nil
	}
	return &w
}

// WatchdogOf returns the process record of heatDir's watchdog, if one was
// started (it may have exited since: see proc.Record.Check).
func WatchdogOf(heatDir string) (proc.Record, bool) {
	w := (&Options{HeatDir: heatDir}).readWatchdog()
	if w == nil {
		return proc.Record{}, false
	}
	return w.Process, true
}

// stopWatchdog ends the heat_dir's watchdog, if any (never the caller itself).
func (o *Options) stopWatchdog() error {
	w := o.readWatchdog()
	if w == nil {
		return nil
	}
	if alive, _ := w.Process.Check(); alive && w.Process.PID != os.Getpid() {
		if err := proc.StopGroup(w.Process.PGID, 2*time.Second, 5*time.Second); err != nil {
			return fmt.Errorf("stopping the watchdog: %w", err)
		}
	}
	if err := os.Remove(o.path(WatchdogFile)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// Watchdog runs until heat_dir's Heat is gone or the owner process exits.
// When the owner exits first (an interrupted ansible-playbook), it dumps and
// wipes Heat's database, then stops Heat and removes what is left of the
// database, so nothing runs on and the dump is saved. A container or pod
// (heat_type container, pod) is dumped through heat.conf's host_connection
// when it has one, its Heat services stopped before the wipe, and then the
// container or pod removed through the podman service its record names.
func Watchdog(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: "+WatchdogArg+" HEAT_DIR OWNER_PID OWNER_START_TICKS")
		return 2
	}
	heatDir := args[0]
	pid, _ := strconv.Atoi(args[1])
	ticks, _ := strconv.ParseUint(args[2], 10, 64)
	logf := func(f string, a ...any) {
		fmt.Fprintf(os.Stderr, "%s watchdog: %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(f, a...))
	}
	logf("watching owner pid %d for %s", pid, heatDir)
	for {
		time.Sleep(time.Second)
		rec, err := readRecord(heatDir)
		if err != nil || rec == nil {
			logf("Heat was stopped normally; exiting")
			return 0
		}
		// A container or pod runs as long as its launch record exists (a
		// stop removes it); a native Heat is checked by its process.
		if rec.HeatType != Container && rec.HeatType != Pod {
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
		return teardownAfterOwner(heatDir, rec, logf)
	}
}

func teardownAfterOwner(heatDir string, rec *Record, logf func(string, ...any)) int {
	ctx := context.Background()
	code := 0
	r, err := dumps.Dump(ctx, dumps.DumpOptions{HeatDir: heatDir, Keep: 5, Wipe: true, Warn: logf,
		WipeFunc: func(c context.Context) ([]string, error) {
			// Stop Heat first so nothing writes to the database being
			// dropped. A pod keeps its MariaDB running: the database is
			// dropped through heat.conf's host_connection.
			if rec.HeatType == Container || rec.HeatType == Pod {
				if err := podheat.StopHeat(c, heatDir, 15*time.Second); err != nil {
					return nil, err
				}
			} else if err := proc.StopGroup(rec.Process.PGID, 15*time.Second, 10*time.Second); err != nil {
				return nil, err
			}
			return RemoveDatabase(c, heatDir, "", logf, func(string) {})
		}})
	if err != nil {
		logf("dump failed, keeping the database: %v", err)
		code = 1
	} else {
		logf("%s", r.Msg)
	}
	o := Options{State: Stopped, HeatDir: heatDir, Warn: logf}
	if _, err := Run(ctx, o); err != nil {
		logf("stopping Heat: %v", err)
		code = 1
	}
	os.Remove(filepath.Join(heatDir, WatchdogFile))
	return code
}
