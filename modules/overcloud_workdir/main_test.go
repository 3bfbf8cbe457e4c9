package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/moduletest"
)

func TestDocumentationMatchesSpec(t *testing.T) {
	if err := module.CheckSidecar(spec, "../../collection/plugins/modules/overcloud_workdir.yml"); err != nil {
		t.Fatal(err)
	}
}

// call runs the module as Ansible does (an arguments file) and returns its result.
func call(t *testing.T, args map[string]any) map[string]any {
	t.Helper()
	return moduletest.Call(t, spec, run, args)
}

// files lists the files under dir with their modes.
func files(t *testing.T, dir string) map[string]os.FileMode {
	t.Helper()
	out := map[string]os.FileMode{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			st, _ := d.Info()
			rel, _ := filepath.Rel(dir, p)
			out[rel] = st.Mode().Perm()
		}
		return nil
	})
	return out
}

// Each action, as the deploy playbook calls it, in order on one working
// dir; check mode writes nothing; names and modes are tripleoclient's
// (internal/workdir's tests cite them).
func TestActions(t *testing.T) {
	t.Setenv("OS_CLOUD", "")
	wd := filepath.Join(t.TempDir(), "overcloud-deploy", "overcloud")
	tests := []struct {
		name    string
		args    map[string]any
		failed  bool
		changed bool
		msg     string
		// files the working dir holds afterwards (name: mode)
		want map[string]os.FileMode
		// a result key and its expected value (as JSON)
		key, val string
	}{
		{name: "prepare in check mode writes nothing", args: map[string]any{"action": "prepare", "_ansible_check_mode": true},
			changed: true, msg: "would be generated", want: map[string]os.FileMode{}},
		{name: "prepare generates the passwords", args: map[string]any{"action": "prepare"},
			changed: true, msg: "password(s) generated", want: map[string]os.FileMode{"overcloud-passwords.yaml": 0o600},
			key: "environment_files_before", val: `["` + wd + `/overcloud-passwords.yaml"]`},
		{name: "prepare again reuses them", args: map[string]any{"action": "prepare"},
			changed: false, msg: "passwords kept", want: map[string]os.FileMode{"overcloud-passwords.yaml": 0o600}},
		{name: "status in check mode", args: map[string]any{"action": "status", "status": "DEPLOYING", "phase": "stack", "_ansible_check_mode": true},
			changed: true, want: map[string]os.FileMode{"overcloud-passwords.yaml": 0o600}},
		{name: "status", args: map[string]any{"action": "status", "status": "DEPLOYING", "phase": "stack"},
			changed: true, msg: "overcloud-deployment_status.yaml: DEPLOYING",
			want: map[string]os.FileMode{"overcloud-passwords.yaml": 0o600, "overcloud-deployment_status.yaml": 0o600}},
		{name: "status unchanged", args: map[string]any{"action": "status", "status": "DEPLOYING", "phase": "stack"}, changed: false},
		{name: "status needs status", args: map[string]any{"action": "status"}, failed: true, msg: "action status needs status"},
		{name: "hosts do not apply to status", args: map[string]any{"action": "status", "status": "DEPLOYING", "hosts": []string{"a"}},
			failed: true, msg: `parameter "hosts" does not apply to action status`},
		{name: "save needs one source", args: map[string]any{"action": "save"}, failed: true,
			msg: "action save reads the stack from Heat: exactly one of heat_dir, endpoint, cloud is required; none was given and OS_CLOUD is not set"},
		{name: "save takes one source", args: map[string]any{"action": "save", "heat_dir": "/hd", "auth": map[string]any{"auth_url": "http://127.0.0.1:1/v3"}},
			failed: true, msg: "got heat_dir and auth"},
		{name: "where Heat is does not apply to export", args: map[string]any{"action": "export", "region_name": "R"},
			failed: true, msg: `parameter "region_name" does not apply to action export`},
		{name: "export without saved outputs", args: map[string]any{"action": "export"},
			changed: true, msg: "left out",
			want: map[string]os.FileMode{"overcloud-passwords.yaml": 0o600, "overcloud-deployment_status.yaml": 0o600,
				"overcloud-export.yaml": 0o600, "overcloud-cell-export.yaml": 0o600}},
		{name: "archive in check mode", args: map[string]any{"action": "archive", "_ansible_check_mode": true},
			changed: true, msg: "would be written",
			want: map[string]os.FileMode{"overcloud-passwords.yaml": 0o600, "overcloud-deployment_status.yaml": 0o600,
				"overcloud-export.yaml": 0o600, "overcloud-cell-export.yaml": 0o600}},
		{name: "archive", args: map[string]any{"action": "archive"}, changed: true, msg: "entries"},
		{name: "a stack name that cannot name files", args: map[string]any{"action": "prepare", "stack": "a/b"}, failed: true, msg: `parameter "stack" is "a/b"; a stack name starts with a letter`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"work_dir": wd}
			for k, v := range tc.args {
				args[k] = v
			}
			res := call(t, args)
			checkResult(t, res, tc.failed, tc.changed, tc.msg)
			if tc.want != nil {
				got := files(t, wd)
				// Every action that wrote marked the working dir as ours and took its lock.
				for _, n := range []string{".ephemeral-heat", "workdir.lock"} {
					if len(got) > 0 && got[n] != 0o600 {
						t.Errorf("%s: mode %v, want 0600", n, got[n])
					}
					delete(got, n)
				}
				if len(got) != len(tc.want) {
					t.Errorf("files %v, want %v", got, tc.want)
				}
				for n, m := range tc.want {
					if got[n] != m {
						t.Errorf("%s: mode %v, want %v", n, got[n], m)
					}
				}
			}
			if tc.key != "" {
				b, _ := json.Marshal(res[tc.key])
				if string(b) != tc.val {
					t.Errorf("%s = %s, want %s", tc.key, b, tc.val)
				}
			}
			if tmp, _ := res["temp_dir"].(string); tmp != "" {
				os.RemoveAll(tmp)
			}
		})
	}
	arch, _ := filepath.Glob(filepath.Join(wd, "overcloud-install-*.tar.bzip2"))
	if len(arch) != 1 {
		t.Fatalf("archives %v", arch)
	}
	if st, _ := os.Stat(arch[0]); st.Mode().Perm() != 0o600 {
		t.Errorf("archive mode %v", st.Mode().Perm())
	}
}

// A scale-down in diff mode returns the environment before and after; in
// check mode it writes nothing.
func TestScaleDownCheckAndDiff(t *testing.T) {
	wd := filepath.Join(t.TempDir(), "w")
	os.MkdirAll(filepath.Join(wd, "outputs"), 0o700)
	nodes := "stack: overcloud\ngroups:\n  - resource: Compute\n    role: Compute\n    count_parameter: ComputeCount\n" +
		"    removal_policies_parameter: ComputeRemovalPolicies\n    removed: []\n    members:\n" +
		"      - {index: \"0\", hostname: overcloud-novacompute-0}\n      - {index: \"1\", hostname: overcloud-novacompute-1}\ncomplete: true\n"
	if err := os.WriteFile(filepath.Join(wd, "outputs", "overcloud-nodes.yaml"), []byte(nodes), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		check, diff bool
	}{{true, true}, {true, false}} {
		res := call(t, map[string]any{"work_dir": wd, "action": "scale_down", "hosts": []string{"overcloud-novacompute-1"},
			"_ansible_check_mode": tc.check, "_ansible_diff": tc.diff})
		if res["failed"] == true || res["changed"] != true {
			t.Fatalf("%+v", res)
		}
		d, has := res["diff"].(map[string]any)
		if has != tc.diff {
			t.Errorf("diff=%v: diff returned %v", tc.diff, has)
		}
		if has && !strings.Contains(d["after"].(string), "ComputeRemovalPolicies") {
			t.Errorf("diff after %q", d["after"])
		}
		if _, err := os.Stat(filepath.Join(wd, "overcloud-scale-down.yaml")); err == nil {
			t.Errorf("check mode wrote the scale-down environment")
		}
	}
}

// Every option is validated before anything runs: each bad value the spec
// implies (types, ranges, choices, empty or missing required values) is
// refused naming the option and what it allows.
func TestBoundaries(t *testing.T) {
	moduletest.Boundaries(t, spec, `{"work_dir": "/tmp/wd", "action": "status"}`)
}

// allow_empty_group lets the last Controller go (refused without it, with
// nothing written); the limit is a list of the inventory's names; the plan's
// warnings reach the result; the option applies to scale_down only.
func TestScaleDownEmptyGroupAndLimit(t *testing.T) {
	wd := filepath.Join(t.TempDir(), "w")
	os.MkdirAll(filepath.Join(wd, "outputs"), 0o700)
	os.MkdirAll(filepath.Join(wd, "config-download", "overcloud"), 0o700)
	nodes := "stack: overcloud\ngroups:\n  - resource: Controller\n    role: Controller\n    count_parameter: ControllerCount\n" +
		"    removal_policies_parameter: ControllerRemovalPolicies\n    removed: []\n    members:\n" +
		"      - {index: \"0\", hostname: overcloud-controller-0}\ncomplete: true\n"
	inventory := "Controller:\n  hosts:\n    overcloud-controller-0: {}\n"
	for p, c := range map[string]string{"outputs/overcloud-nodes.yaml": nodes, "config-download/overcloud/tripleo-ansible-inventory.yaml": inventory} {
		if err := os.WriteFile(filepath.Join(wd, p), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	args := map[string]any{"work_dir": wd, "action": "scale_down", "hosts": []string{"overcloud-controller-0"}}
	res := call(t, args)
	if msg, _ := res["msg"].(string); res["failed"] != true || !strings.Contains(msg, "allow_empty_group: true") {
		t.Fatalf("the last Controller: %v", res)
	}
	if _, err := os.Stat(filepath.Join(wd, "overcloud-scale-down.yaml")); err == nil {
		t.Fatal("a refused scale-down wrote the environment")
	}
	args["allow_empty_group"] = true
	res = call(t, args)
	b, _ := json.Marshal(res)
	if res["failed"] == true || res["changed"] != true || !strings.Contains(string(b), `"limit":["overcloud-controller-0"]`) ||
		!strings.Contains(string(b), `"not_in_limit":[]`) || !strings.Contains(string(b), "has no node left") {
		t.Fatalf("allowed: %s", b)
	}
	res = call(t, map[string]any{"work_dir": wd, "action": "status", "status": "DEPLOYING", "allow_empty_group": true})
	if msg, _ := res["msg"].(string); res["failed"] != true || !strings.Contains(msg, `parameter "allow_empty_group" does not apply to action status`) {
		t.Fatalf("status: %v", res)
	}
}

// checkResult fails t unless res failed as wanted, changed as wanted (when
// it did not fail) and says msg.
func checkResult(t *testing.T, res map[string]any, failed, changed bool, msg string) {
	t.Helper()
	got, _ := res["msg"].(string)
	if f := res["failed"] == true; f != failed {
		t.Fatalf("failed=%v, want %v: %s", f, failed, got)
	}
	if !failed && res["changed"] != changed {
		t.Errorf("changed=%v, want %v (%s)", res["changed"], changed, got)
	}
	if !strings.Contains(got, msg) {
		t.Errorf("msg %q lacks %q", got, msg)
	}
}
