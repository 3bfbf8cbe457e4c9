// Command runner is `make bench`: it measures ephemeral.heat against its
// baselines (see internal/bench), prints the table and writes
// bench/results.md and bench/results.json.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/bench"
)

func main() {
	out := flag.String("out", "bench", "directory for results.md and results.json")
	templates := flag.String("templates", "bench/templates", "scale test templates")
	only := flag.String("only", "", "comma-separated row groups: "+strings.Join(bench.Groups, ","))
	rounds := flag.Int("rounds", 5, "runs per side for the quick rows (at least 5)")
	createRounds := flag.Int("create-rounds", 3, "runs per side for the stack creates")
	noTuning := flag.Bool("no-tuning", false, "skip the heat_tuning_* rows")
	realRounds := flag.Int("real-tht-rounds", 1, "rounds of the real-THT groups (minutes per create; the stock side about 5 minutes per operation)")
	scale := flag.String("scale-counts", "", "Compute counts of real_tht_scale (default 1,10,50,100)")
	stockMax := flag.Int("stock-scale-max", 1, "largest Compute count of real_tht_scale also created with the stock heat.conf")
	stockRerunMax := flag.Int("stock-rerun-max", 0, "largest Compute count of real_tht_scale whose stock full update is measured (real_tht_rerun measures it at Compute 2)")
	render := flag.Bool("render", false, "only rewrite results.md from results.json (no measurement)")
	flag.Parse()
	if *render {
		if err := bench.Rerender(*out, bench.Options{Rounds: *rounds, CreateRounds: *createRounds}); err != nil {
			fail(err)
		}
		return
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tdir, err := filepath.Abs(*templates)
	if err != nil {
		fail(err)
	}
	work, err := os.MkdirTemp("", "ephemeral-heat-bench-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(work)
	env := &bench.Env{Work: work, Templates: tdir, Module: "github.com/ephemeral-heat/ephemeral-heat", Log: os.Stderr}
	o := bench.Options{Rounds: *rounds, CreateRounds: *createRounds, NoTuning: *noTuning, RealTHTRounds: *realRounds,
		StockScaleMax: *stockMax, StockRerunMax: *stockRerunMax}
	for _, c := range strings.Split(*scale, ",") {
		if c == "" {
			continue
		}
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			fail(fmt.Errorf("-scale-counts: %q is not a positive number", c))
		}
		o.ScaleCounts = append(o.ScaleCounts, n)
	}
	if *only != "" {
		o.Only = strings.Split(*only, ",")
	}
	started := time.Now()
	rows := bench.Run(ctx, env, o)
	took := time.Since(started)
	fmt.Println(bench.Table(bench.Order(rows)))
	if ctx.Err() != nil {
		fail(fmt.Errorf("interrupted; results not written"))
	}
	if err := bench.WriteResults(*out, rows, started, took, o); err != nil {
		fail(err)
	}
	fmt.Printf("wrote %s and %s (%s)\n", filepath.Join(*out, "results.md"), filepath.Join(*out, "results.json"), took.Round(time.Second))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}
