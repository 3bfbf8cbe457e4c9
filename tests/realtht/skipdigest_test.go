package realtht

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/stack"
)

// stepSkipDigest: the deploy playbook's skip decision on the real tree
// (issue 24 item 1). The playbook asks heat_stack for the digest of what it
// would send (digest_only: processing only, Heat is not contacted) and
// skips the deploy when it equals the digest recorded by the last deploy.
// On the real tree: the digest of identical inputs is the same on a cold
// processing (no cache, as on a fresh machine) and a warm one, and an edit
// to a service template deep in the tree, named only through the resource
// registry, changes it. Leaves the stack and the files as they were.
func stepSkipDigest(t *testing.T, s *Suite) {
	digest := func(cache string) (string, time.Duration) {
		t.Helper()
		t.Setenv("EPHEMERAL_HEAT_TEMPLATE_CACHE", cache)
		start := time.Now()
		req, err := stack.Prepare(s.options(t))
		if err != nil {
			t.Fatalf("heat_stack prepare: %v", err)
		}
		in := req.Inputs()
		if in == nil {
			t.Fatal("no inputs for a present stack")
		}
		return in.Digest(), time.Since(start)
	}
	cacheDir := t.TempDir()
	cold, dCold := digest("off")
	warm1, d1 := digest(cacheDir)
	warm2, d2 := digest(cacheDir)
	t.Logf("digest of the real tree's inputs: cold %s, first with the cache %s, cached %s (the playbook's skip check adds ansible's own start)",
		dCold.Round(time.Millisecond), d1.Round(time.Millisecond), d2.Round(time.Millisecond))
	if cold != warm1 || warm1 != warm2 {
		t.Fatalf("identical inputs, different digests: cold %s, then %s, then %s", cold, warm1, warm2)
	}
	p := filepath.Join(s.Workload.TemplateDir, "deployment", "timesync", "chrony-baremetal-ansible.yaml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}()
	// A change of what is sent (a comment would not be: the template goes
	// to Heat parsed, as JSON).
	const anchor = "      ansible_group_vars:\n"
	if !strings.Contains(string(b), anchor) {
		t.Fatalf("%s has no %q: the tree changed; pick another edit", p, anchor)
	}
	edited := strings.Replace(string(b), anchor, anchor+"        ephemeral_heat_test_digest: seen\n", 1)
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if edited, _ := digest(cacheDir); edited == warm2 {
		t.Fatalf("an edit of %s did not change the digest (%s): the playbook would skip the deploy", p, edited)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if back, _ := digest(cacheDir); back != cold {
		t.Fatalf("the file restored, the digest is %s, not %s", back, cold)
	}
}
