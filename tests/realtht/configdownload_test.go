package realtht

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tripleocommon"
)

// stepConfigDownload is config_download's differential test on the real
// stack (issue 16): our render and tripleo-common stable/wallaby's own
// config download and inventory (the workload's tripleo-common source),
// against the same Heat, must agree on the file set, the YAML/JSON values,
// ansible-inventory --list, and --syntax-check/--list-tasks of every
// playbook with tripleo-ansible on the paths, but for the differences
// tripleocommon.Allowed explains. Read-only.
func stepConfigDownload(t *testing.T, s *Suite) {
	p := configDownloadParity(t, s)
	for _, f := range []string{"deploy_steps_playbook.yaml", "deployments.yaml", "Controller/deploy_steps_tasks_step1.yaml",
		"Compute/deploy_steps_tasks_step5.yaml", "group_vars/Controller", "templates/heat-config.j2"} {
		if _, err := os.Stat(filepath.Join(p.Ours, f)); err != nil {
			t.Errorf("%v", err)
		}
	}
}

// configDownloadParity runs the differential test on s.Stack, fails t on
// each unexplained difference, checks that the rendering has every host of
// the workload and at least three playbooks, and returns the run.
func configDownloadParity(t *testing.T, s *Suite) *tripleocommon.Parity {
	t.Helper()
	if err := tripleocommon.RequirePython(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tc, err := tripleocommon.ExtractTripleoCommonFrom(s.Workload.TripleoCommonSource, filepath.Join(dir, "tripleo-common"))
	if err != nil {
		t.Fatal(err)
	}
	ta, err := tripleocommon.ExtractTripleoAnsible(filepath.Join(dir, "tripleo-ansible"))
	if err != nil {
		t.Fatal(err)
	}
	p, warnings, err := tripleocommon.RunParity(context.Background(), s.Client, s.Stack.Name, filepath.Join(dir, "work"), tc, &ta)
	for _, w := range warnings {
		t.Logf("warning: %s", w)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("config download: ours %s, tripleo-common's %s (python3 process %s); playbooks checked: %v",
		p.OursTime.Round(time.Millisecond), p.TheirsTime.Round(time.Millisecond), p.TheirsWall.Round(time.Millisecond), p.Playbooks)
	for _, pr := range p.Problems {
		t.Errorf("%s", pr)
	}
	// The rendering has the workload's hosts and THT's playbooks.
	for _, h := range s.Workload.Hosts {
		if _, err := os.Stat(filepath.Join(p.Ours, "host_vars", strings.ToLower(h.Name))); err != nil {
			t.Errorf("host %s: %v", h.Name, err)
		}
	}
	if len(p.Playbooks) < 3 {
		t.Errorf("playbooks checked: %v", p.Playbooks)
	}
	// With software deployments (site-a's swap), ours found them from
	// their stacks, without the listing of every nested stack: the parity
	// above holds for that way.
	files, err := tripleocommon.DeploymentFiles(p.Ours)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) > 0 && p.Lookup != configdownload.LookupStacks {
		t.Errorf("%d deployments found by %q, want %q", len(files), p.Lookup, configdownload.LookupStacks)
	}
	return p
}
