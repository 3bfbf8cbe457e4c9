package launch

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/native"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

type warnings []string

func (w *warnings) add(f string, a ...any) { *w = append(*w, fmt.Sprintf(f, a...)) }
func (w warnings) has(s string) bool {
	for _, x := range w {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

func newOpts(t *testing.T, w *warnings) Options {
	t.Helper()
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "overcloud", "heat-launcher")
	o := Options{State: Started, HeatDir: dir, APIPort: port, Timeout: 120 * time.Second, Warn: w.add}
	t.Cleanup(func() {
		c := o
		c.State = Absent
		c.Warn = func(string, ...any) {}
		Run(context.Background(), c)
	})
	return o
}

func run(t *testing.T, o Options, state string) Outcome {
	t.Helper()
	o.State = state
	out, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("%s: %v", state, err)
	}
	return out
}

func httpStatus(url string) int {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func createStack(t *testing.T, endpoint, name string) {
	t.Helper()
	body := fmt.Sprintf(`{"stack_name": %q, "template": {"heat_template_version": "2016-10-14", "resources": {"r": {"type": "OS::Heat::None"}}}}`, name)
	resp, err := http.Post(endpoint+"/stacks", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("create stack: %d %s", resp.StatusCode, b)
	}
}

func stackListed(t *testing.T, endpoint, name string) bool {
	t.Helper()
	resp, err := http.Get(endpoint + "/stacks")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return strings.Contains(string(b), `"stack_name": "`+name+`"`)
}

func assertNoHeat(t *testing.T, o Options) {
	t.Helper()
	if ps := proc.FindByArg(filepath.Join(o.HeatDir, heatdir.HeatConf)); len(ps) != 0 {
		t.Fatalf("Heat processes left: %+v", ps)
	}
	if !proc.PortFree("127.0.0.1", o.APIPort) {
		t.Fatalf("port %d still in use", o.APIPort)
	}
}

func TestNativeLifecycle(t *testing.T) {
	requireHeat(t)
	var w warnings
	o := newOpts(t, &w)

	// Check mode on a fresh dir changes nothing.
	co := o
	co.CheckMode = true
	if out := run(t, co, Started); !out.Changed {
		t.Errorf("check mode should report a change")
	}
	if _, err := os.Stat(o.HeatDir); !os.IsNotExist(err) {
		t.Fatalf("check mode created %s", o.HeatDir)
	}

	out := run(t, o, Started)
	if !out.Changed || out.PID == 0 || out.Endpoint != fmt.Sprintf("http://127.0.0.1:%d/v1/admin", o.APIPort) {
		t.Fatalf("first launch: %+v", out)
	}
	running := View{State: Started, HeatType: Native, Endpoint: out.Endpoint, Database: SQLite}
	if out.Before != (View{State: Absent}) || out.After != running {
		t.Errorf("first launch's diff: %+v -> %+v", out.Before, out.After)
	}
	if code := httpStatus(out.Endpoint + "/stacks"); code != 200 {
		t.Fatalf("API answered %d", code)
	}
	// Our sqlite pool plugin is in use: heat-all keeps its database open
	// between requests (SQLAlchemy's NullPool would have closed it).
	if !holdsOpen(t, out.PID, filepath.Join(o.HeatDir, heatdir.SQLiteFile)) {
		t.Errorf("heat-all (pid %d) holds no open connection to its sqlite database: the %s plugin is not in use; log:\n%s",
			out.PID, heatdir.SQLitePoolPlugin, logTail(o.HeatDir))
	}
	// Modes: dirs 0700, every file 0600 (Heat's own logs and database too).
	filepath.Walk(o.HeatDir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		want := os.FileMode(0o600)
		if info.IsDir() {
			want = 0o700
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s has mode %o, want %o", p, info.Mode().Perm(), want)
		}
		return nil
	})
	for _, f := range []string{heatdir.HeatConf, heatdir.APIPaste, heatdir.TokenFile, heatdir.CloudsYAML, heatdir.HeatRC, heatdir.SQLiteFile, heatdir.RecordFile, heatdir.LockFile} {
		if _, err := os.Stat(filepath.Join(o.HeatDir, f)); err != nil {
			t.Errorf("missing artifact: %v", err)
		}
	}
	// The API listens on loopback only.
	for _, l := range proc.PortOwners(o.APIPort) {
		if !strings.HasPrefix(l.Address, "127.0.0.1:") {
			t.Errorf("API listens on %s", l.Address)
		}
	}

	again := run(t, o, Started)
	if again.Changed || again.PID != out.PID {
		t.Fatalf("second launch not idempotent: %+v", again)
	}

	// The openstack client works with the written clouds.yaml.
	if _, err := exec.LookPath("openstack"); err != nil {
		t.Fatal("openstack is not installed: apt-get install -y python3-openstackclient python3-heatclient (or make deps)")
	}
	createStack(t, out.Endpoint, "kept")
	cmd := exec.Command("openstack", "--os-cloud", "heat", "stack", "list", "-f", "value", "-c", "Stack Name")
	cmd.Env = append(os.Environ(), "OS_CLIENT_CONFIG_FILE="+out.CloudsYAML)
	b, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "kept") {
		t.Fatalf("openstack stack list: %v: %s", err, b)
	}

	// Stop in check mode leaves Heat running.
	if o2 := run(t, co, Stopped); !o2.Changed || httpStatus(out.Endpoint+"/stacks") != 200 {
		t.Fatalf("check-mode stop changed something")
	}
	if st := run(t, o, Stopped); !st.Changed || st.Before != running || st.After != (View{State: Stopped, Database: SQLite}) {
		t.Errorf("stop did not report a change, or its diff is wrong: %+v", st)
	}
	assertNoHeat(t, o)
	if st := run(t, o, Stopped); st.Changed {
		t.Errorf("second stop reported a change")
	}
	// stopped keeps the database: relaunch sees the stack.
	out = run(t, o, Started)
	if !stackListed(t, out.Endpoint, "kept") {
		t.Fatalf("stack lost across stop/start")
	}
	// absent dumps the database, then removes it and keeps the other
	// artifacts (the dump among them), as TripleO does.
	ab := run(t, o, Absent)
	if !ab.Changed || len(ab.Removed) == 0 || ab.Dumped == "" {
		t.Fatalf("absent: %+v", ab)
	}
	if ab.Before != running || ab.After != (View{State: Absent}) {
		t.Errorf("absent's diff: %+v -> %+v", ab.Before, ab.After)
	}
	if m, err := dumps.ReadManifest(ab.Dumped); err != nil || m == nil || len(m.Stacks) != 1 || m.Stacks[0].Name != "kept" {
		t.Fatalf("the dump absent wrote: %+v %v", m, err)
	}
	assertNoHeat(t, o)
	if _, err := os.Stat(filepath.Join(o.HeatDir, heatdir.SQLiteFile)); !os.IsNotExist(err) {
		t.Fatalf("database still there")
	}
	if _, err := os.Stat(filepath.Join(o.HeatDir, heatdir.HeatConf)); err != nil {
		t.Fatalf("absent removed heat.conf: %v", err)
	}
	if ab := run(t, o, Absent); ab.Changed {
		t.Errorf("second absent reported a change: %+v", ab)
	}
	if len(w) != 0 {
		t.Errorf("unexpected warnings: %v", w)
	}
}

func TestStaleRecordAfterKill9(t *testing.T) {
	requireHeat(t)
	var w warnings
	o := newOpts(t, &w)
	first := run(t, o, Started)
	if err := syscall.Kill(-first.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	proc.StopGroup(first.PID, time.Second, 5*time.Second) // wait until gone
	second := run(t, o, Started)
	if !second.Changed || second.PID == first.PID {
		t.Fatalf("not restarted: %+v", second)
	}
	if !w.has("stale launch record") || !(w.has("is gone") || w.has("has exited")) {
		t.Errorf("no stale-record warning: %v", w)
	}
	if httpStatus(second.Endpoint+"/stacks") != 200 {
		t.Fatal("restarted Heat does not answer")
	}
}

func TestRecycledPidIsNotHeat(t *testing.T) {
	requireHeat(t)
	var w warnings
	o := newOpts(t, &w)
	// A record whose pid now belongs to an unrelated process.
	sleeper := exec.Command("sleep", "300")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleeper.Process.Kill()
	info, _ := proc.Inspect(sleeper.Process.Pid)
	plant(t, o.HeatDir, &heatdir.Record{State: heatdir.Running, LaunchID: "planted", HeatType: Native, Endpoint: "http://127.0.0.1:1/v1/admin",
		BindHost: "127.0.0.1", APIPort: o.APIPort, Process: &proc.Record{PID: info.PID, PGID: info.PID, StartTicks: info.StartTicks + 7,
			BootID: proc.BootID(), Cmdline: []string{"/usr/bin/python3", "/usr/bin/heat-all"}, Tag: proc.Tag("planted")}})
	st := run(t, o, Stopped)
	if !w.has("now belongs to another process") {
		t.Errorf("no warning about the recycled pid: %v", w)
	}
	// Still the same process (pid and start time; its command line may have
	// been read before the exec).
	if now, err := proc.Inspect(info.PID); err != nil || now.Zombie() || now.StartTicks != info.StartTicks {
		t.Fatal("the unrelated process was killed")
	}
	if _, err := os.Stat(filepath.Join(o.HeatDir, heatdir.RecordFile)); !os.IsNotExist(err) {
		t.Errorf("stale record kept after stop (%+v)", st)
	}
}

func TestConfigChangeRestarts(t *testing.T) {
	requireHeat(t)
	var w warnings
	o := newOpts(t, &w)
	first := run(t, o, Started)
	o2 := o
	p, _ := proc.FreePort()
	o2.APIPort = p
	second := run(t, o2, Started)
	if !second.Changed || second.PID == first.PID || !w.has("other settings") {
		t.Fatalf("no restart on config change: %+v %v", second, w)
	}
	if httpStatus(second.Endpoint+"/stacks") != 200 || !proc.PortFree("127.0.0.1", o.APIPort) {
		t.Fatal("old Heat still up or new one not answering")
	}
	c := o2
	c.State = Absent
	Run(context.Background(), c)
}

// fakeHeat writes heat-all and heat-manage scripts into a directory.
func fakeHeat(t *testing.T, heatAll string) string {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "heat-all"), []byte("#!/bin/sh\n"+heatAll+"\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "heat-manage"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
	return filepath.Join(dir, "heat-all")
}

func TestStartErrors(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, o *Options)
		wantErr []string
	}{
		{"heat not installed", func(t *testing.T, o *Options) {
			o.Backend = backend.Values{native.HeatAll.Name: "/nonexistent/heat-all"}
		},
			[]string{"was not found", "apt-get install", "heat-common"}},
		{"heat exits during start-up", func(t *testing.T, o *Options) {
			o.Backend = backend.Values{native.HeatAll.Name: fakeHeat(t, "echo 'CRITICAL heat [-] config is broken: no foo'; exit 3")}
		}, []string{"exited during start-up", "exit status 3", "config is broken: no foo", "heat-all.stdout.log"}},
		{"readiness timeout", func(t *testing.T, o *Options) {
			o.Backend = backend.Values{native.HeatAll.Name: fakeHeat(t, "echo waiting forever; exec sleep 300")}
			o.Timeout = 2 * time.Second
		}, []string{"did not answer", "within 2s", "raise timeout", "waiting forever"}},
		{"port in use", func(t *testing.T, o *Options) {
			o.Backend = backend.Values{native.HeatAll.Name: fakeHeat(t, "exit 0")}
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", o.APIPort))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
		}, []string{fmt.Sprintf("already in use by pid %d", os.Getpid()), "choose another api_port"}},
		{"mysql without url", func(t *testing.T, o *Options) { o.Database = MySQL }, []string{"database: mysql needs database_url"}},
		{"sqlite with url", func(t *testing.T, o *Options) { o.DatabaseURL = "mysql://a:b@h/" }, []string{"database_url is only used with database: mysql"}},
		{"transport_url with container", func(t *testing.T, o *Options) {
			o.HeatType = Container
			o.Backend = backend.Values{"transport_url": "rabbit://a:b@h/"}
		},
			[]string{"transport_url is only used with heat_type: pod (heat-all runs its RPC in-process)"}},
		// Each backend's options, refused with another heat_type, saying
		// which ones use them.
		{"podman options with native", func(t *testing.T, o *Options) {
			o.Backend = backend.Values{"image": "i", "engine_workers": 2, "podman_socket": "unix:///s"}
		}, []string{"engine_workers is only used with heat_type: pod", "image is only used with heat_type: container or pod",
			"podman_socket is only used with heat_type: container or pod"}},
		{"pod options with container", func(t *testing.T, o *Options) {
			o.HeatType = Container
			o.Backend = backend.Values{"api_image": "i", "heat_all_command": "/usr/bin/heat-all"}
		}, []string{"api_image is only used with heat_type: pod", "heat_all_command is only used with heat_type: native"}},
		{"restore without a dump", func(t *testing.T, o *Options) { o.RestoreDB = true }, []string{"restore_db: no database dump", "heat_db_dump state=dumped"}},
		{"relative dir", func(t *testing.T, o *Options) { o.HeatDir = "rel/dir" }, []string{"heat_dir must be an absolute path"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var w warnings
			o := newOpts(t, &w)
			tc.setup(t, &o)
			_, err := Run(context.Background(), o)
			if err == nil {
				t.Fatal("expected an error")
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error lacks %q:\n%v", s, err)
				}
			}
			if filepath.IsAbs(o.HeatDir) {
				if ps := proc.FindByArg(filepath.Join(o.HeatDir, heatdir.HeatConf)); len(ps) != 0 {
					t.Errorf("process left after failed start: %+v", ps)
				}
				if _, err := os.Stat(filepath.Join(o.HeatDir, heatdir.RecordFile)); !os.IsNotExist(err) {
					t.Errorf("launch record left after failed start")
				}
			}
		})
	}
}

func requireHeat(t *testing.T) {
	t.Helper()
	for _, c := range []string{"heat-all", "heat-manage"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("%s is not installed: %s", c, InstallHint)
		}
	}
}

// holdsOpen reports whether process pid has file open.
func holdsOpen(t *testing.T, pid int, file string) bool {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && target == file {
			return true
		}
	}
	return false
}

// plant writes a launch record into a heat_dir (created private).
func plant(t *testing.T, dir string, rec *heatdir.Record) {
	t.Helper()
	d, err := heatdir.At(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Ensure(); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteRecord(rec); err != nil {
		t.Fatal(err)
	}
}

// logTail returns the end of heat-all's log in a heat_dir, for failure messages.
func logTail(dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, heatdir.LogDir, "heat-all.log"))
	return proc.TailLines(b, 20)
}
