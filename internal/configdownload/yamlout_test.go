package configdownload

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// trickyValues are values whose YAML form is easy to get wrong for PyYAML
// (YAML 1.1), which is what Ansible and tripleo-common read with.
func trickyValues() any {
	strs := []string{"yes", "no", "on", "Off", "y", "1.0", "1e3", "0x1F", "017", "0o17", "2021-01-02", "2001-12-14 21:59:43.10 -5",
		"=", "<<", "~", "", " leading", "trailing ", "a: b", "a #b", "# c", "- x", "multi\nline\n", "multi\nline", "  indented\nfirst",
		"tab\tx", "\x00bin", "\x1b[0m", "é ☃ 😀", "line\n\n\n", "\n", "{a}", "[b]", "'q'", `"dq"`, "%x", "@x", "`x", "!x", "&x",
		"*x", "|", ">", "?", ":", "-", "---", "...", "null", "NULL", "Null", "True", ".inf", ".NaN", "1_000", "12:30", "0b101",
		"+1", "-1.5", strings.Repeat("word ", 60), "trailing spaces  \nnext", "\ttab first", "crlf\r\nline", "\u2028sep", "{{ jinja }}",
		"\"$$ inventory_hostname $$\"", "%{::uuid}"}
	var l []any
	o := NewObject()
	for i, s := range strs {
		l = append(l, s)
		o.Set(s, Number(json.Number(strings.Repeat("1", i%5+1))))
	}
	o.Set("numbers", []any{Number("0"), Number("-7"), Number("1.5"), Number("1e16"), Number("1e-7"), Number("-0.0"),
		Number("123456789012345678901234567890"), Number("1E400"), true, false, nil})
	o.Set("empty", []any{NewObject(), []any{}})
	o.Set("nested", Obj("list", []any{Obj("a", []any{"b", Obj("c", nil)})}))
	o.Set("strings", l)
	return o
}

// toJSONValue turns Values into what Python's json reads back, for the
// comparison (the 1E400 float becomes Infinity in both).
func TestDumpYAMLReadsBackInPyYAML(t *testing.T) {
	if _, err := exec.LookPath("/usr/bin/python3"); err != nil {
		t.Fatal("/usr/bin/python3 is missing: apt-get install -y python3 python3-yaml (or make deps)")
	}
	v := trickyValues()
	want := pyJSONDumps(v, -1)
	for _, dump := range []func(any) []byte{dumpYAML, dumpYAMLOrdered} {
		y := dump(v)
		// PyYAML reads our YAML; json.dumps of that must be json.dumps of
		// the value (sort_keys on both sides).
		cmd := exec.Command("/usr/bin/python3", "-c", `
import json, sys, yaml
ours = yaml.safe_load(sys.stdin.read().split("\0")[0])
want = json.loads(sys.argv[1])
print(json.dumps(ours, sort_keys=True) == json.dumps(want, sort_keys=True))
if ours != want:
    for k in set(ours) | set(want):
        if ours.get(k) != want.get(k):
            print(repr(k), repr(ours.get(k)), repr(want.get(k)))
`, want)
		cmd.Stdin = strings.NewReader(string(y))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("python3: %v\n%s\nYAML:\n%s", err, out, y)
		}
		if !strings.HasPrefix(string(out), "True") {
			t.Errorf("PyYAML reads other values:\n%s\nYAML:\n%s", out, y)
		}
	}
}

func TestDumpYAMLShapes(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{nil, "null\n"},
		{[]any{}, "[]\n"},
		{NewObject(), "{}\n"},
		{Obj("b", Number("1"), "a", "yes"), "a: \"yes\"\nb: 1\n"},
		{[]any{Number("1e16")}, "- 1.0e+16\n"},
	} {
		if got := string(dumpYAML(tc.v)); got != tc.want {
			t.Errorf("dumpYAML(%s) = %q, want %q", pyRepr(tc.v), got, tc.want)
		}
	}
	// The inventory keeps its top level in insertion order, its groups sorted.
	got := string(dumpYAMLOrdered(Obj("z", Obj("b", Number("1"), "a", Number("2")), "a", NewObject())))
	if want := "z:\n  a: 2\n  b: 1\na: {}\n"; got != want {
		t.Errorf("dumpYAMLOrdered = %q, want %q", got, want)
	}
}
