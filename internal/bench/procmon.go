package bench

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// procMonitor reads a native heat-all's CPU time and peak memory from /proc
// (zero values when there is no such process).
type procMonitor struct{ pid int }

func newProcMonitor(h *Heat) *procMonitor { return &procMonitor{pid: h.PID} }

// clockTick is the kernel's USER_HZ (100 on Linux).
const clockTick = 100

// cpu is the process's user + system time so far.
func (m *procMonitor) cpu() time.Duration {
	if m.pid <= 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(m.pid) + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the command (which may hold spaces) in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	// f[0] is field 3 (state): utime and stime are fields 14 and 15.
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTick
}

// rssPeak is the process's peak resident set (VmHWM), in kB.
func (m *procMonitor) rssPeak() int64 {
	if m.pid <= 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(m.pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
