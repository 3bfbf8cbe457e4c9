package integration

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tripleocommon"
)

// TestDeploySkipFollowsEveryFileSent: the deploy playbook skips a re-run
// exactly when nothing heat_stack would send changed. An identical re-run
// starts no Heat and writes no dump; an edited provider template that
// lives outside the top template's directory, named only by an
// environment's resource_registry, is deployed. A second deploy of the
// same working dir started while the first runs is refused at the working
// dir's lock, naming the first, and never touches the first's Heat. The
// first deploy's stack create prints its progress without -v, every
// overcloud_stack_progress_interval seconds (1 here), and leaves no job
// result file in the async directory.
func TestDeploySkipFollowsEveryFileSent(t *testing.T) {
	heattest.RequireHeat(t)
	env := ansibleEnv(t)
	root := repoRoot(t)
	samples := tripleocommon.SampleDir()
	site := t.TempDir()
	provider := filepath.Join(site, "custom", "motd.yaml")
	copyFile(t, filepath.Join(samples, "services", "sample-motd.yaml"), provider)
	motdEnv := filepath.Join(site, "env", "motd.yaml")
	os.MkdirAll(filepath.Dir(motdEnv), 0o755)
	if err := os.WriteFile(motdEnv, []byte("resource_registry:\n  OS::TripleO::Services::SampleMotd: ../custom/motd.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(t.TempDir(), "overcloud-deploy", "skip")
	heatDir := filepath.Join(work, "heat-launcher")
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	vars := jsonVars(t, map[string]any{
		"stack_name": "skip", "work_dir": work, "heat_api_port": port, "run_deploy": false,
		"template": filepath.Join(samples, "overcloud.yaml"),
		"environment_files": []string{filepath.Join(samples, "overcloud-resource-registry.yaml"),
			filepath.Join(samples, "environments", "standalone.yaml"), motdEnv},
	})
	book := filepath.Join(root, "playbooks", "deploy-overcloud.yml")
	outputs := filepath.Join(work, "outputs", "skip-outputs.yaml")

	// The first deploy, and a second one on the same working dir while it runs.
	firstRun := exec.Command("ansible-playbook", append([]string{"-i", "localhost,", book, "-e", "overcloud_stack_progress_interval=1"}, vars...)...)
	// HOME is not the user's home directory: ansible-core 2.14 would write
	// the background create's job file under $HOME/.ansible_async and look
	// for it under the user's home ("could not find job"). The role keeps
	// it in the heat_dir instead.
	home := t.TempDir()
	firstRun.Env = append(append([]string(nil), env...), "HOME="+home)
	var firstOut bytes.Buffer
	firstRun.Stdout, firstRun.Stderr = &firstOut, &firstOut
	if err := firstRun.Start(); err != nil {
		t.Fatal(err)
	}
	firstDone := make(chan error, 1)
	go func() { firstDone <- firstRun.Wait() }()
	lay, _ := workdir.New(work, "skip")
	deadline := time.Now().Add(2 * time.Minute)
	for lay.Holder() == "" {
		if time.Now().After(deadline) {
			t.Fatalf("the first deploy did not lock %s:\n%s", work, firstOut.String())
		}
		select {
		case err := <-firstDone:
			t.Fatalf("the first deploy ended (%v) before the second started:\n%s", err, firstOut.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	changed, failed, out := playbook(t, env, book, append(vars, "-e", "work_dir_lock_wait=1")...)
	if failed == 0 || !strings.Contains(out, "is in use by pid "+strconv.Itoa(firstRun.Process.Pid)) {
		t.Errorf("the second deploy of the same working dir was not refused naming the first (pid %d): changed=%d failed=%d\n%s",
			firstRun.Process.Pid, changed, failed, out)
	}
	if strings.Contains(out, "Launch Heat") || strings.Contains(out, "tear Heat down") {
		t.Errorf("the refused deploy went on to Heat:\n%s", out)
	}
	if err := <-firstDone; err != nil {
		t.Fatalf("the first deploy failed (%v) beside a refused second one:\n%s", err, firstOut.String())
	}
	if lay.Holder() != "" {
		t.Errorf("the working dir is still locked after the deploy: %s", lay.Holder())
	}
	// The job's result file (the stack's outputs) went to the heat_dir's
	// async directory (0700), not under HOME, and is removed once read.
	asyncDir := filepath.Join(heatDir, "log", "async")
	if left, err := os.ReadDir(asyncDir); err != nil || len(left) != 0 {
		t.Errorf("the async directory %s after the deploy: %v %v (want it made by the background create, and emptied)", asyncDir, left, err)
	}
	if st, err := os.Stat(asyncDir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the async directory %s: %v, %v (want mode 0700)", asyncDir, st, err)
	}
	if _, err := os.Stat(filepath.Join(home, ".ansible_async")); !os.IsNotExist(err) {
		t.Errorf("the deploy used $HOME/.ansible_async (%v), not the heat_dir's async directory", err)
	}
	// Progress, without -v: rounds while the create runs (heat_stack says
	// how long it took), not only the final one, with the resources
	// complete. How many depends on the machine's load: a round waits up to
	// the interval (1 s) for the end, then runs four more tasks, 1 to 2 s
	// in all on a loaded 2-core machine, so a 2 s create can end within the
	// first round. No more than two are asked of a create of 4 s or more.
	took := 0
	if m := regexp.MustCompile(`heat_stack finished: ok after ([0-9]+)s`).FindStringSubmatch(firstOut.String()); m != nil {
		took, _ = strconv.Atoi(m[1])
	}
	want := 1
	if took >= 4 {
		want = 2
	}
	if n := strings.Count(firstOut.String(), "TASK [ephemeral.heat.overcloud_stack : Progress of skip]"); n < want ||
		!regexp.MustCompile(`resources: [0-9]+ complete, `).MatchString(firstOut.String()) {
		t.Errorf("the create (%d s) printed %d progress rounds (want %d or more, with resources complete):\n%s", took, n, want, firstOut.String())
	}
	first, _ := dumps.List(heatDir)
	if len(first) != 1 {
		t.Fatalf("first deploy left dumps %v", first)
	}
	before := heattest.LogState(t, heatDir)

	// Identical inputs: nothing runs.
	changed, failed, out = playbook(t, env, book, vars...)
	if failed != 0 || changed != 0 {
		t.Fatalf("identical re-run: changed=%d failed=%d\n%s", changed, failed, out)
	}
	if after := heattest.LogState(t, heatDir); after != before {
		t.Errorf("the identical re-run started Heat (its logs changed):\nbefore %s\nafter  %s", before, after)
	}
	if again, _ := dumps.List(heatDir); len(again) != 1 {
		t.Errorf("the identical re-run wrote a dump: %v", again)
	}

	// The provider template outside the top template's directory changes.
	b, _ := os.ReadFile(provider)
	edited := strings.Replace(string(b), "        sample::motd::role: {get_param: RoleName}\n",
		"        sample::motd::role: {get_param: RoleName}\n        sample::motd::edited: yes-it-was\n", 1)
	if edited == string(b) {
		t.Fatal("the sample service template changed shape; update this test's edit")
	}
	if err := os.WriteFile(provider, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, failed, out = playbook(t, env, book, vars...)
	if failed != 0 || changed == 0 {
		t.Fatalf("re-run after the edit: changed=%d failed=%d\n%s", changed, failed, out)
	}
	saved, err := os.ReadFile(outputs)
	if err != nil || !strings.Contains(string(saved), "yes-it-was") {
		t.Fatalf("the edit is not in the saved outputs %s: %v", outputs, err)
	}
	if again, _ := dumps.List(heatDir); len(again) != 2 {
		t.Errorf("the deploy after the edit saved no new dump: %v", again)
	}
	// And the edited inputs are now the recorded ones.
	changed, failed, out = playbook(t, env, book, vars...)
	if failed != 0 || changed != 0 {
		t.Fatalf("re-run after the edited deploy: changed=%d failed=%d\n%s", changed, failed, out)
	}
}

// TestDeployAfterAFailedDeployRuns: the skip holds only while the last
// deploy of the working dir succeeded. After a deploy that failed (here
// its stack), the inputs of the deploy before it no longer describe the
// working dir, so deploying them again runs (Heat, a new dump, the status
// back to DEPLOY_SUCCESS); the deploy after that is skipped again.
func TestDeployAfterAFailedDeployRuns(t *testing.T) {
	heattest.RequireHeat(t)
	env := ansibleEnv(t)
	root := repoRoot(t)
	work := filepath.Join(t.TempDir(), "overcloud-deploy", "again")
	heatDir := filepath.Join(work, "heat-launcher")
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	book := filepath.Join(root, "playbooks", "deploy-overcloud.yml")
	vars := func(template string) []string {
		return jsonVars(t, testdataDeploy(root, "again", work, port, template))
	}
	lay, err := workdir.New(work, "again")
	if err != nil {
		t.Fatal(err)
	}
	status := func() string {
		s, err := lay.ReadStatus()
		if err != nil || s == nil {
			t.Fatalf("deployment status: %v %v", s, err)
		}
		return s.Status
	}

	if changed, failed, out := playbook(t, env, book, vars("tiny.yaml")...); failed != 0 || changed == 0 {
		t.Fatalf("first deploy: changed=%d failed=%d\n%s", changed, failed, out)
	}
	if _, failed, out := playbook(t, env, book, vars("fails.yaml")...); failed == 0 {
		t.Fatalf("the deploy of a failing stack did not fail:\n%s", out)
	}
	if got := status(); got != workdir.StatusFailed {
		t.Fatalf("status after the failed deploy: %s", got)
	}
	before, _ := dumps.List(heatDir)

	// The first deploy's inputs again: deployed, not "nothing to do".
	changed, failed, out := playbook(t, env, book, vars("tiny.yaml")...)
	if failed != 0 || changed == 0 || strings.Contains(out, "nothing to do") {
		t.Fatalf("the first deploy's inputs after a failed deploy: changed=%d failed=%d (want a deploy)\n%s", changed, failed, out)
	}
	if !strings.Contains(out, "the last deploy of again recorded in "+work+" did not succeed (DEPLOY_FAILED, phase ") {
		t.Errorf("the deploy does not say why it runs (the last deploy failed):\n%s", out)
	}
	if got := status(); got != workdir.StatusSuccess {
		t.Errorf("status after deploying again: %s", got)
	}
	if after, _ := dumps.List(heatDir); len(after) != len(before)+1 {
		t.Errorf("deploying again saved no new dump: %v, before %v", after, before)
	}

	// And now it is the last successful deploy: skipped.
	if changed, failed, out := playbook(t, env, book, vars("tiny.yaml")...); failed != 0 || changed != 0 {
		t.Errorf("identical re-run after it: changed=%d failed=%d\n%s", changed, failed, out)
	}
}
