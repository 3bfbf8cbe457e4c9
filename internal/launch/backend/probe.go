package backend

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
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

// ProcessServes is the readiness of a Heat run as a host process: nil once
// the API at endpoint lists stacks, an error wrapping ErrNotReady while it
// starts, and an error with logs() once the process started has exited.
func ProcessServes(ctx context.Context, started *proc.Started, endpoint string, logs func() string) error {
	if started != nil {
		if exited, err := started.Exited(); exited {
			return fmt.Errorf("Heat exited during start-up (%v); %s", err, logs())
		}
	}
	return APIAnswers(ctx, endpoint)
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

// Live is a Heat that runs for a heat_dir, as its launch record names it.
type Live struct {
	// What names what runs it: "pid 123 (heat-all --config-file ...)",
	// "pod NAME", "container NAME".
	What string
	// Endpoint is where its API answers (the recorded endpoint).
	Endpoint string
}

// String is what runs and where, for messages.
func (l Live) String() string {
	if l.Endpoint == "" {
		return l.What
	}
	return l.What + ", at " + l.Endpoint
}

// Running tells whether the Heat a heat_dir's launch record names still
// runs, whatever the backend: its recorded process checks out
// (proc.Record.Check), or its API answers at the recorded endpoint. It
// returns nil when no record names a running Heat. This is the one answer
// to "does a Heat of this heat_dir run" for what must not work under one
// (heat_db_dump's wipe and restore). A record that cannot be read is an
// error: whether a Heat runs cannot be told.
func Running(ctx context.Context, d heatdir.Dir) (*Live, error) {
	rec, err := d.ReadRecord()
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, nil
	}
	if rec.Process != nil {
		if alive, _ := rec.Process.Check(); alive {
			what := rec.Describe()
			if len(rec.Process.Cmdline) > 0 {
				what += " (" + strings.Join(rec.Process.Cmdline, " ") + ")"
			}
			return &Live{What: what, Endpoint: rec.Endpoint}, nil
		}
	}
	if rec.Endpoint != "" && APIAnswers(ctx, rec.Endpoint) == nil {
		return &Live{What: "the Heat API of " + rec.Describe(), Endpoint: rec.Endpoint}, nil
	}
	return nil, nil
}

// NotRunning refuses op (a change to the database, such as "state:
// restored") while a Heat of d runs (Running): the error names the
// heat_dir, what runs, and how to stop it. The caller holds d's lock, so
// no launch starts one meanwhile.
func NotRunning(ctx context.Context, d heatdir.Dir, op string) error {
	live, err := Running(ctx, d)
	if err != nil {
		return fmt.Errorf("%s needs to know whether a Heat runs on heat_dir %s, and cannot: %w", op, d, err)
	}
	if live == nil {
		return nil
	}
	return fmt.Errorf("%s refused: a Heat of heat_dir %s is running (%s); it would keep the old database open and "+
		"every later write would fail. Stop it first (ephemeral_heat_launch state: stopped with this heat_dir, "+
		"or the kill_heat playbook), then run this again",
		op, d, live)
}
