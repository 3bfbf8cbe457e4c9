package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/templates"
)

// TreeSize is the shape of a generated TripleO-like template tree.
type TreeSize struct {
	Roles, Services, Envs int
}

// TripleOSized is about tripleo-heat-templates' size: ~12 roles, ~400
// service templates each with a nested base template and a get_file
// script, ~20 environments (about 850 files in all).
var TripleOSized = TreeSize{Roles: 12, Services: 400, Envs: 20}

// GenerateTree writes a TripleO-shaped tree under dir and returns the top
// template and the environment files, in order.
func GenerateTree(dir string, sz TreeSize) (string, []string, error) {
	files := map[string]string{}
	pad := func(b *strings.Builder, n int, what string) {
		for i := 0; i < n; i++ {
			fmt.Fprintf(b, "  %s_param_%d:\n    type: string\n    default: 'value %d of %s'\n    description: >\n      Setting %d of %s. It is described at some length, as TripleO's parameters are,\n      so that the file has a realistic size for the parser and the client.\n", what, i, i, what, i, what)
		}
	}
	// Common nested templates.
	for i := 0; i < 4; i++ {
		var b strings.Builder
		b.WriteString("heat_template_version: wallaby\ndescription: common nested template\nparameters:\n")
		pad(&b, 10, fmt.Sprintf("common%d", i))
		b.WriteString("resources:\n  config:\n    type: OS::Heat::Value\n    properties:\n      value: {get_file: ../scripts/common.sh}\noutputs:\n  role_data:\n    value: {get_attr: [config, value]}\n")
		files[fmt.Sprintf("common/base%d.yaml", i)] = b.String()
	}
	files["scripts/common.sh"] = "#!/bin/bash\n" + strings.Repeat("echo common step; # shared by every role\n", 40)
	// Services: deployment/<svc>/<svc>.yaml + a script each.
	var reg strings.Builder
	reg.WriteString("resource_registry:\n")
	for s := 0; s < sz.Services; s++ {
		name := fmt.Sprintf("svc%03d", s)
		var b strings.Builder
		fmt.Fprintf(&b, "heat_template_version: wallaby\ndescription: service %s\nparameters:\n", name)
		pad(&b, 12, name)
		fmt.Fprintf(&b, "resources:\n  base:\n    type: ../../common/base%d.yaml\n  script:\n    type: OS::Heat::Value\n    properties:\n      value: {get_file: %s.sh}\n", s%4, name)
		fmt.Fprintf(&b, "outputs:\n  role_data:\n    value:\n      service_name: %s\n      config_settings: {get_attr: [base, role_data]}\n      step_config: {get_attr: [script, value]}\n", name)
		files[fmt.Sprintf("deployment/%s/%s.yaml", name, name)] = b.String()
		files[fmt.Sprintf("deployment/%s/%s.sh", name, name)] = "#!/bin/bash\n" + strings.Repeat("echo configure "+name+"; # step\n", 30)
		fmt.Fprintf(&reg, "  OS::TripleO::Services::Svc%03d: ../deployment/%s/%s.yaml\n", s, name, name)
	}
	// Roles reference every service alias and a role script.
	var top strings.Builder
	top.WriteString("heat_template_version: wallaby\ndescription: TripleO-sized overcloud\nparameters:\n")
	pad(&top, 40, "overcloud")
	top.WriteString("resources:\n")
	for r := 0; r < sz.Roles; r++ {
		var b strings.Builder
		fmt.Fprintf(&b, "heat_template_version: wallaby\ndescription: role %d\nparameters:\n", r)
		pad(&b, 20, fmt.Sprintf("role%d", r))
		b.WriteString("resources:\n  net:\n    type: ../common/base0.yaml\n  userdata:\n    type: OS::Heat::Value\n    properties:\n      value: {get_file: ../scripts/common.sh}\n")
		for s := r; s < sz.Services; s += sz.Roles {
			fmt.Fprintf(&b, "  service%d:\n    type: OS::TripleO::Services::Svc%03d\n", s, s)
		}
		files[fmt.Sprintf("roles/role%02d.yaml", r)] = b.String()
		fmt.Fprintf(&top, "  Role%02d:\n    type: roles/role%02d.yaml\n", r, r)
	}
	files["overcloud.yaml"] = top.String()
	files["environments/00-registry.yaml"] = reg.String()
	envs := []string{"environments/00-registry.yaml"}
	for e := 1; e < sz.Envs; e++ {
		var b strings.Builder
		b.WriteString("parameter_defaults:\n")
		for i := 0; i < 30; i++ {
			fmt.Fprintf(&b, "  Env%dSetting%d: {key: value-%d, list: [a, b, c]}\n", e, i, i)
		}
		if e%4 == 0 {
			fmt.Fprintf(&b, "resource_registry:\n  OS::TripleO::Services::Svc%03d: ../deployment/svc%03d/svc%03d.yaml\n", e, e, e)
		}
		p := fmt.Sprintf("environments/env%02d.yaml", e)
		files[p] = b.String()
		envs = append(envs, p)
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", nil, err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return "", nil, err
		}
	}
	for i := range envs {
		envs[i] = filepath.Join(dir, envs[i])
	}
	return filepath.Join(dir, "overcloud.yaml"), envs, nil
}

// heatclientTimer runs python-heatclient's template_utils as
// internal/templates/testdata/heatclient_process.py does and prints the
// processing time (interpreter start and imports excluded) and file count.
const heatclientTimer = `
import json, sys, time
from heatclient.common import template_utils
t0 = time.perf_counter()
tpl_files, template = template_utils.get_template_contents(template_file=sys.argv[1])
env_list = []
env_files, env = template_utils.process_multiple_environments_and_files(env_paths=sys.argv[2:], env_list_tracker=env_list)
files = dict(list(tpl_files.items()) + list(env_files.items()))
json.dump({"seconds": time.perf_counter() - t0, "files": len(files)}, sys.stdout)
`

// TemplateRows compare internal/templates.Process with python-heatclient on
// a generated TripleO-sized tree and on the real tripleo-heat-templates
// workload (tests/tht).
func TemplateRows(ctx context.Context, env *Env, rounds int) []Row {
	rows := []Row{TemplateRow(ctx, env, rounds)}
	const name, title = "template_processing_real_tht", "client-side template processing of the real tripleo-heat-templates overcloud (tests/tht)"
	cand, base := "internal/templates.Process + request body (in process, cache warm)", "python-heatclient template_utils (in process: interpreter start and imports excluded)"
	dir, err := os.MkdirTemp(env.Work, "tree-")
	if err != nil {
		return append(rows, Unavailable(name, title, cand, base, err.Error()))
	}
	defer os.RemoveAll(dir)
	rt, err := NewRealTHT(filepath.Join(dir, "overcloud-deploy"), RealTHTComputes)
	if err != nil {
		return append(rows, Unavailable(name, title, cand, base, "generating the workload (tests/tht): "+err.Error()))
	}
	return append(rows, templateRow(ctx, env, rounds, name, title, cand, base, rt.W.Template, rt.W.EnvironmentFiles,
		fmt.Sprintf("tests/tht overcloud (Controller 1, Compute %d)", RealTHTComputes)))
}

// TemplateRow compares internal/templates.Process with python-heatclient on
// a generated TripleO-sized tree.
func TemplateRow(ctx context.Context, env *Env, rounds int) Row {
	const name, title = "template_processing", "client-side template processing of a TripleO-sized tree"
	cand, base := "internal/templates.Process (in process, cache warm)", "python-heatclient template_utils (in process: interpreter start and imports excluded)"
	dir, err := os.MkdirTemp(env.Work, "tree-")
	if err != nil {
		return Unavailable(name, title, cand, base, err.Error())
	}
	defer os.RemoveAll(dir)
	top, envs, err := GenerateTree(dir, TripleOSized)
	if err != nil {
		return Unavailable(name, title, cand, base, err.Error())
	}
	return templateRow(ctx, env, rounds, name, title, cand, base, top, envs,
		fmt.Sprintf("generated tree: %d roles, %d services, %d environments", TripleOSized.Roles, TripleOSized.Services, TripleOSized.Envs))
}

// templateRow times Process (with the create request body for the real
// tree) against heatclient's processing of the same files, interleaved.
// The candidate is heat_stack's processing as it runs: with its cache
// (templates.CacheEnv, in this run's work directory), made by a first run
// before the rounds; the same without the cache is measured too (cold).
func templateRow(ctx context.Context, env *Env, rounds int, name, title, cand, base, top string, envs []string, what string) Row {
	var goFiles, pyFiles int
	var whole []time.Duration
	cache := filepath.Join(env.Work, "template-cache-"+name)
	defer os.Unsetenv(templates.CacheEnv)
	goRun := func(cacheDir string) func(ctx context.Context) (time.Duration, error) {
		return func(ctx context.Context) (time.Duration, error) {
			os.Setenv(templates.CacheEnv, cacheDir)
			start := time.Now()
			b, err := templates.Process(top, envs)
			if err == nil && name != "template_processing" {
				_, err = b.RequestBody(map[string]any{"stack_name": "overcloud"}, 0)
			}
			d := time.Since(start)
			if err == nil {
				goFiles = len(b.Files)
			}
			return d, err
		}
	}
	if _, err := goRun(cache)(ctx); err != nil {
		return Unavailable(name, title, cand, base, err.Error())
	}
	s := Interleave(ctx, env.Log, name, rounds, []Variant{
		{Name: "go", Run: goRun(cache)},
		{Name: "go_cold", Run: goRun("off")},
		{Name: "python", Run: func(ctx context.Context) (time.Duration, error) {
			start := time.Now()
			out, err := exec.CommandContext(ctx, "/usr/bin/python3", append([]string{"-c", heatclientTimer, top}, envs...)...).Output()
			whole = append(whole, time.Since(start))
			if err != nil {
				if ee, ok := err.(*exec.ExitError); ok {
					return 0, fmt.Errorf("%v: %s", err, ee.Stderr)
				}
				return 0, err
			}
			var r struct {
				Seconds float64
				Files   int
			}
			if err := json.Unmarshal(out, &r); err != nil {
				return 0, err
			}
			pyFiles = r.Files
			return time.Duration(r.Seconds * float64(time.Second)), nil
		}},
	})
	wm, _, _ := Samples(whole).stats()
	cm, cmin, cmax := s["go_cold"].stats()
	note := fmt.Sprintf("%s; files sent: Go %d, heatclient %d; Go from heat_stack's processing cache (warmed by a first run; "+
		"without the cache, every file read and parsed: %s (%s–%s), median, min–max); the whole python3 process took %.2f s (median); "+
		"Go uses every core (GOMAXPROCS %d)",
		what, goFiles, pyFiles, fmtS(cm), fmtS(cmin), fmtS(cmax), wm, runtime.GOMAXPROCS(0))
	return NewRow(name, title, cand, base, s["go"], s["python"], note)
}
