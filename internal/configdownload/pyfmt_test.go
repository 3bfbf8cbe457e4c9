package configdownload

import (
	"reflect"
	"testing"
)

// The expected values below are what CPython 3.11 and Jinja 3.1 (Debian 12)
// print for the same inputs.

func TestPyFloat(t *testing.T) {
	for _, tc := range []struct {
		in         string
		repr, json string
	}{
		{"1e16", "1e+16", "1e+16"},
		{"1e15", "1000000000000000.0", "1000000000000000.0"},
		{"1.5e-5", "1.5e-05", "1.5e-05"},
		{"0.0001", "0.0001", "0.0001"},
		{"1.5", "1.5", "1.5"},
		{"100.0", "100.0", "100.0"},
		{"-0.0", "-0.0", "-0.0"},
		{"1e22", "1e+22", "1e+22"},
		{"123456789012345678.0", "1.2345678901234568e+17", "1.2345678901234568e+17"},
		{"0.30000000000000004", "0.30000000000000004", "0.30000000000000004"},
		{"1e-7", "1e-07", "1e-07"},
		{"2.5e-300", "2.5e-300", "2.5e-300"},
		{"1234567.125", "1234567.125", "1234567.125"},
		{"1e400", "inf", "Infinity"},
		{"-1e400", "-inf", "-Infinity"},
	} {
		if got := pyNumber(Number(tc.in), false); got != tc.repr {
			t.Errorf("repr(%s) = %s, want %s", tc.in, got, tc.repr)
		}
		if got := pyNumber(Number(tc.in), true); got != tc.json {
			t.Errorf("json.dumps(%s) = %s, want %s", tc.in, got, tc.json)
		}
	}
	for in, want := range map[string]string{"0": "0", "-0": "0", "42": "42", "-7": "-7", "123456789012345678901234567890": "123456789012345678901234567890"} {
		if got := pyNumber(Number(in), false); got != want {
			t.Errorf("repr(int %s) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{"1e16": "1.0e+16", "1.5": "1.5", "1e-7": "1.0e-07", "1e400": ".inf", "-1e400": "-.inf"} {
		if got := yamlFloat(Number(in)); got != want {
			t.Errorf("PyYAML float %s = %s, want %s", in, got, want)
		}
	}
}

func TestPyStrings(t *testing.T) {
	for _, tc := range []struct{ in, repr, json string }{
		{"it's", `"it's"`, `"it's"`},
		{`say "hi"`, `'say "hi"'`, `"say \"hi\""`},
		{`both ' and "`, `'both \' and "'`, `"both ' and \""`},
		{"tab\there\nnl\r", `'tab\there\nnl\r'`, `"tab\there\nnl\r"`},
		{"\x00\x1b\x7f", `'\x00\x1b\x7f'`, `"\u0000\u001b\u007f"`},
		{"é ü ☃ 😀", `'é ü ☃ 😀'`, `"\u00e9 \u00fc \u2603 \ud83d\ude00"`},
		{"\u200b\u2028\u00a0\u00ad", `'\u200b\u2028\xa0\xad'`, `"\u200b\u2028\u00a0\u00ad"`},
		{`back\slash`, `'back\\slash'`, `"back\\slash"`},
	} {
		if got := pyRepr(tc.in); got != tc.repr {
			t.Errorf("repr(%q) = %s, want %s", tc.in, got, tc.repr)
		}
		if got := pyJSONDumps(tc.in, -1); got != tc.json {
			t.Errorf("json.dumps(%q) = %s, want %s", tc.in, got, tc.json)
		}
		if got := pyStr(tc.in); got != tc.in {
			t.Errorf("str(%q) = %q", tc.in, got)
		}
	}
}

func TestPyContainers(t *testing.T) {
	v, err := DecodeJSON([]byte(`{"b": [1, 2.0, null, true], "a": {"x": "y"}, "e": [], "f": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := pyRepr(v), `{'b': [1, 2.0, None, True], 'a': {'x': 'y'}, 'e': [], 'f': {}}`; got != want {
		t.Errorf("repr = %s, want %s", got, want)
	}
	if got, want := pyJSONDumps(v, -1), `{"b": [1, 2.0, null, true], "a": {"x": "y"}, "e": [], "f": {}}`; got != want {
		t.Errorf("json.dumps = %s, want %s", got, want)
	}
	want := "{\n  \"b\": [\n    1,\n    2.0,\n    null,\n    true\n  ],\n  \"a\": {\n    \"x\": \"y\"\n  },\n  \"e\": [],\n  \"f\": {}\n}"
	if got := pyJSONDumps(v, 2); got != want {
		t.Errorf("json.dumps(indent=2) =\n%s\nwant\n%s", got, want)
	}
	for v, want := range map[any]string{nil: "None", true: "True", false: "False", Number("3"): "3"} {
		if got := pyStr(v); got != want {
			t.Errorf("str(%v) = %s, want %s", v, got, want)
		}
	}
}

func TestDecodeJSONKeepsOrder(t *testing.T) {
	v, err := DecodeJSON([]byte(`{"z": 1, "a": {"y": 2, "b": 3}, "m": 4, "z": 5}`))
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*Object)
	// A repeated key keeps its first place and takes the last value, as a
	// Python dict built by json.loads.
	if got := o.Keys(); !reflect.DeepEqual(got, []string{"z", "a", "m"}) || o.Value("z") != Number("5") {
		t.Errorf("keys %v, z %v", got, o.Value("z"))
	}
	if got := asObject(o.Value("a")).Keys(); !reflect.DeepEqual(got, []string{"y", "b"}) {
		t.Errorf("nested keys %v", got)
	}
	for _, bad := range []string{`{"a": 1`, `[1,]`, `{"a": 1} x`, `NaN`} {
		if _, err := DecodeJSON([]byte(bad)); err == nil {
			t.Errorf("DecodeJSON(%s) did not fail", bad)
		}
	}
}

func TestJinjaIndent(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "    "},
		{"a", "    a"},
		{"a\n", "    a\n"},
		{"a\nb", "    a\n    b"},
		{"a\n\nb\n", "    a\n\n    b\n"},
		{"  x\r\ny\vz", "      x\n    y\n    z"},
		{"a\n  \nb", "    a\n      \n    b"},
	} {
		if got := jinjaIndent(tc.in, 4, true); got != tc.want {
			t.Errorf("indent(%q, 4, true) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for in, want := range map[string][]string{"a\r\nb\rc\x1cd\u2028e": {"a", "b", "c", "d", "e"}, "x\n": {"x"}, "\n\n": {"", ""}} {
		if got := pySplitlines(in); !reflect.DeepEqual(got, want) {
			t.Errorf("splitlines(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPyIsInt(t *testing.T) {
	for in, want := range map[string]bool{"0": true, " 12 ": true, "1_000": true, "_1": false, "1__0": false,
		"+5": true, "-": false, "1.5": false, "٣": true, "abc": false, "": false, "ControllerDeployment": false} {
		if got := pyIsInt(in); got != want {
			t.Errorf("int(%q) succeeds: %v, want %v", in, got, want)
		}
	}
	if !pyIsInt(Number("3")) || !pyIsInt(Number("2.5")) || pyIsInt(nil) {
		t.Error("int() of numbers")
	}
}

func TestPyYAMLImplicit(t *testing.T) {
	for s, want := range map[string]bool{"yes": true, "Off": true, "1.5": true, "1e3": false, "0o17": false, "017": true,
		"1_000": true, "12:30": true, "~": true, "": true, "2021-01-02": true, "=": true, "<<": true, "text": false, "y": false} {
		if got := pyyamlImplicit(s); got != want {
			t.Errorf("PyYAML reads %q as a non-string: %v, want %v", s, got, want)
		}
	}
}
