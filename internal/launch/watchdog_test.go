package launch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

func buildLauncher(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ephemeral_heat_launch")
	if out, err := exec.Command("go", "build", "-o", bin, "../../modules/ephemeral_heat_launch").CombinedOutput(); err != nil {
		t.Fatalf("building the launcher: %v %s", err, out)
	}
	return bin
}

func TestWatchdogTearsDownWhenOwnerDies(t *testing.T) {
	requireHeat(t)
	bin := buildLauncher(t)
	var w warnings
	o := newOpts(t, &w)
	owner := exec.Command("sleep", "300")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	defer owner.Process.Kill()
	o.OwnerPID = owner.Process.Pid
	o.WatchdogCommand = []string{bin}
	out := run(t, o, Started)
	createStack(t, out.Endpoint, "interrupted")
	// A second launch with the same owner keeps the same watchdog.
	wd, ok := WatchdogOf(o.HeatDir)
	if !ok {
		t.Fatal("no watchdog record")
	}
	run(t, o, Started)
	if wd2, ok := WatchdogOf(o.HeatDir); !ok || wd2.PID != wd.PID {
		t.Fatal("watchdog replaced on an idempotent launch")
	}

	owner.Process.Kill()
	owner.Wait()
	// The watchdog's last steps come after the launch record is removed
	// (waiting for the API port to be free, removing its own record), so
	// the test waits for the watchdog process itself to end.
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if alive, _ := wd.Check(); !alive {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(o.HeatDir, heatdir.LogDir, heatdir.WatchdogLog))
	if alive, _ := wd.Check(); alive {
		t.Fatalf("watchdog still running 90 s after its owner died:\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(o.HeatDir, heatdir.RecordFile)); !os.IsNotExist(err) {
		t.Fatalf("launch record left after the watchdog exited (%v):\n%s", err, log)
	}
	assertNoHeat(t, o)
	list, _ := dumps.List(o.HeatDir)
	if len(list) != 1 {
		t.Fatalf("no dump saved by the watchdog:\n%s", log)
	}
	m, err := dumps.ReadManifest(list[0])
	if err != nil || m == nil || len(m.Stacks) != 1 || m.Stacks[0].Name != "interrupted" {
		t.Fatalf("dump manifest %+v %v", m, err)
	}
	if _, err := os.Stat(filepath.Join(o.HeatDir, heatdir.SQLiteFile)); !os.IsNotExist(err) {
		t.Fatalf("database not wiped:\n%s", log)
	}
}

func TestStopEndsWatchdog(t *testing.T) {
	requireHeat(t)
	bin := buildLauncher(t)
	var w warnings
	o := newOpts(t, &w)
	o.OwnerPID = os.Getpid()
	o.WatchdogCommand = []string{bin}
	run(t, o, Started)
	wd, ok := WatchdogOf(o.HeatDir)
	if !ok {
		t.Fatal("no watchdog")
	}
	run(t, o, Stopped)
	if alive, _ := wd.Check(); alive {
		t.Fatal("watchdog survived a stop")
	}
	if len(proc.GroupMembers(wd.PGID)) != 0 {
		t.Fatal("watchdog group members left")
	}
	if _, err := Run(context.Background(), Options{State: Started, HeatDir: o.HeatDir, APIPort: o.APIPort, OwnerPID: 999999999}); err == nil {
		t.Fatal("a dead owner_pid was accepted")
	}
}
