package templates

import (
	"strings"
	"testing"
)

// A value YAML cannot give Heat is refused by file and line, never quoted:
// in an environment it may be a hidden parameter's, which is masked only
// once the files are processed.
func TestYAMLErrorsQuoteNoValue(t *testing.T) {
	const secret = "s3cr3t-Pa55word-19"
	for _, tc := range []struct{ doc, want string }{
		{"parameter_defaults:\n  AdminPassword: !!int " + secret + "\n", "line 2: a value tagged !!int is not an integer"},
		{"parameter_defaults:\n  AdminPassword: !!bool " + secret + "\n", "line 2: a value tagged !!bool is not a boolean"},
		{"parameter_defaults:\n  AdminPassword: !!float " + secret + "\n", "line 2: a value tagged !!float is not a number"},
		{"parameter_defaults:\n  AdminPassword: !!float 1:" + secret + "\n", "line 2: a value tagged !!float is not a number"},
		{"parameter_defaults:\n  Pin: .inf\n", "line 2: a value that is infinity or NaN"},
	} {
		_, err := ParseYAML([]byte(tc.doc), "env.yaml")
		if err == nil || !strings.Contains(err.Error(), "env.yaml: "+tc.want) || strings.Contains(err.Error(), secret[:4]) {
			t.Errorf("%q: %v, want %q and no part of the value", tc.doc, err, tc.want)
		}
	}
}
