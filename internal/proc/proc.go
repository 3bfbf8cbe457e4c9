// Package proc starts detached server processes and finds them again: a
// process record (pid, start time, boot, command line, and a tag in its
// environment) that neither a recycled pid nor an unrelated process can
// match, stopping a whole process group, and finding which process listens
// on a TCP port. It reads Linux's /proc.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Record identifies a running process beyond its pid.
type Record struct {
	PID        int      `json:"pid"`
	PGID       int      `json:"pgid"`
	StartTicks uint64   `json:"start_ticks"`
	BootID     string   `json:"boot_id"`
	Cmdline    []string `json:"cmdline"`
	// Tag is an entry of the process's environment (TagVar=ID) that Start
	// put there: only a process we started has it.
	Tag string `json:"tag,omitempty"`
}

// TagVar is the environment variable of a Record's tag.
const TagVar = "EPHEMERAL_HEAT_LAUNCH"

// Tag is the environment entry that marks the processes of one launch.
func Tag(id string) string { return TagVar + "=" + id }

// Info is what /proc says about a pid right now.
type Info struct {
	PID        int
	State      byte
	PPID       int
	PGID       int
	StartTicks uint64
	Cmdline    []string
}

// Zombie reports whether the process has exited but is not reaped yet.
func (i Info) Zombie() bool { return i.State == 'Z' || i.State == 'X' }

// ErrNoProcess means the pid does not exist.
var ErrNoProcess = errors.New("no such process")

// Inspect reads /proc/<pid>.
func Inspect(pid int) (Info, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		if os.IsNotExist(err) {
			return Info{}, ErrNoProcess
		}
		return Info{}, fmt.Errorf("reading /proc/%d/stat: %w", pid, err)
	}
	// The command name is in parentheses and may contain spaces and ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return Info{}, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+2:]))
	// f[0] is field 3 (state); ppid is field 4, pgrp field 5, starttime field 22.
	if len(f) < 20 {
		return Info{}, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	ppid, _ := strconv.Atoi(f[1])
	pgid, _ := strconv.Atoi(f[2])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	info := Info{PID: pid, State: f[0][0], PPID: ppid, PGID: pgid, StartTicks: start}
	if c, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
		info.Cmdline = splitNul(c)
	}
	return info, nil
}

func splitNul(b []byte) []string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	parts := bytes.Split(b, []byte{0})
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = string(p)
	}
	return out
}

// BootID is the kernel's boot id: a record from before a reboot never matches.
func BootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}

// Check tells whether the process a record describes is still running, and
// is the one recorded: same pid, start time, boot, command line, and its
// tag in its environment. When it is not, reason says why (gone, zombie, the
// pid now belongs to something else, or nothing proves it is ours). Only a
// record that checks out may be signalled.
func (r Record) Check() (alive bool, reason string) {
	if r.PID <= 0 {
		return false, "the record has no pid"
	}
	if r.BootID != "" && r.BootID != BootID() {
		return false, fmt.Sprintf("pid %d was recorded before the last reboot", r.PID)
	}
	info, err := Inspect(r.PID)
	if err != nil {
		return false, fmt.Sprintf("pid %d is gone", r.PID)
	}
	if info.Zombie() {
		return false, fmt.Sprintf("pid %d has exited", r.PID)
	}
	if info.StartTicks != r.StartTicks || strings.Join(info.Cmdline, " ") != strings.Join(r.Cmdline, " ") {
		return false, fmt.Sprintf("pid %d now belongs to another process (%s)", r.PID, strings.Join(info.Cmdline, " "))
	}
	if r.Tag == "" {
		return false, fmt.Sprintf("pid %d (%s) is not proven ours: its record has no launch tag (an older release wrote it); "+
			"it is left alone: stop it by hand if it is our Heat", r.PID, strings.Join(info.Cmdline, " "))
	}
	if !HasTag(r.PID, r.Tag) {
		return false, fmt.Sprintf("pid %d (%s) lacks our launch tag: it is another process, left alone", r.PID, strings.Join(info.Cmdline, " "))
	}
	return true, ""
}

// HasTag reports whether the environment pid started with holds tag.
// A process whose environment cannot be read (another user's) has none.
func HasTag(pid int, tag string) bool {
	if tag == "" {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if string(kv) == tag {
			return true
		}
	}
	return false
}

// FindTagged lists the live processes (not the caller) whose environment
// holds tag: those a launch started, and their children.
func FindTagged(tag string) []Info {
	if tag == "" {
		return nil
	}
	ents, _ := os.ReadDir("/proc")
	var out []Info
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || !HasTag(pid, tag) {
			continue
		}
		if info, err := Inspect(pid); err == nil && !info.Zombie() {
			out = append(out, info)
		}
	}
	return out
}

// Started is a process started by Start.
type Started struct {
	Record Record
	cmd    *exec.Cmd
	done   chan struct{}
	err    error
}

// Exited reports whether the process has ended (only known to the starter).
func (s *Started) Exited() (bool, error) {
	select {
	case <-s.done:
		return true, s.err
	default:
		return false, nil
	}
}

// Start runs argv detached: in a new session and process group, stdin from
// /dev/null, stdout and stderr appended to logPath, so it outlives the caller
// and holds none of its file descriptors. tag (Tag(id)) is added to its
// environment and to the record.
func Start(argv []string, dir, logPath string, env []string, tag string) (*Started, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening log %s: %w", logPath, err)
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	if tag != "" {
		cmd.Env = append(append([]string(nil), env...), tag)
	}
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", strings.Join(argv, " "), err)
	}
	s := &Started{cmd: cmd, done: make(chan struct{})}
	go func() { s.err = cmd.Wait(); close(s.done) }()
	pid := cmd.Process.Pid
	rec := Record{PID: pid, PGID: pid, BootID: BootID(), Cmdline: append([]string(nil), argv...), Tag: tag}
	// The exec may not have happened yet; wait until /proc shows the new
	// command line so the record matches what later checks read.
	deadline := time.Now().Add(5 * time.Second)
	for {
		info, err := Inspect(pid)
		if err == nil {
			rec.StartTicks = info.StartTicks
			if len(info.Cmdline) > 0 && filepath.Base(info.Cmdline[0]) != filepath.Base(os.Args[0]) || time.Now().After(deadline) {
				rec.Cmdline = info.Cmdline
				break
			}
		} else if exited, _ := s.Exited(); exited {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.Record = rec
	return s, nil
}

// GroupMembers lists the live (non-zombie) pids in process group pgid.
func GroupMembers(pgid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		info, err := Inspect(pid)
		if err == nil && info.PGID == pgid && !info.Zombie() {
			out = append(out, pid)
		}
	}
	return out
}

// FindByArg lists live pids whose command line contains arg as one argument
// (for example the path of a config file). Anyone can start a process with
// any argument: this is for diagnostics and tests, never a reason to signal
// a process (see Record.Check, FindTagged).
func FindByArg(arg string) []Info {
	ents, _ := os.ReadDir("/proc")
	var out []Info
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		info, err := Inspect(pid)
		if err != nil || info.Zombie() {
			continue
		}
		for _, a := range info.Cmdline {
			if a == arg || strings.HasSuffix(a, "="+arg) {
				out = append(out, info)
				break
			}
		}
	}
	return out
}

// StopGroup sends SIGTERM to process group pgid, waits up to grace for every
// member to exit, then sends SIGKILL and waits up to killWait more. It
// returns an error if members remain.
func StopGroup(pgid int, grace, killWait time.Duration) error {
	if pgid <= 1 {
		return fmt.Errorf("refusing to signal process group %d", pgid)
	}
	if len(GroupMembers(pgid)) == 0 {
		return nil
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	if waitGroupGone(pgid, grace) {
		return nil
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if waitGroupGone(pgid, killWait) {
		return nil
	}
	return fmt.Errorf("processes %v of group %d survived SIGKILL", GroupMembers(pgid), pgid)
}

// StopPID is StopGroup for one process that is not a group leader: SIGTERM,
// then SIGKILL after grace.
func StopPID(pid int, grace, killWait time.Duration) error {
	if pid <= 1 {
		return fmt.Errorf("refusing to signal pid %d", pid)
	}
	gone := func() bool { info, err := Inspect(pid); return err != nil || info.Zombie() }
	if gone() {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	if waitFor(gone, grace) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if waitFor(gone, killWait) {
		return nil
	}
	return fmt.Errorf("pid %d survived SIGKILL", pid)
}

func waitFor(cond func() bool, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

func waitGroupGone(pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if len(GroupMembers(pgid)) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}
