package launch

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// slowNode is a provider template whose create waits, so a stack of them
// stays IN_PROGRESS (with its nested stacks) long enough to be interrupted.
const slowNode = `{"heat_template_version": "2016-10-14",
 "resources": {"r": {"type": "OS::Heat::TestResource", "properties": {"action_wait_secs": {"create": 600}}}}}`

func inProgress(t *testing.T, c *heatapi.Client) []heatapi.StackSummary {
	t.Helper()
	s, err := c.ListStacks(context.Background(), heatapi.StackListOpts{ShowNested: true, Status: "IN_PROGRESS"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Heat killed during a create leaves the stack and its nested stacks
// IN_PROGRESS; the relaunch returns only once Heat has reset them all to
// FAILED, so an update sent right away is accepted.
func TestRelaunchWaitsForInterruptedStacks(t *testing.T) {
	requireHeat(t)
	var w warnings
	o := newOpts(t, &w)
	out := run(t, o, Started)
	c, err := heatapi.NewNoAuth(out.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{
		"stack_name": "slow", "files": map[string]string{"node.yaml": slowNode},
		"template": map[string]any{"heat_template_version": "2016-10-14", "resources": map[string]any{
			"g": map[string]any{"type": "OS::Heat::ResourceGroup", "properties": map[string]any{
				"count": 3, "resource_def": map[string]any{"type": "node.yaml"}}}}},
	})
	resp, err := http.Post(out.Endpoint+"/stacks", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("create: %s", resp.Status)
	}
	// The top stack, the group and its three members, all in progress.
	deadline := time.Now().Add(2 * time.Minute)
	for len(inProgress(t, c)) < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("the stacks never were all in progress: %+v", inProgress(t, c))
		}
		time.Sleep(200 * time.Millisecond)
	}
	syscall.Kill(-out.PID, syscall.SIGKILL)
	proc.StopGroup(out.PID, time.Second, 5*time.Second) // until gone

	start := time.Now()
	again := run(t, o, Started)
	t.Logf("relaunch returned in %s: %s", time.Since(start).Round(time.Millisecond), again.Msg)
	if left := inProgress(t, c); len(left) != 0 {
		t.Fatalf("the launch returned with stacks still in progress: %+v", left)
	}
	if len(again.Reset) != 5 || !strings.Contains(strings.Join(again.Reset, " "), "slow") || !w.has("Heat set it to FAILED") {
		t.Errorf("reset stacks not reported: %v, warnings %v", again.Reset, w)
	}
	// An update right away is not refused as "in progress".
	ref, err := c.FindStack(context.Background(), "slow")
	if err != nil {
		t.Fatal(err)
	}
	upd := `{"template": {"heat_template_version": "2016-10-14", "resources": {}}}`
	if err := c.UpdateStack(context.Background(), ref, []byte(upd), false); err != nil {
		t.Fatalf("update right after the relaunch: %v", err)
	}
	st, err := c.GetStack(context.Background(), ref, false)
	if err != nil || !strings.HasPrefix(st.Status, "UPDATE_") {
		t.Errorf("after the update: %+v %v", st, err)
	}
}
