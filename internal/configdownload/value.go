package configdownload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Values of a rendering are what Python's json module makes of Heat's
// answers: nil, bool, Number, string, []any and *Object. Objects keep their
// keys in the order Heat sent them, because tripleo-common writes some values
// with Python's str() and json.dumps(), which keep that order.

// Object is a JSON object that keeps the order of its keys.
type Object struct {
	keys []string
	vals map[string]any
}

// NewObject returns an empty object.
func NewObject() *Object { return &Object{vals: map[string]any{}} }

// Len is the number of keys.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.keys)
}

// Keys returns the keys in insertion order.
func (o *Object) Keys() []string {
	if o == nil {
		return nil
	}
	return append([]string(nil), o.keys...)
}

// SortedKeys returns the keys sorted (Python sorts str by code point, which
// is the byte order of UTF-8).
func (o *Object) SortedKeys() []string {
	k := o.Keys()
	sort.Strings(k)
	return k
}

// Get returns the value of key and whether it is there.
func (o *Object) Get(key string) (any, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.vals[key]
	return v, ok
}

// Value returns the value of key (nil when absent), as dict.get does.
func (o *Object) Value(key string) any {
	v, _ := o.Get(key)
	return v
}

// Has reports whether key is there.
func (o *Object) Has(key string) bool {
	_, ok := o.Get(key)
	return ok
}

// Set sets key, keeping its position when it is already there (as a Python
// dict does).
func (o *Object) Set(key string, v any) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// SetDefault is dict.setdefault: it sets key when absent and returns the
// value now there.
func (o *Object) SetDefault(key string, v any) any {
	if cur, ok := o.vals[key]; ok {
		return cur
	}
	o.Set(key, v)
	return v
}

// Delete removes key.
func (o *Object) Delete(key string) {
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// Copy is a shallow copy (dict.copy).
func (o *Object) Copy() *Object {
	c := NewObject()
	for _, k := range o.Keys() {
		c.Set(k, o.vals[k])
	}
	return c
}

// Update is dict.update.
func (o *Object) Update(other *Object) {
	for _, k := range other.Keys() {
		o.Set(k, other.vals[k])
	}
}

// Obj builds an object from key, value pairs (for tests and literals).
func Obj(kv ...any) *Object {
	o := NewObject()
	for i := 0; i+1 < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

// Number is a JSON number as Heat sent it.
type Number string

// IsFloat reports whether Python's json module makes a float of it.
func (n Number) IsFloat() bool { return strings.ContainsAny(string(n), ".eE") }

// Float returns its value as a float.
func (n Number) Float() float64 {
	f, _ := strconv.ParseFloat(string(n), 64)
	return f
}

// DecodeJSON decodes one JSON document into Values (see Object).
func DecodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := NewObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v is not a string", kt)
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.Set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			l := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return l, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		return Number(t), nil
	default:
		return t, nil // nil, bool, string
	}
}

// FromGo converts decoded Go values (map[string]any, []any, json.Number,
// numbers) into Values; map keys are sorted, since their order is lost.
func FromGo(v any) any {
	switch x := v.(type) {
	case *Object, nil, bool, string, Number:
		return x
	case json.Number:
		return Number(x)
	case int:
		return Number(strconv.Itoa(x))
	case int64:
		return Number(strconv.FormatInt(x, 10))
	case float64:
		return Number(pyFloat(x, true))
	case map[string]any:
		o := NewObject()
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			o.Set(k, FromGo(x[k]))
		}
		return o
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = FromGo(e)
		}
		return l
	case []string:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = e
		}
		return l
	}
	return fmt.Sprint(v)
}

// truthy is Python's bool(v).
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case Number:
		return x.Float() != 0 || (!x.IsFloat() && strings.Trim(string(x), "-0") != "")
	case []any:
		return len(x) > 0
	case *Object:
		return x.Len() > 0
	}
	return true
}

// asObject returns v as an object, or nil.
func asObject(v any) *Object {
	o, _ := v.(*Object)
	return o
}

// deepCopy copies objects and lists.
func deepCopy(v any) any {
	switch x := v.(type) {
	case *Object:
		c := NewObject()
		for _, k := range x.keys {
			c.Set(k, deepCopy(x.vals[k]))
		}
		return c
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}

// typeName names a value's type as Python would.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "None"
	case bool:
		return "bool"
	case string:
		return "str"
	case Number:
		if v.(Number).IsFloat() {
			return "float"
		}
		return "int"
	case []any:
		return "list"
	case *Object:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}
