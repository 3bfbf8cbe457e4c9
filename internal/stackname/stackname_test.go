package stackname

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	short := Limit{Max: 20, Why: "the working directory's file names add to it"}
	tests := []struct {
		name  string
		param string
		value string
		limit Limit
		// want: substrings of the error; none means the name is accepted.
		want []string
	}{
		{name: "a plain name", param: "name", value: "overcloud", limit: Heat},
		{name: "every allowed character", param: "stack", value: "Over_cloud-1.b", limit: Heat},
		{name: "one letter", param: "stack", value: "a", limit: Heat},
		{name: "Heat's longest", param: "name", value: "a" + strings.Repeat("b", 254), limit: Heat},
		{name: "at a lower limit", param: "stack", value: "a" + strings.Repeat("b", 19), limit: short},
		{name: "empty", param: "stack", value: "", limit: Heat, want: []string{`parameter "stack" is empty`, "starts with a letter"}},
		{name: "a number", param: "stack", value: "123", limit: Heat, want: []string{`parameter "stack" is "123"`, "starts with a letter"}},
		{name: "leading dash", param: "stack", value: "-overcloud", limit: Heat, want: []string{`"-overcloud"`, "starts with a letter"}},
		{name: "leading dot", param: "stack", value: ".hidden", limit: Heat, want: []string{`".hidden"`}},
		{name: "newline", param: "stack", value: "over\ncloud", limit: Heat, want: []string{`"over\ncloud"`, "letters, digits, _ . and -"}},
		{name: "semicolon", param: "stack", value: "a;rm -rf x", limit: Heat, want: []string{`"a;rm -rf x"`}},
		{name: "command substitution", param: "stack", value: "a$(id)", limit: Heat, want: []string{`"a$(id)"`}},
		{name: "slash", param: "name", value: "1st/overcloud", limit: Heat, want: []string{`parameter "name"`, "starts with a letter"}},
		{name: "a slash later", param: "name", value: "over/cloud", limit: Heat, want: []string{`"over/cloud"`}},
		{name: "non-ASCII letter", param: "stack", value: "clöud", limit: Heat, want: []string{`"clöud"`}},
		{name: "NUL", param: "stack", value: "a\x00b", limit: Heat, want: []string{`"a\x00b"`}},
		{name: "space", param: "stack", value: "over cloud", limit: Heat, want: []string{`"over cloud"`}},
		{name: "over Heat's limit", param: "name", value: strings.Repeat("a", 256), limit: Heat,
			want: []string{`parameter "name" is 256 characters long`, "at most 255 characters"}},
		{name: "over a lower limit", param: "stack", value: strings.Repeat("a", 21), limit: short,
			want: []string{`parameter "stack" is 21 characters long`, "at most 20 characters here (the working directory's file names add to it)"}},
		{name: "a limit above Heat's is Heat's", param: "stack", value: strings.Repeat("a", 256), limit: Limit{Max: 1000},
			want: []string{"at most 255 characters"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.param, tc.value, tc.limit)
			cerr := Checker(tc.limit)(tc.value)
			if len(tc.want) == 0 {
				if err != nil || cerr != nil {
					t.Fatalf("%q refused: %v; %v", tc.value, err, cerr)
				}
				return
			}
			if err == nil || cerr == nil {
				t.Fatalf("%q accepted: %v; %v", tc.value, err, cerr)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v does not say %q", err, w)
				}
			}
			// Checker's message is Check's without the parameter.
			if want := strings.TrimPrefix(err.Error(), `parameter "`+tc.param+`" `); cerr.Error() != want {
				t.Errorf("Checker says %q, want %q", cerr, want)
			}
		})
	}
	if err := Checker(Heat)(42); err == nil || !strings.Contains(err.Error(), "starts with a letter") {
		t.Errorf("a number as the value: %v", err)
	}
}
