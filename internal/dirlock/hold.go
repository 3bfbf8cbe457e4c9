package dirlock

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// HoldArg is the first argument that makes a module binary run as the
// holder of a lock (RunHolder) instead of as a module.
const HoldArg = "__hold_lock"

// HolderName is a holder's argv[0], what ps shows of it.
const HolderName = "ephemeral-heat-lock-holder"

// tokenVar passes the token to the holder (the environment, unlike the
// command line, is private to the user).
const tokenVar = "EPHEMERAL_HEAT_LOCK_TOKEN"

// pollEvery is how often a holder looks at its owner.
const pollEvery = 200 * time.Millisecond

// Hold takes the lock at path for the process owner (a playbook) and keeps
// it, in a detached holder process, for as long as owner runs or until
// Release: the holder runs argv (default: this binary) with HoldArg. It
// waits up to wait for the lock, and returns the token that the modules
// owner runs are handed (Join) once the holder holds it.
func Hold(path string, owner int, wait time.Duration, s Subject, argv []string) (string, int, error) {
	info, err := proc.Inspect(owner)
	if err != nil || info.Zombie() {
		return "", 0, fmt.Errorf("owner_pid %d is not a running process", owner)
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return "", 0, fmt.Errorf("making a lock token: %w", err)
	}
	token := hex.EncodeToString(tok)
	if len(argv) == 0 {
		argv = []string{"/proc/self/exe"}
	}
	argv = append(append([]string(nil), argv...), HoldArg, path, strconv.Itoa(owner), strconv.FormatUint(info.StartTicks, 10),
		strconv.FormatInt(wait.Milliseconds(), 10), s.Name, s.Busy)
	r, w, err := os.Pipe()
	if err != nil {
		return "", 0, err
	}
	defer r.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	// What ps shows: what it is, not /proc/self/exe.
	cmd.Args[0] = HolderName
	cmd.Env = append(os.Environ(), tokenVar+"="+token)
	cmd.Dir = "/"
	cmd.Stdout = w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return "", 0, fmt.Errorf("starting the lock holder: %w", err)
	}
	w.Close()
	_ = r.SetReadDeadline(time.Now().Add(wait + 30*time.Second))
	line, rerr := bufio.NewReader(r).ReadString('\n')
	line = strings.TrimSpace(line)
	switch {
	case line == "ok":
		// The holder runs on, detached; it is reaped by init when this
		// process ends.
		go cmd.Wait()
		return token, cmd.Process.Pid, nil
	case strings.HasPrefix(line, "error: "):
		cmd.Wait()
		return "", 0, errors.New(strings.TrimPrefix(line, "error: "))
	}
	_ = cmd.Process.Kill()
	cmd.Wait()
	return "", 0, fmt.Errorf("the lock holder of %s did not report (%v): nothing holds the lock", s.Name, rerr)
}

// RunHolder is a holder's main: args are what Hold put after HoldArg. It
// reports "ok" or "error: ..." on its standard output, then keeps the lock
// until its owner ends, it gets SIGTERM, SIGINT or SIGHUP, or its lock file
// is removed. It returns the exit code.
func RunHolder(args []string) int {
	if len(args) != 6 {
		fmt.Println("error: the lock holder takes: PATH OWNER_PID OWNER_START_TICKS WAIT_MS NAME BUSY")
		return 2
	}
	path := args[0]
	owner, err1 := strconv.Atoi(args[1])
	ownerStart, err2 := strconv.ParseUint(args[2], 10, 64)
	waitMS, err3 := strconv.ParseInt(args[3], 10, 64)
	token := os.Getenv(tokenVar)
	if err1 != nil || err2 != nil || err3 != nil || token == "" {
		fmt.Println("error: the lock holder's arguments are malformed")
		return 2
	}
	os.Unsetenv(tokenVar)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-sigs; cancel() }()
	ownerAlive := func() bool {
		info, err := proc.Inspect(owner)
		return err == nil && !info.Zombie() && info.StartTicks == ownerStart
	}
	if !ownerAlive() {
		fmt.Printf("error: owner_pid %d ended before the lock was taken\n", owner)
		return 1
	}
	l, err := acquire(ctx, path, time.Duration(waitMS)*time.Millisecond, Subject{Name: args[4], Busy: args[5]}, token, owner)
	if err != nil {
		fmt.Printf("error: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		return 1
	}
	defer l.Unlock()
	var st unix.Stat_t
	_ = unix.Fstat(int(l.f.Fd()), &st)
	fmt.Println("ok")
	// Nothing more is said: let go of the reporting pipe.
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		_ = unix.Dup2(int(null.Fd()), 1)
		null.Close()
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return 0
		case <-tick.C:
		}
		if !ownerAlive() {
			return 0
		}
		// The lock file removed or replaced (the directory was removed):
		// nothing is guarded any more.
		var now unix.Stat_t
		if err := unix.Lstat(path, &now); err != nil || now.Ino != st.Ino || now.Dev != st.Dev {
			return 0
		}
	}
}

// Release ends the holder that holds the lock at path under token, and
// waits up to wait for the lock to be free. released is false when no
// holder of that token holds it (nothing to do).
func Release(path, token string, wait time.Duration, s Subject) (released bool, err error) {
	f, err := openExisting(path)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	r, ok := readRecord(f)
	if !ok || r.token != token || r.owner == 0 {
		return false, nil
	}
	info, err := proc.Inspect(r.pid)
	if err != nil || info.Zombie() || info.StartTicks != r.startTicks || !isHolder(info.Cmdline) {
		return false, nil
	}
	_ = syscall.Kill(r.pid, syscall.SIGTERM)
	deadline := time.Now().Add(wait)
	for {
		if unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) == nil {
			_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
			return true, nil
		}
		if time.Now().After(deadline) {
			if i, err := proc.Inspect(r.pid); err == nil && i.StartTicks == r.startTicks {
				_ = syscall.Kill(r.pid, syscall.SIGKILL)
			}
			if !time.Now().Before(deadline.Add(5 * time.Second)) {
				return false, fmt.Errorf("the lock holder pid %d of %s did not let go within %s", r.pid, s.Name, wait+5*time.Second)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// isHolder tells a holder's command line.
func isHolder(cmdline []string) bool {
	for _, a := range cmdline {
		if a == HoldArg {
			return true
		}
	}
	return false
}
