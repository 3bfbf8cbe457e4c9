package launch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// A heat_dir that is not safely ours is refused by every state, and left
// exactly as it was.
func TestRefusesUnsafeHeatDir(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) func(t *testing.T)
		want  string
	}{
		{"symlink", func(t *testing.T, dir string) func(t *testing.T) {
			target := t.TempDir()
			os.Chmod(target, 0o755)
			os.MkdirAll(filepath.Dir(dir), 0o700)
			if err := os.Symlink(target, dir); err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T) {
				ents, _ := os.ReadDir(target)
				st, _ := os.Stat(target)
				if len(ents) != 0 || st.Mode().Perm() != 0o755 {
					t.Errorf("the symlink's target was touched: %d entries, mode %o", len(ents), st.Mode().Perm())
				}
			}
		}, "is a symlink"},
		{"group-writable", func(t *testing.T, dir string) func(t *testing.T) {
			os.MkdirAll(dir, 0o700)
			os.Chmod(dir, 0o770)
			return func(t *testing.T) {
				ents, _ := os.ReadDir(dir)
				if st, _ := os.Stat(dir); st.Mode().Perm() != 0o770 || len(ents) != 0 {
					t.Errorf("touched: mode %o, %d entries", st.Mode().Perm(), len(ents))
				}
			}
		}, "writable by other users"},
		{"foreign-owned", func(t *testing.T, dir string) func(t *testing.T) {
			if os.Geteuid() != 0 {
				t.Fatal("this test needs root (to give a directory to another user)")
			}
			os.MkdirAll(dir, 0o700)
			os.Chown(dir, 65534, 65534)
			return func(t *testing.T) {
				if ents, _ := os.ReadDir(dir); len(ents) != 0 {
					t.Errorf("files written into another user's heat_dir: %v", ents)
				}
			}
		}, "owned by uid 65534"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var w warnings
			o := newOpts(t, &w)
			check := tc.setup(t, o.HeatDir)
			for _, state := range []string{Started, Stopped, Absent} {
				o.State = state
				_, err := Run(context.Background(), o)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: %v, want %q", state, err, tc.want)
				}
			}
			check(t)
		})
	}
}

// sleeper starts an unrelated process (by our standards: no launch tag),
// killed when the test ends.
func sleeper(t *testing.T, argv ...string) proc.Info {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var info proc.Info
	deadline := time.Now().Add(5 * time.Second)
	for {
		info, _ = proc.Inspect(cmd.Process.Pid)
		if len(info.Cmdline) > 0 && info.Cmdline[0] == argv[0] || time.Now().After(deadline) {
			return info
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func survives(t *testing.T, p proc.Info) {
	t.Helper()
	now, err := proc.Inspect(p.PID)
	if err != nil || now.Zombie() || now.StartTicks != p.StartTicks {
		t.Fatalf("the unrelated process %d (%s) was killed", p.PID, strings.Join(p.Cmdline, " "))
	}
}

// A record planted to name an unrelated process exactly (pid, group, start
// time, boot, command line) does not get it killed: it lacks the launch's
// tag. Nor does one without a tag (an earlier release's format).
func TestPlantedRecordNamesUnrelatedProcess(t *testing.T) {
	var w warnings
	o := newOpts(t, &w)
	p := sleeper(t, "/bin/sleep", "300")
	for _, tag := range []string{proc.Tag("planted"), ""} {
		for _, state := range []string{Stopped, Absent} {
			plant(t, o.HeatDir, &heatdir.Record{State: heatdir.Running, LaunchID: "planted", HeatType: Native,
				Endpoint: fmt.Sprintf("http://127.0.0.1:%d/v1/admin", o.APIPort), BindHost: "127.0.0.1", APIPort: o.APIPort,
				Process:  &proc.Record{PID: p.PID, PGID: p.PID, StartTicks: p.StartTicks, BootID: proc.BootID(), Cmdline: p.Cmdline, Tag: tag},
				Watchdog: &heatdir.Watchdog{Process: proc.Record{PID: p.PID, PGID: p.PID, StartTicks: p.StartTicks, BootID: proc.BootID(), Cmdline: p.Cmdline, Tag: tag}}})
			run(t, o, state)
			survives(t, p)
			if _, err := os.Stat(filepath.Join(o.HeatDir, heatdir.RecordFile)); !os.IsNotExist(err) {
				t.Errorf("%s kept the planted record", state)
			}
		}
	}
	if !w.has("lacks our launch tag") || !w.has("not proven ours") {
		t.Errorf("no warning saying why the process was left alone: %v", w)
	}
}

// A process whose command line names the heat_dir's heat.conf is not ours
// for that: neither a launch after a killed one (a "starting" record) nor
// a stop with the database removed touches it.
func TestProcessMentioningHeatConfIsLeftAlone(t *testing.T) {
	requireHeat(t)
	var w warnings
	o := newOpts(t, &w)
	conf := filepath.Join(o.HeatDir, heatdir.HeatConf)
	p := sleeper(t, "/bin/sh", "-c", "sleep 300; :", "heat-all", "--config-file", conf)
	// The impostor is among the processes naming conf (its shell's child,
	// forked and not yet exec'd, may show it too under load).
	found := false
	for _, q := range proc.FindByArg(conf) {
		found = found || q.PID == p.PID
	}
	if !found {
		t.Fatalf("the impostor does not show %s in its command line", conf)
	}
	// A launcher killed before it recorded a process leaves a "starting" record.
	plant(t, o.HeatDir, &heatdir.Record{State: heatdir.Starting, LaunchID: "killed", HeatType: Native,
		BindHost: "127.0.0.1", APIPort: o.APIPort})
	run(t, o, Started)
	survives(t, p)
	run(t, o, Absent)
	survives(t, p)
}

// Two launches at once on one heat_dir: the second waits for the first and
// finds its Heat: exactly one Heat.
func TestConcurrentLaunches(t *testing.T) {
	requireHeat(t)
	bin := buildLauncher(t)
	var w warnings
	o := newOpts(t, &w)
	type result struct {
		Changed bool   `json:"changed"`
		Failed  bool   `json:"failed"`
		Msg     string `json:"msg"`
		PID     int    `json:"pid"`
	}
	results := make([]result, 2)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out, err := exec.Command(bin, "--heat-dir", o.HeatDir, "--api-port", fmt.Sprint(o.APIPort), "--json").Output()
			if err := json.Unmarshal(out, &results[i]); err != nil {
				results[i] = result{Failed: true, Msg: fmt.Sprintf("%v: %s", err, out)}
			}
			_ = err
		}(i)
	}
	wg.Wait()
	a, b := results[0], results[1]
	if a.Failed || b.Failed {
		t.Fatalf("a launch failed: %+v %+v", a, b)
	}
	if a.Changed == b.Changed || a.PID != b.PID || a.PID == 0 {
		t.Fatalf("want one start and one 'already running' on the same Heat: %+v %+v", a, b)
	}
	groups := map[int]bool{}
	for _, p := range proc.FindByArg(filepath.Join(o.HeatDir, heatdir.HeatConf)) {
		groups[p.PGID] = true
	}
	if len(groups) != 1 {
		t.Fatalf("%d Heat process groups run for one heat_dir", len(groups))
	}
}

// A launcher killed by SIGKILL in the middle of a start (here during
// db_sync, the longest step before Heat is recorded) leaves a "starting"
// record and what it started; the next launch finds that by its launch tag,
// stops it, and starts one Heat.
func TestLauncherKilledMidStart(t *testing.T) {
	requireHeat(t)
	bin := buildLauncher(t)
	var w warnings
	o := newOpts(t, &w)
	d, _ := heatdir.At(o.HeatDir)
	// Without the schema cache: db_sync is the window this test kills in.
	cmd := exec.Command(bin, "--heat-dir", o.HeatDir, "--api-port", fmt.Sprint(o.APIPort), "--no-schema-cache", "--json")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var orphans []proc.Info
	deadline := time.Now().Add(2 * time.Minute)
	for len(orphans) == 0 && time.Now().Before(deadline) {
		if rec, _ := d.ReadRecord(); rec != nil && rec.State == heatdir.Starting {
			orphans = proc.FindTagged(rec.Tag())
		}
		if len(orphans) == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	if len(orphans) == 0 {
		t.Fatal("never saw the launch start something before recording Heat")
	}
	t.Logf("killed the launcher while %s ran", strings.Join(orphans[0].Cmdline, " "))
	out := run(t, o, Started)
	if !out.Changed {
		t.Fatalf("relaunch: %+v", out)
	}
	for _, p := range orphans {
		if now, err := proc.Inspect(p.PID); err == nil && !now.Zombie() && now.StartTicks == p.StartTicks {
			t.Errorf("pid %d (%s) of the killed launch still runs", p.PID, strings.Join(p.Cmdline, " "))
		}
	}
	groups := map[int]bool{}
	for _, p := range proc.FindByArg(filepath.Join(o.HeatDir, heatdir.HeatConf)) {
		groups[p.PGID] = true
	}
	if len(groups) != 1 {
		t.Fatalf("%d process groups use the heat_dir's heat.conf", len(groups))
	}
}

// What a launch started before it could record it (a heat-all, here a
// stand-in) is found by the launch id of the "starting" record it left, and
// stopped by the next run (a launch removes it the same way first).
func TestUnrecordedProcessOfKilledLaunch(t *testing.T) {
	var w warnings
	o := newOpts(t, &w)
	plant(t, o.HeatDir, &heatdir.Record{State: heatdir.Starting, LaunchID: "killed", HeatType: Native,
		BindHost: "127.0.0.1", APIPort: o.APIPort})
	s, err := proc.Start([]string{"/bin/sleep", "300"}, o.HeatDir, filepath.Join(t.TempDir(), "log"), nil, proc.Tag("killed"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proc.StopGroup(s.Record.PGID, time.Second, time.Second) })
	if out := run(t, o, Stopped); !out.Changed {
		t.Errorf("stop found nothing to do: %+v", out)
	}
	if alive, _ := s.Record.Check(); alive {
		t.Fatal("the process of the killed launch still runs")
	}
}

// tmpfs mounts a small tmpfs for the test (root only), unmounted at the end.
func tmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root (to mount a small tmpfs as a full disk)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fill writes into dir until the file system is full; the returned
// function frees the space.
func fill(t *testing.T, dir string) func() {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, size := range []int{1 << 20, 4096, 1} {
		buf := make([]byte, size)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
	}
	return func() { os.Remove(p) }
}

// A full disk fails the launch with nothing left running or recorded; the
// next launch, with space again, works.
func TestFullDiskAtLaunch(t *testing.T) {
	requireHeat(t)
	var w warnings
	o := newOpts(t, &w)
	o.HeatDir = filepath.Join(tmpfs(t, "64m"), "heat-launcher")
	t.Cleanup(func() {
		c := o
		c.State, c.Warn = Absent, func(string, ...any) {}
		Run(context.Background(), c)
	})
	d, _ := heatdir.At(o.HeatDir)
	d.Ensure()
	free := fill(t, filepath.Dir(o.HeatDir))
	_, err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("launch on a full disk: %v", err)
	}
	if rec, _ := d.ReadRecord(); rec != nil {
		t.Errorf("a record was left: %+v", rec)
	}
	assertNoHeat(t, o)
	free()
	if out := run(t, o, Started); !out.Changed {
		t.Fatalf("relaunch: %+v", out)
	}
}

// The disk fills while Heat runs: a relaunch for a new owner cannot record
// its watchdog, so it stops it (nothing runs unrecorded); with space again,
// the next launch records one.
func TestFullDiskAtWatchdog(t *testing.T) {
	requireHeat(t)
	bin := buildLauncher(t)
	var w warnings
	o := newOpts(t, &w)
	o.HeatDir = filepath.Join(tmpfs(t, "64m"), "heat-launcher")
	t.Cleanup(func() {
		c := o
		c.State, c.Warn = Absent, func(string, ...any) {}
		Run(context.Background(), c)
	})
	o.WatchdogCommand = []string{bin}
	ownerA := sleeper(t, "/bin/sleep", "300")
	o.OwnerPID = ownerA.PID
	first := run(t, o, Started)
	wdA, ok := WatchdogOf(o.HeatDir)
	if !ok {
		t.Fatal("no watchdog")
	}
	free := fill(t, filepath.Dir(o.HeatDir))
	ownerB := sleeper(t, "/bin/sleep", "301")
	o.OwnerPID = ownerB.PID
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("relaunch with a full disk: %v", err)
	}
	if alive, _ := wdA.Check(); alive {
		t.Error("the first owner's watchdog still runs")
	}
	d, _ := heatdir.At(o.HeatDir)
	rec, _ := d.ReadRecord()
	for _, p := range proc.FindTagged(rec.Tag()) {
		if p.PGID != first.PID {
			t.Errorf("an unrecorded process of the launch runs: pid %d (%s)", p.PID, strings.Join(p.Cmdline, " "))
		}
	}
	free()
	again := run(t, o, Started)
	if again.PID != first.PID {
		t.Errorf("Heat was restarted: %+v", again)
	}
	if wd, ok := WatchdogOf(o.HeatDir); !ok {
		t.Error("no watchdog recorded with space again")
	} else if alive, _ := wd.Check(); !alive {
		t.Error("the recorded watchdog does not run")
	}
}
