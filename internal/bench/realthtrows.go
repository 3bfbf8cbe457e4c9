package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stack"
	"github.com/ephemeral-heat/ephemeral-heat/internal/tuning"
)

// RealTHTComputes is the Compute count of the real-THT rows (with one
// Controller: tests/tht's default overcloud, 647 resources, 275 stacks).
const RealTHTComputes = 2

// realTHTOps are the operations of a real-THT round, in order, each on the
// state the previous one left.
var realTHTOps = []struct{ key, ours, stock string }{
	{"create", "heat_stack creates the stack", "heatclient stacks.create, waited as tripleoclient does"},
	{"rerun", "heat_stack with identical inputs (decides from the inputs Heat stored: no update)", "heatclient full update (PUT) with identical inputs, as tripleoclient's stack update did"},
	{"check", "heat_stack check mode with one changed parameter (inputs compared, then Heat's update preview)", "heatclient plain update preview (PUT .../preview) with the changed parameter, on the same Heat"},
	{"update", "heat_stack applies one changed parameter", "heatclient full update with the changed parameter"},
	{"delete", "heat_stack state=absent", "heatclient stacks.delete, waited on events"},
}

// opSample is one timed operation and what heat-all used meanwhile.
type opSample struct {
	d       time.Duration
	cpu     time.Duration // heat-all's CPU time over the operation
	rssPeak int64         // heat-all's peak resident memory (kB) so far
	dbBytes int64         // the sqlite database's size after the operation (0: not read)
}

// checkPairs is how many check-mode samples a round of ours takes, each
// paired with Heat's plain preview on the same Heat, interleaved: check
// mode reads the stack and asks for a preview, changing nothing, so the
// pairs compare exactly what the client adds to the time Heat's own
// preview takes, on one stack in one state.
const checkPairs = 3

// checkBase is the key of the plain previews of a round of ours.
const checkBase = "check_base"

// realTHTRound launches a fresh Heat (ours, or TripleO's stock heat.conf),
// runs the operations of realTHTOps with heat_stack (ours) or heatclient
// (stock) and returns their samples. Check mode runs on our Heat only,
// checkPairs times, each paired with heatclient's plain preview (checkBase).
// It stops at the first failure.
func realTHTRound(ctx context.Context, base string, rt *RealTHT, stockSide bool) (map[string][]opSample, error) {
	c := Ours
	if stockSide {
		c = Stock
	}
	h, err := Launchers[0].Launch(ctx, base, c)
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	defer h.Close()
	mon := newProcMonitor(h)
	out := map[string][]opSample{}
	measure := func(key string, run func() (time.Duration, error)) error {
		cpu0 := mon.cpu()
		d, err := run()
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		out[key] = append(out[key], opSample{d: d, cpu: mon.cpu() - cpu0, rssPeak: mon.rssPeak()})
		return nil
	}
	for _, op := range realTHTOps {
		var err error
		switch {
		case op.key == "check" && stockSide:
			continue
		case op.key == "check":
			for i := 0; i < checkPairs && err == nil; i++ {
				if err = measure("check", func() (time.Duration, error) { return oursOp(ctx, h.Endpoint, rt, "check") }); err == nil {
					err = measure(checkBase, func() (time.Duration, error) { return stockOp(ctx, h.Endpoint, rt, "check") })
				}
			}
		case stockSide:
			err = measure(op.key, func() (time.Duration, error) { return stockOp(ctx, h.Endpoint, rt, op.key) })
		default:
			err = measure(op.key, func() (time.Duration, error) { return oursOp(ctx, h.Endpoint, rt, op.key) })
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func oursOp(ctx context.Context, endpoint string, rt *RealTHT, op string) (time.Duration, error) {
	switch op {
	case "create":
		return OursExpect(ctx, endpoint, rt.OursOptions(false), "CREATE_COMPLETE", true)
	case "rerun":
		return OursExpect(ctx, endpoint, rt.OursOptions(false), "CREATE_COMPLETE", false)
	case "check":
		o := rt.OursOptions(true)
		o.CheckMode = true
		return OursExpect(ctx, endpoint, o, "CREATE_COMPLETE", true)
	case "update":
		return OursExpect(ctx, endpoint, rt.OursOptions(true), "UPDATE_COMPLETE", true)
	case "delete":
		o := rt.OursOptions(true)
		o.State = stack.Absent
		return OursExpect(ctx, endpoint, o, "", true)
	}
	return 0, fmt.Errorf("unknown operation %s", op)
}

func stockOp(ctx context.Context, endpoint string, rt *RealTHT, op string) (time.Duration, error) {
	switch op {
	case "create":
		return Heatclient(ctx, endpoint, "create", rt, false, "CREATE_COMPLETE")
	case "rerun":
		return Heatclient(ctx, endpoint, "update", rt, false, "UPDATE_COMPLETE")
	case "check":
		return Heatclient(ctx, endpoint, "preview", rt, true, "PREVIEW")
	case "update":
		return Heatclient(ctx, endpoint, "update", rt, true, "UPDATE_COMPLETE")
	case "delete":
		return Heatclient(ctx, endpoint, "delete", rt, true, "DELETE_COMPLETE")
	}
	return 0, fmt.Errorf("unknown operation %s", op)
}

// RealTHTRows measures the real-THT overcloud: each round launches our
// Heat and TripleO's stock one (order alternating) and runs create,
// identical re-run, check mode, update of one parameter and delete on
// each, ours with heat_stack, stock with heatclient as tripleoclient.
// Check mode is measured on our Heat against heatclient's plain preview
// there (realTHTRound).
func RealTHTRows(ctx context.Context, env *Env, rounds int) []Row {
	names := map[string]string{"create": "real_tht_create", "rerun": "real_tht_rerun", "check": "real_tht_check",
		"update": "real_tht_update", "delete": "real_tht_delete"}
	unavailable := func(why string) []Row {
		var rows []Row
		for _, op := range realTHTOps {
			rows = append(rows, Unavailable(names[op.key], "real-THT "+op.key, op.ours, op.stock, why))
		}
		return rows
	}
	base, err := os.MkdirTemp(env.Work, "realtht-")
	if err != nil {
		return unavailable(err.Error())
	}
	defer os.RemoveAll(base)
	rt, err := NewRealTHT(filepath.Join(base, "overcloud-deploy"), RealTHTComputes)
	if err != nil {
		return unavailable("generating the workload (tests/tht): " + err.Error())
	}
	samples := map[string]map[string][]opSample{"ours": {}, "stock": {}}
	for r := 0; r < rounds && ctx.Err() == nil; r++ {
		sides := []string{"ours", "stock"}
		if r%2 == 1 {
			sides = []string{"stock", "ours"}
		}
		for _, side := range sides {
			got, err := realTHTRound(ctx, base, rt, side == "stock")
			for _, op := range append(realTHTOps, struct{ key, ours, stock string }{key: checkBase}) {
				for _, s := range got[op.key] {
					samples[side][op.key] = append(samples[side][op.key], s)
					fmt.Fprintf(env.Log, "  real_tht round %d/%d %-6s %-10s %8.1fs (heat-all CPU %.1fs, peak RSS %d MB)\n",
						r+1, rounds, side, op.key, s.d.Seconds(), s.cpu.Seconds(), s.rssPeak/1024)
				}
			}
			if err != nil {
				fmt.Fprintf(env.Log, "  real_tht round %d/%d %s FAILED: %v\n", r+1, rounds, side, err)
			}
		}
	}
	var rows []Row
	for _, op := range realTHTOps {
		o, s := samples["ours"][op.key], samples["stock"][op.key]
		if op.key == "check" {
			rows = append(rows, NewRow(names[op.key], "real-THT "+op.key, op.ours, op.stock, durations(o), durations(samples["ours"][checkBase]),
				fmt.Sprintf("tests/tht overcloud (Controller 1, Compute %d: 647 resources, 275 stacks); on our Heat (our heat.conf), after the identical re-run: "+
					"%d pairs per round, interleaved, %d rounds (check mode changes nothing: both sides see one stack in one state); the baseline is python-heatclient's "+
					"template processing and PUT .../preview without show_nested, the python3 process timed whole; heat-all CPU per run (median): ours %s, "+
					"preview %s; target: at most 1x of Heat's own preview", RealTHTComputes, checkPairs, rounds, medCPU(o), medCPU(samples["ours"][checkBase]))))
			continue
		}
		note := fmt.Sprintf("tests/tht overcloud (Controller 1, Compute %d: 647 resources, 275 stacks); %d interleaved rounds, each on a fresh Heat "+
			"(ours: our heat.conf and heat_stack; stock: TripleO's stock ephemeral heat.conf and python-heatclient as python-tripleoclient "+
			"stable/wallaby drives it, waiting by polling events every 5 s, the python3 process timed whole); heat-all CPU per run (median): ours %s, stock %s; "+
			"peak heat-all RSS: ours %s, stock %s", RealTHTComputes, rounds, medCPU(o), medCPU(s), maxRSS(o), maxRSS(s))
		switch op.key {
		case "rerun":
			note += "; targets (issue 15): at most 5 s and 0.05x"
		case "create":
			note += "; target: at most 0.2x"
		case "update":
			note += fmt.Sprintf("; the parameter is %s (every role's timezone service); target: at most 0.25x", UpdateParameter)
		}
		rows = append(rows, NewRow(names[op.key], "real-THT "+op.key, op.ours, op.stock, durations(o), durations(s), note))
	}
	return rows
}

// tuningAtComputes names the create settings that act only on a larger
// overcloud, with the Compute count of their real-THT left-out row:
// nested_unchanged acts on ResourceGroup's batch_create, which THT's role
// groups use above NodeCreateBatchSize (30) nodes (provider_unchanged too);
// env_copy on copies of an environment that grows with the node count;
// static_dep_attrs and template_store on a group's members, whose cost grows
// with the group; gc_pace on full collections, which take long only on the
// heap of a larger deploy.
var tuningAtComputes = map[string]int{"nested_unchanged": 50, "provider_unchanged": 50, "env_copy": 50,
	"static_dep_attrs": 50, "template_store": 50, "gc_pace": 50}

// RealTHTTuningRows measures, on the real-THT create, our heat.conf against
// ours without each create-time setting ("heat_tuning_NAME_real_tht_left_out",
// or "heat_tuning_NAME_real_tht_cN_left_out" at the Compute count
// tuningAtComputes gives), interleaved, with heat_stack on a fresh Heat per
// run.
func RealTHTTuningRows(ctx context.Context, env *Env, rounds int) []Row {
	base, err := os.MkdirTemp(env.Work, "realtht-tuning-")
	if err != nil {
		return []Row{Unavailable("heat_tuning_real_tht", "real-THT tuning", "", "", err.Error())}
	}
	defer os.RemoveAll(base)
	byName := map[string]HeatConfig{}
	for _, c := range TuningConfigs() {
		byName[c.Name] = c
	}
	// measure interleaves ours with ours without each named setting on the
	// real-THT create with computes Compute nodes.
	measure := func(computes int, names []string) (map[string]Samples, error) {
		rt, err := NewRealTHT(filepath.Join(base, fmt.Sprintf("overcloud-deploy-c%d", computes)), computes)
		if err != nil {
			return nil, fmt.Errorf("generating the workload (tests/tht): %w", err)
		}
		cfgs := []HeatConfig{Ours}
		for _, n := range names {
			cfgs = append(cfgs, byName["heat_tuning_"+n+LeftOut])
		}
		var vs []Variant
		for _, c := range cfgs {
			c := c
			vs = append(vs, Variant{Name: c.Name, Run: func(ctx context.Context) (time.Duration, error) {
				h, err := Launchers[0].Launch(ctx, base, c)
				if err != nil {
					return 0, fmt.Errorf("launch: %w", err)
				}
				defer h.Close()
				return OursExpect(ctx, h.Endpoint, rt.OursOptions(false), "CREATE_COMPLETE", true)
			}})
		}
		return Interleave(ctx, env.Log, fmt.Sprintf("real_tht_tuning_c%d", computes), rounds, vs), nil
	}
	var small []string
	atScale := map[int][]string{}
	for _, st := range tuning.Settings() {
		if st.Effect != tuning.EffectCreate {
			continue
		}
		if n, ok := tuningAtComputes[st.Name]; ok {
			atScale[n] = append(atScale[n], st.Name)
		} else {
			small = append(small, st.Name)
		}
	}
	samples := map[int]map[string]Samples{}
	for _, n := range append([]int{RealTHTComputes}, sortedInts(atScale)...) {
		names := small
		if n != RealTHTComputes {
			names = atScale[n]
		}
		s, err := measure(n, names)
		if err != nil {
			return []Row{Unavailable("heat_tuning_real_tht", "real-THT tuning", "", "", err.Error())}
		}
		samples[n] = s
	}
	var rows []Row
	for _, st := range tuning.Settings() {
		if st.Effect != tuning.EffectCreate {
			continue
		}
		n, ok := tuningAtComputes[st.Name]
		row := "heat_tuning_" + st.Name + "_real_tht" + LeftOut
		if !ok {
			n = RealTHTComputes
		} else {
			row = fmt.Sprintf("heat_tuning_%s_real_tht_c%d%s", st.Name, n, LeftOut)
		}
		s := samples[n]
		rows = append(rows, NewRow(row, "real-THT create with our heat.conf against ours without "+st.Title,
			"our heat.conf", "ours without "+st.Title, s["ours"], s["heat_tuning_"+st.Name+LeftOut],
			fmt.Sprintf("what this setting adds to the others on the real-THT create (Compute %d), heat_stack, fresh Heat per run, %d interleaved rounds", n, rounds)))
	}
	return rows
}

func sortedInts(m map[int][]string) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func durations(s []opSample) Samples {
	var out Samples
	for _, x := range s {
		out = append(out, x.d)
	}
	return out
}

func medCPU(s []opSample) string {
	if len(s) == 0 {
		return "–"
	}
	v := make([]float64, len(s))
	for i, x := range s {
		v[i] = x.cpu.Seconds()
	}
	sort.Float64s(v)
	return fmt.Sprintf("%.1f s", v[len(v)/2])
}

func maxRSS(s []opSample) string {
	var m int64
	for _, x := range s {
		if x.rssPeak > m {
			m = x.rssPeak
		}
	}
	if m == 0 {
		return "–"
	}
	return fmt.Sprintf("%d MB", m/1024)
}

// RealTHTPodComputes are the Compute counts of the real-THT pod rows: the
// everyday overcloud, and one large enough that a second engine could pay.
var RealTHTPodComputes = []int{RealTHTComputes, 100}

// RealTHTPodRows measures the real-THT create on a pod with 2 engine
// workers (heat-api + 2 heat-engines, MariaDB, RabbitMQ) against native
// heat-all on sqlite, both with our heat.conf and heat_stack, at each
// count of RealTHTPodComputes; at the first, also the pod with Heat's
// convergence engine (TripleO's pod runs it), which spreads a stack's
// resources over the engines.
func RealTHTPodRows(ctx context.Context, env *Env, rounds int) []Row {
	var rows []Row
	for i, n := range RealTHTPodComputes {
		rows = append(rows, realTHTPodRows(ctx, env, rounds, n, i == 0)...)
	}
	return rows
}

// convergenceConf turns Heat's convergence engine back on over our
// heat.conf (which runs the legacy one).
var convergenceConf = map[string]map[string]string{"DEFAULT": {"convergence_engine": "true"}}

func realTHTPodRows(ctx context.Context, env *Env, rounds, computes int, convergence bool) []Row {
	name := "real_tht_create_pod_mysql_2w"
	convName := "real_tht_create_pod_mysql_2w_convergence"
	if computes != RealTHTComputes {
		name = fmt.Sprintf("%s_c%d", name, computes)
	}
	title := fmt.Sprintf("real-THT create (Compute %d) on a pod", computes)
	cand, baseline := "pod, 2 engine workers, MariaDB", "native heat-all, sqlite, our heat.conf"
	base, err := os.MkdirTemp(env.Work, "realtht-pod-")
	if err != nil {
		return []Row{Unavailable(name, title, cand, baseline, err.Error())}
	}
	defer os.RemoveAll(base)
	rt, err := NewRealTHT(filepath.Join(base, "overcloud-deploy"), computes)
	if err != nil {
		return []Row{Unavailable(name, title, cand, baseline, "generating the workload (tests/tht): "+err.Error())}
	}
	socket, stop, err := podService(ctx, base)
	if err != nil {
		return []Row{Unavailable(name, title, cand, baseline, err.Error())}
	}
	defer stop()
	create := func(launch func() (*Heat, error)) func(ctx context.Context) (time.Duration, error) {
		return func(ctx context.Context) (time.Duration, error) {
			h, err := launch()
			if err != nil {
				return 0, fmt.Errorf("launch: %w", err)
			}
			defer h.Close()
			return OursExpect(ctx, h.Endpoint, rt.OursOptions(false), "CREATE_COMPLETE", true)
		}
	}
	vs := []Variant{
		{Name: "native", Run: create(func() (*Heat, error) { return Launchers[0].Launch(ctx, base, Ours) })},
		{Name: "pod2", Run: create(func() (*Heat, error) { return LaunchPod(ctx, base, socket, 2, nil) })},
	}
	if convergence {
		vs = append(vs, Variant{Name: "pod2_convergence", Run: create(func() (*Heat, error) { return LaunchPod(ctx, base, socket, 2, convergenceConf) })})
	}
	s := Interleave(ctx, env.Log, fmt.Sprintf("real_tht_pod_c%d", computes), rounds, vs)
	note := fmt.Sprintf("create time with heat_stack (pod start not timed); fresh Heat per run; %d interleaved rounds; both run our heat.conf "+
		"(the sqlite settings do not apply to MySQL; with several engines a nested stack may run in another engine than its parent, "+
		"whose task_wakeup then falls back to Heat's 1 s poll); 2 CPUs", rounds)
	rows := []Row{NewRow(name, title, cand, baseline, s["pod2"], s["native"], note)}
	if convergence {
		rows = append(rows, NewRow(convName, title+", convergence engine", "pod, 2 engine workers, MariaDB, our heat.conf with convergence_engine = true (as TripleO's pod)",
			baseline, s["pod2_convergence"], s["native"], note))
	}
	return rows
}

// ScaleCounts are the Compute counts of the real-THT scaling rows.
var ScaleCounts = []int{1, 10, 50, 100}

// RealTHTScaleRows creates the real-THT overcloud at each Compute count of
// counts, once each: ours (heat_stack) then a no-op re-run, and stock
// (heatclient) up to stockMax Compute nodes (a stock create at 100 nodes
// takes most of an hour: measured once, as issue 24 allows). Rows
// real_tht_scale_create_cN (ours vs stock) and real_tht_scale_rerun_cN
// (ours' re-run vs the stock full update, where measured).
func RealTHTScaleRows(ctx context.Context, env *Env, counts []int, stockMax, stockRerunMax int) []Row {
	var rows []Row
	prevN, prevD := 0, time.Duration(0)
	for _, n := range counts {
		if ctx.Err() != nil {
			break
		}
		cname, rname := fmt.Sprintf("real_tht_scale_create_c%d", n), fmt.Sprintf("real_tht_scale_rerun_c%d", n)
		title := fmt.Sprintf("real-THT overcloud, Controller 1 + Compute %d", n)
		base, err := os.MkdirTemp(env.Work, "realtht-scale-")
		if err != nil {
			rows = append(rows, Unavailable(cname, title, "ours", "stock", err.Error()))
			continue
		}
		rt, err := NewRealTHT(filepath.Join(base, "overcloud-deploy"), n)
		if err != nil {
			os.RemoveAll(base)
			rows = append(rows, Unavailable(cname, title, "ours", "stock", "generating the workload (tests/tht): "+err.Error()))
			continue
		}
		ours, oerr := scaleRun(ctx, base, rt, false, true)
		var stock map[string]opSample
		var serr error
		if n <= stockMax {
			stock, serr = scaleRun(ctx, base, rt, true, n <= stockRerunMax)
		}
		os.RemoveAll(base)
		failed := "" // each failed side's error, leading the rows' notes
		for _, e := range []struct {
			side string
			err  error
			got  map[string]opSample
		}{{"ours", oerr, ours}, {"stock", serr, stock}} {
			for _, op := range []string{"create", "rerun"} {
				if s, ok := e.got[op]; ok {
					fmt.Fprintf(env.Log, "  real_tht_scale c%d %-5s %-6s %8.1fs (heat-all CPU %.1fs, peak RSS %d MB)\n", n, e.side, op, s.d.Seconds(), s.cpu.Seconds(), s.rssPeak/1024)
				}
			}
			if e.err != nil {
				fmt.Fprintf(env.Log, "  real_tht_scale c%d %s FAILED: %v\n", n, e.side, e.err)
				failed += fmt.Sprintf("%s FAILED: %v; ", e.side, e.err)
			}
		}
		note := func(op string) string {
			s := fmt.Sprintf("one run each (Compute %d); heat-all CPU ours %s, stock %s; peak heat-all RSS ours %s, stock %s",
				n, medCPU(pick(ours, op)), medCPU(pick(stock, op)), maxRSS(pick(ours, op)), maxRSS(pick(stock, op)))
			s += fmt.Sprintf("; sqlite database after the %s: ours %s, stock %s", op, dbSize(pick(ours, op)), dbSize(pick(stock, op)))
			if op == "create" && prevN > 0 && len(pick(ours, op)) == 1 {
				s += fmt.Sprintf("; ours %.2f s per Compute added since Compute %d", (ours[op].d-prevD).Seconds()/float64(n-prevN), prevN)
			}
			if n > stockMax {
				s += fmt.Sprintf("; stock not measured above %d Compute nodes in this run", stockMax)
			}
			return failed + s
		}
		rows = append(rows,
			NewRow(cname, title+": create", "our heat.conf, heat_stack", "TripleO stock heat.conf, heatclient",
				durations(pick(ours, "create")), durations(pick(stock, "create")), note("create")),
			NewRow(rname, title+": identical re-run", "heat_stack (no update: inputs unchanged)", "heatclient full update (stock)",
				durations(pick(ours, "rerun")), durations(pick(stock, "rerun")), note("rerun")))
		if c, ok := ours["create"]; ok {
			prevN, prevD = n, c.d
		} else {
			prevN = 0
		}
	}
	return rows
}

// sqliteBytes is the size of a native Heat's sqlite database (Heat keeps
// sqlite's rollback journal: the file holds everything between
// transactions); 0 when it cannot be read.
func sqliteBytes(h *Heat) int64 {
	fi, err := os.Stat(filepath.Join(h.Opts.HeatDir, heatdir.SQLiteFile))
	if err != nil {
		return 0
	}
	return fi.Size()
}

// dbSize prints the database size of the sample, if read.
func dbSize(s []opSample) string {
	if len(s) == 0 || s[0].dbBytes == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f MB", float64(s[0].dbBytes)/(1<<20))
}

func pick(m map[string]opSample, op string) []opSample {
	if s, ok := m[op]; ok {
		return []opSample{s}
	}
	return nil
}

// scaleRun launches a fresh Heat, creates the workload and, with rerun,
// runs it again with identical inputs.
func scaleRun(ctx context.Context, base string, rt *RealTHT, stockSide, rerun bool) (map[string]opSample, error) {
	c := Ours
	if stockSide {
		c = Stock
	}
	h, err := Launchers[0].Launch(ctx, base, c)
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	defer h.Close()
	mon := newProcMonitor(h)
	out := map[string]opSample{}
	ops := []string{"create"}
	if rerun {
		ops = append(ops, "rerun")
	}
	for _, op := range ops {
		cpu0 := mon.cpu()
		var d time.Duration
		if stockSide {
			d, err = stockOp(ctx, h.Endpoint, rt, op)
		} else {
			d, err = oursOp(ctx, h.Endpoint, rt, op)
		}
		if err != nil {
			return out, fmt.Errorf("%s: %w", op, err)
		}
		out[op] = opSample{d: d, cpu: mon.cpu() - cpu0, rssPeak: mon.rssPeak(), dbBytes: sqliteBytes(h)}
	}
	return out, nil
}
