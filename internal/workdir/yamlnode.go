package workdir

// Helpers that check the files of the working dir against their schema on
// the parsed YAML node tree, so that every refusal can name the line and the
// key, and so that no message quotes a value (yaml.v3's type errors quote
// the scalar they could not decode).

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/yamlsafe"
)

// ymap is a YAML mapping node: its keys in order, and each key's value.
type ymap struct {
	node *yaml.Node
	keys []string
	val  map[string]*yaml.Node
}

// asMap reads a mapping node; where names it in errors ("groups[1]").
// Duplicate and non-scalar keys are refused.
func asMap(n *yaml.Node, where string) (*ymap, error) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s (line %d) is %s, not a mapping", where, line(n), kindName(n))
	}
	m := &ymap{node: n, val: map[string]*yaml.Node{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s (line %d) has a key that is %s, not a name", where, k.Line, kindName(k))
		}
		if prev, dup := m.val[k.Value]; dup {
			return nil, fmt.Errorf("%s names %q twice (line %d and line %d)", where, k.Value, line(prev), k.Line)
		}
		m.keys = append(m.keys, k.Value)
		m.val[k.Value] = n.Content[i+1]
	}
	return m, nil
}

// require refuses a mapping that lacks one of keys.
func (m *ymap) require(where string, keys ...string) error {
	var missing []string
	for _, k := range keys {
		if _, ok := m.val[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s (line %d) lacks %s", where, m.node.Line, strings.Join(missing, ", "))
	}
	return nil
}

// str reads the scalar value of key (a null is ""); a mapping or a list
// there is refused. where is "" for the top level.
func (m *ymap) str(where, key string) (string, error) {
	n := m.val[key]
	if n == nil || isNull(n) {
		return "", nil
	}
	if n.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("%s (line %d) is %s, not a single value", keyPath(where, key), n.Line, kindName(n))
	}
	return n.Value, nil
}

// seq reads the items of the list of key (a null is no item).
func (m *ymap) seq(where, key string) ([]*yaml.Node, error) {
	n := m.val[key]
	if n == nil || isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s (line %d) is %s, not a list", keyPath(where, key), n.Line, kindName(n))
	}
	return n.Content, nil
}

// keyPath names key of where ("groups[0].members").
func keyPath(where, key string) string {
	if where == "" {
		return key
	}
	return where + "." + key
}

func isNull(n *yaml.Node) bool { return yamlsafe.IsNull(n) }

func line(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}

// kindName names what a node is, never its value.
func kindName(n *yaml.Node) string { return yamlsafe.KindName(n) }

// parseDoc parses data into its document's root node; empty (or only
// comments) is an error of its own, and a syntax error is said without
// quoting the file.
func parseDoc(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("it is not valid YAML (%s)", yamlErrorText(err))
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, fmt.Errorf("it is empty")
	}
	return doc.Content[0], nil
}

// yamlErrorText is a YAML error's text without anything it quotes of the
// input (yamlsafe).
func yamlErrorText(err error) string { return yamlsafe.ErrorText(err) }

// indexForm is a member name: the decimal Heat gives (resource_group.py
// names members "0", "1", ...), no sign or leading zero.
var indexForm = regexp.MustCompile(`^(0|[1-9][0-9]{0,8})$`)

// checkIndex refuses what is not a member index.
func checkIndex(s string) error {
	if !indexForm.MatchString(s) {
		return fmt.Errorf("%q is not a member index (an integer 0 or more, as Heat names the members: \"0\", \"1\", ...)", truncateName(s))
	}
	return nil
}

// truncateName shortens a name for a message.
func truncateName(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// intValue reads an integer scalar (a YAML number, not a string).
func intValue(n *yaml.Node) (int64, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return 0, false
	}
	var v int64
	if err := n.Decode(&v); err != nil {
		return 0, false
	}
	return v, true
}

// indexOf reads a removal_policies resource_list entry: a number 0 or
// more, or a member index as a string.
func indexOf(n *yaml.Node) (string, bool) {
	if v, ok := intValue(n); ok {
		if v < 0 || v > 999999999 {
			return "", false
		}
		return strconv.FormatInt(v, 10), true
	}
	if n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!str" && checkIndex(n.Value) == nil {
		return n.Value, true
	}
	return "", false
}
