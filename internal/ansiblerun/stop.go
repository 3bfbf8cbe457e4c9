package ansiblerun

// Stopping a run: on SIGTERM or SIGINT to the module, or at its timeout,
// every process of the run is stopped: ansible-playbook's process group
// (its workers, the modules they run and their children) and any process
// that left the group (setsid: an async task, ssh's ControlPersist master)
// but carries the run's marker in its environment.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Interrupted is the cause of a context canceled by a signal (OnSignals).
type Interrupted struct{ Signal syscall.Signal }

// Name is the signal's name (SIGTERM).
func (e *Interrupted) Name() string {
	if n := unix.SignalName(e.Signal); n != "" {
		return n
	}
	return "signal " + strconv.Itoa(int(e.Signal))
}

func (e *Interrupted) Error() string { return "interrupted by " + e.Name() }

// OnSignals returns a context canceled, with an *Interrupted cause, when
// the process gets SIGTERM or SIGINT, which then no longer end it (a
// later one is ignored: the run's processes are being stopped). stop
// restores their default action.
func OnSignals(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			sig, _ := s.(syscall.Signal)
			cancel(&Interrupted{Signal: sig})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// markerVar is the environment variable that marks every process of a run
// (inherited by all it starts, in or out of its process group).
const markerVar = "EPHEMERAL_HEAT_PLAYBOOK_RUN"

// newMarker is a run's marker, markerVar=<random>.
func newMarker() string {
	b := make([]byte, 12)
	rand.Read(b)
	return markerVar + "=" + hex.EncodeToString(b)
}

// runProcesses lists the live processes of a run: in process group pgid,
// or with marker in their environment (zombies left out: they are gone,
// only not yet reaped).
func runProcesses(pgid int, marker string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	want := []byte(marker + "\x00")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			out = append(out, pid)
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err == nil && hasVar(env, want) {
			out = append(out, pid)
		}
	}
	return out
}

// hasVar tells whether a NUL-separated environment holds kv ("K=V\x00").
func hasVar(env, kv []byte) bool {
	env = append(env, 0) // the last variable may lack its NUL
	return bytes.HasPrefix(env, kv) || bytes.Contains(env, append([]byte{0}, kv...))
}

// stopRun stops every process of a run (process group pgid, marker):
// SIGTERM, then SIGKILL to those left after grace, until none is left and
// ansible-playbook was reaped (exited closed), or a last bound passes. It
// returns the processes it could not stop.
func stopRun(pgid int, marker string, grace time.Duration, exited <-chan struct{}) []int {
	signalAll := func(sig syscall.Signal) []int {
		syscall.Kill(-pgid, sig)
		left := runProcesses(pgid, marker)
		for _, pid := range left {
			syscall.Kill(pid, sig)
		}
		return left
	}
	gone := func() bool {
		select {
		case <-exited:
			return len(runProcesses(pgid, marker)) == 0
		default:
			return false
		}
	}
	signalAll(syscall.SIGTERM)
	for end := time.Now().Add(grace); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if gone() {
			return nil
		}
	}
	for end := time.Now().Add(killBound); ; time.Sleep(50 * time.Millisecond) {
		left := signalAll(syscall.SIGKILL)
		if gone() {
			return nil
		}
		if !time.Now().Before(end) {
			return left
		}
	}
}

// killBound bounds the wait for processes killed with SIGKILL.
const killBound = 10 * time.Second

// DefaultKillGrace is the time the processes of a stopped run get between
// SIGTERM and SIGKILL.
const DefaultKillGrace = 10 * time.Second

func pidList(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return fmt.Sprintf("pid %s", strings.Join(s, ", "))
}
