package configdownload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What tripleo-common's Python writes, byte for byte: str() and repr() of
// values (Jinja's {{ }} and |string), json.dumps, Jinja's indent filter and
// str.splitlines. These are facts of the format: the deployment files of
// config-download are Jinja renderings whose text Ansible later templates
// again, so their exact text matters.

// pyStr is Python's str(v) (and Jinja's {{ v }}): a string as it is, any
// other value as its repr.
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

// pyRepr is Python's repr(v) of a value decoded by the json module.
func pyRepr(v any) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

func writeRepr(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case Number:
		b.WriteString(pyNumber(x, false))
	case string:
		b.WriteString(pyStrRepr(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e)
		}
		b.WriteByte(']')
	case *Object:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyStrRepr(k))
			b.WriteString(": ")
			writeRepr(b, x.vals[k])
		}
		b.WriteByte('}')
	default:
		b.WriteString(fmt.Sprint(x))
	}
}

// pyStrRepr is repr() of a str: single quotes unless the string holds a
// single quote and no double quote; printable characters as they are.
func pyStrRepr(s string) string {
	quote := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < ' ' || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case !unicode.IsPrint(r):
			switch {
			case r < 0x100:
				fmt.Fprintf(&b, `\x%02x`, r)
			case r < 0x10000:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// pyNumber writes a JSON number as Python prints the int or float the json
// module makes of it; json selects json.dumps' spelling of inf and nan.
func pyNumber(n Number, json bool) string {
	if !n.IsFloat() {
		return pyIntText(string(n))
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && !math.IsInf(f, 0) {
		return string(n)
	}
	return pyFloat(f, json)
}

// pyIntText is str(int(s)) of a JSON integer: no sign on zero, no leading
// zeros.
func pyIntText(s string) string {
	neg := strings.HasPrefix(s, "-")
	digits := strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+"), "0")
	if digits == "" {
		return "0"
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// pyFloat is repr(float): the shortest digits that read back the same,
// positional from 1e-4 up to 1e16, scientific (two-digit exponent at least)
// outside, always with a ".0" or an exponent.
func pyFloat(f float64, json bool) string {
	switch {
	case math.IsNaN(f):
		if json {
			return "NaN"
		}
		return "nan"
	case math.IsInf(f, 1):
		if json {
			return "Infinity"
		}
		return "inf"
	case math.IsInf(f, -1):
		if json {
			return "-Infinity"
		}
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // [-]d[.ddd]e±XX
	sign := ""
	if strings.HasPrefix(e, "-") {
		sign, e = "-", e[1:]
	}
	mant, expS, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expS)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			return sign + "0." + strings.Repeat("0", -decpt) + digits
		case decpt >= len(digits):
			return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
		default:
			return sign + digits[:decpt] + "." + digits[decpt:]
		}
	}
	m := digits[:1]
	if len(digits) > 1 {
		m += "." + digits[1:]
	}
	es := "+"
	if exp < 0 {
		es, exp = "-", -exp
	}
	return fmt.Sprintf("%s%se%s%02d", sign, m, es, exp)
}

// pyJSONDumps is json.dumps(v) (indent < 0) or json.dumps(v, indent=N):
// ensure_ascii, keys in order, ", " and ": " without indent, "," and ": "
// with it.
func pyJSONDumps(v any, indent int) string {
	var b strings.Builder
	writeJSON(&b, v, indent, 0)
	return b.String()
}

func writeJSON(b *strings.Builder, v any, indent, level int) {
	nl := func(l int) {
		if indent >= 0 {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(" ", indent*l))
		}
	}
	sep := ", "
	if indent >= 0 {
		sep = ","
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case Number:
		b.WriteString(pyNumber(x, true))
	case string:
		writeJSONString(b, x)
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(sep)
			}
			nl(level + 1)
			writeJSON(b, e, indent, level+1)
		}
		nl(level)
		b.WriteByte(']')
	case *Object:
		if x.Len() == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(sep)
			}
			nl(level + 1)
			writeJSONString(b, k)
			b.WriteString(": ")
			writeJSON(b, x.vals[k], indent, level+1)
		}
		nl(level)
		b.WriteByte('}')
	default:
		writeJSONString(b, fmt.Sprint(x))
	}
}

// writeJSONString writes a string as json.dumps does with ensure_ascii.
func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r >= ' ' && r <= '~':
				b.WriteRune(r)
			case r >= 0x10000:
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			default:
				fmt.Fprintf(b, `\u%04x`, r)
			}
		}
	}
	b.WriteByte('"')
}

// pySplitlines is str.splitlines(): lines end at \n, \r, \r\n, \v, \f,
// \x1c, \x1d, \x1e, \x85, \u2028 and \u2029, which are dropped.
func pySplitlines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			lines = append(lines, s[start:i])
			if r == '\r' && i+1 < len(s) && s[i+1] == '\n' {
				size = 2
			}
			start = i + size
		}
		i += size
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

// jinjaIndent is Jinja 3's indent(s, width, first) filter (blank lines
// stay empty; line ends become \n).
func jinjaIndent(s string, width int, first bool) string {
	ind := strings.Repeat(" ", width)
	lines := pySplitlines(s + "\n")
	rv := lines[0]
	if len(lines) > 1 {
		rest := make([]string, len(lines)-1)
		for i, l := range lines[1:] {
			if l != "" {
				l = ind + l
			}
			rest[i] = l
		}
		rv += "\n" + strings.Join(rest, "\n")
	}
	if first {
		rv = ind + rv
	}
	return rv
}

// pyIsInt reports whether Python's int(v) accepts v: an int or a float, or
// a string of digits (with an optional sign, single underscores between
// digits and white space around).
func pyIsInt(v any) bool {
	switch x := v.(type) {
	case bool:
		return true
	case Number:
		if x.IsFloat() {
			f := x.Float()
			return !math.IsInf(f, 0) && !math.IsNaN(f)
		}
		return true
	case string:
		s := strings.TrimFunc(x, pyIsSpace)
		s = strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-")
		if s == "" || strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") || strings.Contains(s, "__") {
			return false
		}
		for _, r := range s {
			if r != '_' && !unicode.IsDigit(r) {
				return false
			}
		}
		return true
	}
	return false
}

// pyIsSpace is str.isspace() for one character (also what \s matches in
// Python's re on str patterns).
func pyIsSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, 0x85:
		return true
	}
	return r > 0x7f && unicode.IsSpace(r)
}
