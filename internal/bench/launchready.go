package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/tuning"
)

// launchOurs times launch.Run (state started) in a fresh heat_dir until it
// returns (the API answered); Heat is stopped afterwards, untimed.
func launchOurs(ctx context.Context, base string) (time.Duration, error) {
	h, d, err := launchTimed(ctx, base)
	if h != nil {
		h.Close()
	}
	return d, err
}

func launchTimed(ctx context.Context, base string) (*Heat, time.Duration, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, 0, err
	}
	dir, err := os.MkdirTemp(base, "ready-")
	if err != nil {
		return nil, 0, err
	}
	o := launch.Options{State: launch.Started, HeatDir: filepath.Join(dir, "heat-launcher"), APIPort: port, Timeout: 180 * time.Second}
	start := time.Now()
	out, err := launch.Run(ctx, o)
	d := time.Since(start)
	h := &Heat{Opts: o, Endpoint: out.Endpoint}
	return h, d, err
}

// launchBare times what a launcher minimally has to do with the same
// configuration: write it, heat-manage db_sync, start heat-all, poll GET
// /stacks every 250 ms until it answers 200 (startBare).
func launchBare(ctx context.Context, base string) (time.Duration, error) {
	dir, err := os.MkdirTemp(base, "bare-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	start := time.Now()
	h, err := startBare(ctx, dir, heatdb.DB{Kind: heatdb.SQLite}, tuning.Merged())
	d := time.Since(start)
	if err != nil {
		return d, err
	}
	h.kill()
	return d, nil
}

// stopOnce launches Heat with c and times state=absent (stop and remove).
func stopOnce(ctx context.Context, base string, c HeatConfig) (time.Duration, error) {
	h, err := LaunchNative(ctx, base, c.Extra, c.Stock)
	if err != nil {
		return 0, err
	}
	o := h.Opts
	o.State = launch.Absent
	start := time.Now()
	_, err = launch.Run(ctx, o)
	d := time.Since(start)
	os.RemoveAll(filepath.Dir(h.Opts.HeatDir))
	return d, err
}

// LaunchRows measures launch-to-ready, and the stop time of each
// stop-affecting setting against stock.
func LaunchRows(ctx context.Context, env *Env, rounds int) []Row {
	base, err := os.MkdirTemp(env.Work, "launch-")
	if err != nil {
		return []Row{Unavailable("launch_ready", "launch-to-ready", "ephemeral_heat_launch", "bare db_sync + heat-all", err.Error())}
	}
	defer os.RemoveAll(base)
	s := Interleave(ctx, env.Log, "launch_ready", rounds, []Variant{
		{Name: "ours", Run: func(ctx context.Context) (time.Duration, error) { return launchOurs(ctx, base) }},
		{Name: "bare", Run: func(ctx context.Context) (time.Duration, error) { return launchBare(ctx, base) }},
	})
	rows := []Row{NewRow("launch_ready", "launch-to-ready, fresh directory, native sqlite, our heat.conf on both sides",
		"ephemeral_heat_launch (launch.Run)", "bare heat-manage db_sync + heat-all until GET /stacks answers", s["ours"], s["bare"],
		"ours also validates, writes clouds.yaml/heatrc, stops orphans, checks the port and writes the launch record; "+
			"it copies db_sync's cached result for this Heat instead of running db_sync (schema_cache; the first launch of a Heat fills the cache)")}
	for _, st := range tuning.Settings() {
		if st.Effect != tuning.EffectStop {
			continue
		}
		c := HeatConfig{Name: st.Name, Stock: true, Extra: st.Conf}
		s := Interleave(ctx, env.Log, "heat_tuning_"+st.Name, rounds, []Variant{
			{Name: "setting", Run: func(ctx context.Context) (time.Duration, error) { return stopOnce(ctx, base, c) }},
			{Name: "stock", Run: func(ctx context.Context) (time.Duration, error) { return stopOnce(ctx, base, Stock) }},
		})
		rows = append(rows, NewRow("heat_tuning_"+st.Name, "stop time (state=absent on an idle Heat) with only "+st.Title+" on top of stock",
			"stock + "+st.Title, "TripleO stock heat.conf", s["setting"], s["stock"],
			fmt.Sprintf("bimodal: heat-all either exits at once on SIGTERM or hangs in its graceful shutdown until graceful_shutdown_timeout "+
				"(%s s with the setting; stock 60 s, cut by the launcher's SIGKILL after its 15 s grace), so compare the means too: "+
				"%.2f s with the setting, %.2f s stock", st.Conf["DEFAULT"]["graceful_shutdown_timeout"], mean(s["setting"]), mean(s["stock"]))))
	}
	return rows
}

func mean(s Samples) float64 {
	if len(s) == 0 {
		return 0
	}
	var t time.Duration
	for _, d := range s {
		t += d
	}
	return (t / time.Duration(len(s))).Seconds()
}
