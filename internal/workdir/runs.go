package workdir

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// Runs is lifecycle-runs.sha256: the lifecycle runs that succeeded since
// the last deploy (ours), one line each, "<deploy fingerprint> <run
// digest>". A run whose digest is there for the current deploy
// fingerprint is not run again (the playbooks say so; force_run runs it).
func (l Layout) Runs() string { return l.path("lifecycle-runs.sha256") }

// RunDigest is the fingerprint of a run's inputs: the command, its limit,
// its playbooks (as config-download names them), tags and skip_tags, and
// the fingerprint of the deploy (the prepare) it runs after. "" when no
// deploy fingerprint is recorded (such a run is never skipped).
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
		"tags": norm(tags), "skip_tags": norm(skipTags), "deploy": deploy})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// readRuns returns the run digests recorded for the current deploy.
func (l Layout) readRuns() (deploy string, done []string, err error) {
	if deploy, err = l.ReadFingerprint(); err != nil {
		return "", nil, err
	}
	b, err := readFile(l.Runs(), "lifecycle runs record")
	if isNotExist(err) {
		return deploy, nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == deploy && fingerprintRE.MatchString(f[1]) {
			done = append(done, f[1])
		}
	}
	return deploy, done, nil
}

// RunDone reports whether a run of digest succeeded since the last deploy.
func (l Layout) RunDone(digest string) (bool, error) {
	if digest == "" {
		return false, nil
	}
	_, done, err := l.readRuns()
	return containsString(done, digest), err
}

// RecordRun records a run of digest that succeeded (atomically, mode
// 0600; records of earlier deploys are dropped) and reports whether the
// file changed. In check mode nothing is written.
func (l Layout) RecordRun(digest string, check bool) (bool, error) {
	if !fingerprintRE.MatchString(digest) {
		return false, fmt.Errorf("run_digest %q is not a sha256 in hex (plan_run returns it)", digest)
	}
	deploy, done, err := l.readRuns()
	if err != nil {
		return false, err
	}
	if deploy == "" {
		return false, fmt.Errorf("no deploy of %s is recorded in %s: a run is recorded after the prepare it runs on", l.Stack, l.Dir)
	}
	if containsString(done, digest) {
		return false, nil
	}
	var b strings.Builder
	for _, d := range append(done, digest) {
		fmt.Fprintf(&b, "%s %s\n", deploy, d)
	}
	if check {
		return true, nil
	}
	if _, err := l.Ensure(); err != nil {
		return false, err
	}
	if err := fsutil.WriteFileAtomic(l.Runs(), []byte(b.String()), fsutil.SecretFileMode); err != nil {
		return false, fmt.Errorf("recording the run: %w", err)
	}
	return true, nil
}
