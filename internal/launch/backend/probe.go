package backend

import (
	"context"
	"fmt"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
)

// probeTimeout bounds one readiness probe.
const probeTimeout = 5 * time.Second

// APIAnswers returns nil when the API at endpoint lists stacks, else an
// error wrapping ErrNotReady.
func APIAnswers(ctx context.Context, endpoint string) error {
	c, err := heatapi.NewNoAuth(endpoint)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if _, err := c.ListStacks(ctx, heatapi.StackListOpts{}); err != nil {
		return fmt.Errorf("%w: %v", ErrNotReady, err)
	}
	return nil
}

// EnginesUp returns nil when the API answers and at least engines engines
// consume RPC (GET /services is served by an engine and lists those up),
// else an error wrapping ErrNotReady.
func EnginesUp(ctx context.Context, endpoint string, engines int) error {
	c, err := heatapi.NewNoAuth(endpoint)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*probeTimeout)
	defer cancel()
	svcs, err := c.ListServices(ctx)
	if err != nil {
		return fmt.Errorf("%w: the API does not answer: %v", ErrNotReady, err)
	}
	up := 0
	for _, s := range svcs {
		if s.Binary == "heat-engine" && s.Status == "up" {
			up++
		}
	}
	if up < engines {
		return fmt.Errorf("%w: %d of %d engines are up", ErrNotReady, up, engines)
	}
	return nil
}

// Running tells whether the Heat a heat_dir's launch record names still
// runs, whatever the backend: its recorded process checks out, or its API
// answers at the recorded endpoint. It returns that endpoint.
func Running(ctx context.Context, d heatdir.Dir) (bool, string) {
	rec, err := d.ReadRecord()
	if err != nil || rec == nil || rec.Endpoint == "" {
		return false, ""
	}
	if rec.Process != nil {
		if alive, _ := rec.Process.Check(); alive {
			return true, rec.Endpoint
		}
	}
	return APIAnswers(ctx, rec.Endpoint) == nil, rec.Endpoint
}
