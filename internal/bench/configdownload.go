package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ConfigDownloadBenchmark is the Go benchmark internal/configdownload
// provides for rendering a 50-node stack's outputs.
const ConfigDownloadBenchmark = "BenchmarkRender50Nodes"

// ConfigDownloadRow runs internal/configdownload's BenchmarkRender50Nodes
// (go test -bench, one sample per -count) when the package has it.
func ConfigDownloadRow(ctx context.Context, env *Env, rounds int) Row {
	const name, title = "config_download_50", "config-download rendering of a 50-node stack's outputs"
	cand, base := "internal/configdownload ("+ConfigDownloadBenchmark+")", "none in this run (tripleo-common's config download is not installed here)"
	pkg := env.Module + "/internal/configdownload"
	list, err := exec.CommandContext(ctx, "go", "test", "-list", "^"+ConfigDownloadBenchmark+"$", pkg).CombinedOutput()
	if err != nil || !strings.Contains(string(list), ConfigDownloadBenchmark) {
		why := "internal/configdownload has no " + ConfigDownloadBenchmark + " yet"
		if err != nil {
			why += " (or does not build: " + firstLine(list) + ")"
		}
		return Unavailable(name, title, cand, base, why)
	}
	out, err := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "^"+ConfigDownloadBenchmark+"$",
		"-count", strconv.Itoa(rounds), pkg).CombinedOutput()
	if err != nil {
		return Unavailable(name, title, cand, base, "go test -bench failed: "+firstLine(out))
	}
	var s Samples
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], ConfigDownloadBenchmark) {
			continue
		}
		for i := 2; i+1 < len(f); i++ {
			if f[i+1] == "ns/op" {
				if ns, err := strconv.ParseFloat(f[i], 64); err == nil {
					s = append(s, time.Duration(ns))
				}
			}
		}
	}
	if len(s) == 0 {
		return Unavailable(name, title, cand, base, "no ns/op in the benchmark output")
	}
	fmt.Fprintf(env.Log, "  config_download_50: %d samples\n", len(s))
	return NewRow(name, title, cand, base, s, nil, "each sample is go test -bench's mean time per render; no baseline ratio")
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
