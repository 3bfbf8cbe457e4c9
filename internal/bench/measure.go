package bench

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Variant is one side of a comparison: run measures it once.
type Variant struct {
	Name string
	Run  func(ctx context.Context) (time.Duration, error)
}

// Interleave runs every variant rounds times, round-robin, rotating the
// order each round so that no variant always goes first (the machine is
// shared: background load drifts). It returns each variant's samples; a
// failed run is logged and left out.
func Interleave(ctx context.Context, log io.Writer, label string, rounds int, vs []Variant) map[string]Samples {
	out := map[string]Samples{}
	for r := 0; r < rounds; r++ {
		for i := range vs {
			v := vs[(i+r)%len(vs)]
			if ctx.Err() != nil {
				return out
			}
			d, err := v.Run(ctx)
			if err != nil {
				fmt.Fprintf(log, "  %s round %d/%d %-28s FAILED after %.1fs: %v\n", label, r+1, rounds, v.Name, d.Seconds(), err)
				continue
			}
			fmt.Fprintf(log, "  %s round %d/%d %-28s %8.3fs\n", label, r+1, rounds, v.Name, d.Seconds())
			out[v.Name] = append(out[v.Name], d)
		}
	}
	return out
}

// timed measures f.
func timed(f func() error) (time.Duration, error) {
	start := time.Now()
	err := f()
	return time.Since(start), err
}
