package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"
)

// Row is one line of the results: a candidate measured against a baseline
// in the same run, runs interleaved.
type Row struct {
	Name      string `json:"name"`
	Title     string `json:"title"`
	Candidate string `json:"candidate"`
	Baseline  string `json:"baseline"`
	// Available is false when the row could not be measured (Note says why).
	Available       bool      `json:"available"`
	Runs            int       `json:"runs"`
	MedianS         float64   `json:"median_s"`
	MinS            float64   `json:"min_s"`
	MaxS            float64   `json:"max_s"`
	SamplesS        []float64 `json:"samples_s,omitempty"`
	BaselineRuns    int       `json:"baseline_runs"`
	BaselineMedianS float64   `json:"baseline_median_s"`
	BaselineMinS    float64   `json:"baseline_min_s"`
	BaselineMaxS    float64   `json:"baseline_max_s"`
	BaselineSamples []float64 `json:"baseline_samples_s,omitempty"`
	// Ratio is MedianS / BaselineMedianS (below 1: the candidate is faster).
	Ratio float64 `json:"ratio"`
	Note  string  `json:"note,omitempty"`
	// Measured is when the run that measured the row started (UTC), and
	// Machine where (Host): a partial run replaces only its own rows.
	Measured string `json:"measured,omitempty"`
	Machine  string `json:"machine,omitempty"`
}

// Samples are durations of repeated runs.
type Samples []time.Duration

func (s Samples) seconds() []float64 {
	out := make([]float64, len(s))
	for i, d := range s {
		out[i] = roundUS(d.Seconds())
	}
	return out
}

// roundUS rounds seconds to microseconds.
func roundUS(f float64) float64 { return math.Round(f*1e6) / 1e6 }

// median, min and max in seconds.
func (s Samples) stats() (med, lo, hi float64) {
	if len(s) == 0 {
		return 0, 0, 0
	}
	v := s.seconds()
	for i, d := range s {
		v[i] = d.Seconds()
	}
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		med = v[n/2]
	} else {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	return roundUS(med), roundUS(v[0]), roundUS(v[n-1])
}

// NewRow fills a row from candidate and baseline samples.
func NewRow(name, title, candidate, baseline string, cand, base Samples, note string) Row {
	r := Row{Name: name, Title: title, Candidate: candidate, Baseline: baseline, Note: note,
		Available: len(cand) > 0, Runs: len(cand), BaselineRuns: len(base),
		SamplesS: cand.seconds(), BaselineSamples: base.seconds()}
	r.MedianS, r.MinS, r.MaxS = cand.stats()
	r.BaselineMedianS, r.BaselineMinS, r.BaselineMaxS = base.stats()
	if r.BaselineMedianS > 0 && r.Available {
		r.Ratio = math.Round(r.MedianS/r.BaselineMedianS*1000) / 1000
	}
	return r
}

// Unavailable is a row that could not be measured.
func Unavailable(name, title, candidate, baseline, why string) Row {
	return Row{Name: name, Title: title, Candidate: candidate, Baseline: baseline, Note: "not available: " + why}
}

// WriteJSON writes the rows as one JSON object keyed by row name.
func WriteJSON(w io.Writer, rows []Row) error {
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, r := range rows {
		k, _ := json.Marshal(r.Name)
		v, err := json.MarshalIndent(r, "  ", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "  %s: %s", k, v)
		if i < len(rows)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	_, err := w.Write(b.Bytes())
	return err
}

func fmtS(f float64) string {
	switch {
	case f == 0:
		return "0"
	case f < 0.01:
		return fmt.Sprintf("%.2f ms", f*1000)
	case f < 0.1:
		return fmt.Sprintf("%.1f ms", f*1000)
	case f < 1:
		return fmt.Sprintf("%.0f ms", f*1000)
	case f < 10:
		return fmt.Sprintf("%.2f s", f)
	}
	return fmt.Sprintf("%.1f s", f)
}

// Machines numbers the distinct machines of rows (m1, m2, ... in order of
// first appearance), for the table's "measured" column.
func Machines(rows []Row) (ids map[string]string, order []string) {
	ids = map[string]string{}
	for _, r := range rows {
		if r.Machine != "" && ids[r.Machine] == "" {
			order = append(order, r.Machine)
			ids[r.Machine] = fmt.Sprintf("m%d", len(order))
		}
	}
	return ids, order
}

// Table renders the rows as a Markdown table.
func Table(rows []Row) string {
	var b strings.Builder
	ids, _ := Machines(rows)
	measured := func(r Row) string {
		if r.Measured == "" {
			return "–"
		}
		if id := ids[r.Machine]; id != "" {
			return r.Measured + " (" + id + ")"
		}
		return r.Measured
	}
	b.WriteString("| row | candidate | median (min–max) | runs | baseline | baseline median (min–max) | runs | ratio | measured |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		if !r.Available {
			fmt.Fprintf(&b, "| `%s` | %s | %s | – | %s | – | – | – | %s |\n", r.Name, r.Candidate, r.Note, r.Baseline, measured(r))
			continue
		}
		base, ratio := "–", "–"
		if r.BaselineRuns > 0 {
			base = fmt.Sprintf("%s (%s–%s)", fmtS(r.BaselineMedianS), fmtS(r.BaselineMinS), fmtS(r.BaselineMaxS))
			ratio = fmt.Sprintf("%.3fx", r.Ratio)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s (%s–%s) | %d | %s | %s | %d | %s | %s |\n", r.Name, r.Candidate,
			fmtS(r.MedianS), fmtS(r.MinS), fmtS(r.MaxS), r.Runs, r.Baseline, base, r.BaselineRuns, ratio, measured(r))
	}
	return b.String()
}
