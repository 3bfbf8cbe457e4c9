package heatdir

import (
	"context"
	"encoding/json"
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

// holdLockEnv makes the test binary a process that holds a heat_dir's lock
// until it is killed (see TestMain).
const holdLockEnv = "HEATDIR_TEST_HOLD_LOCK"

func TestMain(m *testing.M) {
	if dir := os.Getenv(holdLockEnv); dir != "" {
		d, err := At(dir)
		if err == nil {
			_, err = d.Lock(context.Background(), time.Second)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("locked")
		time.Sleep(10 * time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// holdLock starts a process that holds d's lock; it is killed (SIGKILL)
// when the test ends.
func holdLock(t *testing.T, d Dir) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdLockEnv+"="+d.Path())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := make([]byte, 6)
	if n, err := out.Read(buf); err != nil || string(buf[:n]) != "locked" {
		t.Fatalf("the lock holder did not take the lock: %q %v", buf[:n], err)
	}
	return cmd
}

func newDir(t *testing.T) Dir {
	t.Helper()
	d, err := At(filepath.Join(t.TempDir(), "deploy", "heat-launcher"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestAt(t *testing.T) {
	for _, p := range []string{"", "rel/dir", "./x"} {
		if _, err := At(p); err == nil {
			t.Errorf("At(%q) accepted", p)
		}
	}
	d, err := At("/srv/x/../heat-launcher/")
	if err != nil || d.Path() != "/srv/heat-launcher" {
		t.Errorf("At: %v %v", d, err)
	}
}

func TestEnsureCreatesPrivateDirs(t *testing.T) {
	d := newDir(t)
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	changed, err := d.Ensure()
	if err != nil || !changed {
		t.Fatalf("ensure: %v %v", changed, err)
	}
	for _, p := range []string{d.Path(), filepath.Dir(d.Path())} {
		st, err := os.Lstat(p)
		if err != nil || st.Mode().Perm() != DirMode {
			t.Errorf("%s: %v %v", p, st.Mode(), err)
		}
	}
	if changed, err := d.Ensure(); err != nil || changed {
		t.Errorf("second ensure: %v %v", changed, err)
	}
	// Ours but readable by others: made private.
	os.Chmod(d.Path(), 0o755)
	if changed, err := d.Ensure(); err != nil || !changed {
		t.Errorf("ensure on a 0755 heat_dir: %v %v", changed, err)
	}
	if err := d.EnsureSub(LogDir); err != nil {
		t.Fatal(err)
	}
	os.Symlink(t.TempDir(), d.File(RunDir))
	if err := d.EnsureSub(RunDir); err == nil || !strings.Contains(err.Error(), "not a directory of ours") {
		t.Errorf("EnsureSub through a symlink: %v", err)
	}
}

// The guards: each refused heat_dir is left exactly as it was.
func TestGuardRefuses(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, d Dir) (check func(t *testing.T))
		want  string
	}{
		{"symlinked heat_dir", func(t *testing.T, d Dir) func(t *testing.T) {
			target := t.TempDir()
			os.Chmod(target, 0o755)
			os.WriteFile(filepath.Join(target, "keep"), []byte("x"), 0o644)
			os.MkdirAll(filepath.Dir(d.Path()), 0o700)
			if err := os.Symlink(target, d.Path()); err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T) {
				st, _ := os.Stat(target)
				ents, _ := os.ReadDir(target)
				if st.Mode().Perm() != 0o755 || len(ents) != 1 {
					t.Errorf("the symlink's target changed: mode %o, %d entries", st.Mode().Perm(), len(ents))
				}
			}
		}, "is a symlink"},
		{"group-writable heat_dir", func(t *testing.T, d Dir) func(t *testing.T) {
			os.MkdirAll(d.Path(), 0o700)
			os.Chmod(d.Path(), 0o770)
			return func(t *testing.T) {
				if st, _ := os.Stat(d.Path()); st.Mode().Perm() != 0o770 {
					t.Errorf("mode changed to %o", st.Mode().Perm())
				}
			}
		}, "writable by other users"},
		{"world-writable heat_dir", func(t *testing.T, d Dir) func(t *testing.T) {
			os.MkdirAll(d.Path(), 0o700)
			os.Chmod(d.Path(), 0o777)
			return func(t *testing.T) {}
		}, "writable by other users"},
		{"heat_dir is a file", func(t *testing.T, d Dir) func(t *testing.T) {
			os.MkdirAll(filepath.Dir(d.Path()), 0o700)
			os.WriteFile(d.Path(), []byte("x"), 0o600)
			return func(t *testing.T) {}
		}, "not a directory"},
		{"parent writable by others, not sticky", func(t *testing.T, d Dir) func(t *testing.T) {
			os.MkdirAll(filepath.Dir(d.Path()), 0o700)
			os.Chmod(filepath.Dir(d.Path()), 0o777)
			return func(t *testing.T) {
				if _, err := os.Lstat(d.Path()); !os.IsNotExist(err) {
					t.Errorf("heat_dir created inside a world-writable parent")
				}
			}
		}, "without the sticky bit"},
		{"a directory with other content (a home directory, /etc)", func(t *testing.T, d Dir) func(t *testing.T) {
			os.MkdirAll(d.Path(), 0o755)
			os.WriteFile(filepath.Join(d.Path(), "precious"), []byte("x"), 0o644)
			return func(t *testing.T) {
				st, _ := os.Stat(d.Path())
				if ents, _ := os.ReadDir(d.Path()); len(ents) != 1 || st.Mode().Perm() != 0o755 {
					t.Errorf("another directory was changed: mode %o, %v", st.Mode().Perm(), ents)
				}
			}
		}, "is not empty and is not a heat_dir this collection made"},
		{"a tripleoclient heat-launcher directory", func(t *testing.T, d Dir) func(t *testing.T) {
			os.MkdirAll(d.Path(), 0o700)
			os.WriteFile(filepath.Join(d.Path(), HeatConf), []byte("[DEFAULT]\n"), 0o600)
			os.WriteFile(filepath.Join(d.Path(), APIPaste), []byte("x"), 0o600)
			return func(t *testing.T) {
				if b, _ := os.ReadFile(filepath.Join(d.Path(), HeatConf)); string(b) != "[DEFAULT]\n" {
					t.Errorf("its heat.conf changed")
				}
			}
		}, "is not empty and is not a heat_dir"},
		{"the config-download directory of config_download", func(t *testing.T, d Dir) func(t *testing.T) {
			os.MkdirAll(d.Path(), 0o700)
			os.WriteFile(filepath.Join(d.Path(), ".ephemeral-heat"), []byte("ephemeral.heat config_download\n"), 0o600)
			return func(t *testing.T) {}
		}, "is the config_download of another task"},
		{"foreign-owned heat_dir", func(t *testing.T, d Dir) func(t *testing.T) {
			os.MkdirAll(d.Path(), 0o700)
			foreignOwn(t, d.Path())
			return func(t *testing.T) {
				if ents, _ := os.ReadDir(d.Path()); len(ents) != 0 {
					t.Errorf("files written into another user's heat_dir: %v", ents)
				}
			}
		}, "is owned by uid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDir(t)
			check := tc.setup(t, d)
			if err := d.Guard(); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), d.Path()) {
				t.Errorf("Guard: %v, want an error naming %s with %q", err, d.Path(), tc.want)
			}
			if _, err := d.Ensure(); err == nil {
				t.Errorf("Ensure accepted it")
			}
			check(t)
		})
	}
}

// foreignOwn gives path to another user (nobody) when running as root; a
// user who is not root gets a heat_dir owned by root instead.
func foreignOwn(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() == 0 {
		if err := os.Chown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("this test needs root (to give a directory to another user); run it as root")
}

func TestLockExcludesAndNamesHolder(t *testing.T) {
	d := newDir(t)
	if _, err := d.Ensure(); err != nil {
		t.Fatal(err)
	}
	holder := holdLock(t, d)
	start := time.Now()
	_, err := d.Lock(context.Background(), 700*time.Millisecond)
	if err == nil {
		t.Fatal("a second caller got the lock")
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("in use by pid %d", holder.Process.Pid)) {
		t.Errorf("error does not name the holder: %v", err)
	}
	if time.Since(start) < 700*time.Millisecond {
		t.Errorf("did not wait before failing")
	}
	// A waiter gets the lock as soon as the holder lets go.
	got := make(chan error, 1)
	go func() {
		l, err := d.Lock(context.Background(), time.Minute)
		l.Unlock()
		got <- err
	}()
	holder.Process.Signal(syscall.SIGTERM)
	if err := <-got; err != nil {
		t.Errorf("waiter: %v", err)
	}
}

// A holder killed with SIGKILL leaves the lock file, not the lock.
func TestStaleLockAfterKill9(t *testing.T) {
	d := newDir(t)
	if _, err := d.Ensure(); err != nil {
		t.Fatal(err)
	}
	holder := holdLock(t, d)
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	holder.Wait()
	b, _ := os.ReadFile(d.File(LockFile))
	if !strings.HasPrefix(string(b), fmt.Sprint(holder.Process.Pid)) {
		t.Fatalf("the lock file does not name the killed holder: %q", b)
	}
	l, err := d.Lock(context.Background(), 2*time.Second)
	if err != nil {
		t.Fatalf("lock left by a killed process: %v", err)
	}
	if b, _ := os.ReadFile(d.File(LockFile)); !strings.HasPrefix(string(b), fmt.Sprint(os.Getpid())) {
		t.Errorf("the lock file does not name the new holder: %q", b)
	}
	l.Unlock()
}

func TestRecordVersions(t *testing.T) {
	d := newDir(t)
	if _, err := d.Ensure(); err != nil {
		t.Fatal(err)
	}
	if r, err := d.ReadRecord(); r != nil || err != nil {
		t.Fatalf("no record: %v %v", r, err)
	}
	rec := &Record{State: Running, LaunchID: "abc", HeatType: "native", Endpoint: "http://127.0.0.1:1/v1/admin",
		Process: &proc.Record{PID: 42, Tag: proc.Tag("abc")}}
	if err := d.WriteRecord(rec); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(d.File(RecordFile)); st.Mode().Perm() != FileMode {
		t.Errorf("record mode %o", st.Mode().Perm())
	}
	got, err := d.ReadRecord()
	if err != nil || got.Version != RecordVersion || got.Process.PID != 42 || got.Tag() != proc.Tag("abc") {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"corrupt", "{", "is corrupt"},
		{"newer", `{"version": 99}`, "version 99"},
	} {
		os.WriteFile(d.File(RecordFile), []byte(tc.body), 0o600)
		if _, err := d.ReadRecord(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	// An earlier release's record: its podman object by name, no launch id.
	os.WriteFile(d.File(RecordFile), []byte(`{"heat_type": "pod", "endpoint": "http://127.0.0.1:2/v1/admin",
		"process": {"pid": 0}, "podman_name": "ephemeral-heat-x", "podman_socket": "unix:///s"}`), 0o600)
	got, err = d.ReadRecord()
	var legacy struct{ Name, Socket string }
	if err != nil || got.Version != 0 || got.State != Running || got.Object == nil || got.Object.Key != "podman" ||
		got.Object.Name != "ephemeral-heat-x" || got.Object.Decode(&legacy) != nil || legacy.Socket != "unix:///s" || got.Tag() != "" {
		t.Errorf("version 0: %+v %v", got, err)
	}
	// What a backend records of what it started stays under its own key,
	// as it wrote it.
	type thing struct {
		Name string `json:"name"`
		ID   string `json:"id"`
	}
	obj, err := NewObject("thing", thing{Name: "t-1", ID: "abc"})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteRecord(&Record{State: Running, LaunchID: "l", HeatType: "fake", Object: obj}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(d.File(RecordFile))
	var onDisk map[string]any
	if err := json.Unmarshal(raw, &onDisk); err != nil || onDisk["thing"] == nil || onDisk["launch_id"] != "l" {
		t.Errorf("on disk: %s %v", raw, err)
	}
	var back thing
	got, err = d.ReadRecord()
	if err != nil || got.Object == nil || got.Object.Key != "thing" || got.Describe() != "fake t-1" ||
		got.Object.Decode(&back) != nil || back.ID != "abc" {
		t.Errorf("object round trip: %+v %v", got, err)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"two objects", `{"version": 1, "a": {"name": "x"}, "b": {"name": "y"}}`, "names two things started"},
		{"object without a name", `{"version": 1, "a": {"id": "x"}}`, "has no name"},
	} {
		os.WriteFile(d.File(RecordFile), []byte(tc.body), 0o600)
		if _, err := d.ReadRecord(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if _, err := NewObject("launch_id", thing{Name: "x"}); err == nil {
		t.Errorf("an object under a key of the record itself was accepted")
	}
	if err := d.RemoveRecord(); err != nil || d.RemoveRecord() != nil {
		t.Errorf("remove: %v", err)
	}
}
