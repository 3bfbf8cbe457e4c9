package dbdump

import (
	"math"
	"testing"
)

func TestAppendSQLiteValue(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"null", nil, "NULL"},
		{"int", int64(-42), "-42"},
		{"int max", int64(math.MaxInt64), "9223372036854775807"},
		{"integral real", 3.0, "3.0"},
		{"negative integral real", -5.0, "-5.0"},
		{"fraction", 0.1, "0.10000000000000000555"},
		{"half", 0.5, "0.5"},
		{"big real", 1.5e20, "1.5e+20"},
		{"tiny real", 5e-324, "4.9406564584124654418e-324"},
		{"inf", math.Inf(1), "1e999"},
		{"minus inf", math.Inf(-1), "-1e999"},
		{"plain text", "abc", "'abc'"},
		{"empty text", "", "''"},
		{"quote", "it's", "'it''s'"},
		{"newline", "a\nb", `replace('a\nb','\n',char(10))`},
		{"newline and literal backslash n", "x\\n\ny", `replace('x\n\012y','\012',char(10))`},
		{"both markers present", "\\n\\012\n", `replace('\n\012(\n0)','(\n0)',char(10))`},
		{"cr and lf", "it's\r\n", `replace(replace('it''s\r\n','\r',char(13)),'\n',char(10))`},
		{"nul in text", "a\x00b", "CAST(X'610062' AS TEXT)"},
		{"unicode", "héllo 😀", "'héllo 😀'"},
		{"blob", []byte{0x00, 0xff, 0x27}, "X'00ff27'"},
		{"empty blob", []byte{}, "X''"},
	}
	for _, tc := range tests {
		got, ok := appendSQLiteValue(nil, tc.in)
		if !ok || string(got) != tc.want {
			t.Errorf("%s: appendSQLiteValue(%#v) = %q, %v; want %q", tc.name, tc.in, got, ok, tc.want)
		}
	}
	if _, ok := appendSQLiteValue(nil, struct{}{}); ok {
		t.Error("appendSQLiteValue accepted an unknown type")
	}
}

func TestSQLiteIdent(t *testing.T) {
	for in, want := range map[string]string{
		"heat":       "heat",
		"stack_tag":  "stack_tag",
		"_x1":        "_x1",
		"order":      `"order"`,
		"Trigger":    `"Trigger"`,
		"1abc":       `"1abc"`,
		"with space": `"with space"`,
		`we"ird`:     `"we""ird"`,
		"":           `""`,
	} {
		if got := sqliteIdent(in); got != want {
			t.Errorf("sqliteIdent(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestAppendMySQLValue(t *testing.T) {
	tests := []struct {
		name string
		in   any
		kind valueKind
		want string
	}{
		{"null", nil, kindString, "NULL"},
		{"int", int64(-7), kindString, "-7"},
		{"uint max", uint64(math.MaxUint64), kindString, "18446744073709551615"},
		{"double", 0.1, kindString, "0.1"},
		{"double exponent", 1e300, kindString, "1e+300"},
		{"float widened", float64(float32(1.1)), kindFloat32, "1.100000023841858"},
		{"float widened big", 1234567.875, kindFloat32, "1.234567875e+06"},
		{"float32", float32(0.25), kindString, "0.25"},
		{"decimal", []byte("-12.500000"), kindNumber, "-12.500000"},
		{"string escapes", []byte("a'b\"c\\d\ne\rf\x00g\x1ah"), kindString, `'a\'b\"c\\d\ne\rf\0g\Zh'`},
		{"unicode", []byte("😀é"), kindString, "'😀é'"},
		{"binary", []byte{0, 0x27, 0x5c, 0xff}, kindHex, "0x00275cff"},
		{"empty binary", []byte{}, kindHex, "''"},
		{"date", []byte("2024-02-29 12:00:00.000001"), kindString, "'2024-02-29 12:00:00.000001'"},
	}
	for _, tc := range tests {
		got, err := appendMySQLValue(nil, tc.in, tc.kind)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: appendMySQLValue(%#v) = %q, %v; want %q", tc.name, tc.in, got, err, tc.want)
		}
	}
	if _, err := appendMySQLValue(nil, struct{}{}, kindString); err == nil {
		t.Error("appendMySQLValue accepted an unknown type")
	}
}

func TestKindOf(t *testing.T) {
	for _, tc := range []struct {
		typ   string
		float bool
		want  valueKind
	}{
		{"VARBINARY", false, kindHex},
		{"LONGBLOB", false, kindHex},
		{"BIT", false, kindHex},
		{"DECIMAL", false, kindNumber},
		{"DOUBLE", true, kindFloat32},
		{"VARCHAR", false, kindString},
		{"LONGTEXT", false, kindString},
		{"DATETIME", false, kindString},
		{"", false, kindString},
	} {
		if got := kindOf(tc.typ, tc.float); got != tc.want {
			t.Errorf("kindOf(%q, %v) = %v, want %v", tc.typ, tc.float, got, tc.want)
		}
	}
}
