package dirlock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// The test binary is the holder's binary too.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == HoldArg {
		os.Exit(RunHolder(os.Args[2:]))
	}
	os.Exit(m.Run())
}

var subj = Subject{Name: "work_dir /x", Busy: "another deploy is working on it"}

// owner starts a process that stands for a playbook.
func owner(t *testing.T) *exec.Cmd {
	t.Helper()
	c := exec.Command("sleep", "600")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c
}

func hold(t *testing.T, path string, o *exec.Cmd, wait time.Duration) (string, int) {
	t.Helper()
	tok, pid, err := Hold(path, o.Process.Pid, wait, subj, []string{os.Args[0]})
	if err != nil {
		t.Fatalf("Hold: %v", err)
	}
	t.Cleanup(func() {
		if info, err := proc.Inspect(pid); err == nil && isHolder(info.Cmdline) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return tok, pid
}

// free reports whether nobody holds the lock at path (polling up to d).
func free(path string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if Peek(path) == "" {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestAcquireExcludesAndNamesHolder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	l, err := Acquire(context.Background(), p, 0, subj)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = Acquire(context.Background(), p, 300*time.Millisecond, subj)
	var busy *BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("a second Acquire: %v", err)
	}
	for _, w := range []string{"work_dir /x is in use by", fmt.Sprintf("pid %d", os.Getpid()), "another deploy is working on it", "waited 300ms"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %q", err, w)
		}
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Error("did not wait")
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != FileMode {
		t.Errorf("lock file mode %v", st.Mode())
	}
	l.Unlock()
	if Peek(p) != "" {
		t.Error("held after Unlock")
	}
	l2, err := Acquire(context.Background(), p, 0, subj)
	if err != nil {
		t.Fatalf("after Unlock: %v", err)
	}
	l2.Unlock()
}

func TestAcquireRefusesWhatIsNotALockFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("precious\n"), 0o644)
	link := filepath.Join(dir, "link.lock")
	os.Symlink(target, link)
	fifo := filepath.Join(dir, "fifo.lock")
	syscall.Mkfifo(fifo, 0o600)
	sub := filepath.Join(dir, "dir.lock")
	os.Mkdir(sub, 0o700)
	for _, tc := range []struct{ path, want string }{
		{link, "is a symlink"},
		{fifo, "not a regular file"},
		{sub, "opening the lock"},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := Acquire(context.Background(), tc.path, 0, subj); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("Acquire(%s): %v, want %q", tc.path, err, tc.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Acquire hung")
			}
		})
	}
	if b, _ := os.ReadFile(target); string(b) != "precious\n" {
		t.Errorf("the symlink's target was written: %q", b)
	}
}

func TestHoldJoinRelease(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.lock")
	o := owner(t)
	tok, pid := hold(t, p, o, time.Second)

	// The playbook's modules join it under the token, without waiting.
	start := time.Now()
	l, err := Join(context.Background(), p, tok, time.Minute, subj)
	if err != nil || !l.Joined() {
		t.Fatalf("Join with the token: %v", err)
	}
	l.Unlock() // leaves it with the holder
	if time.Since(start) > 2*time.Second {
		t.Error("Join waited")
	}
	if free(p, 300*time.Millisecond) {
		t.Fatal("a joined Unlock let the lock go")
	}
	// Anyone else waits, and is told who holds it: the owner, through the holder.
	_, err = Join(context.Background(), p, "", 200*time.Millisecond, subj)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", o.Process.Pid)) || !strings.Contains(err.Error(), fmt.Sprintf("lock holder pid %d", pid)) {
		t.Errorf("a second operation: %v", err)
	}
	// A wrong token is refused at once.
	if _, err := Join(context.Background(), p, "beef", time.Minute, subj); err == nil || !strings.Contains(err.Error(), "not under this token") {
		t.Errorf("wrong token: %v", err)
	}
	// A second Hold for another playbook waits, then fails naming the first.
	o2 := owner(t)
	if _, _, err := Hold(p, o2.Process.Pid, 300*time.Millisecond, subj, []string{os.Args[0]}); err == nil || !strings.Contains(err.Error(), "is in use by") {
		t.Errorf("second Hold: %v", err)
	}
	released, err := Release(p, tok, 5*time.Second, subj)
	if err != nil || !released {
		t.Fatalf("Release: %v %v", released, err)
	}
	if !free(p, time.Second) {
		t.Fatal("held after Release")
	}
	if _, err := Join(context.Background(), p, tok, 0, subj); err == nil || !strings.Contains(err.Error(), "nobody holds the lock") {
		t.Errorf("the released token: %v", err)
	}
	if released, err := Release(p, tok, time.Second, subj); released || err != nil {
		t.Errorf("a second Release: %v %v", released, err)
	}
}

func TestHolderEndsWithItsOwner(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.lock")
	o := owner(t)
	tok, pid := hold(t, p, o, time.Second)
	o.Process.Kill()
	o.Wait()
	if !free(p, 5*time.Second) {
		t.Fatal("the lock outlived its owner")
	}
	if !ended(pid, 5*time.Second) {
		t.Errorf("holder pid %d still runs", pid)
	}
	// A stale record is taken over at once.
	l, err := Acquire(context.Background(), p, 0, subj)
	if err != nil {
		t.Fatalf("taking over after the owner died: %v", err)
	}
	l.Unlock()
	if _, err := Join(context.Background(), p, tok, 0, subj); err == nil {
		t.Error("the dead owner's token still joins")
	}
}

func TestKilledHolderFreesTheLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.lock")
	o := owner(t)
	tok, pid := hold(t, p, o, time.Second)
	syscall.Kill(pid, syscall.SIGKILL)
	if !free(p, 5*time.Second) {
		t.Fatal("a SIGKILLed holder's lock is still held")
	}
	if _, err := Join(context.Background(), p, tok, 0, subj); err == nil || !strings.Contains(err.Error(), "was let go") {
		t.Errorf("token of a killed holder: %v", err)
	}
}

func TestHolderEndsWhenTheLockFileGoes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wd")
	os.Mkdir(dir, 0o700)
	p := filepath.Join(dir, "w.lock")
	o := owner(t)
	_, pid := hold(t, p, o, time.Second)
	os.RemoveAll(dir)
	if !ended(pid, 5*time.Second) {
		t.Fatalf("holder pid %d runs on after its directory was removed", pid)
	}
}

// ended reports whether the holder pid ended (gone, or a zombie not yet
// reaped by init) within d.
func ended(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		info, err := proc.Inspect(pid)
		if err != nil || info.Zombie() || !isHolder(info.Cmdline) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestHoldRefusesADeadOwner(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.lock")
	if _, _, err := Hold(p, 4194303, time.Second, subj, []string{os.Args[0]}); err == nil || !strings.Contains(err.Error(), "owner_pid 4194303 is not a running process") {
		t.Errorf("Hold for a dead owner: %v", err)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ok   bool
		want record
	}{
		{"12 34 - 0 /usr/bin/x -a b\n", true, record{pid: 12, startTicks: 34, cmdline: "/usr/bin/x -a b"}},
		{"12 34 abcd 99 holder\n", true, record{pid: 12, startTicks: 34, token: "abcd", owner: 99, cmdline: "holder"}},
		{"", false, record{}},
		{"12 34 old-format-command\n", false, record{}},
		{"x 34 - 0 c\n", false, record{}},
		{"-3 34 - 0 c\n", false, record{}},
	} {
		got, ok := parseRecord([]byte(tc.in))
		if ok != tc.ok || got != tc.want {
			t.Errorf("parseRecord(%q) = %+v %v, want %+v %v", tc.in, got, ok, tc.want, tc.ok)
		}
		if ok {
			if back, _ := parseRecord([]byte(got.String())); back != got {
				t.Errorf("round trip of %q: %+v", tc.in, back)
			}
		}
	}
}

// A waiter whose lock file is removed or replaced while it waits does not
// take a lock on the file the path no longer names.
func TestWaiterSeesTheLockFileGo(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replace bool // a new lock file takes the name
		wantErr string
	}{
		{name: "directory removed", wantErr: "work_dir /x was removed while this waited for its lock"},
		{name: "lock file replaced", replace: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "wd")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "w.lock")
			first, err := Acquire(context.Background(), p, 0, subj)
			if err != nil {
				t.Fatal(err)
			}
			type got struct {
				l   *Lock
				err error
			}
			done := make(chan got, 1)
			go func() {
				l, err := Acquire(context.Background(), p, 10*time.Second, subj)
				done <- got{l, err}
			}()
			time.Sleep(300 * time.Millisecond) // the waiter has opened the old file
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if tc.replace {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			first.Unlock()
			g := <-done
			if tc.wantErr != "" {
				if g.err == nil || !strings.Contains(g.err.Error(), tc.wantErr) {
					t.Fatalf("waiter: lock %v, error %v; want an error with %q", g.l, g.err, tc.wantErr)
				}
				return
			}
			if g.err != nil {
				t.Fatalf("waiter: %v", g.err)
			}
			defer g.l.Unlock()
			var held, named syscall.Stat_t
			if err := syscall.Fstat(int(g.l.f.Fd()), &held); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Lstat(p, &named); err != nil || held.Ino != named.Ino {
				t.Fatalf("the waiter holds a file %s does not name (%v)", p, err)
			}
			if Peek(p) == "" {
				t.Errorf("the new lock file is not held")
			}
		})
	}
}
