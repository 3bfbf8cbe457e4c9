package workdir

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/lifecycle"
)

// Runs is lifecycle-runs.sha256: the digests of the lifecycle runs that
// succeeded since the last prepare (ours), one a line. A deploy of any
// stage but an upgrade converge forgets them (RecordDeploy), so the runs
// of an upgrade stay done after its converge. A recorded run is not run
// again (the playbooks say so; force_run runs it).
func (l Layout) Runs() string { return l.path("lifecycle-runs.sha256") }

// RunDigest is the fingerprint of a run's inputs: the command, its limit,
// its playbooks (as config-download names them), tags and skip_tags. ""
// when no deploy is recorded (such a run is never skipped).
func (l Layout) RunDigest(p *RunPlan, tags, skipTags []string) (string, error) {
	deploy, err := l.ReadFingerprint()
	if err != nil || deploy == "" {
		return "", err
	}
	books := make([]string, len(p.Playbooks))
	for i, b := range p.Playbooks {
		if rel, err := filepath.Rel(l.ConfigDownload(), b); err == nil && !strings.HasPrefix(rel, "..") {
			b = rel
		}
		books[i] = b
	}
	norm := func(s []string) []string {
		out := append([]string{}, s...)
		sort.Strings(out)
		return out
	}
	b, err := json.Marshal(map[string]any{"run": p.Run.Name, "limit": p.Limit, "playbooks": books,
		"tags": norm(tags), "skip_tags": norm(skipTags)})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// readRuns returns the recorded run digests.
func (l Layout) readRuns() ([]string, error) {
	b, err := readFile(l.Runs(), "lifecycle runs record")
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var done []string
	for _, line := range strings.Split(string(b), "\n") {
		if d := strings.TrimSpace(line); fingerprintRE.MatchString(d) {
			done = append(done, d)
		}
	}
	return done, nil
}

// RunDone reports whether a run of digest succeeded since the last prepare.
func (l Layout) RunDone(digest string) (bool, error) {
	if digest == "" {
		return false, nil
	}
	done, err := l.readRuns()
	return containsString(done, digest), err
}

// RecordRun records a run of digest that succeeded (atomically, mode
// 0600) and reports whether the file changed. In check mode nothing is
// written.
func (l Layout) RecordRun(digest string, check bool) (bool, error) {
	if !fingerprintRE.MatchString(digest) {
		return false, fmt.Errorf("run_digest %q is not a sha256 in hex (plan_run returns it)", digest)
	}
	done, err := l.readRuns()
	if err != nil {
		return false, err
	}
	if containsString(done, digest) {
		return false, nil
	}
	if check {
		return true, nil
	}
	if _, err := l.Ensure(); err != nil {
		return false, err
	}
	content := strings.Join(append(done, digest), "\n") + "\n"
	if err := fsutil.WriteFileAtomic(l.Runs(), []byte(content), fsutil.SecretFileMode); err != nil {
		return false, fmt.Errorf("recording the run: %w", err)
	}
	return true, nil
}

// RecordDeploy records a successful deploy of stage: the fingerprint of
// its inputs (WriteFingerprint) and, but for an upgrade converge, a new
// lifecycle: the runs recorded so far are forgotten. It reports whether
// anything changed. In check mode nothing is written.
func (l Layout) RecordDeploy(fp, stage string, check bool) (bool, error) {
	changed, err := l.WriteFingerprint(fp, check)
	if err != nil || stage == lifecycle.UpgradeConverge {
		return changed, err
	}
	if _, err := os.Lstat(l.Runs()); err != nil {
		return changed, nil
	}
	if check {
		return true, nil
	}
	if err := os.Remove(l.Runs()); err != nil && !os.IsNotExist(err) {
		return changed, fmt.Errorf("forgetting the runs of the last prepare: %w", err)
	}
	return true, nil
}
