package proc

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// PortFree reports whether a TCP listener can be opened on host:port now.
func PortFree(host string, port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// WaitPortFree waits until host:port can be listened on, up to d.
func WaitPortFree(host string, port int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !PortFree(host, port) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

// FreePort asks the kernel for a free TCP port on 127.0.0.1.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Listener describes who listens on a port.
type Listener struct {
	PID     int // 0 when the socket's owner could not be found
	Cmdline []string
	Address string
}

func (l Listener) String() string {
	if l.PID == 0 {
		return "a process this user cannot see (listening on " + l.Address + ")"
	}
	return fmt.Sprintf("pid %d (%s), listening on %s", l.PID, strings.Join(l.Cmdline, " "), l.Address)
}

// PortOwners finds the processes listening on TCP port (IPv4 and IPv6).
func PortOwners(port int) []Listener {
	inodes := map[string]string{} // socket inode -> local address
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		sc.Scan() // header
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || fs[3] != "0A" { // 0A = LISTEN
				continue
			}
			addr, p, ok := parseHexAddr(fs[1])
			if ok && p == port {
				inodes[fs[9]] = net.JoinHostPort(addr, strconv.Itoa(p))
			}
		}
		fh.Close()
	}
	if len(inodes) == 0 {
		return nil
	}
	var out []Listener
	found := map[string]bool{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
			if err != nil || !strings.HasPrefix(target, "socket:[") {
				continue
			}
			ino := strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")
			if addr, ok := inodes[ino]; ok && !found[ino] {
				found[ino] = true
				info, _ := Inspect(pid)
				out = append(out, Listener{PID: pid, Cmdline: info.Cmdline, Address: addr})
			}
		}
	}
	for ino, addr := range inodes {
		if !found[ino] {
			out = append(out, Listener{Address: addr})
		}
	}
	return out
}

// parseHexAddr decodes /proc/net/tcp's "0100007F:1F46" (little-endian words).
func parseHexAddr(s string) (string, int, bool) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return "", 0, false
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return "", 0, false
	}
	if len(h) != 8 && len(h) != 32 {
		return "", 0, false
	}
	ip := make(net.IP, len(h)/2)
	for w := 0; w < len(h)/8; w++ {
		v, err := strconv.ParseUint(h[w*8:w*8+8], 16, 32)
		if err != nil {
			return "", 0, false
		}
		ip[w*4+0] = byte(v)
		ip[w*4+1] = byte(v >> 8)
		ip[w*4+2] = byte(v >> 16)
		ip[w*4+3] = byte(v >> 24)
	}
	return ip.String(), int(port), true
}

// PortInUse is the operator-facing error for an api_port that something
// already listens on, naming what, when it can be found.
func PortInUse(host string, port int) error {
	owners := PortOwners(port)
	if len(owners) == 0 {
		return fmt.Errorf("api_port %d on %s is already in use; stop what uses it or choose another api_port", port, host)
	}
	var who []string
	for _, l := range owners {
		who = append(who, l.String())
	}
	return fmt.Errorf("api_port %d on %s is already in use by %s; stop it or choose another api_port", port, host, strings.Join(who, "; "))
}

// TailLines returns the last n lines of a log's content, for error messages.
func TailLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// MaxPID is the largest process id Linux hands out (PID_MAX_LIMIT on 64-bit).
const MaxPID = 4194304

// CheckBindHost checks that something may listen on host on this machine
// (an address of one of its interfaces, or a wildcard), so that a bad
// bind_host is reported as such and not as a port in use.
func CheckBindHost(host string) error {
	h := strings.Trim(host, "[]")
	if h == "" {
		return fmt.Errorf("bind_host is empty; give an address of this host such as 127.0.0.1")
	}
	l, err := net.Listen("tcp", net.JoinHostPort(h, "0"))
	if err != nil {
		var dns *net.DNSError
		switch {
		case errors.As(err, &dns):
			return fmt.Errorf("bind_host %q is neither an IP address nor a name this host resolves (%v): give an address of this host such as 127.0.0.1", host, dns.Err)
		case errors.Is(err, syscall.EADDRNOTAVAIL):
			return fmt.Errorf("bind_host %q is not an address of this host: give one that 'ip -brief address' lists, such as 127.0.0.1", host)
		}
		return fmt.Errorf("bind_host %q: cannot listen there: %w", host, err)
	}
	l.Close()
	return nil
}
