// Package bench measures ephemeral.heat against its baselines in one run:
// stack create times under Heat configurations, launch-to-ready, template
// processing, database dumps and config-download rendering. It reports
// medians, min-max and ratios, as Markdown and JSON.
package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/native"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stack"
)

// Heat is a launched native Heat for one measurement.
type Heat struct {
	Opts     launch.Options
	Endpoint string
	// PID is heat-all's (native Heat; 0 otherwise).
	PID int
}

// LaunchNative starts a native Heat with extra heat.conf settings in a fresh
// directory under base.
func LaunchNative(ctx context.Context, base string, extra map[string]map[string]string, stock bool) (*Heat, error) {
	return LaunchNativeCmd(ctx, base, extra, stock, "")
}

// LaunchNativeCmd is LaunchNative with another heat-all command ("" for heat-all).
func LaunchNativeCmd(ctx context.Context, base string, extra map[string]map[string]string, stock bool, heatAll string) (*Heat, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(base, "heat-")
	if err != nil {
		return nil, err
	}
	o := launch.Options{State: launch.Started, HeatDir: filepath.Join(dir, "heat-launcher"), APIPort: port,
		ExtraConf: extra, StockConf: stock, Timeout: 180 * time.Second, Backend: backend.Values{native.HeatAll.Name: heatAll}}
	out, err := launch.Run(ctx, o)
	if err != nil {
		return nil, err
	}
	return &Heat{Opts: o, Endpoint: out.Endpoint, PID: out.PID}, nil
}

// Close stops Heat and removes its directory.
func (h *Heat) Close() {
	o := h.Opts
	o.State = launch.Absent
	launch.Run(context.Background(), o)
	os.RemoveAll(filepath.Dir(h.Opts.HeatDir))
}

// CreateTime creates a stack and returns the time until CREATE_COMPLETE.
func CreateTime(ctx context.Context, endpoint, name, template string, envs []string, params map[string]any) (time.Duration, error) {
	c, err := heatapi.NewNoAuth(endpoint)
	if err != nil {
		return 0, err
	}
	req, err := stack.Prepare(stack.Options{Name: name, Template: template, EnvironmentFiles: envs, Parameters: params,
		Timeout: 60, Wait: true, PollInterval: 200 * time.Millisecond})
	if err != nil {
		return 0, err
	}
	start := time.Now()
	out, err := req.Run(ctx, c)
	d := time.Since(start)
	if err != nil {
		return d, err
	}
	if out.Stack == nil || out.Stack.Status != "CREATE_COMPLETE" {
		return d, fmt.Errorf("stack %s did not complete: %+v", name, out.Stack)
	}
	return d, nil
}
