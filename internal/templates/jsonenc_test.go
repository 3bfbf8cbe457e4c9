package templates

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// encodingJSON is what the package wrote before appendJSON: encoding/json's
// Encoder without HTML escaping, newline trimmed.
func encodingJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// appendJSON writes encoding/json's bytes for every value this package
// produces: strings with every ASCII byte, control characters, invalid
// UTF-8, U+2028/U+2029 and other multi-byte runes; nil and empty maps and
// lists; numbers; and nested random documents; and the testdata tree.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	var strs []string
	for b := 0; b < 256; b++ {
		strs = append(strs, string([]byte{byte(b)}), "a"+string([]byte{byte(b)})+"z")
	}
	strs = append(strs, "", "plain", "é", "日本", "\u2028", "x\u2029y", "\U0001F600", "\xe2\x80", "\xff\xfe", "<>&", `"\`, "\t\n\r\b\f\x00\x1f\x7f")
	values := []any{nil, true, false, json.Number("1"), json.Number("-1.5e+10"), json.Number("0.0"),
		map[string]any(nil), map[string]any{}, []any(nil), []any{}, map[string]string{"b": "1", "a": "\n"},
		[]string{"x", "\u2028"}, []string(nil), map[string]string(nil), 42, 3.5, map[string]int{"k": 1}}
	for _, s := range strs {
		values = append(values, s, map[string]any{s: s}, []any{s, nil})
	}
	rng := rand.New(rand.NewSource(1))
	var random func(depth int) any
	random = func(depth int) any {
		switch n := rng.Intn(7); {
		case depth > 4 || n == 0:
			return strs[rng.Intn(len(strs))]
		case n == 1:
			return json.Number("12")
		case n == 2:
			return rng.Intn(2) == 0
		case n == 3:
			return nil
		case n == 4:
			l := make([]any, rng.Intn(4))
			for i := range l {
				l[i] = random(depth + 1)
			}
			return l
		default:
			m := map[string]any{}
			for i := rng.Intn(5); i > 0; i-- {
				m[strs[rng.Intn(len(strs))]] = random(depth + 1)
			}
			return m
		}
	}
	for i := 0; i < 2000; i++ {
		values = append(values, random(0))
	}
	// Every document of the testdata tree, as the package parses it.
	err := filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if v, err := ParseYAML(data, path); err == nil {
			values = append(values, v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		want, werr := encodingJSON(v)
		got, gerr := appendJSON(nil, v)
		if (werr != nil) != (gerr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("appendJSON(%#v) = %q, %v; encoding/json: %q, %v", v, got, gerr, want, werr)
		}
	}
	// An invalid number fails as encoding/json fails.
	if _, err := appendJSON(nil, []any{json.Number("1x")}); err == nil {
		t.Errorf("an invalid json.Number was encoded")
	}
}
