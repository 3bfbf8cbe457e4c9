package dbdump

import (
	"math"
	"strconv"
	"strings"
)

// sqliteKeywords are the SQLite keywords (https://sqlite.org/lang_keywords.html).
// The sqlite3 shell double-quotes identifiers that are keywords.
var sqliteKeywords = func() map[string]bool {
	const list = `ABORT ACTION ADD AFTER ALL ALTER ALWAYS ANALYZE AND AS ASC ATTACH
AUTOINCREMENT BEFORE BEGIN BETWEEN BY CASCADE CASE CAST CHECK COLLATE COLUMN
COMMIT CONFLICT CONSTRAINT CREATE CROSS CURRENT CURRENT_DATE CURRENT_TIME
CURRENT_TIMESTAMP DATABASE DEFAULT DEFERRABLE DEFERRED DELETE DESC DETACH
DISTINCT DO DROP EACH ELSE END ESCAPE EXCEPT EXCLUDE EXCLUSIVE EXISTS EXPLAIN
FAIL FILTER FIRST FOLLOWING FOR FOREIGN FROM FULL GENERATED GLOB GROUP GROUPS
HAVING IF IGNORE IMMEDIATE IN INDEX INDEXED INITIALLY INNER INSERT INSTEAD
INTERSECT INTO IS ISNULL JOIN KEY LAST LEFT LIKE LIMIT MATCH MATERIALIZED
NATURAL NO NOT NOTHING NOTNULL NULL NULLS OF OFFSET ON OR ORDER OTHERS OUTER
OVER PARTITION PLAN PRAGMA PRECEDING PRIMARY QUERY RAISE RANGE RECURSIVE
REFERENCES REGEXP REINDEX RELEASE RENAME REPLACE RESTRICT RETURNING RIGHT
ROLLBACK ROW ROWS SAVEPOINT SELECT SET TABLE TEMP TEMPORARY THEN TIES TO
TRANSACTION TRIGGER UNBOUNDED UNION UNIQUE UPDATE USING VACUUM VALUES VIEW
VIRTUAL WHEN WHERE WINDOW WITH WITHOUT`
	m := make(map[string]bool, 160)
	for _, k := range strings.Fields(list) {
		m[k] = true
	}
	return m
}()

// sqliteIdent renders a name the way the sqlite3 shell's quoteChar/appendText
// do: bare when it is a plain identifier and not a keyword, else in double
// quotes with embedded quotes doubled.
func sqliteIdent(name string) string {
	if sqliteBareIdent(name) {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

func sqliteBareIdent(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		digit := c >= '0' && c <= '9'
		if !(alpha || c == '_' || digit && i > 0) {
			return false
		}
	}
	return !sqliteKeywords[strings.ToUpper(name)]
}

// appendSQLiteValue appends v (as returned by the modernc driver: nil,
// int64, float64, string or []byte) as an SQL literal in the sqlite3 shell's
// insert-mode format. It reports false for any other type.
func appendSQLiteValue(buf []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(buf, "NULL"...), true
	case int64:
		return strconv.AppendInt(buf, x, 10), true
	case float64:
		return appendSQLiteReal(buf, x), true
	case string:
		return appendSQLiteText(buf, x), true
	case []byte:
		buf = append(buf, "X'"...)
		buf = appendHex(buf, x)
		return append(buf, '\''), true
	default:
		return buf, false
	}
}

// appendSQLiteReal follows the shell: 1e999/-1e999 for infinities, "%lld.0"
// for integral values, else 20 significant digits (which round-trips).
func appendSQLiteReal(buf []byte, r float64) []byte {
	switch {
	case math.IsInf(r, 1):
		return append(buf, "1e999"...)
	case math.IsInf(r, -1):
		return append(buf, "-1e999"...)
	case math.IsNaN(r): // SQLite stores NaN as NULL; cannot happen
		return append(buf, "NULL"...)
	}
	if r == math.Trunc(r) && math.Abs(r) < 1<<63 {
		buf = strconv.AppendInt(buf, int64(r), 10)
		return append(buf, ".0"...)
	}
	return strconv.AppendFloat(buf, r, 'g', 20, 64)
}

// appendSQLiteText renders s like the shell's output_quoted_escaped_string:
// quotes doubled, and newlines/carriage returns written as \n / \r (or
// another marker absent from s) wrapped in replace(...,char(10)). Text with
// NUL bytes, which the shell would truncate, is written as CAST(X'..' AS TEXT).
func appendSQLiteText(buf []byte, s string) []byte {
	if strings.IndexByte(s, 0) >= 0 {
		buf = append(buf, "CAST(X'"...)
		buf = appendHex(buf, []byte(s))
		return append(buf, "' AS TEXT)"...)
	}
	if strings.IndexAny(s, "'\n\r") < 0 {
		buf = append(buf, '\'')
		buf = append(buf, s...)
		return append(buf, '\'')
	}
	hasNL := strings.IndexByte(s, '\n') >= 0
	hasCR := strings.IndexByte(s, '\r') >= 0
	var nl, cr string
	if hasNL {
		buf = append(buf, "replace("...)
		nl = unusedMarker(s, `\n`, `\012`)
	}
	if hasCR {
		buf = append(buf, "replace("...)
		cr = unusedMarker(s, `\r`, `\015`)
	}
	buf = append(buf, '\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'':
			buf = append(buf, '\'', '\'')
		case '\n':
			buf = append(buf, nl...)
		case '\r':
			buf = append(buf, cr...)
		default:
			buf = append(buf, c)
		}
	}
	buf = append(buf, '\'')
	if hasCR {
		buf = append(buf, ",'"...)
		buf = append(buf, cr...)
		buf = append(buf, "',char(13))"...)
	}
	if hasNL {
		buf = append(buf, ",'"...)
		buf = append(buf, nl...)
		buf = append(buf, "',char(10))"...)
	}
	return buf
}

// unusedMarker mirrors the shell's unused_string: a, else b, else "(a<n>)"
// for the smallest n that does not occur in s.
func unusedMarker(s, a, b string) string {
	if !strings.Contains(s, a) {
		return a
	}
	if !strings.Contains(s, b) {
		return b
	}
	for i := 0; ; i++ {
		m := "(" + a + strconv.Itoa(i) + ")"
		if !strings.Contains(s, m) {
			return m
		}
	}
}
