package bench

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

//go:embed heatprof.py
var heatprofSource []byte

// Profile is what heatprof.py writes (profile.json): a sampled profile of
// heat-all's main thread over a window, and the state log.
type Profile struct {
	WindowS        float64            `json:"window_s"`
	ProcessCPUS    float64            `json:"process_cpu_s"`
	MainCPUS       float64            `json:"main_thread_cpu_s"`
	Samples        int                `json:"samples"`
	IntervalS      float64            `json:"interval_s"`
	WallByCategory map[string]float64 `json:"wall_by_category"`
	CPUByCategory  map[string]float64 `json:"cpu_by_category"`
	IdleByReason   map[string]float64 `json:"idle_by_reason"`
	InclusiveTop   [][2]any           `json:"inclusive_top"`
	SelfCPUTop     [][2]any           `json:"self_cpu_top"`
	// SQLTop: statement (first 160 characters), CPU seconds in the cursor
	// execute, count.
	SQLTop         [][3]any           `json:"sql_top"`
	SQLStatements  int                `json:"sql_statements"`
	SQLCPUS        float64            `json:"sql_cpu_s"`
	SleepCalls     map[string]float64 `json:"sleep_calls_by_depth"`
	SleepRequested map[string]float64 `json:"sleep_requested_s_by_depth"`
	// Log entries: [t, "stack"|"resource", stack id, depth, name, action,
	// status, nested stack id (resources with a nested stack)].
	Log [][]any `json:"log"`
}

// Profiler runs heat-all under heatprof.py: Command is heat_all_command,
// Dir the control directory (HEATPROF_DIR, set in this process's
// environment so that the launcher passes it on).
type Profiler struct {
	Dir     string
	Command string
}

// NewProfiler writes heatprof.py under dir and points HEATPROF_DIR there.
func NewProfiler(dir string, interval time.Duration) (*Profiler, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "heatprof.py")
	if err := os.WriteFile(script, heatprofSource, 0o600); err != nil {
		return nil, err
	}
	os.Setenv("HEATPROF_DIR", dir)
	os.Setenv("HEATPROF_INTERVAL", fmt.Sprint(interval.Seconds()))
	return &Profiler{Dir: dir, Command: "/usr/bin/python3 " + script}, nil
}

// Start opens the measuring window.
func (p *Profiler) Start() error {
	os.Remove(filepath.Join(p.Dir, "profile.json"))
	return os.WriteFile(filepath.Join(p.Dir, "start"), nil, 0o600)
}

// Stop closes the window and reads the profile (waiting up to a minute).
func (p *Profiler) Stop(ctx context.Context) (*Profile, error) {
	if err := os.WriteFile(filepath.Join(p.Dir, "stop"), nil, 0o600); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		b, err := os.ReadFile(filepath.Join(p.Dir, "profile.json"))
		if err == nil {
			var pr Profile
			if err := json.Unmarshal(b, &pr); err != nil {
				return nil, fmt.Errorf("profile.json: %w", err)
			}
			return &pr, nil
		}
		if e, err := os.ReadFile(filepath.Join(p.Dir, "error")); err == nil {
			return nil, fmt.Errorf("heatprof: %s", e)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("heatprof wrote no profile.json in %s (is heat-all running under it?)", p.Dir)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// CopyPstats waits (up to a minute) for the cProfile stats of the last
// window (HEATPROF_CPROFILE=1) and moves them to dst.
func (p *Profiler) CopyPstats(ctx context.Context, dst string) error {
	src := filepath.Join(p.Dir, "profile.pstats")
	deadline := time.Now().Add(time.Minute)
	for {
		if b, err := os.ReadFile(src); err == nil && len(b) > 0 {
			time.Sleep(500 * time.Millisecond) // dump_stats may still be writing
			if b, err = os.ReadFile(src); err != nil {
				return err
			}
			os.Remove(src)
			return os.WriteFile(dst, b, 0o644)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("heat-all wrote no cProfile stats (%s)", src)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type logEntry struct {
	t             float64
	kind, stackID string
	depth         int
	name, action  string
	status        string
	nested        string
}

func (pr *Profile) entries() []logEntry {
	var out []logEntry
	for _, l := range pr.Log {
		if len(l) < 8 {
			continue
		}
		e := logEntry{}
		e.t, _ = l[0].(float64)
		e.kind, _ = l[1].(string)
		e.stackID, _ = l[2].(string)
		d, _ := l[3].(float64)
		e.depth = int(d)
		e.name, _ = l[4].(string)
		e.action, _ = l[5].(string)
		e.status, _ = l[6].(string)
		e.nested, _ = l[7].(string)
		out = append(out, e)
	}
	return out
}

// DepthStats are per nesting depth: the stacks, how long they took, and
// how long the parent took to notice their completion (the nested stack's
// COMPLETE to its parent resource's COMPLETE), plus the time leaf
// resources (without a nested stack) spent between IN_PROGRESS and COMPLETE.
type DepthStats struct {
	Depth                            int
	Stacks                           int
	StackMedianS, StackMaxS          float64
	Notices                          int
	NoticeMeanS, NoticeMaxS, NoticeS float64
	Leaves                           int
	LeafMeanS, LeafS                 float64
}

// ByDepth derives DepthStats for action (CREATE, UPDATE, DELETE) from the log.
func (pr *Profile) ByDepth(action string) []DepthStats {
	type span struct{ start, end float64 }
	stacks := map[string]*span{}
	depthOf := map[string]int{}
	resStart := map[string]float64{}
	type notice struct {
		nested string
		depth  int
		t      float64
	}
	var notices []notice
	leaves := map[int][]float64{}
	for _, e := range pr.entries() {
		if e.action != action {
			continue
		}
		switch e.kind {
		case "stack":
			s := stacks[e.stackID]
			if s == nil {
				s = &span{start: math.NaN(), end: math.NaN()}
				stacks[e.stackID] = s
			}
			depthOf[e.stackID] = e.depth
			if e.status == "IN_PROGRESS" {
				s.start = e.t
			} else {
				s.end = e.t
			}
		case "resource":
			key := e.stackID + "/" + e.name
			if e.status == "IN_PROGRESS" {
				resStart[key] = e.t
				continue
			}
			if e.status != "COMPLETE" {
				continue
			}
			if e.nested != "" {
				notices = append(notices, notice{e.nested, e.depth + 1, e.t})
			} else if st, ok := resStart[key]; ok {
				leaves[e.depth] = append(leaves[e.depth], e.t-st)
			}
		}
	}
	m := map[int]*DepthStats{}
	get := func(d int) *DepthStats {
		if m[d] == nil {
			m[d] = &DepthStats{Depth: d}
		}
		return m[d]
	}
	durs := map[int][]float64{}
	for id, s := range stacks {
		if math.IsNaN(s.start) || math.IsNaN(s.end) {
			continue
		}
		durs[depthOf[id]] = append(durs[depthOf[id]], s.end-s.start)
	}
	for d, v := range durs {
		ds := get(d)
		sort.Float64s(v)
		ds.Stacks, ds.StackMedianS, ds.StackMaxS = len(v), v[len(v)/2], v[len(v)-1]
	}
	for _, n := range notices {
		s := stacks[n.nested]
		if s == nil || math.IsNaN(s.end) {
			continue
		}
		ds := get(n.depth)
		lat := n.t - s.end
		ds.Notices++
		ds.NoticeS += lat
		ds.NoticeMaxS = math.Max(ds.NoticeMaxS, lat)
	}
	for d, v := range leaves {
		ds := get(d)
		for _, x := range v {
			ds.LeafS += x
		}
		ds.Leaves = len(v)
	}
	var out []DepthStats
	for _, ds := range m {
		if ds.Notices > 0 {
			ds.NoticeMeanS = ds.NoticeS / float64(ds.Notices)
		}
		if ds.Leaves > 0 {
			ds.LeafMeanS = ds.LeafS / float64(ds.Leaves)
		}
		out = append(out, *ds)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Depth < out[j].Depth })
	return out
}

// CriticalChain follows, from the top stack, the resource that completed
// last and, when it has a nested stack, that stack's last resource, down
// to a leaf: the chain of nested stacks the create ended on, with how long
// each parent took to notice its child's completion.
func (pr *Profile) CriticalChain(action string) []string {
	last := map[string]logEntry{}
	stackEnd := map[string]logEntry{}
	var top string
	for _, e := range pr.entries() {
		if e.action != action || e.status != "COMPLETE" {
			continue
		}
		if e.kind == "stack" {
			stackEnd[e.stackID] = e
			if e.depth == 0 {
				top = e.stackID
			}
			continue
		}
		if l, ok := last[e.stackID]; !ok || e.t >= l.t {
			last[e.stackID] = e
		}
	}
	var out []string
	for id := top; id != ""; {
		r, ok := last[id]
		if !ok {
			break
		}
		line := fmt.Sprintf("depth %d %s: last resource %s COMPLETE at %.2f s (stack COMPLETE at %.2f s)",
			r.depth, stackEnd[id].name, r.name, r.t, stackEnd[id].t)
		if n, ok := stackEnd[r.nested]; ok && r.nested != "" {
			line += fmt.Sprintf("; its nested stack completed at %.2f s, noticed %.2f s later", n.t, r.t-n.t)
		}
		out = append(out, line)
		id = r.nested
	}
	return out
}

// WriteReport writes a human-readable summary of the profile.
func (pr *Profile) WriteReport(w io.Writer, action string) {
	pct := func(x float64) string { return fmt.Sprintf("%5.1f %%", 100*x/pr.WindowS) }
	fmt.Fprintf(w, "window %.1f s, %d samples every %.0f ms; heat-all CPU %.1f s (main thread %.1f s)\n\n",
		pr.WindowS, pr.Samples, pr.IntervalS*1000, pr.ProcessCPUS, pr.MainCPUS)
	fmt.Fprintln(w, "main thread wall time by what it runs (innermost library; sampled: CPU lands on calls that release the GIL, such as a sqlite execute, more often than they take it), and its CPU time there:")
	for _, k := range sortedKeys(pr.WallByCategory) {
		fmt.Fprintf(w, "  %-10s %7.1f s %s   CPU %6.1f s\n", k, pr.WallByCategory[k], pct(pr.WallByCategory[k]), pr.CPUByCategory[k])
	}
	idle := 0.0
	for _, v := range pr.IdleByReason {
		idle += v
	}
	fmt.Fprintf(w, "\nidle (in eventlet's hub, every wait timed): %.1f s %s, by what the hub waits for next:\n", idle, pct(idle))
	for _, k := range sortedKeys(pr.IdleByReason) {
		if pr.IdleByReason[k] < 0.05 {
			continue
		}
		fmt.Fprintf(w, "  %7.1f s %s  %s\n", pr.IdleByReason[k], pct(pr.IdleByReason[k]), k)
	}
	fmt.Fprintln(w, "\nTaskRunner sleeps by the depth of the sleeping stack (calls, requested seconds, summed over greenthreads):")
	for _, k := range sortedKeys(pr.SleepCalls) {
		fmt.Fprintf(w, "  depth %-5s %6.0f calls %8.1f s\n", k, pr.SleepCalls[k], pr.SleepRequested[k])
	}
	fmt.Fprintf(w, "\n%s per nesting depth: stacks (median/max s); parent noticing a nested stack's completion (count, mean/max/sum s); leaf resources IN_PROGRESS→COMPLETE (count, mean/sum s):\n", action)
	for _, d := range pr.ByDepth(action) {
		fmt.Fprintf(w, "  depth %d: %3d stacks %6.2f/%6.2f | notices %3d %5.2f/%5.2f/%7.1f | leaves %4d %5.2f/%7.1f\n",
			d.Depth, d.Stacks, d.StackMedianS, d.StackMaxS, d.Notices, d.NoticeMeanS, d.NoticeMaxS, d.NoticeS, d.Leaves, d.LeafMeanS, d.LeafS)
	}
	fmt.Fprintln(w, "\nthe chain the operation ended on:")
	for _, l := range pr.CriticalChain(action) {
		fmt.Fprintln(w, "  "+l)
	}
	fmt.Fprintf(w, "\nSQL: %d statements, %.1f s of CPU in the database driver's execute; the costliest (CPU s, count, statement):\n", pr.SQLStatements, pr.SQLCPUS)
	for i, e := range pr.SQLTop {
		if i >= 15 {
			break
		}
		sec, _ := e[1].(float64)
		n, _ := e[2].(float64)
		fmt.Fprintf(w, "  %6.2f s %6.0f  %s\n", sec, n, e[0])
	}
	fmt.Fprintln(w, "\nfunctions heat-all's main thread spent its CPU in (self, top 30):")
	for i, e := range pr.SelfCPUTop {
		if i >= 30 {
			break
		}
		s, _ := e[1].(float64)
		fmt.Fprintf(w, "  %7.2f s  %s\n", s, e[0])
	}
	fmt.Fprintln(w, "\nfunctions on the main thread's stack while busy (inclusive wall s, top 60):")
	for i, e := range pr.InclusiveTop {
		if i >= 60 {
			break
		}
		s, _ := e[1].(float64)
		fmt.Fprintf(w, "  %7.1f s %s  %s\n", s, pct(s), e[0])
	}
}

func sortedKeys(m map[string]float64) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if m[ks[i]] != m[ks[j]] {
			return m[ks[i]] > m[ks[j]]
		}
		return strings.Compare(ks[i], ks[j]) < 0
	})
	return ks
}
