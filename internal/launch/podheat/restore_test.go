package podheat_test

// Acceptance tests of restore_db, heat_db_dump and owner_pid with heat_type
// container and pod, through package launch as the module runs them: real
// podman, the real Heat image (see podman_test.go; missing pieces fail the
// tests).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/pod"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/podheat"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
)

type logw struct {
	mu sync.Mutex
	t  *testing.T
	w  []string
}

func (l *logw) add(f string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := fmt.Sprintf(f, a...)
	l.w = append(l.w, s)
	l.t.Logf("warning: %s", s)
}

func newLaunch(t *testing.T, heatType string, w *logw) launch.Options {
	t.Helper()
	requirePodman(t)
	sock := testSock
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "overcloud", "heat-launcher")
	opts := backend.Values{podheat.Socket.Name: sock, podheat.Image.Name: podheat.DefaultImage}
	if heatType == launch.Pod {
		opts[pod.EngineWorkers.Name] = 1
	}
	o := launch.Options{HeatType: heatType, HeatDir: dir, APIPort: port, Backend: opts, Timeout: 240 * time.Second, Warn: w.add}
	t.Cleanup(func() {
		c := o
		c.State = launch.Absent
		c.Warn = func(string, ...any) {}
		if _, err := launch.Run(context.Background(), c); err != nil {
			t.Logf("cleanup: %v", err)
		}
	})
	return o
}

func runLaunch(t *testing.T, o launch.Options, state string) launch.Outcome {
	t.Helper()
	o.State = state
	start := time.Now()
	out, err := launch.Run(context.Background(), o)
	if err != nil {
		t.Fatalf("%s %s: %v", o.HeatType, state, err)
	}
	t.Logf("%s %s (restore_db=%v): changed=%v in %s: %s", o.HeatType, state, o.RestoreDB, out.Changed,
		time.Since(start).Round(time.Millisecond), out.Msg)
	return out
}

func buildModule(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("go", "build", "-o", bin, "../../../modules/"+name).CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v %s", name, err, out)
	}
	return bin
}

// runModule runs a module binary as Ansible does (one JSON args file).
func runModule(t *testing.T, bin string, args map[string]any) map[string]any {
	t.Helper()
	f := filepath.Join(t.TempDir(), "args.json")
	b, _ := json.Marshal(args)
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(bin, f).Output()
	var res map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%s printed no JSON: %v\n%s", bin, err, out)
	}
	if res["failed"] == true {
		t.Fatalf("%s failed: %v", filepath.Base(bin), res["msg"])
	}
	return res
}

func podmanNames(t *testing.T, heatDir string) string {
	t.Helper()
	f := "label=" + podheat.LabelDir + "=" + podheat.DirHash(heatDir)
	a, _ := exec.Command("podman", "ps", "-a", "--filter", f, "--format", "{{.Names}}").CombinedOutput()
	b, _ := exec.Command("podman", "pod", "ps", "--filter", f, "--format", "{{.Name}}").CombinedOutput()
	return strings.TrimSpace(string(a) + string(b))
}

// TestPodRestoreRoundTrip: the pod's own MariaDB is published on the host's
// loopback (heat.conf host_connection), heat_db_dump dumps and wipes it
// while the pod runs, restore_db loads the dump into it before db_sync, and
// owner_pid's watchdog dumps through it and stops the pod.
func TestPodRestoreRoundTrip(t *testing.T) {
	w := &logw{t: t}
	o := newLaunch(t, launch.Pod, w)
	dumpBin, launcherBin := buildModule(t, "heat_db_dump"), buildModule(t, "ephemeral_heat_launch")
	out := runLaunch(t, o, launch.Started)
	dir := o.HeatDir

	// heat.conf: Heat's connection inside the pod, the host's beside it.
	ini, err := heatdir.ReadINI(filepath.Join(dir, heatdir.HeatConf))
	if err != nil {
		t.Fatal(err)
	}
	conn, hostConn := ini.Get("database", "connection"), ini.Get("database", "host_connection")
	if !strings.Contains(conn, "@127.0.0.1:3306/heat") || !strings.HasPrefix(hostConn, "mysql+pymysql://heat:") {
		t.Fatalf("heat.conf [database]: connection %q host_connection %q", conn, hostConn)
	}
	hd, err := heatdir.At(dir)
	if err != nil {
		t.Fatal(err)
	}
	target, err := hd.Database()
	if err != nil {
		t.Fatal(err)
	}
	host, portStr, _ := net.SplitHostPort(target.Addr)
	hostPort, _ := strconv.Atoi(portStr)
	if host != "127.0.0.1" || hostPort == 3306 || hostPort == 0 || !strings.Contains(out.DatabaseLocation, target.Addr) {
		t.Fatalf("host_connection %s, database_location %q", target.Addr, out.DatabaseLocation)
	}
	var pid podheat.Identity
	if rec, err := hd.ReadRecord(); err != nil || rec == nil || rec.DBHostPort != hostPort || rec.Object == nil ||
		rec.Object.Key != podheat.IdentityKey || rec.Object.Decode(&pid) != nil || pid.ID == "" {
		t.Fatalf("launch record: %+v (%v)", rec, err)
	}
	// Published on the host's loopback only, and held while the pod runs
	// (RemoveDatabase relies on it).
	for _, l := range proc.PortOwners(hostPort) {
		h, _, _ := net.SplitHostPort(l.Address)
		if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
			t.Errorf("the MariaDB port %d is bound to %s", hostPort, l)
		}
	}
	if proc.PortFree("127.0.0.1", hostPort) {
		t.Errorf("nothing holds the published MariaDB port %d while the pod runs", hostPort)
	}
	if st, err := os.Stat(filepath.Join(dir, heatdir.HeatConf)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("heat.conf mode: %v %v", st, err)
	}

	id := heattest.CreateGroupStack(t, out.Endpoint, "overcloud")
	before := heattest.Snapshot(t, out.Endpoint, "overcloud", id)

	// heat_db_dump on the host, as the playbook runs it: dump and wipe.
	start := time.Now()
	res := runModule(t, dumpBin, map[string]any{"heat_dir": dir, "wipe": true})
	t.Logf("heat_db_dump wipe=true: %v in %s", res["msg"], time.Since(start).Round(time.Millisecond))
	path, _ := res["path"].(string)
	if res["changed"] != true || res["wiped"] != true || path == "" || fmt.Sprint(res["stacks"]) == "[]" {
		t.Fatalf("heat_db_dump: %v", res)
	}
	if strings.Contains(fmt.Sprint(res), strings.TrimPrefix(strings.SplitN(hostConn, "@", 2)[0], "mysql+pymysql://heat:")) {
		t.Errorf("heat_db_dump's result shows the password: %v", res)
	}
	m, err := dumps.ReadManifest(path)
	if err != nil || m == nil || m.Database != "mysql" || len(m.Stacks) != 1 || m.Stacks[0].ID != id || m.Tables < 10 {
		t.Fatalf("manifest of %s: %+v %v", path, m, err)
	}
	if exists, err := heatdb.HasData(context.Background(), target.DB); (err != nil && !errors.Is(err, heatdb.ErrNoAccess)) || exists {
		t.Fatalf("the pod's database is still there after the wipe: %v %v", exists, err)
	}

	runLaunch(t, o, launch.Stopped)
	if _, err := os.Stat(filepath.Join(dir, heatdir.MariaDBDir, "mysql")); err != nil {
		t.Fatalf("stopped removed the MariaDB datadir: %v", err)
	}

	// Relaunch with restore_db and an owner whose death the watchdog handles.
	owner := exec.Command("sleep", "600")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	defer owner.Process.Kill()
	o.RestoreDB, o.OwnerPID, o.WatchdogCommand = true, owner.Process.Pid, []string{launcherBin}
	out = runLaunch(t, o, launch.Started)
	if !out.Changed || out.Restored != path {
		t.Errorf("restored %q, want %q: %+v", out.Restored, path, out)
	}
	if after := heattest.Snapshot(t, out.Endpoint, "overcloud", id); after != before {
		t.Fatalf("stack differs after restore:\nbefore %s\nafter  %s", before, after)
	}
	if _, err := os.Stat(hd.Run(heatdir.RestorePending)); !os.IsNotExist(err) {
		t.Errorf("restore.pending left: %v", err)
	}
	// A healthy pod is kept: no restore.
	again := runLaunch(t, o, launch.Started)
	if again.Changed || again.Restored != "" {
		t.Errorf("relaunch with restore_db of a healthy pod: %+v", again)
	}
	if _, ok := launch.WatchdogOf(dir); !ok {
		t.Fatalf("no watchdog for owner_pid")
	}
	// Each launch publishes the MariaDB on a new free port.
	if target, err = hd.Database(); err != nil {
		t.Fatal(err)
	}

	// The owner dies: the watchdog dumps through host_connection, drops the
	// database and stops the pod.
	wd, ok := launch.WatchdogOf(dir)
	if !ok {
		t.Fatal("no watchdog record")
	}
	owner.Process.Kill()
	owner.Wait()
	// The watchdog's work ends when its process does (the launch record
	// goes before its last steps).
	deadline := time.Now().Add(120 * time.Second)
	for time.Now().Before(deadline) {
		if alive, _ := wd.Check(); !alive {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(dir, heatdir.LogDir, heatdir.WatchdogLog))
	t.Logf("watchdog.log:\n%s", log)
	if alive, _ := wd.Check(); alive {
		t.Fatalf("the watchdog still runs 120 s after its owner died")
	}
	if _, err := os.Stat(filepath.Join(dir, heatdir.RecordFile)); !os.IsNotExist(err) {
		t.Fatalf("the watchdog did not stop the pod")
	}
	if s := podmanNames(t, dir); s != "" {
		t.Errorf("left in podman after the watchdog: %s", s)
	}
	list, _ := dumps.List(dir)
	if len(list) != 2 {
		t.Fatalf("dumps after the watchdog: %v", list)
	}
	if wm, err := dumps.ReadManifest(list[0]); err != nil || wm == nil || len(wm.Stacks) != 1 || wm.Stacks[0].ID != id {
		t.Fatalf("the watchdog's dump: %+v %v", wm, err)
	}
	if !strings.Contains(string(log), "wiped mysql://heat@"+target.Addr) {
		t.Errorf("the watchdog did not drop the database through host_connection")
	}
}

// TestContainerRestoreRoundTrip: sqlite in heat_dir, dumped and wiped as
// heat_db_dump does, restored before the container starts.
func TestContainerRestoreRoundTrip(t *testing.T) {
	w := &logw{t: t}
	o := newLaunch(t, launch.Container, w)
	dir := o.HeatDir
	out := runLaunch(t, o, launch.Started)
	id := heattest.CreateGroupStack(t, out.Endpoint, "overcloud")
	before := heattest.Snapshot(t, out.Endpoint, "overcloud", id)

	hd, err := heatdir.At(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := dumps.Dump(context.Background(), dumps.DumpOptions{HeatDir: hd, Keep: 5, Wipe: true, Warn: w.add,
		WipeFunc: func(ctx context.Context) ([]string, error) {
			return hd.DropDatabase(ctx, nil, w.add)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Changed || !r.Wiped || len(r.Stacks) != 1 || r.Stacks[0].ID != id {
		t.Fatalf("dump: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, heatdir.SQLiteFile)); !os.IsNotExist(err) {
		t.Fatalf("the sqlite database is still there after the wipe: %v", err)
	}
	runLaunch(t, o, launch.Stopped)

	o.RestoreDB = true
	out = runLaunch(t, o, launch.Started)
	if !out.Changed || out.Restored != r.Path {
		t.Errorf("restored %q, want %q", out.Restored, r.Path)
	}
	if after := heattest.Snapshot(t, out.Endpoint, "overcloud", id); after != before {
		t.Fatalf("stack differs after restore:\nbefore %s\nafter  %s", before, after)
	}
	if st, err := os.Stat(filepath.Join(dir, heatdir.SQLiteFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("restored sqlite file: %v %v", st, err)
	}
	again := runLaunch(t, o, launch.Started)
	if again.Changed || again.Restored != "" {
		t.Errorf("relaunch with restore_db of a healthy container: %+v", again)
	}
}
