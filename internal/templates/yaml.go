package templates

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// PyYAML's implicit resolvers (yaml/resolver.py), which heatclient's loader
// uses: YAML 1.1 booleans, octal "010", "1_000", sexagesimal "1:30", floats
// that need a dot ("1.5e10" stays a string). Timestamps are kept as strings.
var (
	boolRE  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	floatRE = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?` +
		`|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?` +
		`|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*` +
		`|[-+]?\.(?:inf|Inf|INF)` +
		`|\.(?:nan|NaN|NAN))$`)
	intRE = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+` +
		`|[-+]?0[0-7_]+` +
		`|[-+]?(?:0|[1-9][0-9_]*)` +
		`|[-+]?0x[0-9a-fA-F_]+` +
		`|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	nullRE = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
)

// maxNodes bounds the values one document may expand to (alias bombs).
const maxNodes = 5_000_000

// ParseYAML decodes one YAML document into the values python-heatclient's
// template_format loader produces, ready to be encoded as JSON: maps are
// map[string]any (non-string keys become their JSON spelling, as json.dumps
// writes them), lists are []any, numbers are json.Number holding the text
// Python's json.dumps would write (ints exactly, floats as Python's repr, so
// 1.0 stays "1.0"), YAML 1.1 booleans (yes/no/on/off) are bool, and
// timestamps such as 2016-10-14 stay strings. Merge keys ("<<") and
// duplicate keys (the last wins) behave as in PyYAML. name (a path) is used
// in error messages, which carry the line number.
func ParseYAML(data []byte, name string) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: invalid YAML: %s", name, describeYAMLError(err))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("%s: line %d: a second YAML document starts here; Heat reads exactly one document per file, remove the \"---\" separator", name, extra.Line)
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: invalid YAML: %s", name, describeYAMLError(err))
	}
	c := &converter{name: name}
	return c.value(&doc)
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// describeYAMLError rewrites a yaml.v3 syntax error as "line N: problem".
// yaml.v3 reports parser errors (unlike scanner errors) with a 0-based line,
// that of the enclosing block or brackets when there is one: those get 1
// added and "near".
func describeYAMLError(err error) string {
	m := yamlLineRE.FindStringSubmatch(err.Error())
	if m == nil {
		return strings.TrimPrefix(err.Error(), "yaml: ")
	}
	line, _ := strconv.Atoi(m[1])
	msg := m[2]
	if strings.HasPrefix(msg, "did not find expected") || strings.HasPrefix(msg, "found duplicate %") ||
		msg == "found incompatible YAML document" || msg == "found undefined tag handle" {
		return fmt.Sprintf("near line %d: %s (check the indentation and brackets from there on)", line+1, msg)
	}
	return fmt.Sprintf("line %d: %s", line, msg)
}

type converter struct {
	name  string
	nodes int
}

// errorf reports a problem at n's line. It never quotes a scalar's value:
// an environment's values may be secrets (hidden parameters), which are
// only known, and masked, once the files are processed.
func (c *converter) errorf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s: line %d: %s", c.name, n.Line, fmt.Sprintf(format, args...))
}

func (c *converter) value(n *yaml.Node) (any, error) {
	c.nodes++
	if c.nodes > maxNodes {
		return nil, c.errorf(n, "document expands to more than %d values (aliases?)", maxNodes)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0])
	case yaml.AliasNode:
		return c.value(n.Alias)
	case yaml.ScalarNode:
		return c.scalar(n)
	case yaml.SequenceNode:
		if n.Style&yaml.TaggedStyle != 0 && n.Tag != "!!seq" {
			return nil, c.errorf(n, "unsupported YAML tag %s (Heat's loader only knows plain maps, lists and scalars)", n.Tag)
		}
		out := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			v, err := c.value(item)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		if n.Style&yaml.TaggedStyle != 0 && n.Tag != "!!map" {
			return nil, c.errorf(n, "unsupported YAML tag %s (Heat's loader only knows plain maps, lists and scalars)", n.Tag)
		}
		pairs, err := c.flatten(n)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(pairs)/2)
		for i := 0; i < len(pairs); i += 2 {
			k, err := c.key(pairs[i])
			if err != nil {
				return nil, err
			}
			v, err := c.value(pairs[i+1])
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	}
	return nil, c.errorf(n, "unexpected YAML node")
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isMergeKey(k *yaml.Node) bool {
	if k.Kind != yaml.ScalarNode || k.Value != "<<" {
		return false
	}
	if k.Style&yaml.TaggedStyle != 0 {
		return k.Tag == "!!merge"
	}
	return k.Style == 0 // plain
}

// flatten returns the key/value node pairs of a mapping with merge keys
// expanded like PyYAML's flatten_mapping: merged pairs first (for a list of
// maps, earlier maps win), then the mapping's own pairs, so that assigning
// in order lets own keys override merged ones.
func (c *converter) flatten(n *yaml.Node) ([]*yaml.Node, error) {
	var merged, own []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !isMergeKey(k) {
			own = append(own, k, v)
			continue
		}
		v = deref(v)
		switch v.Kind {
		case yaml.MappingNode:
			sub, err := c.flatten(v)
			if err != nil {
				return nil, err
			}
			merged = append(merged, sub...)
		case yaml.SequenceNode:
			var subs [][]*yaml.Node
			for _, item := range v.Content {
				item = deref(item)
				if item.Kind != yaml.MappingNode {
					return nil, c.errorf(item, "a merge key (<<) list may only hold mappings")
				}
				sub, err := c.flatten(item)
				if err != nil {
					return nil, err
				}
				subs = append(subs, sub)
			}
			for i := len(subs) - 1; i >= 0; i-- {
				merged = append(merged, subs[i]...)
			}
		default:
			return nil, c.errorf(v, "a merge key (<<) needs a mapping or a list of mappings")
		}
	}
	return append(merged, own...), nil
}

// key converts a mapping key to the string json.dumps would write for it.
func (c *converter) key(n *yaml.Node) (string, error) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode {
		return "", c.errorf(n, "a mapping key must be a scalar, not a map or list")
	}
	if n.Value == "=" && n.Style == 0 {
		return "=", nil // PyYAML turns a "=" key into a string
	}
	v, err := c.scalar(n)
	if err != nil {
		return "", err
	}
	switch k := v.(type) {
	case string:
		return k, nil
	case nil:
		return "null", nil
	case bool:
		return strconv.FormatBool(k), nil
	case json.Number:
		return k.String(), nil
	}
	return "", c.errorf(n, "unsupported mapping key")
}

func (c *converter) scalar(n *yaml.Node) (any, error) {
	var tag string
	switch {
	case n.Style&yaml.TaggedStyle != 0:
		tag = n.Tag
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return n.Value, nil
	default:
		tag = resolvePlain(n.Value)
	}
	switch tag {
	case "!!str", "!!timestamp", "!":
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		switch strings.ToLower(n.Value) {
		case "yes", "true", "on":
			return true, nil
		case "no", "false", "off":
			return false, nil
		}
		return nil, c.errorf(n, "a value tagged !!bool is not a boolean (yes, no, true, false, on or off)")
	case "!!int":
		num, err := pyInt(n.Value)
		if err != nil {
			return nil, c.errorf(n, "%v", err)
		}
		return num, nil
	case "!!float":
		num, err := pyFloat(n.Value)
		if err != nil {
			return nil, c.errorf(n, "%v", err)
		}
		return num, nil
	case "!!merge", "!!value":
		return nil, c.errorf(n, "plain %q cannot be a value (PyYAML has no constructor for it); quote it", n.Value)
	case "!!binary":
		return nil, c.errorf(n, "!!binary data cannot be sent to Heat as JSON; use get_file on the file instead")
	}
	return nil, c.errorf(n, "unsupported YAML tag %s (Heat's loader only knows plain maps, lists and scalars); remove the tag or quote the value", tag)
}

// resolvePlain returns the tag PyYAML's implicit resolvers give a plain
// scalar. Each resolver needs a particular first character (a digit, a
// sign or a dot for numbers; y, n, t, f, o for YAML 1.1 booleans; n or ~
// for null; < and = for the merge and value keys), so most scalars of a
// template (names, functions, words) are strings without a regular
// expression; the others go through resolvePlainRE, PyYAML's rules.
func resolvePlain(s string) string {
	if s == "" {
		return "!!null"
	}
	switch c := s[0]; {
	case c >= '0' && c <= '9', c == '+', c == '-', c == '.':
		return resolvePlainRE(s)
	case c == '~', c == '<', c == '=', strings.IndexByte("yYnNtTfFoO", c) >= 0:
		if len(s) <= 5 {
			return resolvePlainRE(s)
		}
	}
	return "!!str"
}

// resolvePlainRE is resolvePlain by PyYAML's regular expressions alone.
func resolvePlainRE(s string) string {
	switch {
	case boolRE.MatchString(s):
		return "!!bool"
	case floatRE.MatchString(s):
		return "!!float"
	case intRE.MatchString(s):
		return "!!int"
	case s == "<<":
		return "!!merge"
	case nullRE.MatchString(s):
		return "!!null"
	case s == "=":
		return "!!value"
	}
	return "!!str"
}

// pyInt follows PyYAML's construct_yaml_int.
func pyInt(s string) (json.Number, error) {
	v := strings.ReplaceAll(s, "_", "")
	neg := false
	if v != "" && (v[0] == '-' || v[0] == '+') {
		neg = v[0] == '-'
		v = v[1:]
	}
	n := new(big.Int)
	ok := true
	switch {
	case v == "0":
	case strings.HasPrefix(v, "0b"):
		_, ok = n.SetString(v[2:], 2)
	case strings.HasPrefix(v, "0x"):
		_, ok = n.SetString(v[2:], 16)
	case strings.HasPrefix(v, "0"):
		_, ok = n.SetString(v, 8)
	case strings.Contains(v, ":"):
		base := big.NewInt(1)
		parts := strings.Split(v, ":")
		for i := len(parts) - 1; i >= 0 && ok; i-- {
			d, good := new(big.Int).SetString(parts[i], 10)
			ok = good
			if good {
				n.Add(n, d.Mul(d, base))
				base.Mul(base, big.NewInt(60))
			}
		}
	default:
		_, ok = n.SetString(v, 10)
	}
	if !ok {
		return "", errors.New("a value tagged !!int is not an integer")
	}
	if neg {
		n.Neg(n)
	}
	return json.Number(n.String()), nil
}

// pyFloat follows PyYAML's construct_yaml_float and returns Python's repr.
func pyFloat(s string) (json.Number, error) {
	v := strings.ToLower(strings.ReplaceAll(s, "_", ""))
	sign := 1.0
	if v != "" && (v[0] == '-' || v[0] == '+') {
		if v[0] == '-' {
			sign = -1
		}
		v = v[1:]
	}
	var f float64
	switch {
	case v == ".inf" || v == ".nan":
		return "", errors.New("a value that is infinity or NaN cannot be sent to Heat as JSON; quote it")
	case strings.Contains(v, ":"):
		parts := strings.Split(v, ":")
		base := 1.0
		for i := len(parts) - 1; i >= 0; i-- {
			d, err := strconv.ParseFloat(parts[i], 64)
			if err != nil {
				return "", errors.New("a value tagged !!float is not a number")
			}
			f += d * base
			base *= 60
		}
	default:
		var err error
		if f, err = strconv.ParseFloat(v, 64); err != nil {
			return "", errors.New("a value tagged !!float is not a number that JSON can carry")
		}
	}
	return pyFloatRepr(sign * f)
}

// pyFloatRepr writes f as Python's repr does (and so json.dumps): the
// shortest round-tripping digits, fixed notation for exponents -4..15 (always
// with a ".0" when integral), else "d.ddde+XX".
func pyFloatRepr(f float64) (json.Number, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return "", fmt.Errorf("%v cannot be sent to Heat as JSON", f)
	}
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0", nil
		}
		return "0.0", nil
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // -d.ddde+XX
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	e := strings.IndexByte(s, 'e')
	digits := strings.Replace(s[:e], ".", "", 1)
	exp, _ := strconv.Atoi(s[e+1:])
	var out string
	switch {
	case exp >= 16 || exp < -4:
		out = digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es, exp = "-", -exp
		}
		out += fmt.Sprintf("e%s%02d", es, exp)
	case exp >= 0:
		if len(digits) <= exp+1 {
			out = digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
		} else {
			out = digits[:exp+1] + "." + digits[exp+1:]
		}
	default:
		out = "0." + strings.Repeat("0", -exp-1) + digits
	}
	return json.Number(sign + out), nil
}

// parseJSONTemplate decodes a template written as JSON the way Python's
// json.loads does (ints exact, floats as floats, the last duplicate key
// wins), normalising numbers to what json.dumps would write back.
func parseJSONTemplate(data []byte, name string) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s: invalid JSON: %s", name, describeJSONError(data, err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: invalid JSON: extra data after the top-level object (line %d)", name, lineAt(data, int(dec.InputOffset())))
	}
	return normaliseNumbers(v, name)
}

func describeJSONError(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("line %d: %v", lineAt(data, int(se.Offset)), err)
	}
	return err.Error()
}

func lineAt(data []byte, offset int) int {
	if offset > len(data) {
		offset = len(data)
	}
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

func normaliseNumbers(v any, name string) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			y, err := normaliseNumbers(x, name)
			if err != nil {
				return nil, err
			}
			t[k] = y
		}
	case []any:
		for i, x := range t {
			y, err := normaliseNumbers(x, name)
			if err != nil {
				return nil, err
			}
			t[i] = y
		}
	case json.Number:
		s := t.String()
		if !strings.ContainsAny(s, ".eE") {
			n, ok := new(big.Int).SetString(s, 10)
			if !ok {
				return nil, fmt.Errorf("%s: bad number %s", name, s)
			}
			return json.Number(n.String()), nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: number %s is out of range", name, s)
		}
		r, err := pyFloatRepr(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return r, nil
	}
	return v, nil
}
