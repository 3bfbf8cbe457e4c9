package launch

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
)

// resetPerStack bounds how long Heat may take to reset one interrupted
// stack, on top of the launch timeout. Heat's legacy engine resets them one
// after another when it starts, each after asking the engine that held its
// lock whether it is alive (engine_life_check_timeout, 2 s): measured here,
// 12 interrupted stacks (a create killed with 10 nested stacks in progress)
// took 26 s after the API answered.
const resetPerStack = 3 * time.Second

// settle waits until Heat has reset the stacks an interruption left
// IN_PROGRESS (a Heat killed during a create or update, a dump taken then):
// until then an update of such a stack fails with "another operation in
// progress". Which stacks those are is read from the database: the ones
// Heat's legacy engine resets (nested ones too); the wait is on the API.
// It returns the stacks that were reset.
func (l *launcher) settle(ctx context.Context, rec *heatdir.Record) ([]heatdb.Stack, error) {
	db, err := l.d.Database()
	if err != nil {
		return nil, err
	}
	interrupted, err := heatdb.InterruptedStacks(ctx, db.DB)
	if err != nil {
		return nil, fmt.Errorf("looking for stacks an interruption left in progress: %w", err)
	}
	if len(interrupted) == 0 {
		return nil, nil
	}
	c, err := heatapi.NewNoAuth(rec.Endpoint)
	if err != nil {
		return nil, err
	}
	bound := l.o.Timeout + time.Duration(len(interrupted))*resetPerStack
	deadline := time.Now().Add(bound)
	for {
		lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		inProgress, err := c.ListStacks(lctx, heatapi.StackListOpts{ShowNested: true, Status: "IN_PROGRESS"})
		cancel()
		var left []string
		if err == nil {
			busy := map[string]string{}
			for _, s := range inProgress {
				busy[s.ID] = s.Status
			}
			for _, s := range interrupted {
				if st, ok := busy[s.ID]; ok {
					left = append(left, fmt.Sprintf("%s (%s)", s.Name, st))
				}
			}
			if len(left) == 0 {
				for _, s := range interrupted {
					l.o.Warn("stack %s was %s when its Heat last stopped: Heat set it to FAILED; the next heat_stack run updates it", s.Name, s.Status)
				}
				return interrupted, nil
			}
		}
		if time.Now().After(deadline) {
			why := fmt.Sprintf("%d of them are still in progress: %s", len(left), strings.Join(left, ", "))
			if err != nil {
				why = "listing them failed: " + err.Error()
			}
			return nil, fmt.Errorf("Heat runs, but the %d stack(s) that an interruption had left IN_PROGRESS were not reset to FAILED "+
				"within %s (Heat resets each when it starts, about 2 s apiece); %s. Until they are, an update of them fails "+
				"with \"another operation in progress\": look at %s, and raise timeout if this host is slow",
				len(interrupted), bound.Round(time.Second), why, l.d.File(heatdir.LogDir))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for Heat to reset interrupted stacks: %w", ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// checkRestoredStacks compares the stacks Heat's API lists with those of the
// restored dump. A stack the dump holds IN_PROGRESS may show FAILED with the
// same action: Heat reset it when it started (settle).
func (l *launcher) checkRestoredStacks(ctx context.Context, endpoint string, want []dumps.Stack) error {
	c, err := heatapi.NewNoAuth(endpoint)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	stacks, err := c.ListStacks(ctx, heatapi.StackListOpts{})
	if err != nil {
		return fmt.Errorf("listing its stacks failed: %w", err)
	}
	got := make([]dumps.Stack, 0, len(stacks))
	status := map[string]string{}
	for _, s := range stacks {
		got = append(got, dumps.Stack{ID: s.ID, Name: s.Name, Status: s.Status})
		status[s.ID] = s.Status
	}
	expect := make([]dumps.Stack, 0, len(want))
	for _, s := range want {
		if action, ok := strings.CutSuffix(s.Status, "_IN_PROGRESS"); ok && status[s.ID] == action+"_FAILED" {
			s.Status = status[s.ID]
		}
		expect = append(expect, s)
	}
	return dumps.SameStacks(expect, got)
}
