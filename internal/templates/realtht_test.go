package templates_test

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/templates"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tht"
)

// realTHT is the real tripleo-heat-templates workload (tests/tht): the
// rendered stable/wallaby tree and its environments.
func realTHT(tb testing.TB) *tht.Workload {
	tb.Helper()
	w, err := tht.Generate(tht.Options{WorkDir: filepath.Join(tb.TempDir(), "oc")})
	if err != nil {
		tb.Fatalf("generating the real-THT workload (tests/tht): %v", err)
	}
	return w
}

// deterministicEnvs are the workload's environments without the one that
// holds generated passwords (tripleoclient-parameters.yaml).
func deterministicEnvs(w *tht.Workload) []string {
	var out []string
	for _, e := range w.EnvironmentFiles {
		if filepath.Base(e) != tht.ParametersEnv {
			out = append(out, e)
		}
	}
	return out
}

// realTHTBodyDigest is the SHA-256 of the create request body for the
// stable/wallaby tree (../shared/reference) with deterministicEnvs, the
// tree's directory written as /THT: what this package sent before it was
// made faster. Process must keep sending exactly these bytes.
const realTHTBodyDigest = "c658097eefa7012614e943d0d263a51ee6782a7f8468d7de57220dd4f64777f6"

// TestRealTHTBytesUnchanged: processing the real tree sends the same bytes
// as before (the digest above), and the same bytes however many times it
// runs (the files are read and parsed concurrently), from the cache too.
func TestRealTHTBytesUnchanged(t *testing.T) {
	w := realTHT(t)
	envs := deterministicEnvs(w)
	var first string
	for i := 0; i < 5; i++ {
		if i == 3 {
			// Runs 4 and 5 with the cache: made, then used.
			t.Setenv(templates.CacheEnv, filepath.Join(t.TempDir(), "cache"))
		}
		b, err := templates.Process(w.Template, envs)
		if err != nil {
			t.Fatal(err)
		}
		body, err := b.RequestBody(map[string]any{"stack_name": "overcloud"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Files) < 150 {
			t.Fatalf("only %d files processed: not the real tree", len(b.Files))
		}
		norm := strings.ReplaceAll(string(body), w.TemplateDir, "/THT")
		sum := sha256.Sum256([]byte(norm))
		digest := hex.EncodeToString(sum[:])
		if i == 0 {
			first = digest
			t.Logf("body: %d bytes, %d files, digest %s", len(body), len(b.Files), digest)
		} else if digest != first {
			t.Fatalf("run %d sent other bytes (%s) than run 1 (%s)", i+1, digest, first)
		}
	}
	if !strings.HasSuffix(w.THTSource, tht.THTTarball) {
		t.Logf("THT source %s is not the reference tarball: the digest of the reference tree is not compared", w.THTSource)
		return
	}
	if first != realTHTBodyDigest {
		t.Errorf("the request body for the reference tree changed: digest %s, want %s", first, realTHTBodyDigest)
	}
}

// BenchmarkProcessRealTHT processes the real tree and builds the create
// request body, as heat_stack does on every run: from the cache (made by a
// first run), and without it (Cold); besides the wall time per run it
// reports the CPU time of the process per run (cpu-ms/op), which a busy
// machine disturbs less.
func BenchmarkProcessRealTHT(b *testing.B) {
	b.Setenv(templates.CacheEnv, filepath.Join(b.TempDir(), "cache"))
	benchmarkProcess(b)
}

func BenchmarkProcessRealTHTCold(b *testing.B) {
	b.Setenv(templates.CacheEnv, "off")
	benchmarkProcess(b)
}

func benchmarkProcess(b *testing.B) {
	w := realTHT(b)
	if _, err := templates.Process(w.Template, w.EnvironmentFiles); err != nil {
		b.Fatal(err)
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ResetTimer()
	start := cpu()
	defer func() {
		b.ReportMetric(float64(cpu()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	}()
	for i := 0; i < b.N; i++ {
		bd, err := templates.Process(w.Template, w.EnvironmentFiles)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := bd.RequestBody(map[string]any{"stack_name": "overcloud"}, 0); err != nil {
			b.Fatal(err)
		}
	}
}
