// Command heat_stack is the Ansible module (and command-line tool) that
// creates, updates and deletes a Heat stack, with check mode, diffs,
// outputs and the failed resources of a failed stack.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatloc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stack"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stackname"
	"github.com/ephemeral-heat/ephemeral-heat/internal/templates"
)

var spec = &module.Spec{
	Name:  "heat_stack",
	Short: "create, update or delete a Heat stack and wait for it",
	Params: append([]module.Param{
		{Name: "name", Required: true, Check: stackname.Checker(stackname.Heat), Help: "stack name"},
		{Name: "state", Default: stack.Present, Choices: []string{stack.Present, stack.Absent}, Help: "present or absent"},
		{Name: "template", Type: module.Path, Help: "top template (required to create, or to update without existing)"},
		{Name: "environment_files", Type: module.List, Elements: module.Path, Help: "environment files, later ones override earlier ones"},
		{Name: "parameters", Type: module.Dict, Help: "parameters (highest precedence), as JSON or key=value"},
		{Name: "timeout", Type: module.Int, Default: 240, Range: module.Between(1, stack.MaxTimeoutMinutes), Help: "minutes: Heat's timeout_mins and how long to wait"},
		{Name: "timeout_s", Type: module.Int, Range: module.Between(1, stack.MaxTimeoutMinutes*60),
			Help: "seconds, as openstack.cloud.stack's timeout, instead of timeout: rounded up to whole minutes"},
		{Name: "max_template_size", Type: module.Int, Default: templates.DefaultMaxTemplateSize, Range: module.Between(1, templates.MaxInputSize),
			Help: "bytes: the largest template (top or provider) read, as Heat's max_template_size"},
		{Name: "max_json_body_size", Type: module.Int, Default: templates.DefaultMaxJSONBodySize, Range: module.Between(1, templates.MaxInputSize),
			Help: "bytes: the largest request (and environment or get_file file) sent, as Heat's max_json_body_size"},
		{Name: "rollback", Type: module.Bool, Default: false, Help: "let Heat roll back a failed create or update"},
		{Name: "tags", Type: module.List, Help: "stack tags"},
		{Name: "wait", Type: module.Bool, Default: true, Help: "wait for the stack to reach a final status"},
		{Name: "existing", Type: module.Bool, Default: false, Help: "update with PATCH: keep what is not given"},
		{Name: "digest_only", Type: module.Bool, Default: false, Help: "only process the template and environments and return inputs_digest; Heat is not contacted"},
		{Name: "progress_file", Type: module.Path, Help: "write live progress (resources complete, events) to this file, anew at each run"},
	}, heatloc.Params("")...),
}

func run(ctx *module.Context) (module.Result, error) {
	p := ctx.Params
	minutes := p.Int("timeout")
	if p.Given("timeout_s") {
		if p.Given("timeout") {
			return module.Result{"changed": false}, fmt.Errorf("give timeout (minutes) or timeout_s (seconds), not both")
		}
		minutes = (p.Int("timeout_s") + 59) / 60
	}
	opts := stack.Options{
		Name:             p.Str("name"),
		State:            p.Str("state"),
		Template:         p.Str("template"),
		EnvironmentFiles: p.Strings("environment_files"),
		Parameters:       p.Dict("parameters"),
		Timeout:          minutes,
		Rollback:         p.Bool("rollback"),
		Tags:             p.Strings("tags"),
		Wait:             p.Bool("wait"),
		Existing:         p.Bool("existing"),
		Limits:           templates.Limits{Template: int64(p.Int("max_template_size")), Body: int64(p.Int("max_json_body_size"))},
		MaxBodyBytes:     p.Int("max_json_body_size"),
		Given:            func(n string) bool { return p.Given(n) || (n == "timeout" && p.Given("timeout_s")) },
		CheckMode:        ctx.CheckMode,
		Diff:             ctx.Diff,
		Warn:             ctx.Warn,
	}
	if ctx.Interactive {
		opts.Progress = ctx.Progress
	}
	if pf := p.Str("progress_file"); pf != "" && !p.Bool("digest_only") {
		log, err := stack.OpenProgressLog(pf)
		if err != nil {
			return module.Result{"changed": false}, err
		}
		defer log.Close()
		if opts.Progress != nil {
			opts.Progress = io.MultiWriter(opts.Progress, log)
		} else {
			opts.Progress = log
		}
		res, err := runStack(ctx, opts)
		log.Finish(res, err, ctx.Mask)
		return res, err
	}
	return runStack(ctx, opts)
}

// runStack runs heat_stack with opts.
func runStack(ctx *module.Context, opts stack.Options) (module.Result, error) {
	p := ctx.Params
	// Where Heat is: exactly one location, none needed with digest_only.
	loc, _, err := heatloc.FromParams(p, os.Getenv, p.Bool("digest_only"))
	if err != nil {
		return module.Result{"changed": false}, err
	}
	// Everything local is checked before Heat is contacted.
	req, err := stack.Prepare(opts)
	if err != nil {
		return module.Result{"changed": false}, err
	}
	for _, v := range req.HiddenValues() {
		ctx.AddSecret(v)
	}
	// With existing=true and no template, Heat tells which parameters are
	// hidden when the run reads the stack: their values are registered then.
	defer func() {
		for _, v := range req.HiddenValues() {
			ctx.AddSecret(v)
		}
	}()
	if p.Bool("digest_only") {
		in := req.Inputs()
		if in == nil {
			return module.Result{"changed": false}, fmt.Errorf("digest_only needs state=present, a template, and existing=false")
		}
		return module.Result{"changed": false, "inputs_digest": in.Digest(), "files": req.LocalFiles(),
			"msg": fmt.Sprintf("processed %d files; Heat was not contacted", len(req.LocalFiles()))}, nil
	}
	bg := context.Background()
	client, err := loc.Connect(bg, ctx.AddSecret)
	if err != nil {
		return module.Result{"changed": false}, err
	}
	out, err := req.Run(bg, client)
	res := module.Result{
		"changed":  out.Changed,
		"action":   out.Action,
		"endpoint": client.Endpoint(),
	}
	if out.Msg != "" {
		res["msg"] = out.Msg
	}
	if out.Stack != nil {
		res["stack"] = out.Stack
		// openstack.cloud.stack's top-level id.
		res["id"] = out.Stack.ID
	}
	if out.Outputs != nil {
		res["outputs"] = out.Outputs
	}
	if len(out.OutputErrors) > 0 {
		res["output_errors"] = out.OutputErrors
		keys := make([]string, 0, len(out.OutputErrors))
		for k := range out.OutputErrors {
			keys = append(keys, k)
		}
		ctx.Warn("%d stack output(s) could not be resolved: %v (see output_errors)", len(keys), keys)
	}
	if out.Failed {
		res["failures"] = out.Failures
	}
	if out.Preview != nil {
		res["preview"] = out.Preview
	}
	if out.Diff != nil {
		res["diff"] = out.Diff
	}
	if in := req.Inputs(); in != nil && p.Str("state") == stack.Present {
		res["inputs_digest"] = in.Digest()
	}
	return res, err
}

func main() { module.Main(spec, run) }
