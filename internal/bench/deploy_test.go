package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The junit callback's report of a deploy: tasks charged to their phase by
// the role that ran them (ephemeral_heat launches, then dumps and tears
// down), the playbook's own tasks and the wall time outside the tasks to
// rest; a missing, doubled or empty report is an error.
func TestPlaybookPhases(t *testing.T) {
	const report = `<?xml version="1.0" ?>
<testsuites>
 <testsuite name="deploy" tests="7">
  <testcase classname="/c/playbooks/deploy_overcloud.yml:75" name="[localhost] Check: Lock the working dir" time="0.5"/>
  <testcase classname="/c/roles/ephemeral_heat/tasks/main.yml:10" name="[localhost] Deploy: Launch" time="3.0"/>
  <testcase classname="/c/roles/overcloud_stack/tasks/main.yml:5" name="[localhost] Deploy: Create" time="20.0"/>
  <testcase classname="/c/playbooks/deploy_overcloud.yml:304" name="[localhost] Deploy: Save the stack's outputs, environment and nodes" time="1.0"/>
  <testcase classname="/c/roles/config_download/tasks/main.yml:3" name="[localhost] Deploy: Render" time="2.0"/>
  <testcase classname="/c/playbooks/deploy_overcloud.yml:339" name="[localhost] Deploy: Write the export files and the rc" time="0.25"/>
  <testcase classname="/c/roles/ephemeral_heat/tasks/main.yml:10" name="[localhost] Deploy: Save Heat's database" time="4.0"/>
 </testsuite>
</testsuites>`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "deploy-1.xml"), []byte(report), 0o600); err != nil {
		t.Fatal(err)
	}
	tasks, err := readJUnit(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := playbookPhases(tasks, 40*time.Second)
	want := map[string]float64{phaseLaunch: 3, phaseStack: 21, phaseConfig: 2.25, phaseDump: 4, phaseRest: 40 - 30.75 + 0.5}
	for ph, w := range want {
		if g := got[ph].Seconds(); g < w-0.001 || g > w+0.001 {
			t.Errorf("phase %s: %.3f s, want %.3f (all: %s)", ph, g, w, got)
		}
	}

	for _, tc := range []struct {
		name, want string
		files      map[string]string
	}{
		{"none", "found 0", nil},
		{"two", "found 2", map[string]string{"a.xml": report, "b.xml": report}},
		{"empty", "lists no task", map[string]string{"a.xml": `<testsuites><testsuite name="x"></testsuite></testsuites>`}},
		{"garbage", "junit report", map[string]string{"a.xml": "<testsuites"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			for n, b := range tc.files {
				if err := os.WriteFile(filepath.Join(d, n), []byte(b), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := readJUnit(d); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("readJUnit: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// The split prints every phase, ours against stock, "–" where a side has no run.
func TestPhaseSplit(t *testing.T) {
	ours := []phaseTimes{{phaseLaunch: 2 * time.Second, phaseStack: 30 * time.Second}, {phaseLaunch: 4 * time.Second, phaseStack: 40 * time.Second}}
	got := phaseSplit(ours, nil)
	for _, want := range []string{"launch 3.0 / –", "stack 35.0 / –", "config-download 0.0 / –", "rest 0.0 / –"} {
		if !strings.Contains(got, want) {
			t.Errorf("phaseSplit: %q lacks %q", got, want)
		}
	}
}
