package templates

import (
	"encoding/json"
	"strings"
	"testing"
)

// The expectations are what json.dumps writes for heatclient's loader
// (template_format.yaml_loader, PyYAML 6 with libyaml) on the same input.
func TestParseYAMLMatchesPyYAML(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a: yes", `{"a": true}`},
		{"a: Off", `{"a": false}`},
		{"a: y", `{"a": "y"}`},
		{"a: 'on'", `{"a": "on"}`},
		{"a: 010", `{"a": 8}`},
		{"a: 0o17", `{"a": "0o17"}`},
		{"a: 0b101", `{"a": 5}`},
		{"a: -0x1F", `{"a": -31}`},
		{"a: 1_000", `{"a": 1000}`},
		{"a: +12", `{"a": 12}`},
		{"a: -0", `{"a": 0}`},
		{"a: 190:20:30", `{"a": 685230}`},
		{"a: 1:70", `{"a": "1:70"}`},
		{"a: -1:30.5", `{"a": -90.5}`},
		{"a: 1.5e10", `{"a": "1.5e10"}`},
		{"a: 1.5e+10", `{"a": 15000000000.0}`},
		{"a: 1.", `{"a": 1.0}`},
		{"a: .5", `{"a": 0.5}`},
		{"a: 6.02e+23", `{"a": 6.02e+23}`},
		{"a: 1e-7", `{"a": "1e-7"}`},
		{"a: 0.0001", `{"a": 0.0001}`},
		{"a: 123456789.0", `{"a": 123456789.0}`},
		{"a: 1.0e16", `{"a": "1.0e16"}`},
		{"a: 12345678901234567.0", `{"a": 1.2345678901234568e+16}`},
		{"a: 2016-10-14", `{"a": "2016-10-14"}`},
		{"a: !!timestamp 2001-12-14", `{"a": "2001-12-14"}`},
		{"a: !!str 12", `{"a": "12"}`},
		{"a: !!int '12'", `{"a": 12}`},
		{"a: !!float '3'", `{"a": 3.0}`},
		{"a: !!null x", `{"a": null}`},
		{"a: ~", `{"a": null}`},
		{"a:", `{"a": null}`},
		{"{1: a, 2.0: b, no: c, ~: d}", `{"1": "a", "2.0": "b", "false": "c", "null": "d"}`},
		{"base: &b {x: 1, y: 2}\nm: {<<: *b, y: 3}", `{"base": {"x": 1, "y": 2}, "m": {"x": 1, "y": 3}}`},
		{"m:\n  <<: [{a: 1, b: 1}, {b: 2, c: 2}]", `{"m": {"a": 1, "b": 1, "c": 2}}`},
		{"= : 1", `{"=": 1}`},
		{"a: >\n  folded\n  text\n", `{"a": "folded text\n"}`},
		{"a: 1\na: 2", `{"a": 2}`},
		{"", `null`},
	}
	for _, tt := range tests {
		v, err := ParseYAML([]byte(tt.in), "t.yaml")
		if err != nil {
			t.Errorf("ParseYAML(%q): %v", tt.in, err)
			continue
		}
		got, err := json.Marshal(v)
		if err != nil {
			t.Errorf("ParseYAML(%q): result does not encode: %v", tt.in, err)
			continue
		}
		if d := jsonDiff(got, []byte(tt.want)); d != "" {
			t.Errorf("ParseYAML(%q) = %s, want %s (%s)", tt.in, got, tt.want, d)
		}
	}
}

func TestParseYAMLErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a: 1\n b: 2\n  c: [", "bad.yaml: invalid YAML: line 2: mapping values are not allowed"},
		{"a: 1\nb: [1, 2\nc: 3", "bad.yaml: invalid YAML: near line 2: did not find expected ',' or ']'"},
		{"a: 1\n- b", "bad.yaml: invalid YAML: near line 2: did not find expected key"},
		{"a: 1\nb:\n\tc: 1", "bad.yaml: invalid YAML: line 3: found character that cannot start any token"},
		{"a: [1, *x]", "bad.yaml: invalid YAML"},
		{"a: 1\nb: =", "bad.yaml: line 2:"},
		{"a: !!binary aGVsbG8=", "!!binary"},
		{"a: !Ref x", "unsupported YAML tag !Ref"},
		{"a: .inf", "infinity or NaN"},
		{"{[1]: a}", "mapping key must be a scalar"},
		{"a: 1\n---\nb: 2", "bad.yaml: line 2: a second YAML document"},
	}
	for _, tt := range tests {
		_, err := ParseYAML([]byte(tt.in), "bad.yaml")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseYAML(%q) error = %v, want it to contain %q", tt.in, err, tt.want)
		}
	}
}

func TestPyFloatRepr(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{1, "1.0"}, {-0.5, "-0.5"}, {1e16, "1e+16"}, {1.5e16, "1.5e+16"},
		{9999999999999998, "9999999999999998.0"}, {1e-5, "1e-05"}, {0.0001, "0.0001"},
		{123.456, "123.456"}, {1e300, "1e+300"}, {5e-324, "5e-324"},
	}
	for _, tt := range tests {
		got, err := pyFloatRepr(tt.in)
		if err != nil || string(got) != tt.want {
			t.Errorf("pyFloatRepr(%v) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// resolvePlain's first-character shortcut gives the tag PyYAML's regular
// expressions (resolvePlainRE) give, for every scalar shape: words, numbers
// in every YAML 1.1 form, booleans, nulls, and near misses of each.
func TestResolvePlainShortcut(t *testing.T) {
	corpus := []string{"", "~", "<<", "<", "=", "==", "null", "Null", "NULL", "nul", "nulls", "n", "N", "y", "Y", "yes", "Yes", "YES", "yES",
		"no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "true", "True", "TRUE", "tRUE", "false", "False", "FALSE", "falsey",
		"0", "00", "010", "08", "0b101", "0b2", "0x1F", "0xg", "1_000", "1:30", "1:70", "190:20:30", "-1", "+1", "+", "-", ".", "..",
		"1.5", "1.", ".5", "1.5e10", "1.5e+10", "1e10", "-.inf", ".Inf", ".NaN", ".nan", "+.INF", "1:30.5", "1_0.0_1", "2016-10-14",
		"2016-10-14T10:00:00Z", "OS::Heat::Value", "get_param", "type", "string", "json", "yesterday", "nothing", "offset", "t", "f", "o"}
	// Every string of up to three characters over an alphabet of the
	// characters the resolvers look at.
	alphabet := []string{"0", "1", "7", "9", "+", "-", ".", "_", ":", "e", "E", "x", "b", "a", "n", "N", "o", "O", "y", "t", "f", "~", "<", "=", "i", "s"}
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		corpus = append(corpus, prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			gen(prefix+c, n-1)
		}
	}
	gen("", 3)
	for _, s := range corpus {
		if got, want := resolvePlain(s), resolvePlainRE(s); got != want {
			t.Errorf("resolvePlain(%q) = %s, PyYAML's rules say %s", s, got, want)
		}
	}
}
