package realtht

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stack"
)

// The steps of issue 15: a re-run is decided from the inputs. A parameter
// and an edited template deep in the tree (a service template named only
// by the resource registry) are each seen by check mode without an update,
// applied, and followed by an identical re-run that changes nothing.

// updateEvents counts the stack's own UPDATE_IN_PROGRESS events.
func updateEvents(t *testing.T, s *Suite) int {
	t.Helper()
	ev, err := s.Client.ListEvents(context.Background(), s.Stack, heatapi.EventListOpts{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ev {
		if e.PhysicalID == s.Stack.ID && e.Status == "UPDATE_IN_PROGRESS" {
			n++
		}
	}
	return n
}

// options are the suite's heat_stack options plus the steps' parameters.
func (s *Suite) options(t *testing.T) stack.Options {
	o := s.StackOptions(t)
	if s.Params != nil {
		o.Parameters = s.Params
	}
	return o
}

// stepRerun: identical inputs, nothing happens. Leaves the stack as it was.
func stepRerun(t *testing.T, s *Suite) {
	before := updateEvents(t, s)
	out, d := s.Run(t, s.options(t))
	t.Logf("identical re-run: %s (%s)", d.Round(time.Millisecond), out.Msg)
	if out.Changed || out.Action != stack.ActionNone {
		t.Fatalf("identical re-run: changed=%v action=%s preview=%+v", out.Changed, out.Action, out.Preview)
	}
	if after := updateEvents(t, s); after != before {
		t.Fatalf("the identical re-run updated the stack (%d -> %d UPDATE events)", before, after)
	}
	if len(out.Outputs) != wantOutputsOf(s) {
		t.Errorf("the re-run returned %d outputs", len(out.Outputs))
	}
}

func wantOutputsOf(s *Suite) int { return len(s.Outcome.Outputs) }

// checkThenApply runs o in check mode (changed, nothing updated, the
// difference named by want), then for real (UPDATE_COMPLETE).
func checkThenApply(t *testing.T, s *Suite, o stack.Options, want string) {
	before := updateEvents(t, s)
	c := o
	c.CheckMode = true
	out, d := s.Run(t, c)
	t.Logf("check mode: %s; partial: %q; %d updated, %d replaced", d.Round(time.Millisecond), out.Preview.Partial, len(out.Preview.Updated), len(out.Preview.Replaced))
	if !out.Changed || out.Action != stack.ActionUpdate {
		t.Fatalf("check mode: changed=%v action=%s", out.Changed, out.Action)
	}
	if got := out.Preview.Summary(); !strings.Contains(got, want) {
		t.Errorf("check mode names %q, want it to name %q", got, want)
	}
	if after := updateEvents(t, s); after != before {
		t.Fatalf("check mode updated the stack")
	}
	out, d = s.Run(t, o)
	t.Logf("update: %s (%s)", d.Round(time.Second), out.Msg)
	if !out.Changed || out.Stack == nil || out.Stack.Status != "UPDATE_COMPLETE" {
		t.Fatalf("update: changed=%v stack %+v", out.Changed, out.Stack)
	}
	if after := updateEvents(t, s); after != before+1 {
		t.Errorf("UPDATE events %d -> %d, want one more", before, after)
	}
	s.Outcome = out
}

// stepParameter changes one parameter of the top template (CloudName,
// which the outputs carry among the cloud names). Module parameters are Heat's
// "parameters": top-level ones only. Leaves: updated; s.Params set.
func stepParameter(t *testing.T, s *Suite) {
	o := s.options(t)
	o.Parameters = map[string]any{"CloudName": "overcloud.example.test"}
	checkThenApply(t, s, o, "parameters CloudName")
	s.Params = o.Parameters
	if !strings.Contains(mustJSON(t, s.Outcome.Outputs), "overcloud.example.test") {
		t.Errorf("no output carries the new CloudName")
	}
}

// stepDeepEdit edits the chrony service template, which only the resource
// registry names (OS::TripleO::Services::Timesync), in the workload's own
// copy of the tree. Leaves: updated with the edit.
func stepDeepEdit(t *testing.T, s *Suite) {
	p := filepath.Join(s.Workload.TemplateDir, "deployment", "timesync", "chrony-baremetal-ansible.yaml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	const anchor = "      ansible_group_vars:\n"
	if !strings.Contains(string(b), anchor) {
		t.Fatalf("%s has no %q: the tree changed; pick another edit", p, anchor)
	}
	edited := strings.Replace(string(b), anchor, anchor+"        ephemeral_heat_test_edited: deep-edit-seen\n", 1)
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	checkThenApply(t, s, s.options(t), "chrony-baremetal-ansible.yaml")
	if !strings.Contains(mustJSON(t, s.Outcome.Outputs), "deep-edit-seen") {
		t.Errorf("no output carries the edit")
	}
}
