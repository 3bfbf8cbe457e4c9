package module

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var testSpec = &Spec{
	Name:  "test_module",
	Short: "a module for tests",
	Params: []Param{
		{Name: "name", Type: Str, Required: true, Help: "a name"},
		{Name: "state", Type: Str, Default: "present", Choices: []string{"present", "absent"}},
		{Name: "count", Type: Int, Default: 3},
		{Name: "enabled", Type: Bool, Default: false},
		{Name: "dir", Type: Path},
		{Name: "items", Type: List},
		{Name: "vars", Type: Dict},
		{Name: "password", Type: Str, NoLog: true},
	},
}

// echo returns its parameters and modes, so tests see what the handler got.
func echo(ctx *Context) (Result, error) {
	if ctx.Params.Str("name") == "panic" {
		var m map[string]int
		m["x"] = 1 // nil map write: a real panic
	}
	if ctx.Params.Str("name") == "fail" {
		return Result{"detail": "kept " + ctx.Params.Str("password")}, errors.New("it failed with " + ctx.Params.Str("password"))
	}
	ctx.Warn("password is %s", ctx.Params.Str("password"))
	return Result{
		"changed": !ctx.CheckMode,
		"check":   ctx.CheckMode,
		"name":    ctx.Params.Str("name"),
		"state":   ctx.Params.Str("state"),
		"count":   ctx.Params.Int("count"),
		"enabled": ctx.Params.Bool("enabled"),
		"dir":     ctx.Params.Str("dir"),
		"items":   ctx.Params.Strings("items"),
		"vars":    ctx.Params.Dict("vars"),
		"echo":    "the password is " + ctx.Params.Str("password"),
		"nested":  map[string]any{"pw": []any{ctx.Params.Str("password")}},
		"diff":    map[string]any{"before": "a", "after": "b"},
	}, nil
}

func runArgs(t *testing.T, args map[string]any) (map[string]any, int, string) {
	t.Helper()
	dir := t.TempDir()
	f := filepath.Join(dir, "args")
	b, _ := json.Marshal(args)
	os.WriteFile(f, b, 0o600)
	var out, errb bytes.Buffer
	code := Run(testSpec, echo, []string{f}, &out, &errb)
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("stdout is not one JSON object: %v: %q", err, out.String())
	}
	if strings.Count(strings.TrimSpace(out.String()), "\n") != 0 {
		t.Fatalf("more than one line on stdout: %q", out.String())
	}
	return res, code, out.String()
}

func TestAnsibleModeValidation(t *testing.T) {
	tests := []struct {
		name    string
		args    map[string]any
		wantMsg []string // substrings of msg; empty means success
	}{
		{"ok", map[string]any{"name": "x"}, nil},
		{"unknown parameter", map[string]any{"name": "x", "colour": "red"}, []string{`unsupported parameter "colour"`, "supported: count, dir"}},
		{"missing required", map[string]any{"state": "present"}, []string{`missing required parameter "name"`}},
		{"wrong type int", map[string]any{"name": "x", "count": "many"}, []string{`parameter "count"`, "not a whole number"}},
		{"wrong type float", map[string]any{"name": "x", "count": 1.5}, []string{`parameter "count"`, "1.5 is not a whole number"}},
		{"wrong type bool", map[string]any{"name": "x", "enabled": "maybe"}, []string{`parameter "enabled"`, "not a boolean"}},
		{"wrong type dict", map[string]any{"name": "x", "vars": []any{1}}, []string{`parameter "vars"`, "expected a dictionary"}},
		{"wrong type list", map[string]any{"name": "x", "items": map[string]any{}}, []string{`parameter "items"`, "expected a list"}},
		{"choices", map[string]any{"name": "x", "state": "gone"}, []string{`parameter "state" is "gone"`, "one of: present, absent"}},
		{"several problems at once", map[string]any{"count": "x", "bogus": 1}, []string{"bogus", "name", "count"}},
		{"unknown _ansible_ keys ignored", map[string]any{"name": "x", "_ansible_future_thing": 1, "_ansible_tmpdir": "/tmp"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, code, _ := runArgs(t, tc.args)
			failed, _ := res["failed"].(bool)
			if tc.wantMsg == nil {
				if failed || code != 0 {
					t.Fatalf("unexpected failure: %v", res["msg"])
				}
				return
			}
			if !failed || code == 0 {
				t.Fatalf("expected failed: true, got %v", res)
			}
			msg, _ := res["msg"].(string)
			for _, w := range tc.wantMsg {
				if !strings.Contains(msg, w) {
					t.Errorf("msg %q lacks %q", msg, w)
				}
			}
		})
	}
}

func TestConversionsAndDefaults(t *testing.T) {
	home, _ := os.UserHomeDir()
	res, _, _ := runArgs(t, map[string]any{
		"name": "x", "count": "7", "enabled": "yes", "dir": "~/sub/dir",
		"items": "a, b,c", "vars": `{"k": 1}`,
	})
	if res["count"] != 7.0 || res["enabled"] != true || res["state"] != "present" {
		t.Errorf("conversions/defaults wrong: %v", res)
	}
	if res["dir"] != filepath.Join(home, "sub/dir") {
		t.Errorf("~ not expanded: %v", res["dir"])
	}
	if items, _ := res["items"].([]any); len(items) != 3 || items[2] != "c" {
		t.Errorf("list from comma string: %v", res["items"])
	}
	if v, _ := res["vars"].(map[string]any); v["k"] != 1.0 {
		t.Errorf("dict from JSON string: %v", res["vars"])
	}
}

func TestNoLogMasking(t *testing.T) {
	const pw = "s3cr3t-Value"
	for _, name := range []string{"x", "fail"} {
		res, _, raw := runArgs(t, map[string]any{"name": name, "password": pw})
		if strings.Contains(raw, pw) {
			t.Fatalf("%s: secret leaked in result: %s", name, raw)
		}
		if !strings.Contains(raw, Masked) {
			t.Fatalf("%s: mask marker missing: %s", name, raw)
		}
		if name == "fail" && res["detail"] != "kept "+Masked {
			t.Errorf("failed result lost its fields: %v", res)
		}
	}
	// A secret in an invalid invocation is masked too.
	_, _, raw := runArgs(t, map[string]any{"password": pw, "bogus": 1})
	if strings.Contains(raw, pw) {
		t.Fatalf("secret leaked in a validation failure: %s", raw)
	}
	// Secrets registered by the handler are masked.
	spec := &Spec{Name: "m"}
	res := execute(spec, func(c *Context) (Result, error) {
		c.AddSecret("generated-pw")
		return Result{"url": "mysql://heat:generated-pw@host/heat"}, nil
	}, &Context{}, map[string]any{})
	if res["url"] != "mysql://heat:"+Masked+"@host/heat" {
		t.Errorf("registered secret not masked: %v", res["url"])
	}
}

// The secret keys of a dict parameter are masked, given as a dict or as a
// string, even when validation fails; its other keys are shown.
func TestSecretKeysMasking(t *testing.T) {
	spec := &Spec{Name: "m", Params: []Param{{Name: "auth", Type: Dict, SecretKeys: []string{"password", "token"}}, {Name: "n", Type: Int, Range: Between(0, 9)}}}
	h := func(c *Context) (Result, error) { return Result{"echo": c.Params.Dict("auth")}, nil }
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"dict", map[string]any{"auth": map[string]any{"username": "admin-user", "password": "s3cr3t-Value", "token": "tok-123456"}}},
		{"string", map[string]any{"auth": "username=admin-user password=s3cr3t-Value token=tok-123456"}},
		{"invalid", map[string]any{"auth": map[string]any{"username": "admin-user", "password": "s3cr3t-Value", "token": "tok-123456"}, "n": 99}},
	} {
		res := execute(spec, h, &Context{}, tc.args)
		b, _ := json.Marshal(res)
		if strings.Contains(string(b), "s3cr3t-Value") || strings.Contains(string(b), "tok-123456") || !strings.Contains(string(b), "admin-user") {
			t.Errorf("%s: %s", tc.name, b)
		}
	}
}

func TestPanicRecovery(t *testing.T) {
	res, code, _ := runArgs(t, map[string]any{"name": "panic"})
	if res["failed"] != true || code == 0 {
		t.Fatalf("panic not turned into a failure: %v", res)
	}
	msg, _ := res["msg"].(string)
	if !strings.Contains(msg, "internal error") || !strings.Contains(msg, "nil map") {
		t.Errorf("msg not clear: %q", msg)
	}
	if _, ok := res["exception"].(string); !ok {
		t.Errorf("no exception trace")
	}
}

func TestCheckAndDiffMode(t *testing.T) {
	tests := []struct {
		check, diff bool
	}{{false, false}, {true, false}, {false, true}, {true, true}}
	for _, tc := range tests {
		res, _, _ := runArgs(t, map[string]any{"name": "x", "_ansible_check_mode": tc.check, "_ansible_diff": tc.diff})
		if res["check"] != tc.check || res["changed"] != !tc.check {
			t.Errorf("check=%v: handler saw %v, changed %v", tc.check, res["check"], res["changed"])
		}
		if _, has := res["diff"]; has != tc.diff {
			t.Errorf("diff=%v: diff present=%v", tc.diff, has)
		}
	}
}

func TestBadArgsFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "args")
	os.WriteFile(bad, []byte("name=x"), 0o600)
	for _, f := range []string{bad, filepath.Join(dir, "missing")} {
		var out, errb bytes.Buffer
		code := Run(testSpec, echo, []string{f}, &out, &errb)
		var res map[string]any
		if err := json.Unmarshal(out.Bytes(), &res); err != nil || res["failed"] != true || code == 0 {
			t.Errorf("%s: want a JSON failure, got %q", f, out.String())
		}
	}
}

func TestCLIMode(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   []string
		stderr   []string
		jsonWant map[string]any
	}{
		{"help", []string{"--help"}, 0, []string{"--name", "--state", "one of present|absent"}, nil, nil},
		{"summary", []string{"--name", "x", "--count=5", "--enabled"}, 0, []string{"changed", "count: 5", "enabled: true"}, []string{"[WARNING]"}, nil},
		{"check", []string{"--name", "x", "--check"}, 0, []string{"ok", "check: true"}, nil, nil},
		{"json", []string{"--name=x", "--json", "--items", "a", "--items", "b,c", "--vars", "k=v"}, 0, nil, nil,
			map[string]any{"name": "x", "items": []any{"a", "b", "c"}, "vars": map[string]any{"k": "v"}}},
		{"negated bool", []string{"--name=x", "--no-enabled", "--json"}, 0, nil, nil, map[string]any{"enabled": false}},
		{"unknown flag", []string{"--name", "x", "--colour", "red"}, 2, nil, []string{"unknown flag --colour", "--help"}, nil},
		{"missing value", []string{"--name"}, 2, nil, []string{"--name needs a value"}, nil},
		{"failure exits non-zero", []string{"--name", "fail", "--password", "pw123"}, 1, []string{"FAILED", Masked}, nil, nil},
		{"validation failure", []string{"--state", "gone"}, 1, []string{"FAILED", "missing required parameter \"name\""}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Run(testSpec, echo, tc.args, &out, &errb)
			if code != tc.code {
				t.Errorf("exit code %d, want %d (stdout %q stderr %q)", code, tc.code, out.String(), errb.String())
			}
			for _, s := range tc.stdout {
				if !strings.Contains(out.String(), s) {
					t.Errorf("stdout lacks %q: %s", s, out.String())
				}
			}
			for _, s := range tc.stderr {
				if !strings.Contains(errb.String(), s) {
					t.Errorf("stderr lacks %q: %s", s, errb.String())
				}
			}
			if strings.Contains(out.String(), "pw123") {
				t.Errorf("secret printed: %s", out.String())
			}
			if tc.jsonWant != nil {
				var res map[string]any
				if err := json.Unmarshal(out.Bytes(), &res); err != nil {
					t.Fatalf("not JSON: %q", out.String())
				}
				for k, v := range tc.jsonWant {
					a, _ := json.Marshal(res[k])
					b, _ := json.Marshal(v)
					if string(a) != string(b) {
						t.Errorf("%s = %s, want %s", k, a, b)
					}
				}
			}
		})
	}
}

func TestOneOf(t *testing.T) {
	spec := &Spec{Name: "m", Params: []Param{{Name: "a"}, {Name: "b"}}, OneOf: [][]string{{"a", "b"}}}
	for _, tc := range []struct {
		args map[string]any
		ok   bool
		msg  string
	}{
		{map[string]any{"a": "1"}, true, ""},
		{map[string]any{}, false, "none was given"},
		{map[string]any{"a": "1", "b": "2"}, false, "got a and b"},
	} {
		_, err := spec.Validate(tc.args)
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), tc.msg)) {
			t.Errorf("%v: err=%v", tc.args, err)
		}
	}
}

// A one-letter secret is masked in values but never in the protocol's keys
// (failed, changed, msg, invocation, the parameter names), which Ansible
// must still read.
func TestShortSecretKeepsProtocol(t *testing.T) {
	res, code, raw := runArgs(t, map[string]any{"name": "x", "password": "a", "state": "absent"})
	if code != 0 || res["failed"] != false || res["changed"] == nil || res["msg"] != nil && res["msg"] == "" {
		t.Fatalf("result: %s", raw)
	}
	inv, _ := res["invocation"].(map[string]any)
	args, _ := inv["module_args"].(map[string]any)
	if _, ok := args["state"]; args["password"] != Masked || !ok {
		t.Errorf("module_args: %v", args)
	}
	if strings.Contains(res["echo"].(string), " a ") || !strings.Contains(res["echo"].(string), Masked) {
		t.Errorf("the secret shows in a value: %q", res["echo"])
	}
}
