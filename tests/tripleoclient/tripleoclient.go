// Package tripleoclient is the differential test of the export: it runs
// python-tripleoclient stable/wallaby's own export.export_overcloud (from
// ../shared/reference, through export_harness.py, which lists the only
// modules it stubs) on a working dir, and compares what it returns, key by
// key, with the export internal/workdir wrote there. Every difference must
// be one Allowed explains.
//
// Its own test runs it on a working dir it writes; tests/integration on
// the sample overcloud's; tests/realtht on the real tripleo-heat-templates
// stack's.
package tripleoclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tripleocommon"
)

// The reference tree and the environment variable that overrides it (a
// directory holding tripleoclient/export.py, or a .tar.gz).
const (
	EnvTripleoclient     = "EPHEMERAL_HEAT_TRIPLEOCLIENT"
	TripleoclientTarball = "python-tripleoclient-stable-wallaby.tar.gz"
	clientMarker         = "tripleoclient/export.py"
)

// Dir is this package's directory (export_harness.py).
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Trees are the extracted reference trees the harness imports.
type Trees struct {
	Client, Common string
}

// Extract makes python-tripleoclient's and tripleo-common's trees
// available under dir (EPHEMERAL_HEAT_TRIPLEOCLIENT and
// EPHEMERAL_HEAT_TRIPLEO_COMMON, else the stable/wallaby tarballs).
func Extract(dir string) (Trees, error) {
	tc, err := tripleocommon.ExtractTripleoCommon(filepath.Join(dir, "tripleo-common"))
	if err != nil {
		return Trees{}, err
	}
	src := tripleocommon.Source(EnvTripleoclient, TripleoclientTarball)
	hint := fmt.Sprintf("set %s to a directory or .tar.gz of python-tripleoclient (default: the stable/wallaby tarball in ../shared/reference)", EnvTripleoclient)
	st, err := os.Stat(src)
	if err != nil {
		return Trees{}, fmt.Errorf("%s is missing (%v): %s", src, err, hint)
	}
	root := src
	if !st.IsDir() {
		root = filepath.Join(dir, "python-tripleoclient")
		if err := os.MkdirAll(root, 0o700); err != nil {
			return Trees{}, err
		}
		out, err := exec.Command("tar", "-xzf", src, "-C", root, "--wildcards", "*tripleoclient/*").CombinedOutput()
		if err != nil {
			return Trees{}, fmt.Errorf("extracting %s: %v: %s; %s", src, err, out, hint)
		}
	}
	for _, d := range []string{root, filepath.Join(root, "*")} {
		m, _ := filepath.Glob(filepath.Join(d, clientMarker))
		if len(m) == 1 {
			return Trees{Client: filepath.Dir(filepath.Dir(m[0])), Common: tc.Root}, nil
		}
	}
	return Trees{}, fmt.Errorf("%s: no %s in it or one level below; %s", src, clientMarker, hint)
}

// Reference is what tripleoclient's export_overcloud returned.
type Reference struct {
	Data map[string]any `json:"data"`
	// MissingPasswords are the password parameters the passwords file
	// lacks (generate_passwords makes up values for them).
	MissingPasswords []string `json:"missing_passwords"`
	// ParametersPasswords are the password parameters the passwords file
	// sets under parameters: (Heat uses those values; export_passwords
	// reads parameter_defaults only).
	ParametersPasswords []string `json:"parameters_passwords"`
	// Stubs are the modules the harness stood in for.
	Stubs []string `json:"stubs"`
}

// RunExport runs tripleoclient's export_overcloud on l's working dir, as
// its deploy and `overcloud export` do: excludes, and filter for the cell
// export.
func RunExport(ctx context.Context, tr Trees, l workdir.Layout, excludes, filter bool) (Reference, error) {
	args := []string{filepath.Join(Dir(), "export_harness.py"), "--tripleoclient", tr.Client, "--tripleo-common", tr.Common,
		"--working-dir", l.Dir, "--stack", l.Stack, "--config-download-dir", l.Paths()["config_download_root"]}
	if !excludes {
		args = append(args, "--no-password-excludes")
	}
	if filter {
		args = append(args, "--should-filter")
	}
	cmd := exec.CommandContext(ctx, tripleocommon.Python, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Reference{}, fmt.Errorf("tripleoclient's export_overcloud: %v\n%s", err, stderr.String())
	}
	var r Reference
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return Reference{}, fmt.Errorf("the harness's output: %w\n%s", err, stdout.String())
	}
	return r, nil
}

// Exported is what tripleoclient exported for one file of CheckExports.
type Exported struct {
	File     string
	Defaults map[string]any // its parameter_defaults
	Stubs    []string
}

// CheckExports compares, key by key, the exports of l's working dir with
// tripleoclient's own on the same dir, failing t on each difference: the
// deploy's export and cell export, and all, an overcloud export without
// password excludes. No difference is allowed there (Allowed's come only
// from an edited passwords file).
func CheckExports(t testing.TB, ctx context.Context, tr Trees, l workdir.Layout, all string) []Exported {
	t.Helper()
	var out []Exported
	for _, c := range []struct {
		file             string
		excludes, filter bool
	}{
		{l.Export(), true, false},
		{l.CellExport(), true, true},
		{all, false, false},
	} {
		ref, err := RunExport(ctx, tr, l, c.excludes, c.filter)
		if err != nil {
			t.Fatal(err)
		}
		problems, allowed, err := Compare(c.file, ref)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("%s: %s", filepath.Base(c.file), p)
		}
		if len(allowed) > 0 {
			t.Errorf("%s: differences allowed only for an edited passwords file: %v", filepath.Base(c.file), allowed)
		}
		pd, _ := ref.Data["parameter_defaults"].(map[string]any)
		out = append(out, Exported{File: c.file, Defaults: pd, Stubs: ref.Stubs})
	}
	return out
}

// RunExportCeph runs tripleoclient's export_ceph(stack, cephx,
// config_download_dir) on l's working dir, as `overcloud export ceph`
// does for one stack, with HOME set so that its default working dir
// (where it reads ceph_client.yml) is l's: l.Dir must be
// <somewhere>/overcloud-deploy/<stack>.
func RunExportCeph(ctx context.Context, tr Trees, l workdir.Layout, cephx string) (Reference, error) {
	home := filepath.Dir(filepath.Dir(l.Dir))
	if filepath.Join(home, "overcloud-deploy", l.Stack) != l.Dir {
		return Reference{}, fmt.Errorf("%s is not <home>/overcloud-deploy/%s", l.Dir, l.Stack)
	}
	args := []string{filepath.Join(Dir(), "export_harness.py"), "--tripleoclient", tr.Client, "--tripleo-common", tr.Common,
		"--working-dir", l.Dir, "--stack", l.Stack, "--config-download-dir", l.Paths()["config_download_root"], "--ceph-cephx", cephx}
	cmd := exec.CommandContext(ctx, tripleocommon.Python, args...)
	cmd.Env = append(os.Environ(), "HOME="+home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Reference{}, fmt.Errorf("tripleoclient's export_ceph: %v\n%s", err, stderr.String())
	}
	var r Reference
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return Reference{}, fmt.Errorf("the harness's output: %w\n%s", err, stdout.String())
	}
	return r, nil
}

// Allowed are the differences the comparison accepts, each with why:
//
//   - missing-password: a password parameter the passwords file lacks is
//     in tripleoclient's export with a value generate_passwords just made
//     up (the stack never had it); ours leaves it out and names it. A
//     deploy generates every one, so only an edited file has any.
//   - parameters-password: a password parameter the operator set under the
//     passwords file's parameters: (which Heat uses, over
//     parameter_defaults) is exported by ours with that value, the stack's;
//     tripleoclient reads parameter_defaults only and exports the value
//     Heat ignored, or one it made up. Only an edited file has any.
//
// Nothing else: every other key of parameter_defaults must be in both,
// with the same value (YAML/JSON data, numbers compared as float64).
var Allowed = map[string]string{
	"missing-password":    "a password the passwords file lacks: generate_passwords makes one up, ours leaves it out",
	"parameters-password": "a password set under the passwords file's parameters: ours exports that value (Heat's), tripleoclient parameter_defaults'",
}

// Compare compares our export (the YAML file at path) with tripleoclient's
// and returns the differences Allowed does not explain, and the allowed
// ones (each "kind: key").
func Compare(path string, ref Reference) (problems, allowed []string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var doc any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	ours, err := normalize(doc)
	if err != nil {
		return nil, nil, err
	}
	theirs, err := normalize(ref.Data)
	if err != nil {
		return nil, nil, err
	}
	om, _ := ours.(map[string]any)
	tm, _ := theirs.(map[string]any)
	if keys(om) != "parameter_defaults" || keys(tm) != "parameter_defaults" {
		return []string{fmt.Sprintf("top-level keys: ours [%s], theirs [%s]", keys(om), keys(tm))}, nil, nil
	}
	opd, _ := om["parameter_defaults"].(map[string]any)
	tpd, _ := tm["parameter_defaults"].(map[string]any)
	missing, inParams := map[string]bool{}, map[string]bool{}
	for _, n := range ref.MissingPasswords {
		missing[n] = true
	}
	for _, n := range ref.ParametersPasswords {
		inParams[n] = true
	}
	all := map[string]bool{}
	for k := range opd {
		all[k] = true
	}
	for k := range tpd {
		all[k] = true
	}
	var names []string
	for k := range all {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		ov, inOurs := opd[k]
		tv, inTheirs := tpd[k]
		switch {
		case inOurs && inTheirs && inParams[k] && !reflect.DeepEqual(ov, tv):
			allowed = append(allowed, "parameters-password: "+k)
		case inTheirs && !inOurs && missing[k]:
			allowed = append(allowed, "missing-password: "+k)
		case !inOurs:
			problems = append(problems, fmt.Sprintf("%s: only tripleoclient's has it (%s)", k, short(tv)))
		case !inTheirs:
			problems = append(problems, fmt.Sprintf("%s: only ours has it (%s)", k, short(ov)))
		case !reflect.DeepEqual(ov, tv):
			problems = append(problems, fmt.Sprintf("%s: ours %s, tripleoclient's %s", k, short(ov), short(tv)))
		}
	}
	return problems, allowed, nil
}

// normalize is v through JSON (maps of strings, float64 numbers).
func normalize(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}

func keys(m map[string]any) string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return strings.Join(k, ",")
}

// short is v as JSON, cut to 120 characters (values may be secrets: only
// tests on throwaway working dirs print them).
func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 120 {
		return string(b[:120]) + "..."
	}
	return string(b)
}
