package robustness

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentScaleDowns: two scale-downs of one working dir at once,
// each naming another node, both end up in the scale-down environment,
// every try (the working dir's lock orders them; the second plans from
// what the first wrote).
func TestConcurrentScaleDowns(t *testing.T) {
	const tries = 20
	s := newSandbox(t)
	wd := workDir(s, wdNodes, nil)
	env := filepath.Join(wd, "overcloud-scale-down.yaml")
	for i := 0; i < tries; i++ {
		os.Remove(env)
		var wg sync.WaitGroup
		runs := make([]run, 2)
		for j, host := range []string{"overcloud-novacompute-0", "overcloud-novacompute-2"} {
			wg.Add(1)
			go func(j int, host string) {
				defer wg.Done()
				runs[j] = runModule(t, s, "overcloud_workdir", a{"work_dir": wd, "action": "scale_down", "hosts": []any{host}, "lock_wait": 30}, "")
			}(j, host)
		}
		wg.Wait()
		for j, r := range runs {
			if r.timedOut || r.parseErr != nil || r.res["failed"] == true {
				t.Fatalf("try %d, scale-down %d: %s %s", i, j, r.stdout, r.stderr)
			}
		}
		b, err := os.ReadFile(env)
		if err != nil {
			t.Fatalf("try %d: %v", i, err)
		}
		got := string(b)
		if !strings.Contains(got, "ComputeCount: 1") || !strings.Contains(got, "- 0\n") || !strings.Contains(got, "- 2\n") {
			t.Fatalf("try %d: the scale-down environment lost a removal:\n%s", i, got)
		}
	}
}
