package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
)

// stackInProgress reports whether the Heat of heatDir shows stack name CREATE_IN_PROGRESS.
func stackInProgress(heatDir, name string) bool {
	ini, err := heatdir.ReadINI(filepath.Join(heatDir, heatdir.HeatConf))
	if err != nil {
		return false
	}
	c := http.Client{Timeout: 3 * time.Second}
	r, err := c.Get(fmt.Sprintf("http://127.0.0.1:%s/v1/admin/stacks", ini.Get("heat_api", "bind_port")))
	if err != nil {
		return false
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	var body struct {
		Stacks []struct {
			Name   string `json:"stack_name"`
			Status string `json:"stack_status"`
		}
	}
	json.Unmarshal(b, &body)
	for _, s := range body.Stacks {
		if s.Name == name && s.Status == "CREATE_IN_PROGRESS" {
			return true
		}
	}
	return false
}

// TestSIGINTDuringStackCreateTearsDown interrupts deploy-overcloud.yml as
// Ctrl-C would (SIGINT to its process group) while the stack is being
// created: ansible runs no always section then, so the launcher's watchdog
// must dump the database and stop Heat. A second SIGINT, sent only if the
// first was lost, changes nothing of that: the playbook still ends without
// its always section.
func TestSIGINTDuringStackCreateTearsDown(t *testing.T) {
	heattest.RequireHeat(t)
	env := ansibleEnv(t)
	root := repoRoot(t)
	work := filepath.Join(t.TempDir(), "overcloud-deploy", "slow")
	heatDir := filepath.Join(work, "heat-launcher")
	port, _ := proc.FreePort()
	vars, _ := json.Marshal(testdataDeploy(root, "slow", work, port, "slow.yaml"))
	cmd := exec.Command("ansible-playbook", "-i", "localhost,", filepath.Join(root, "playbooks", "deploy-overcloud.yml"), "-e", string(vars))
	cmd.Env = env
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Whatever happens, leave no Heat behind.
		for _, p := range proc.FindByArg(filepath.Join(heatDir, heatdir.HeatConf)) {
			proc.StopGroup(p.PGID, time.Second, 5*time.Second)
		}
	})
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(3 * time.Minute)
	for !stackInProgress(heatDir, "slow") {
		select {
		case err := <-exited:
			t.Fatalf("ansible-playbook ended (%v) before the stack was being created:\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
			t.Fatalf("the stack never got to CREATE_IN_PROGRESS:\n%s", out.String())
		}
		time.Sleep(300 * time.Millisecond)
	}
	wd, ok := launch.WatchdogOf(heatDir)
	if !ok {
		t.Fatalf("the launch started no watchdog for the playbook:\n%s", out.String())
	}
	// Ctrl-C: SIGINT to the playbook's whole process group. Python can lose
	// a single SIGINT that lands in its at-fork logging handler ("Exception
	// ignored in: <function _releaseLock>"), and ansible-playbook then goes
	// on; an operator presses Ctrl-C again, and so does this test, once.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Logf("ansible-playbook still running 20 s after the first SIGINT; sending a second one")
		syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(60 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
			t.Fatalf("ansible-playbook did not exit after two SIGINTs:\n%s", out.String())
		}
	}
	// Teardown: no Heat, a verified dump holding the interrupted stack.
	deadline = time.Now().Add(2 * time.Minute)
	for {
		gone := len(proc.FindByArg(filepath.Join(heatDir, heatdir.HeatConf))) == 0
		list, _ := dumps.List(heatDir)
		// The watchdog's work is done when its process ends.
		wdAlive, _ := wd.Check()
		if gone && len(list) > 0 && !wdAlive {
			if _, err := dumps.VerifyChecksum(list[0]); err != nil {
				t.Fatal(err)
			}
			m, _ := dumps.ReadManifest(list[0])
			if m == nil || len(m.Stacks) != 1 || m.Stacks[0].Name != "slow" {
				t.Fatalf("the dump does not hold the interrupted stack: %+v", m)
			}
			break
		}
		if time.Now().After(deadline) {
			wlog, _ := os.ReadFile(filepath.Join(heatDir, heatdir.LogDir, heatdir.WatchdogLog))
			t.Fatalf("after SIGINT: Heat gone=%v, dumps=%v, watchdog running=%v\nwatchdog log:\n%s\nplaybook:\n%s", gone, list, wdAlive, wlog, out.String())
		}
		time.Sleep(time.Second)
	}
	if !proc.PortFree("127.0.0.1", port) {
		t.Errorf("the API port is still in use")
	}

	// What the operator does next: deploy again into the same working dir
	// and port (here a stack that completes at once). The interrupted run's
	// background heat_stack may still be ending beside it.
	again := testdataDeploy(root, "slow", work, port, "tiny.yaml")
	changed, failed, rerun := playbook(t, env, filepath.Join(root, "playbooks", "deploy-overcloud.yml"), jsonVars(t, again)...)
	if failed != 0 || changed == 0 {
		t.Fatalf("the deploy after the interrupted one: changed=%d failed=%d\n%s", changed, failed, rerun)
	}
	if !strings.Contains(rerun, "did not succeed (DEPLOYING, phase ") || !strings.Contains(rerun, "interrupted, or its host went down") {
		t.Errorf("the deploy after the interrupted one does not say that the last one did not end:\n%s", rerun)
	}
	if got := proc.FindByArg(filepath.Join(heatDir, heatdir.HeatConf)); len(got) != 0 {
		t.Errorf("Heat still runs after the second deploy: %v", got)
	}
}
