// Package yamlsafe says what is wrong with a YAML document that may hold
// secrets (a passwords file, a scale-down environment, a nodes file)
// without quoting any of it: yaml.v3's errors quote the offending scalar
// ("cannot unmarshal !!str `s3cr3t...`"), an anchor or a key, and a
// message about a node names its kind, never its value.
package yamlsafe

import (
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// quoted matches what a YAML error quotes of its input: a scalar in
// backquotes, an anchor or a key in quotes.
var quoted = regexp.MustCompile("`[^`]*`?|'[^']*'?|\"[^\"]*\"?")

// ErrorText is a YAML error's text without its "yaml: " prefix and
// without anything it quotes of the input.
func ErrorText(err error) string {
	return quoted.ReplaceAllStringFunc(strings.TrimPrefix(err.Error(), "yaml: "), func(q string) string {
		// A single character in single quotes is the syntax the parser
		// expected (',' or '}'), not the input's.
		if len(q) == 3 && q[0] == '\'' && q[2] == '\'' {
			return q
		}
		return "(…)"
	})
}

// IsNull tells an empty (null) node.
func IsNull(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// KindName names what a node is, never its value.
func KindName(n *yaml.Node) string {
	switch {
	case n == nil:
		return "missing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.AliasNode:
		return "an alias (*name)"
	case IsNull(n):
		return "empty (null)"
	case n.Tag == "!!int":
		return "a number"
	case n.Tag == "!!float":
		return "a decimal number"
	case n.Tag == "!!bool":
		return "a boolean"
	case n.Kind == yaml.ScalarNode:
		return "a string"
	}
	return "not a YAML value"
}
