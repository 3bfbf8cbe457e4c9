package proc

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseHexAddr(t *testing.T) {
	tests := []struct {
		in   string
		addr string
		port int
		ok   bool
	}{
		{"0100007F:1F46", "127.0.0.1", 8006, true},
		{"00000000:0050", "0.0.0.0", 80, true},
		{"00000000000000000000000001000000:1F46", "::1", 8006, true},
		{"zz:1F46", "", 0, false},
		{"0100007F", "", 0, false},
	}
	for _, tc := range tests {
		a, p, ok := parseHexAddr(tc.in)
		if ok != tc.ok || a != tc.addr || p != tc.port {
			t.Errorf("%s: got %s %d %v", tc.in, a, p, ok)
		}
	}
}

func TestPortOwners(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if PortFree("127.0.0.1", port) {
		t.Fatal("port reported free while listening")
	}
	owners := PortOwners(port)
	if len(owners) != 1 || owners[0].PID == 0 || owners[0].Address != "127.0.0.1:"+strconv.Itoa(port) {
		t.Fatalf("owners %+v", owners)
	}
	if !strings.Contains(owners[0].String(), "pid") {
		t.Errorf("String() = %s", owners[0])
	}
}

func TestStartCheckStop(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal("sleep not found")
	}
	dir := t.TempDir()
	// A group of two: a shell that ignores TERM and its child.
	tag := Tag("test-" + strconv.Itoa(os.Getpid()))
	s, err := Start([]string{"/bin/sh", "-c", "trap '' TERM; " + sleep + " 300 & wait"}, dir, filepath.Join(dir, "log"), nil, tag)
	if err != nil {
		t.Fatal(err)
	}
	rec := s.Record
	if alive, why := rec.Check(); !alive {
		t.Fatalf("just started process not alive: %s", why)
	}
	if rec.PGID != rec.PID {
		t.Fatalf("not its own group: %+v", rec)
	}
	// The shell forks its sleep: wait for the group to have both, the
	// child past its exec (until then it has the shell's command line, and
	// FindByArg below would find two shells).
	sleeping := func() bool {
		for _, pid := range GroupMembers(rec.PGID) {
			if info, err := Inspect(pid); err == nil && len(info.Cmdline) > 0 && info.Cmdline[0] == sleep {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(10 * time.Second); len(GroupMembers(rec.PGID)) < 2 || !sleeping(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("group has %d members after 10 s, sleep among them: %v", len(GroupMembers(rec.PGID)), sleeping())
		}
	}
	if got := FindByArg("trap '' TERM; " + sleep + " 300 & wait"); len(got) != 1 {
		t.Errorf("FindByArg found %d processes, want the shell alone: %+v", len(got), got)
	}
	// The tag is in the environment of the shell and of its child.
	if got := FindTagged(tag); len(got) != 2 {
		t.Errorf("FindTagged found %d processes, want the shell and its sleep: %+v", len(got), got)
	}
	// Same pid, start time and command line, but no tag (or another one):
	// not ours, whatever the record says.
	for _, tg := range []string{"", Tag("another-launch")} {
		untagged := rec
		untagged.Tag = tg
		if alive, why := untagged.Check(); alive || !strings.Contains(why, "left alone") {
			t.Errorf("record with tag %q accepted: %v %s", tg, alive, why)
		}
	}
	// A recycled pid: same pid, other start time.
	fake := rec
	fake.StartTicks++
	if alive, why := fake.Check(); alive || !strings.Contains(why, "another process") {
		t.Errorf("recycled pid accepted: %v %s", alive, why)
	}
	other := rec
	other.BootID = "not-this-boot"
	if alive, _ := other.Check(); alive {
		t.Error("record from another boot accepted")
	}
	if err := StopGroup(rec.PGID, 300*time.Millisecond, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if n := GroupMembers(rec.PGID); len(n) != 0 {
		t.Fatalf("members left: %v", n)
	}
	<-s.done
	if alive, why := rec.Check(); alive || why == "" {
		t.Errorf("stopped process reported alive")
	}
	if exited, _ := s.Exited(); !exited {
		t.Error("Exited() false after stop")
	}
	if err := StopGroup(1, time.Second, time.Second); err == nil {
		t.Error("signalling group 1 allowed")
	}
}
