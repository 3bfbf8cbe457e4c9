package realtht

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stack"
	"github.com/ephemeral-heat/ephemeral-heat/internal/templates"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tht"
)

// Suite is the state the steps share. Each step reads what the earlier ones
// set and may change the stack, saying so in its doc comment so that the
// next step knows what it starts from.
type Suite struct {
	// Heat is the one test Heat (stopped, with its database, when
	// TestRealTHT ends); Client talks to it.
	Heat   *heattest.Heat
	Client *heatapi.Client
	// Workload is the tests/tht workload the stack was created from; Opts
	// the options that generated it (a step changing inputs regenerates
	// with modified Opts in its own work directory, or edits files under
	// Workload.WorkDir and says so).
	Workload *tht.Workload
	Opts     tht.Options
	// Stack is the stack (set by "create"); Outcome the last heat_stack
	// outcome on it.
	Stack   heatapi.StackRef
	Outcome stack.Outcome
	// Params are the module parameters the steps added (nil: none).
	Params map[string]any
}

// StackOptions are heat_stack's options for the suite's workload: what
// every step that runs heat_stack on the stack starts from.
func (s *Suite) StackOptions(t *testing.T) stack.Options {
	return stack.Options{
		Name:             s.Workload.StackName,
		Template:         s.Workload.Template,
		EnvironmentFiles: s.Workload.EnvironmentFiles,
		Parameters:       s.Workload.Parameters,
		Timeout:          s.Workload.TimeoutMins,
		Wait:             true,
		Warn:             func(f string, a ...any) { t.Logf("warning: "+f, a...) },
	}
}

// Run prepares and runs heat_stack with o on the suite's Heat.
func (s *Suite) Run(t *testing.T, o stack.Options) (stack.Outcome, time.Duration) {
	t.Helper()
	req, err := stack.Prepare(o)
	if err != nil {
		t.Fatalf("heat_stack prepare: %v", err)
	}
	start := time.Now()
	out, err := req.Run(context.Background(), s.Client)
	d := time.Since(start)
	if err != nil {
		t.Fatalf("heat_stack %s after %s: %v (failures: %v)", out.Action, d.Round(time.Millisecond), err, out.Failures)
	}
	return out, d
}

// step is one ordered subtest of TestRealTHT.
type step struct {
	name string
	run  func(t *testing.T, s *Suite)
}

// steps run in this order, each on the state the previous ones left; the
// first failing step stops the sequence (the later ones depend on it). Add
// a step where its precondition holds, and document what it leaves:
//
//	create        CREATE_COMPLETE, resources/stacks/outputs as measured
//	outputs       read-only
//	rerun         identical inputs: changed=false, no UPDATE event
//	skip-digest   the deploy playbook's skip digest (digest_only): equal cold
//	              and cached, changed by a deep edit (reverted); no Heat
//	parameter     check mode sees CloudName (no update), then applies it
//	rerun-param   identical re-run after it
//	deep-edit     check mode sees an edited service template named only by
//	              the registry (no update), then applies it
//	rerun-edit    identical re-run after it
//	config-download  ours against tripleo-common's own on the stack
//	              (tests/tripleocommon); read-only
//	scale-down    Compute 3 → remove overcloud-novacompute-1 through the
//	              scale_down playbook (THT's scale_playbook.yaml limited to
//	              it), then the next deploy through deploy-overcloud.yml (its
//	              own Heat), its identical re-run (skipped: no Heat, no dump)
//	              and a re-run after an edit of a provider template outside
//	              the tree (scaledown_test.go); the shared stack is left as it was
//	lifecycle     update prepare, then upgrade prepare, through the playbooks
//	              on that working dir (each its own Heat, THT's lifecycle
//	              environments); config-download's lifecycle playbooks checked
//	              with tripleo-ansible (lifecycle_test.go); the shared stack is
//	              left as it was
//	export        the deploy's export, cell export and overcloud export
//	              against tripleoclient's own export_overcloud on the working
//	              dir, saved anew from the shared stack (export_test.go);
//	              read-only on the stack
var steps = []step{
	{"create", stepCreate},
	{"outputs", stepOutputs},
	{"rerun", stepRerun},
	{"skip-digest", stepSkipDigest},
	{"parameter", stepParameter},
	{"rerun-param", stepRerun},
	{"deep-edit", stepDeepEdit},
	{"rerun-edit", stepRerun},
	{"config-download", stepConfigDownload},
	{"scale-down", stepScaleDown},
	{"lifecycle", stepLifecycle},
	{"export", stepExport},
}

// suiteOptions are the workload's options. THT and tripleo-common come from
// EPHEMERAL_HEAT_THT / EPHEMERAL_HEAT_TRIPLEO_COMMON or ../shared/reference.
func suiteOptions(workDir string) tht.Options {
	return tht.Options{WorkDir: workDir, ControllerCount: 1, ComputeCount: 3}
}

func TestRealTHT(t *testing.T) {
	heattest.RequireHeat(t)
	s := &Suite{Opts: suiteOptions(filepath.Join(t.TempDir(), "overcloud-deploy"))}
	var err error
	if s.Workload, err = tht.Generate(s.Opts); err != nil {
		t.Fatalf("generating the real-THT workload: %v", err)
	}
	t.Logf("workload: render %s (cached %v), copy %s, environments %s",
		s.Workload.Timings.Render.Round(time.Millisecond), s.Workload.Timings.RenderCached,
		s.Workload.Timings.Copy.Round(time.Millisecond), s.Workload.Timings.Environments.Round(time.Millisecond))
	s.Heat = heattest.Start(t, nil)
	if s.Client, err = heatapi.NewNoAuth(s.Heat.Endpoint); err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		if !t.Run(st.name, func(t *testing.T) { st.run(t, s) }) {
			t.Fatalf("step %q failed: the steps after it depend on it", st.name)
		}
	}
}

// isReferenceTHT reports whether the workload comes from the stable/wallaby
// reference tarballs the expected figures were measured on.
func isReferenceTHT(w *tht.Workload) bool {
	return filepath.Base(w.THTSource) == tht.THTTarball && os.Getenv(tht.EnvTHT) == ""
}

// Measured on the reference stable/wallaby tree, Controller×1 + Compute×3
// (the scale-down step removes one of three Computes): 663 resources, 284
// stacks, 22 outputs. With Compute×2 it is 647, 275, 22, as
// ../shared/notes/heat-reference.md §9 gives: a Compute adds 16 resources
// and 9 stacks.
const (
	wantResources = 663
	wantStacks    = 284
	wantOutputs   = 22
)

// stepCreate creates the stack. Leaves: CREATE_COMPLETE; s.Stack,
// s.Outcome (with the outputs) set.
func stepCreate(t *testing.T, s *Suite) {
	o := s.StackOptions(t)
	procStart := time.Now()
	b, err := templates.Process(o.Template, o.EnvironmentFiles)
	if err != nil {
		t.Fatalf("processing the workload: %v", err)
	}
	body, err := b.RequestBody(map[string]any{"stack_name": o.Name, "timeout_mins": o.Timeout}, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("processed in %s: POST body %d bytes, %d files, %d environment files",
		time.Since(procStart).Round(time.Millisecond), len(body), len(b.Files), len(b.EnvironmentFiles))

	out, d := s.Run(t, o)
	if out.Action != stack.ActionCreate || !out.Changed || out.Stack == nil || out.Stack.Status != "CREATE_COMPLETE" {
		t.Fatalf("create: action %s changed %v stack %+v: %s", out.Action, out.Changed, out.Stack, out.Msg)
	}
	s.Stack, s.Outcome = heatapi.StackRef{Name: out.Stack.Name, ID: out.Stack.ID}, out

	listStart := time.Now()
	res, err := s.Client.ListResources(context.Background(), s.Stack, heatapi.ResourceListOpts{NestedDepth: stack.NestedDepth})
	if err != nil {
		t.Fatal(err)
	}
	listed := time.Since(listStart)
	stacks, byDepth := shape(t, s.Stack, res)
	var notComplete []string
	for _, r := range res {
		if r.Status != "CREATE_COMPLETE" {
			notComplete = append(notComplete, r.Name+" "+r.Status)
		}
	}
	t.Logf("create: %s, %d resources (by nesting depth: %v; listed in %s), %d stacks, %d outputs",
		d.Round(time.Second), len(res), byDepth, listed.Round(time.Millisecond), stacks, len(out.Outputs))
	if len(notComplete) > 0 {
		t.Errorf("resources not CREATE_COMPLETE: %v", notComplete)
	}
	if len(out.OutputErrors) > 0 {
		t.Errorf("output errors: %v", out.OutputErrors)
	}
	if isReferenceTHT(s.Workload) {
		got := [3]int{len(res), stacks, len(out.Outputs)}
		if want := [3]int{wantResources, wantStacks, wantOutputs}; got != want {
			t.Errorf("resources, stacks, outputs = %v, want %v (measured on the reference wallaby tree, Controller×1 + Compute×3)", got, want)
		}
	} else if len(res) == 0 || len(out.Outputs) == 0 {
		t.Errorf("%d resources, %d outputs", len(res), len(out.Outputs))
	}
}

// stepOutputs checks the outputs config-download and the inventory read
// against the workload's hosts. Read-only.
func stepOutputs(t *testing.T, s *Suite) {
	outs := s.Outcome.Outputs
	for _, k := range []string{"RoleData", "RoleConfig", "RoleNetIpMap", "RoleNetHostnameMap", "ServerIdData",
		"HostsEntry", "EnabledServices", "RoleGroupVars", "AnsibleHostVarsMap", "GlobalConfig", "VipMap", "EndpointMap"} {
		if _, ok := outs[k]; !ok {
			t.Errorf("output %s is missing (outputs: %v)", k, sortedKeys(outs))
		}
	}
	roleData, _ := outs["RoleData"].(map[string]any)
	for _, role := range []string{"Controller", "Compute"} {
		rd, ok := roleData[role].(map[string]any)
		if !ok {
			t.Errorf("RoleData has no %s", role)
			continue
		}
		for _, k := range []string{"config_settings", "docker_config", "upgrade_tasks", "host_prep_tasks", "deploy_steps_tasks"} {
			if _, ok := rd[k]; !ok {
				t.Errorf("RoleData.%s has no %s", role, k)
			}
		}
	}
	// With network isolation off every network is the ctlplane: each role's
	// ctlplane IPs and hostnames are the workload's hosts, in index order.
	ipMap, _ := outs["RoleNetIpMap"].(map[string]any)
	nameMap, _ := outs["RoleNetHostnameMap"].(map[string]any)
	for _, role := range []string{"Controller", "Compute"} {
		var wantIPs, wantNames []any
		for _, h := range s.Workload.HostsOf(role) {
			wantIPs = append(wantIPs, h.CtlplaneIP)
			wantNames = append(wantNames, h.Name+".ctlplane.localdomain")
		}
		gotIPs := path(ipMap, role, "ctlplane")
		if !reflect.DeepEqual(gotIPs, wantIPs) {
			t.Errorf("RoleNetIpMap.%s.ctlplane = %v, want %v", role, gotIPs, wantIPs)
		}
		if got := path(nameMap, role, "ctlplane"); !reflect.DeepEqual(got, wantNames) {
			t.Errorf("RoleNetHostnameMap.%s.ctlplane = %v, want %v", role, got, wantNames)
		}
	}
	hostsEntry := fmt.Sprint(outs["HostsEntry"])
	for _, h := range s.Workload.Hosts {
		if !strings.Contains(hostsEntry, h.CtlplaneIP+" "+h.Name+".localdomain") {
			t.Errorf("HostsEntry lacks %s %s.localdomain:\n%s", h.CtlplaneIP, h.Name, hostsEntry)
		}
	}
	servers, _ := outs["ServerIdData"].(map[string]any)
	ids, _ := servers["server_ids"].(map[string]any)
	for _, role := range []string{"Controller", "Compute"} {
		if l, _ := ids[role].([]any); len(l) != len(s.Workload.HostsOf(role)) {
			t.Errorf("ServerIdData.server_ids.%s = %v, want %d servers", role, ids[role], len(s.Workload.HostsOf(role)))
		}
	}
}

// shape counts the stacks (the top one and every nested one) and the
// resources at each nesting depth (0: the top stack's own).
func shape(t *testing.T, top heatapi.StackRef, res []heatapi.Resource) (int, []int) {
	depth := map[string]int{top.ID: 0}
	parent := map[string]string{} // nested stack id -> the stack holding its resource
	for _, r := range res {
		if n, ok := r.NestedStack(); ok {
			if st, ok := r.Stack(); ok {
				parent[n.ID] = st.ID
			}
		}
	}
	var depthOf func(id string, seen int) int
	depthOf = func(id string, seen int) int {
		if d, ok := depth[id]; ok {
			return d
		}
		p, ok := parent[id]
		if !ok || seen > len(parent) {
			t.Fatalf("stack %s: its parent is not among the listed resources", id)
		}
		depth[id] = depthOf(p, seen+1) + 1
		return depth[id]
	}
	var byDepth []int
	for _, r := range res {
		st, ok := r.Stack()
		if !ok {
			t.Fatalf("resource %s has no stack link", r.Name)
		}
		d := depthOf(st.ID, 0)
		for len(byDepth) <= d {
			byDepth = append(byDepth, 0)
		}
		byDepth[d]++
	}
	for id := range parent {
		depthOf(id, 0)
	}
	return len(depth), byDepth
}

func path(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
