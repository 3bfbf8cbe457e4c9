// Command profile runs the real tripleo-heat-templates workload (package
// tests/tht) on a native heat-all started under internal/bench's sampling
// profiler (heatprof.py) and prints where heat-all's time goes during the
// create, an update of one parameter and the delete. The method and the
// results are in docs/profile-real-tht.md.
//
//	go run ./bench/profile [-controllers 1] -computes 2 [-stock] [-set DEFAULT/key=value] [-json out.json]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/bench"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stack"
	"github.com/ephemeral-heat/ephemeral-heat/internal/tuning"
)

type setFlag map[string]map[string]string

func (s setFlag) String() string { return fmt.Sprint(map[string]map[string]string(s)) }

func (s setFlag) Set(v string) error {
	sk, val, ok := strings.Cut(v, "=")
	sec, key, ok2 := strings.Cut(sk, "/")
	if !ok || !ok2 {
		return fmt.Errorf("want SECTION/key=value, got %q", v)
	}
	if s[sec] == nil {
		s[sec] = map[string]string{}
	}
	s[sec][key] = val
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
		os.Exit(1)
	}
}

func run() error {
	computes := flag.Int("computes", 2, "Compute nodes")
	controllers := flag.Int("controllers", 1, "Controller nodes")
	stock := flag.Bool("stock", false, "TripleO's stock heat.conf instead of ours")
	without := flag.String("without", "", "comma-separated tuning settings to leave out of ours (names as in internal/tuning)")
	ops := flag.String("ops", "create,update,delete", "operations to profile, in order (create, check: check mode of the update, update, delete)")
	interval := flag.Duration("interval", 5*time.Millisecond, "sampling interval")
	jsonOut := flag.String("json", "", "write the profiles (by operation) to this JSON file")
	pstats := flag.String("cprofile", "", "also run cProfile in heat-all (about twice the CPU) and write its stats to FILE.<operation>.pstats")
	set := setFlag{}
	flag.Var(set, "set", "extra heat.conf setting SECTION/key=value (repeatable)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	work, err := os.MkdirTemp("", "ephemeral-heat-profile-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	rt, err := bench.NewRealTHTNodes(filepath.Join(work, "overcloud-deploy"), *controllers, *computes)
	if err != nil {
		return err
	}
	if *pstats != "" {
		os.Setenv("HEATPROF_CPROFILE", "1")
	}
	prof, err := bench.NewProfiler(filepath.Join(work, "prof"), *interval)
	if err != nil {
		return err
	}
	extra := map[string]map[string]string(set)
	isStock := *stock
	if *without != "" {
		// Ours minus the named settings, as stock plus the others.
		isStock = true
		skip := map[string]bool{}
		for _, n := range strings.Split(*without, ",") {
			skip[n] = true
		}
		var conf map[string]map[string]string
		for _, s := range tuning.Settings() {
			if !skip[s.Name] {
				conf = tuning.Merge(conf, s.Conf)
			}
		}
		extra = tuning.Merge(conf, extra)
	}
	h, err := bench.LaunchNativeCmd(ctx, work, extra, isStock, prof.Command)
	if err != nil {
		return err
	}
	defer h.Close()
	profiles := map[string]*bench.Profile{}
	for _, op := range strings.Split(*ops, ",") {
		o := rt.OursOptions(op == "update")
		want, action := "CREATE_COMPLETE", "CREATE"
		switch op {
		case "create":
		case "check":
			// Check mode of the update below: nothing changes in Heat.
			o.CheckMode, want, action = true, "CREATE_COMPLETE", "CHECK"
			o.EnvironmentFiles = rt.Envs(true)
		case "update":
			want, action = "UPDATE_COMPLETE", "UPDATE"
		case "delete":
			o.State, want, action = stack.Absent, "", "DELETE"
		default:
			return fmt.Errorf("unknown operation %q", op)
		}
		if err := prof.Start(); err != nil {
			return err
		}
		time.Sleep(300 * time.Millisecond) // the sampler looks for the file every 20 samples
		d, err := bench.OursExpect(ctx, h.Endpoint, o, want, true)
		if err != nil {
			return fmt.Errorf("%s after %s: %w", op, d.Round(time.Millisecond), err)
		}
		p, err := prof.Stop(ctx)
		if err != nil {
			return err
		}
		profiles[op] = p
		if *pstats != "" {
			if err := prof.CopyPstats(ctx, *pstats+"."+op+".pstats"); err != nil {
				return err
			}
		}
		fmt.Printf("## %s: %s (heat_stack, %d Controller, %d Compute)\n\n", op, d.Round(time.Millisecond), *controllers, *computes)
		p.WriteReport(os.Stdout, action)
		fmt.Println()
	}
	if *jsonOut != "" {
		b, _ := json.Marshal(profiles)
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
