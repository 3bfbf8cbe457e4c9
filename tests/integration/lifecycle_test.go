package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tripleocommon"
)

// lifecyclePlaybooks are the playbooks the sample's RoleConfig gives for a
// minor update and a major upgrade (THT's common/deploy-steps.j2).
var lifecyclePlaybooks = []string{"update_steps_playbook.yaml", "upgrade_steps_playbook.yaml",
	"post_upgrade_steps_playbook.yaml", "external_update_steps_playbook.yaml", "external_upgrade_steps_playbook.yaml"}

// lifecycleStack is the sample's standalone variant with two Computes on
// this host (loopback addresses, ansible_connection local), created with a
// lifecycle environment.
type lifecycleStack struct {
	stage   string // SampleLifecycleStage, the environment's base name
	name    string
	markers string // SampleMarkerDir
	dest    string // its config-download
}

func (s lifecycleStack) compute(i int) string { return fmt.Sprintf("%s-novacompute-%d", s.name, i) }

// lifecycleLog is a host's lifecycle log as lines.
func lifecycleLog(t *testing.T, dir, host string) []string {
	t.Helper()
	return strings.Fields(strings.ReplaceAll(readFile(t, filepath.Join(dir, host+".lifecycle.log")), " step", "_step"))
}

// steps are "<phase>_step<N>" for N in from..to.
func steps(phase string, from, to int) []string {
	var s []string
	for i := from; i <= to; i++ {
		s = append(s, fmt.Sprintf("%s_step%d", phase, i))
	}
	return s
}

// markerNames lists the file names in dir, sorted.
func markerNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// hostMarkers are the names of the markers the update or the upgrade leave
// on host: <host>.<phase>.step<N> for each phase's steps, the deploy
// steps' markers and the log.
func hostMarkers(host string, extra []string, phases map[string]int) []string {
	names := []string{host + ".lifecycle.log", host + ".motd", host + ".step1", host + ".step2"}
	for phase, n := range phases {
		for i := 0; i < n; i++ {
			names = append(names, fmt.Sprintf("%s.%s.step%d", host, phase, i))
		}
	}
	names = append(names, extra...)
	sort.Strings(names)
	return names
}

// TestSampleLifecycle creates the sample overcloud with each of its
// lifecycle environments (update-prepare, upgrade-prepare,
// upgrade-converge: one stack each, created together), renders each with
// config_download and checks the lifecycle playbooks: they exist, pass
// --syntax-check and list the tasks of one Compute in step order. Then it
// runs them on this host: update_steps_playbook.yaml limited to one
// Compute (only its markers appear, the update steps, the deploy steps and
// the post-update steps in that order, holding the stage), the upgrade
// (upgrade_steps, deploy_steps and post_upgrade_steps playbooks in one run,
// limited to one Compute, with upgrade-prepare's UpgradeInitCommonCommand),
// the external update with --tags ceph (the undercloud's step 0 only) and,
// after the converge, the whole external upgrade (steps 0-2).
func TestSampleLifecycle(t *testing.T) {
	heattest.RequireHeat(t)
	if _, err := exec.LookPath("ansible-playbook"); err != nil {
		t.Skip("ansible-playbook is not installed")
	}
	h := heattest.Start(t, nil)
	c, err := heatapi.NewNoAuth(h.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	var stacks []lifecycleStack
	for _, sn := range [][2]string{{"update-prepare", "lc-update"}, {"upgrade-prepare", "lc-upgrade"}, {"upgrade-converge", "lc-converge"}} {
		stage, name := sn[0], sn[1]
		stacks = append(stacks, lifecycleStack{stage: stage, name: name,
			markers: filepath.Join(tmp, name, "markers"), dest: filepath.Join(tmp, name, "config-download", name)})
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(stacks))
	for i, s := range stacks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = tripleocommon.DeploySample(context.Background(), c, s.name,
				// the lifecycle environment first, as tripleoclient prepends it
				[]string{"environments/lifecycle/" + s.stage + ".yaml", "environments/standalone.yaml"},
				map[string]any{"SampleMarkerDir": s.markers, "ComputeCount": 2,
					"ComputeIPs":            map[string]any{"ctlplane": []string{"127.0.0.2", "127.0.0.3"}},
					"ComputeExtraGroupVars": map[string]any{"ansible_connection": "local"}}, t.Logf)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("three stacks in %s", time.Since(start).Round(time.Second))

	env, err := tripleocommon.AnsibleEnv(nil, tmp)
	if err != nil {
		t.Fatal(err)
	}
	// Every host is this one: pipelining runs each module without copying
	// it to a temporary file first (fewer processes per task).
	env = append(env, "ANSIBLE_PIPELINING=1")
	for _, s := range stacks {
		out, err := configdownload.Run(context.Background(), c, configdownload.RunOptions{Stack: s.name, Dest: s.dest, Commit: true})
		if err != nil {
			t.Fatalf("config download of %s: %v", s.name, err)
		}
		want := []string{s.compute(0), s.compute(1), "standalone"}
		if !reflect.DeepEqual(out.Hosts, want) {
			t.Fatalf("%s: hosts %v, want %v", s.name, out.Hosts, want)
		}
		// The playbooks, the tasks they import, and each role's tasks per step.
		files := append([]string{"external_deploy_steps_tasks.yaml", "external_update_steps_tasks.yaml",
			"external_upgrade_steps_tasks.yaml", "post_upgrade_steps_tasks.yaml"}, lifecyclePlaybooks...)
		for _, role := range []string{"Controller", "Compute"} {
			files = append(files, role+"/post_upgrade_tasks.yaml", role+"/external_update_tasks.yaml", role+"/external_upgrade_tasks.yaml")
			for i := 0; i < 6; i++ {
				files = append(files, fmt.Sprintf("%s/update_tasks_step%d.yaml", role, i), fmt.Sprintf("%s/upgrade_tasks_step%d.yaml", role, i))
			}
			for i := 0; i < 4; i++ {
				files = append(files, fmt.Sprintf("%s/post_update_tasks_step%d.yaml", role, i))
			}
		}
		for _, f := range files {
			mustExist(t, filepath.Join(s.dest, f))
		}
		// Split by step: the step 3 file has the step 3 block only; the
		// stage and the init command are the environment's.
		step3 := readFile(t, filepath.Join(s.dest, "Compute", "update_tasks_step3.yaml"))
		if !strings.Contains(step3, "Sample update step 3") || strings.Contains(step3, "Sample update step 2") ||
			!strings.Contains(step3, "sample_lifecycle_stage: "+s.stage) {
			t.Errorf("%s: Compute/update_tasks_step3.yaml:\n%s", s.name, step3)
		}
		init := strings.Contains(readFile(t, filepath.Join(s.dest, "Compute", "upgrade_tasks_step0.yaml")), "upgrade-prepare.yaml")
		if init != (s.stage == "upgrade-prepare") {
			t.Errorf("%s: UpgradeInitCommonCommand of upgrade-prepare.yaml in upgrade_tasks_step0.yaml: %v", s.name, init)
		}
		runIn(t, env, s.dest, "ansible-playbook", append([]string{"-i", configdownload.InventoryFile, "--syntax-check"}, lifecyclePlaybooks...)...)
	}

	// --list-tasks limited to a Compute: its update, then host prep, deploy
	// and post-update steps, in step order; the upgrade's steps in order.
	s := stacks[0]
	list := runIn(t, env, s.dest, "ansible-playbook", "-i", configdownload.InventoryFile, "--list-tasks",
		"--limit", s.compute(1), "update_steps_playbook.yaml", "upgrade_steps_playbook.yaml")
	checkUpdateListing(t, list)
	inOrder(t, list, "playbook: upgrade_steps_playbook.yaml", "Upgrade tasks for step 0", "Upgrade tasks for step 1",
		"Upgrade tasks for step 2", "Upgrade tasks for step 3", "Upgrade tasks for step 4", "Upgrade tasks for step 5")

	// The update of one Compute: only its markers, in step order.
	start = time.Now()
	host := s.compute(1)
	out := runIn(t, env, s.dest, "ansible-playbook", "-i", configdownload.InventoryFile, "--limit", host, "update_steps_playbook.yaml")
	t.Logf("update_steps_playbook.yaml --limit %s: %s", host, time.Since(start).Round(time.Millisecond))
	if !recapFor(host).MatchString(out) || strings.Contains(out, "standalone ") || strings.Contains(out, s.compute(0)+" ") {
		t.Errorf("update run:\n%s", out)
	}
	if got, want := markerNames(t, s.markers), hostMarkers(host, nil, map[string]int{"update": 6, "post_update": 4}); !reflect.DeepEqual(got, want) {
		t.Errorf("markers after the update of %s: %v, want %v", host, got, want)
	}
	wantLog := append(append(steps("update", 0, 5), steps("deploy", 1, 5)...), steps("post_update", 0, 3)...)
	if got := lifecycleLog(t, s.markers, host); !reflect.DeepEqual(got, wantLog) {
		t.Errorf("%s.lifecycle.log: %v, want %v", host, got, wantLog)
	}
	for _, f := range []string{host + ".update.step0", host + ".post_update.step3"} {
		if got := readFile(t, filepath.Join(s.markers, f)); got != "update-prepare\n" {
			t.Errorf("%s: %q, want the stage", f, got)
		}
	}

	// The external update, only what --tags ceph names: step 0, on the undercloud.
	runIn(t, env, s.dest, "ansible-playbook", "-i", configdownload.InventoryFile, "--tags", "ceph", "external_update_steps_playbook.yaml")
	if got := readFile(t, filepath.Join(s.markers, "undercloud.external_update.step0")); got != "update-prepare\n" {
		t.Errorf("undercloud.external_update.step0: %q", got)
	}
	if _, err := os.Stat(filepath.Join(s.markers, "undercloud.external_update.step1")); err == nil {
		t.Errorf("--tags ceph ran external update step 1 (tagged online_upgrade)")
	}
	if got := lifecycleLog(t, s.markers, "undercloud"); !reflect.DeepEqual(got, []string{"external_update_step0"}) {
		t.Errorf("undercloud.lifecycle.log: %v", got)
	}

	// The upgrade of one Compute as `overcloud upgrade run` runs it: upgrade
	// steps, deploy steps (the deployments left out: they need the hook
	// runner) and post-upgrade steps.
	s = stacks[1]
	host = s.compute(0)
	start = time.Now()
	out = runIn(t, env, s.dest, "ansible-playbook", "-i", configdownload.InventoryFile, "--limit", host,
		"--skip-tags", "pre_deploy_steps,post_deploy_steps", "upgrade_steps_playbook.yaml", "deploy_steps_playbook.yaml", "post_upgrade_steps_playbook.yaml")
	t.Logf("upgrade of %s: %s", host, time.Since(start).Round(time.Millisecond))
	if !recapFor(host).MatchString(out) {
		t.Errorf("upgrade run:\n%s", out)
	}
	if got, want := markerNames(t, s.markers), hostMarkers(host, []string{host + ".upgrade_init"}, map[string]int{"upgrade": 6, "post_upgrade": 4}); !reflect.DeepEqual(got, want) {
		t.Errorf("markers after the upgrade of %s: %v, want %v", host, got, want)
	}
	wantLog = append(append(steps("upgrade", 0, 5), steps("deploy", 1, 5)...), steps("post_upgrade", 0, 3)...)
	if got := lifecycleLog(t, s.markers, host); !reflect.DeepEqual(got, wantLog) {
		t.Errorf("%s.lifecycle.log: %v, want %v", host, got, wantLog)
	}
	if got := readFile(t, filepath.Join(s.markers, host+".post_upgrade.step2")); got != "upgrade-prepare\n" {
		t.Errorf("%s.post_upgrade.step2: %q", host, got)
	}

	// After the converge: the whole external upgrade (no tags), with the
	// converge's stage.
	s = stacks[2]
	start = time.Now()
	runIn(t, env, s.dest, "ansible-playbook", "-i", configdownload.InventoryFile, "external_upgrade_steps_playbook.yaml")
	t.Logf("external_upgrade_steps_playbook.yaml: %s", time.Since(start).Round(time.Millisecond))
	if got, want := markerNames(t, s.markers), []string{"undercloud.external_upgrade.step0", "undercloud.external_upgrade.step1",
		"undercloud.external_upgrade.step2", "undercloud.lifecycle.log"}; !reflect.DeepEqual(got, want) {
		t.Errorf("markers after the external upgrade: %v, want %v", got, want)
	}
	if got := lifecycleLog(t, s.markers, "undercloud"); !reflect.DeepEqual(got, steps("external_upgrade", 0, 2)) {
		t.Errorf("undercloud.lifecycle.log: %v", got)
	}
	if got := readFile(t, filepath.Join(s.markers, "undercloud.external_upgrade.step2")); got != "upgrade-converge\n" {
		t.Errorf("undercloud.external_upgrade.step2: %q", got)
	}
}

// inOrder checks that each of want is in text, after the one before.
func inOrder(t *testing.T, text string, want ...string) {
	t.Helper()
	at := 0
	for _, w := range want {
		i := strings.Index(text[at:], w)
		if i < 0 {
			t.Errorf("%q is not in the listing after offset %d:\n%s", w, at, text)
			return
		}
		at += i + len(w)
	}
}

// checkUpdateListing checks the Compute play of update_steps_playbook.yaml
// in a --list-tasks listing: the marker directory and update steps 0-5
// (two tasks each), host prep, the deploy steps 0-5 (each reports its
// step; the step 1 marker before the step 2 one), then the marker
// directory and post-update steps 0-3.
func checkUpdateListing(t *testing.T, list string) {
	t.Helper()
	var names []string
	in := false
	for _, l := range strings.Split(list, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "play #"):
			in = strings.Contains(l, "(Compute): Run update")
		case strings.HasPrefix(l, "playbook:"):
			in = false
		case in && l != "" && l != "tasks:":
			names = append(names, strings.TrimSpace(strings.SplitN(l, "\tTAGS:", 2)[0]))
		}
	}
	lifecycle := func(n int) []string {
		s := []string{"Make sure the sample marker directory exists"}
		for i := 0; i < n; i++ {
			s = append(s, "Write the lifecycle step marker", "Append the step to the lifecycle log")
		}
		return s
	}
	hp, last, reports := -1, -1, 0
	for i, n := range names {
		switch n {
		case "Host prep tasks of the role":
			hp = i
		case "Report the deploy step":
			last, reports = i, reports+1
		}
	}
	if hp < 0 || last < hp || reports != 6 || !reflect.DeepEqual(names[:hp], lifecycle(6)) ||
		!reflect.DeepEqual(names[last+1:], lifecycle(4)) {
		t.Fatalf("the Compute play of update_steps_playbook.yaml lists %q", names)
	}
	inOrder(t, strings.Join(names[hp:last], "\n"), "Write the step 1 marker", "Write the step 2 marker")
}
