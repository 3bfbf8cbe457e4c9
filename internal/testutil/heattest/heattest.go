// Package heattest starts a real, native ephemeral Heat for tests through the
// launch package, on a free loopback port, and removes it when the test ends.
package heattest

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/launch"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// Heat is a running test Heat.
type Heat struct {
	Dir      string // heat_dir
	Endpoint string // http://127.0.0.1:PORT/v1/admin
	Port     int
	PID      int
}

// RequireHeat fails the test, saying how to install Heat, when it is missing.
func RequireHeat(t testing.TB) {
	t.Helper()
	for _, c := range []string{"heat-all", "heat-manage"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("%s is not installed: %s", c, launch.InstallHint)
		}
	}
}

// Start launches a native Heat with sqlite in a temporary heat_dir. extra is
// added to heat.conf (may be nil). The Heat is stopped and its database
// removed when the test ends, even if it fails.
func Start(t testing.TB, extra map[string]map[string]string) *Heat {
	t.Helper()
	RequireHeat(t)
	dir := filepath.Join(t.TempDir(), "heat-launcher")
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	opts := launch.Options{State: launch.Started, HeatDir: dir, APIPort: port, ExtraConf: extra,
		Timeout: 180 * time.Second, Warn: func(f string, a ...any) { t.Logf("warning: "+f, a...) }}
	t.Cleanup(func() {
		o := opts
		o.State, o.NoDump = launch.Absent, true // a test's Heat: nothing to keep
		if _, err := launch.Run(context.Background(), o); err != nil {
			t.Errorf("stopping test Heat in %s: %v", dir, err)
		}
	})
	out, err := launch.Run(context.Background(), opts)
	if err != nil {
		t.Fatalf("launching Heat: %v", err)
	}
	return &Heat{Dir: dir, Endpoint: out.Endpoint, Port: port, PID: out.PID}
}
