package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stack"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tht"
)

// RealTHT is the real tripleo-heat-templates workload (package tests/tht)
// at one size, plus the environment of the "one changed parameter" update.
type RealTHT struct {
	W *tht.Workload
	// UpdateEnv is an environment file that changes one parameter
	// (TimeZone, used by every role's timezone service), added last for
	// the update rows, as an operator adds or edits an -e file.
	UpdateEnv string
}

// UpdateParameter and UpdateValue are the parameter the update rows change.
const (
	UpdateParameter = "TimeZone"
	UpdateValue     = "Europe/Paris"
)

// NewRealTHT generates the workload with computes Compute nodes (and one
// Controller) under dir.
func NewRealTHT(dir string, computes int) (*RealTHT, error) {
	return NewRealTHTNodes(dir, 1, computes)
}

// NewRealTHTNodes is NewRealTHT with controllers Controller nodes.
func NewRealTHTNodes(dir string, controllers, computes int) (*RealTHT, error) {
	w, err := tht.Generate(tht.Options{WorkDir: dir, ControllerCount: controllers, ComputeCount: computes})
	if err != nil {
		return nil, err
	}
	env := filepath.Join(dir, "update-one-parameter.yaml")
	if err := os.WriteFile(env, []byte(fmt.Sprintf("parameter_defaults:\n  %s: %s\n", UpdateParameter, UpdateValue)), 0o644); err != nil {
		return nil, err
	}
	return &RealTHT{W: w, UpdateEnv: env}, nil
}

// Envs are the environment files, with the update's last when updated.
func (r *RealTHT) Envs(updated bool) []string {
	envs := append([]string(nil), r.W.EnvironmentFiles...)
	if updated {
		envs = append(envs, r.UpdateEnv)
	}
	return envs
}

// OursOptions are heat_stack's options for the workload (its defaults:
// status polls slow down to every 2 s).
func (r *RealTHT) OursOptions(updated bool) stack.Options {
	return stack.Options{Name: r.W.StackName, Template: r.W.Template, EnvironmentFiles: r.Envs(updated),
		Parameters: r.W.Parameters, Timeout: r.W.TimeoutMins, Wait: true}
}

// HeatStack runs heat_stack's code (Prepare: template processing; Run) with o
// and returns the time taken and the outcome.
func HeatStack(ctx context.Context, endpoint string, o stack.Options) (time.Duration, stack.Outcome, error) {
	start := time.Now()
	c, err := heatapi.NewNoAuth(endpoint)
	if err != nil {
		return 0, stack.Outcome{}, err
	}
	req, err := stack.Prepare(o)
	if err != nil {
		return 0, stack.Outcome{}, err
	}
	out, err := req.Run(ctx, c)
	d := time.Since(start)
	if err != nil {
		return d, out, fmt.Errorf("heat_stack %s: %w", out.Action, err)
	}
	return d, out, nil
}

// OursExpect is HeatStack, failing unless the stack ends in want (a status such
// as CREATE_COMPLETE; "" for a deleted stack) and heat_stack reports
// changed as wantChanged.
func OursExpect(ctx context.Context, endpoint string, o stack.Options, want string, wantChanged bool) (time.Duration, error) {
	d, out, err := HeatStack(ctx, endpoint, o)
	if err != nil {
		return d, err
	}
	got := ""
	if out.Stack != nil {
		got = out.Stack.Status
	}
	if o.State == stack.Absent {
		got = ""
		if out.Stack != nil && out.Stack.Status != "DELETE_COMPLETE" {
			got = out.Stack.Status
		}
	}
	if got != want || out.Changed != wantChanged {
		return d, fmt.Errorf("heat_stack: stack %q changed=%v, want %q changed=%v", got, out.Changed, want, wantChanged)
	}
	return d, nil
}

// heatclientOps runs an operation the way python-tripleoclient stable/wallaby
// does with python-heatclient: template_utils processing (get_template_contents,
// process_multiple_environments_and_files with an environment tracker:
// overcloud_deploy.py _heat_deploy), stacks.create with template, files and
// environment_files (workflows/deployment.py deploy_without_plan; no
// timeout_mins), then utils.wait_for_stack_ready: event_utils.poll_for_events
// every 5 s with nested_depth 2. An update is the full PUT tripleoclient's
// older releases made (existing=False), waited the same way after the
// last event as marker; a delete is stacks.delete waited the same way. A
// preview is the plain PUT .../preview (no show_nested). It prints the
// final status.
const heatclientOps = `
import sys
from heatclient import client as heat_client
from heatclient.common import event_utils, template_utils

op, endpoint, name, template = sys.argv[1:5]
envs = sys.argv[5:]
hc = heat_client.Client('1', endpoint=endpoint, token='ephemeral')

def inputs():
    tpl_files, tpl = template_utils.get_template_contents(template_file=template)
    tracker = []
    env_files, _ = template_utils.process_multiple_environments_and_files(
        env_paths=envs, env_list_tracker=tracker)
    files = dict(list(tpl_files.items()) + list(env_files.items()))
    return dict(template=tpl, files=files, environment_files=tracker)

def wait(stack_id, action, marker=None):
    status, msg = event_utils.poll_for_events(
        hc, '%s/%s' % (name, stack_id), action=action, poll_period=5,
        marker=marker, out=open('/dev/null', 'w'), nested_depth=2)
    print(status)

if op == 'create':
    r = hc.stacks.create(stack_name=name, **inputs())
    wait(r['stack']['id'], 'CREATE')
elif op == 'update':
    st = hc.stacks.get(name)
    events = event_utils.get_events(hc, stack_id=name, event_args={'sort_dir': 'desc', 'limit': 1})
    marker = events[0].id if events else None
    hc.stacks.update(st.id, existing=False, **inputs())
    wait(st.id, 'UPDATE', marker)
elif op == 'preview':
    st = hc.stacks.get(name)
    p = hc.stacks.preview_update(st.id, existing=False, **inputs())
    print('PREVIEW %d' % sum(len(v) for v in p['resource_changes'].values()))
elif op == 'delete':
    st = hc.stacks.get(name)
    events = event_utils.get_events(hc, stack_id=name, event_args={'sort_dir': 'desc', 'limit': 1})
    marker = events[0].id if events else None
    hc.stacks.delete(st.id)
    wait(st.id, 'DELETE', marker)
`

// Heatclient runs op (create, update, preview, delete) with python-heatclient
// as python-tripleoclient does (heatclientOps); the whole python3 process
// is timed (interpreter start and imports included, as an operator pays
// them). It fails unless the printed status is want.
func Heatclient(ctx context.Context, endpoint, op string, r *RealTHT, updated bool, want string) (time.Duration, error) {
	args := append([]string{"-c", heatclientOps, op, endpoint, r.W.StackName, r.W.Template}, r.Envs(updated)...)
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("heatclient %s: %v: %s", op, err, tailString(stderr.String(), 600))
	}
	got := strings.TrimSpace(string(out))
	if !strings.HasPrefix(got, want) {
		return d, fmt.Errorf("heatclient %s: got %q, want %s", op, got, want)
	}
	return d, nil
}

func tailString(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
