package configdownload

import (
	"bytes"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// dumpYAML writes v as yaml.safe_dump(v, default_flow_style=False) does, to
// the value: mappings in block style with sorted keys, numbers as Python
// prints them, and every string that YAML 1.1 (PyYAML, hence Ansible) or
// YAML 1.2 would read as something else quoted.
func dumpYAML(v any) []byte {
	return encodeNode(yamlNode(v, false))
}

// dumpYAMLOrdered is dumpYAML with the top-level mapping in insertion order
// (tripleo-common's TemplateDumper writes its OrderedDict that way; the
// mappings inside are plain dicts, sorted).
func dumpYAMLOrdered(v any) []byte {
	return encodeNode(yamlNode(v, true))
}

func encodeNode(n *yaml.Node) []byte {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		// Nodes built from JSON values always encode; keep a readable trace.
		return []byte("# unencodable value: " + strings.ReplaceAll(err.Error(), "\n", " ") + "\n")
	}
	enc.Close()
	return buf.Bytes()
}

func yamlNode(v any, ordered bool) *yaml.Node {
	switch x := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case bool:
		s := "false"
		if x {
			s = "true"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: s}
	case Number:
		if x.IsFloat() {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: yamlFloat(x)}
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: pyIntText(string(x))}
	case string:
		return strNode(x)
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range x {
			n.Content = append(n.Content, yamlNode(e, false))
		}
		return n
	case *Object:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		keys := x.SortedKeys()
		if ordered {
			keys = x.Keys()
		}
		for _, k := range keys {
			n.Content = append(n.Content, strNode(k), yamlNode(x.vals[k], false))
		}
		return n
	}
	return strNode(pyStr(v))
}

// yamlFloat is PyYAML's represent_float.
func yamlFloat(n Number) string {
	s := strings.ToLower(pyNumber(n, false))
	switch s {
	case "nan":
		return ".nan"
	case "inf":
		return ".inf"
	case "-inf":
		return "-.inf"
	}
	if !strings.Contains(s, ".") && strings.Contains(s, "e") {
		s = strings.Replace(s, "e", ".0e", 1)
	}
	return s
}

func strNode(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	switch {
	case strings.Contains(s, "\n"):
		// A literal block only where it reads back the same everywhere.
		if !literalSafe(s) {
			n.Style = yaml.DoubleQuotedStyle
		}
	case pyyamlImplicit(s):
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// literalSafe reports whether a multi-line string can be a literal block
// scalar: text on its first line, printable characters, no carriage return
// and no white space ending a line.
func literalSafe(s string) bool {
	if s == "" || s[0] == ' ' || s[0] == '\n' || s[0] == '\t' {
		return false
	}
	for _, r := range s {
		if r != '\n' && (r < ' ' || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xfeff) {
			return false
		}
	}
	return !strings.Contains(s, " \n") && !strings.Contains(s, "\t\n") && !strings.HasSuffix(s, " ") && !strings.HasSuffix(s, "\t")
}

// PyYAML's implicit resolvers (YAML 1.1): a plain scalar matching one of
// them is not read as a string.
var pyyamlResolvers = []*regexp.Regexp{
	regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`),
	regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`),
	regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`),
	regexp.MustCompile(`^(?:<<)$`),
	regexp.MustCompile(`^(?:~|null|Null|NULL|)$`),
	regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`),
	regexp.MustCompile(`^(?:=)$`),
}

func pyyamlImplicit(s string) bool {
	// PyYAML tries its resolvers only on scalars starting with one of these.
	if s != "" && !strings.ContainsRune("yYnNtTfFoO-+0123456789.<~=", rune(s[0])) {
		return false
	}
	for _, re := range pyyamlResolvers {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}
