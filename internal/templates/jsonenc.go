package templates

import (
	"bytes"
	"encoding/json"
	"sort"
	"unicode/utf8"
)

// appendJSON appends v encoded exactly as encoding/json's Encoder with
// SetEscapeHTML(false) writes it (without the trailing newline), for the
// values this package handles (maps with string keys, []any, strings,
// json.Number, bool, nil), without reflection; anything else is encoded by
// encoding/json itself. TestAppendJSONMatchesEncodingJSON holds it to
// encoding/json's bytes.
func appendJSON(dst []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return appendJSONString(dst, t), nil
	case bool:
		if t {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case map[string]any:
		return appendJSONObject(dst, t, appendJSON)
	case map[string]string:
		return appendJSONObject(dst, t, appendJSONStringValue)
	case []any:
		return appendJSONArray(dst, t, appendJSON)
	case []string:
		return appendJSONArray(dst, t, appendJSONStringValue)
	}
	// json.Number (validated by encoding/json) and anything else.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// appendJSONObject appends m as a JSON object, keys sorted, each value
// appended by appendValue; a nil map is null, as encoding/json has it.
func appendJSONObject[V any](dst []byte, m map[string]V, appendValue func([]byte, V) ([]byte, error)) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = appendValue(dst, m[k]); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// appendJSONArray appends s as a JSON array, each element appended by
// appendValue; a nil slice is null, as encoding/json has it.
func appendJSONArray[V any](dst []byte, s []V, appendValue func([]byte, V) ([]byte, error)) ([]byte, error) {
	if s == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i, x := range s {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendValue(dst, x); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// appendJSONStringValue is appendJSONString in the shape appendJSONObject
// and appendJSONArray take.
func appendJSONStringValue(dst []byte, s string) ([]byte, error) {
	return appendJSONString(dst, s), nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString is encoding/json's string encoding without HTML
// escaping: \", \\, \b, \f, \n, \r, \t, other control characters as \u00XX,
// invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped, the rest as is.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
