package module

import (
	"bytes"
	"strings"
	"testing"
)

var rangedSpec = &Spec{
	Name: "ranged",
	Params: []Param{
		{Name: "name", Required: true, Help: "a name"},
		{Name: "port", Type: Int, Default: 8006, Range: Between(1, 65535), Help: "a port"},
		{Name: "mode", Default: "a", Choices: []string{"a", "b"}, Help: "a mode"},
		{Name: "flag", Type: Bool, Default: false, Help: "a flag"},
		{Name: "files", Type: List, Elements: Path, Help: "files"},
		{Name: "vars", Type: Dict, Help: "vars"},
		{Name: "word", Check: func(v any) error {
			if strings.ContainsAny(v.(string), " \t") {
				return errTest
			}
			return nil
		}, Help: "a word"},
	},
}

type testErr string

func (e testErr) Error() string { return string(e) }

const errTest = testErr("holds white space; give one word")

func TestRangesAndChecks(t *testing.T) {
	tests := []struct {
		args map[string]any
		want string // "" = accepted
	}{
		{map[string]any{"name": "x", "port": 1}, ""},
		{map[string]any{"name": "x", "port": "65535"}, ""},
		{map[string]any{"name": "x", "port": 0}, `parameter "port" is 0; it must be between 1 and 65535`},
		{map[string]any{"name": "x", "port": -5}, "between 1 and 65535"},
		{map[string]any{"name": "x", "port": 1e19}, `"port": 1e+19 is too large a number`},
		{map[string]any{"name": "x", "port": "123456789012345678901234567890"}, "too large"},
		{map[string]any{"name": "  "}, `parameter "name" is empty`},
		{map[string]any{"name": "x", "word": "two words"}, `parameter "word" holds white space`},
	}
	for _, tc := range tests {
		_, err := rangedSpec.Validate(tc.args)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	var help bytes.Buffer
	Usage(rangedSpec, &help)
	opts, err := ParseHelp(help.Bytes())
	if err != nil || opts["port"].Range != "1-65535" {
		t.Errorf("--help range: %+v %v\n%s", opts["port"], err, help.String())
	}
	if err := CheckBoundaries(rangedSpec); err != nil {
		t.Error(err)
	}
	if err := CheckBoundaries(testSpec); err == nil || !strings.Contains(err.Error(), "count has no Range") {
		t.Errorf("an int without a range: %v", err)
	}
	for _, bi := range BadInputs(rangedSpec, map[string]any{"name": "x"}) {
		if err := Refused(rangedSpec, bi); err != nil {
			t.Error(err)
		}
	}
}
