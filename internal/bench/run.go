package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/tuning"
)

// Env is where a benchmark run works.
type Env struct {
	Work      string // scratch directory
	Templates string // bench/templates
	Module    string // Go module path (for go test -bench)
	Log       io.Writer
}

// Options select what a run measures.
type Options struct {
	// Only lists row-group names to run (scale_copies, scale_group,
	// launch, template_processing, db_dump, config_download,
	// config_download_tht, pod, real_tht, real_tht_tuning, real_tht_pod,
	// real_tht_scale, deploy_playbook_tht); empty: all.
	Only []string
	// Rounds for the quick rows (at least 5); CreateRounds for the stack
	// creates (each launches a fresh Heat per create).
	Rounds, CreateRounds int
	// NoTuning skips the heat_tuning_* rows of test (b).
	NoTuning bool
	// RealTHTRounds are the rounds of the real-THT groups (each a create
	// of the tripleo-heat-templates overcloud per side, minutes each).
	RealTHTRounds int
	// ScaleCounts are the Compute counts of real_tht_scale; StockScaleMax
	// the largest measured with the stock heat.conf too, and
	// StockRerunMax the largest whose stock full update is measured.
	ScaleCounts                  []int
	StockScaleMax, StockRerunMax int
}

// Groups are the row groups in run order.
var Groups = []string{"template_processing", "config_download", "config_download_tht", "db_dump", "launch", "scale_group", "scale_copies", "pod",
	"real_tht", "real_tht_tuning", "real_tht_pod", "real_tht_scale", "deploy_playbook_tht"}

func (o Options) want(g string) bool {
	if len(o.Only) == 0 {
		return true
	}
	for _, x := range o.Only {
		if x == g {
			return true
		}
	}
	return false
}

// Run measures the selected rows.
func Run(ctx context.Context, env *Env, o Options) []Row {
	if o.Rounds < 5 {
		o.Rounds = 5
	}
	if o.CreateRounds < 1 {
		o.CreateRounds = 3
	}
	if o.RealTHTRounds < 1 {
		o.RealTHTRounds = 1
	}
	if len(o.ScaleCounts) == 0 {
		o.ScaleCounts = ScaleCounts
	}
	var rows []Row
	for _, g := range Groups {
		if !o.want(g) || ctx.Err() != nil {
			continue
		}
		start := time.Now()
		fmt.Fprintf(env.Log, "== %s\n", g)
		switch g {
		case "template_processing":
			rows = append(rows, TemplateRows(ctx, env, o.Rounds)...)
		case "config_download":
			rows = append(rows, ConfigDownloadRow(ctx, env, o.Rounds))
		case "config_download_tht":
			rows = append(rows, ConfigDownloadTHTRow(ctx, env, o.Rounds))
		case "db_dump":
			rows = append(rows, DumpRow(ctx, env, o.Rounds))
		case "launch":
			rows = append(rows, LaunchRows(ctx, env, o.Rounds)...)
		case "scale_group":
			rows = append(rows, ScaleRows(ctx, env, ScaleTests[1], o.CreateRounds, !o.NoTuning)...)
		case "scale_copies":
			rows = append(rows, ScaleRows(ctx, env, ScaleTests[0], o.CreateRounds, false)...)
		case "pod":
			for _, t := range []ScaleTest{ScaleTests[1], ScaleTests[0]} {
				rows = append(rows, PodRows(ctx, env, t, o.CreateRounds)...)
			}
		case "real_tht":
			rows = append(rows, RealTHTRows(ctx, env, o.RealTHTRounds)...)
		case "real_tht_tuning":
			rows = append(rows, RealTHTTuningRows(ctx, env, o.RealTHTRounds)...)
		case "real_tht_pod":
			rows = append(rows, RealTHTPodRows(ctx, env, o.RealTHTRounds)...)
		case "real_tht_scale":
			rows = append(rows, RealTHTScaleRows(ctx, env, o.ScaleCounts, o.StockScaleMax, o.StockRerunMax)...)
		case "deploy_playbook_tht":
			rows = append(rows, DeployPlaybookTHTRow(ctx, env, o.RealTHTRounds))
		}
		fmt.Fprintf(env.Log, "== %s done in %.0fs\n", g, time.Since(start).Seconds())
	}
	return rows
}

// Order sorts rows in the report's order: scale, tuning, the rest, each
// group by name, so a full and a partial run (WriteResults) order alike.
func Order(rows []Row) []Row {
	rank := func(n string) int {
		for i, p := range []string{"real_tht_scale", "real_tht", "scale_group", "scale_copies", "heat_tuning_", "launch_ready", "template_processing", "db_dump", "config_download"} {
			if strings.HasPrefix(n, p) {
				return i
			}
		}
		return 99
	}
	out := append([]Row(nil), rows...)
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := rank(out[i].Name), rank(out[j].Name)
		if ri != rj {
			return ri < rj
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Host describes the machine and Heat, for the report.
func Host() string {
	heat := "unknown"
	if out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", "heat-common").Output(); err == nil {
		heat = string(out)
	}
	load := ""
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return fmt.Sprintf("%d CPUs, %s/%s, Heat (heat-common) %s, load average at the end %s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, heat, load)
}

// Machine describes this machine for a row: CPUs, OS, Heat's version.
func Machine() string {
	heat := "unknown"
	if out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", "heat-common").Output(); err == nil {
		heat = string(out)
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s, %d CPUs, %s/%s, Heat (heat-common) %s", host, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, heat)
}

// Markdown renders results.md: the table, each tuning setting with its
// effect alone, and the notes.
func Markdown(rows []Row, header string, o Options) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Benchmarks\n\n%s\n\n", header)
	fmt.Fprintf(&b, "Every row compares a candidate with its baseline **in the same run**, runs interleaved (the order rotates each round; the machine is shared). "+
		"Median of the runs, min–max in brackets; ratio = candidate median / baseline median (below 1 is faster). "+
		"Quick rows: %d runs each. Stack creates: %d runs each (each run launches a fresh Heat; only the create is timed).\n\n", o.Rounds, o.CreateRounds)
	b.WriteString(Table(rows))
	if ids, order := Machines(rows); len(order) > 0 {
		b.WriteString("\nMachines (the \"measured\" column: when the run that measured the row started, UTC):\n\n")
		for _, m := range order {
			fmt.Fprintf(&b, "- %s: %s\n", ids[m], m)
		}
	}
	for _, r := range rows {
		if r.Name == "scale_group_50" && r.Available && r.BaselineRuns > 0 {
			verdict := "reached"
			if r.Ratio > 0.2 {
				verdict = "not reached with safe settings; see \"What limits it now\" below"
			}
			fmt.Fprintf(&b, "\nTarget for test (b), our defaults at most 0.2x of the stock create time: %.3fx, %s.\n", r.Ratio, verdict)
		}
	}
	b.WriteString("\nNotes per row:\n\n")
	for _, r := range rows {
		if r.Note != "" {
			fmt.Fprintf(&b, "- `%s`: %s\n", r.Name, r.Note)
		}
	}
	b.WriteString("\n## Our heat.conf tuning (internal/tuning/tuning.go)\n\n")
	b.WriteString("Each setting is measured alone on top of TripleO's stock ephemeral heat.conf (`heat_tuning_*` rows; the create-time settings against the same stock samples as `scale_group_50`, the stop-time setting against its own stock stops), and each create-time setting is also left out of ours (`heat_tuning_*_left_out` rows, against the same samples of ours): the settings interact.\n\n")
	for _, s := range tuning.Settings() {
		eff, left := "not measured in this run", ""
		for _, r := range rows {
			if r.Name == "heat_tuning_"+s.Name && r.Available {
				eff = fmt.Sprintf("%s → %s (ratio %.3fx)", fmtS(r.BaselineMedianS), fmtS(r.MedianS), r.Ratio)
			}
			if r.Name == "heat_tuning_"+s.Name+LeftOut && r.Available && r.BaselineRuns > 0 {
				left = fmt.Sprintf(" Left out of ours: %s without it, %s with it (ratio %.3fx).", fmtS(r.BaselineMedianS), fmtS(r.MedianS), r.Ratio)
			}
		}
		fmt.Fprintf(&b, "- **`%s`** — %s\n  Measured alone (%s): %s.%s\n", s.Title, s.What, map[string]string{tuning.EffectCreate: "test (b) create", tuning.EffectStop: "stop time"}[s.Effect], eff, left)
	}
	b.WriteString("\n")
	b.WriteString(Findings)
	return b.Bytes()
}

// Header is results.md's first paragraph: when, how long, where.
func Header(started time.Time, took time.Duration) string {
	return fmt.Sprintf("Generated by `make bench` (bench/runner) on %s, in %s. %s.",
		started.UTC().Format("2006-01-02 15:04 MST"), took.Round(time.Second), Host())
}

// Rerender rewrites dir/results.md from dir/results.json (after a change of
// the text), keeping the header of the run that measured the rows.
func Rerender(dir string, o Options) error {
	rows, err := readRows(dir)
	if err != nil {
		return err
	}
	header := oldHeader(dir)
	if header == "" {
		header = "Generated by `make bench` (bench/runner)."
	}
	return os.WriteFile(filepath.Join(dir, "results.md"), Markdown(Order(rows), header, o), 0o644)
}

// readRows reads dir/results.json (nil when there is none).
func readRows(dir string) ([]Row, error) {
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m map[string]Row
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "results.json"), err)
	}
	var rows []Row
	for _, r := range m {
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return rows, nil
}

// WriteResults writes results.md and results.json into dir. A partial run
// (Only) replaces its rows in the existing results and keeps the others.
func WriteResults(dir string, rows []Row, started time.Time, took time.Duration, o Options) error {
	header := Header(started, took)
	machine := Machine()
	for i := range rows {
		rows[i].Measured = started.UTC().Format("2006-01-02 15:04")
		rows[i].Machine = machine
	}
	if len(o.Only) > 0 {
		old, err := readRows(dir)
		if err != nil {
			return err
		}
		fresh := map[string]bool{}
		for _, r := range rows {
			fresh[r.Name] = true
		}
		for _, r := range old {
			if !fresh[r.Name] {
				rows = append(rows, r)
			}
		}
		header = fmt.Sprintf("Generated by `make bench` (bench/runner), one row group or more at a time (`-only`): each row's "+
			"\"measured\" column says when and where it was measured. Last run: %s on %s, in %s. %s.",
			strings.Join(o.Only, ", "), started.UTC().Format("2006-01-02 15:04 MST"), took.Round(time.Second), Host())
	}
	rows = Order(rows)
	if err := os.WriteFile(filepath.Join(dir, "results.md"), Markdown(rows, header, o), 0o644); err != nil {
		return err
	}
	var j bytes.Buffer
	if err := WriteJSON(&j, rows); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "results.json"), j.Bytes(), 0o644)
}

// oldHeader is the header line of dir/results.md ("" if none).
func oldHeader(dir string) string {
	old, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(old), "\n") {
		if strings.HasPrefix(l, "Generated by") {
			return l
		}
	}
	return ""
}
