package dbdump

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// rowDigest is an order-independent digest of a table's rows: their count
// and the sum (mod 2^256) of each row's sha256 over its canonical values.
// Two tables with the same digest hold the same multiset of rows.
type rowDigest struct {
	rows int64
	sum  [32]byte
}

func (d *rowDigest) add(h [32]byte) {
	d.rows++
	carry := uint16(0)
	for i := 31; i >= 0; i-- {
		v := uint16(d.sum[i]) + uint16(h[i]) + carry
		d.sum[i] = byte(v)
		carry = v >> 8
	}
}

// The canonical form of a value, the same whichever database it is read
// from: NULL is one 0 byte; anything else is 1, its length and its bytes:
//   - integers and BIT values in decimal;
//   - FLOAT/DOUBLE as the shortest decimal of the float64;
//   - DECIMAL as an exact decimal without superfluous zeros;
//   - DATETIME/TIMESTAMP as YYYY-MM-DD HH:MM:SS.ffffff;
//   - text and bytes as they are.
func appendCanon(buf []byte, canon []byte, null bool) []byte {
	if null {
		return append(buf, 0)
	}
	buf = append(buf, 1)
	buf = binary.AppendUvarint(buf, uint64(len(canon)))
	return append(buf, canon...)
}

// addSource adds a row read from the dump. buf is scratch space, returned
// for reuse.
func (d *rowDigest) addSource(buf []byte, tb *myTable, vals []myValue) ([]byte, error) {
	var tmp [64]byte
	for i, c := range tb.cols {
		if c.generated {
			continue
		}
		v := vals[i]
		if v.kind == valNull || v.kind == valAbsent {
			buf = appendCanon(buf, nil, true)
			continue
		}
		canon, err := canonicalSource(tmp[:0], c, v)
		if err != nil {
			return buf, fmt.Errorf("column %s: %w", c.name, err)
		}
		buf = appendCanon(buf, canon, false)
	}
	d.add(sha256.Sum256(buf))
	return buf, nil
}

// canonicalSource returns the canonical bytes of a non-NULL dump value.
func canonicalSource(dst []byte, c *myColumn, v myValue) ([]byte, error) {
	switch c.class {
	case classInt, classBit:
		switch v.kind {
		case valNum, valStr:
			if c.class == classBit && v.kind == valStr {
				return bytesToDecimal(dst, v.b)
			}
			n, ok := normalizeInteger(strings.TrimSpace(string(v.b)))
			if !ok {
				return nil, fmt.Errorf("%q is not an integer", abbreviate(v.b))
			}
			return append(dst, n...), nil
		case valHex:
			return bytesToDecimal(dst, v.b)
		case valBits:
			n, ok := new(big.Int).SetString(string(v.b), 2)
			if !ok {
				return nil, fmt.Errorf("b'%s' is not a bit value", v.b)
			}
			return n.Append(dst, 10), nil
		}
	case classReal:
		if v.kind == valNum || v.kind == valStr {
			f, err := strconv.ParseFloat(strings.TrimSpace(string(v.b)), 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not a number", abbreviate(v.b))
			}
			return strconv.AppendFloat(dst, f, 'g', -1, 64), nil
		}
	case classDecimal:
		if v.kind == valNum || v.kind == valStr {
			n, ok := normalizeDecimal(strings.TrimSpace(string(v.b)))
			if !ok {
				return nil, fmt.Errorf("%q is not a decimal number", abbreviate(v.b))
			}
			return append(dst, n...), nil
		}
	case classDateTime:
		if v.kind == valStr {
			n, ok := normalizeDateTime(string(v.b))
			if !ok {
				return nil, fmt.Errorf("%q is not a DATETIME value (YYYY-MM-DD HH:MM:SS[.ffffff])", abbreviate(v.b))
			}
			return append(dst, n...), nil
		}
	default: // text, bytes, DATE, TIME
		switch v.kind {
		case valStr, valHex, valNum:
			return append(dst, v.b...), nil
		}
	}
	return nil, fmt.Errorf("a %s value cannot go into a %s column", valueKindName(v.kind), c.myType)
}

func valueKindName(k valKind) string {
	switch k {
	case valNum:
		return "numeric"
	case valStr:
		return "string"
	case valHex:
		return "hex"
	case valBits:
		return "bit"
	}
	return "missing"
}

func bytesToDecimal(dst, b []byte) ([]byte, error) {
	if len(b) > 8 {
		return nil, fmt.Errorf("%d bytes are too many for a BIT or integer value", len(b))
	}
	var n uint64
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	return strconv.AppendUint(dst, n, 10), nil
}

// normalizeInteger returns an integer literal without sign noise or
// leading zeros (any size).
func normalizeInteger(s string) (string, bool) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return "", false
		}
	}
	s = strings.TrimLeft(s, "0")
	if s == "" {
		return "0", true
	}
	if neg {
		return "-" + s, true
	}
	return s, true
}

// normalizeDecimal returns the exact decimal value of a numeric literal
// (exponents allowed) with no superfluous zeros: "1.500" → "1.5",
// "-0.0" → "0", "1e3" → "1000".
func normalizeDecimal(s string) (string, bool) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return "", false
	}
	if r.IsInt() {
		return r.Num().String(), true
	}
	// A decimal literal's denominator is 2^a·5^b: max(a, b) digits after
	// the point are exact.
	d := new(big.Int).Set(r.Denom())
	twos := int(d.TrailingZeroBits())
	d.Rsh(d, uint(twos))
	fives := 0
	five, m := big.NewInt(5), new(big.Int)
	for {
		q, _ := new(big.Int).QuoRem(d, five, m)
		if m.Sign() != 0 {
			break
		}
		d, fives = q, fives+1
	}
	prec := max(twos, fives)
	if d.Cmp(big.NewInt(1)) != 0 {
		prec = 40 // not a finite decimal: cannot come from a literal
	}
	out := strings.TrimRight(r.FloatString(prec), "0")
	return strings.TrimSuffix(out, "."), true
}

// normalizeDateTime turns MySQL's YYYY-MM-DD HH:MM:SS[.f{1,6}] into
// YYYY-MM-DD HH:MM:SS.ffffff, the format SQLAlchemy stores on SQLite.
func normalizeDateTime(s string) (string, bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':' {
		return "", false
	}
	for _, i := range []int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18} {
		if s[i] < '0' || s[i] > '9' {
			return "", false
		}
	}
	frac := ""
	if len(s) > 19 {
		if s[19] != '.' || len(s) > 26 || len(s) == 20 {
			return "", false
		}
		frac = s[20:]
		for i := 0; i < len(frac); i++ {
			if frac[i] < '0' || frac[i] > '9' {
				return "", false
			}
		}
	}
	return s[:19] + "." + frac + strings.Repeat("0", 6-len(frac)), true
}

// canonicalLive returns the canonical bytes of a value read back from a
// database (database/sql values of the mysql or sqlite driver).
func canonicalLive(dst []byte, c *myColumn, v any, mysqlSide bool) ([]byte, error) {
	var text []byte
	switch x := v.(type) {
	case []byte:
		text = x
	case sql.RawBytes:
		text = x
	case string:
		text = []byte(x)
	case int64:
		switch c.class {
		case classReal:
			return strconv.AppendFloat(dst, float64(x), 'g', -1, 64), nil
		case classInt, classBit, classDecimal:
			return strconv.AppendInt(dst, x, 10), nil
		}
		text = strconv.AppendInt(nil, x, 10)
	case float64:
		switch c.class {
		case classReal:
			return strconv.AppendFloat(dst, x, 'g', -1, 64), nil
		case classDecimal, classInt:
			n, _ := normalizeDecimal(strconv.FormatFloat(x, 'f', -1, 64))
			return append(dst, n...), nil
		}
		text = strconv.AppendFloat(nil, x, 'g', -1, 64)
	default:
		return nil, fmt.Errorf("unexpected value of type %T", v)
	}
	switch c.class {
	case classBit:
		if mysqlSide {
			return bytesToDecimal(dst, text)
		}
		fallthrough
	case classInt:
		n, ok := normalizeInteger(string(text))
		if !ok {
			return nil, fmt.Errorf("%q is not an integer", abbreviate(text))
		}
		return append(dst, n...), nil
	case classReal:
		f, err := strconv.ParseFloat(string(text), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", abbreviate(text))
		}
		return strconv.AppendFloat(dst, f, 'g', -1, 64), nil
	case classDecimal:
		n, ok := normalizeDecimal(string(text))
		if !ok {
			return nil, fmt.Errorf("%q is not a decimal number", abbreviate(text))
		}
		return append(dst, n...), nil
	case classDateTime:
		n, ok := normalizeDateTime(string(text))
		if !ok {
			return nil, fmt.Errorf("%q is not a DATETIME value", abbreviate(text))
		}
		return append(dst, n...), nil
	}
	return append(dst, text...), nil
}

// VerifySQLite checks that the SQLite database file dbPath holds exactly
// the rows of every table of the dump: an order-independent digest of each
// table's rows, values compared in canonical form. It reads the whole
// database once.
func (d *MySQLDump) VerifySQLite(ctx context.Context, dbPath string) error {
	uri, err := sqliteURI(dbPath, fmt.Sprintf("mode=ro&_pragma=busy_timeout(%d)", sqliteBusyTimeoutMS))
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return err
	}
	return d.verify(ctx, db, false)
}

// VerifyMySQL is VerifySQLite for the MySQL database of a
// go-sql-driver/mysql DSN.
func (d *MySQLDump) VerifyMySQL(ctx context.Context, dsn string) error {
	connector, _, err := mysqlConnector(dsn)
	if err != nil {
		return err
	}
	return d.verify(ctx, sql.OpenDB(connector), true)
}

func (d *MySQLDump) verify(ctx context.Context, db *sql.DB, mysqlSide bool) error {
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("checking the loaded rows: %w", err)
	}
	defer conn.Close()
	quote := sqliteQuoteIdent
	if mysqlSide {
		quote = mysqlIdent
		// TIMESTAMP values as the dump has them (mysqldump writes UTC).
		if _, err := conn.ExecContext(ctx, "SET SESSION time_zone='+00:00'"); err != nil {
			return fmt.Errorf("checking the loaded rows: %w", err)
		}
	}
	var problems []string
	for _, name := range d.Tables {
		tb := d.tables[name]
		got, err := liveDigest(ctx, conn, tb, quote, mysqlSide)
		if err != nil {
			return fmt.Errorf("checking the loaded rows of table %s: %w", name, err)
		}
		want := d.digests[name]
		switch {
		case got.rows != want.rows:
			problems = append(problems, fmt.Sprintf("table %s has %d rows, the dump %d", name, got.rows, want.rows))
		case got.sum != want.sum:
			problems = append(problems, fmt.Sprintf("table %s has the dump's %d rows but their values differ", name, want.rows))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("the loaded database differs from the dump: %s", strings.Join(problems, "; "))
	}
	return nil
}

func liveDigest(ctx context.Context, conn *sql.Conn, tb *myTable, quote func(string) string, mysqlSide bool) (*rowDigest, error) {
	var cols []*myColumn
	var sel strings.Builder
	sel.WriteString("SELECT ")
	for _, c := range tb.cols {
		if c.generated {
			continue
		}
		if len(cols) > 0 {
			sel.WriteByte(',')
		}
		if !mysqlSide {
			sel.WriteByte('+') // the stored value, not the driver's time.Time
		}
		sel.WriteString(quote(c.name))
		cols = append(cols, c)
	}
	sel.WriteString(" FROM ")
	sel.WriteString(quote(tb.name))
	rows, err := conn.QueryContext(ctx, sel.String())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	d := &rowDigest{}
	dest := make([]any, len(cols))
	var raw []sql.RawBytes
	var anys []any
	if mysqlSide {
		raw = make([]sql.RawBytes, len(cols))
		for i := range raw {
			dest[i] = &raw[i]
		}
	} else {
		anys = make([]any, len(cols))
		for i := range anys {
			dest[i] = &anys[i]
		}
	}
	var buf, tmp []byte
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		buf = buf[:0]
		for i, c := range cols {
			var v any
			if mysqlSide {
				if raw[i] == nil {
					buf = appendCanon(buf, nil, true)
					continue
				}
				v = raw[i]
			} else {
				if anys[i] == nil {
					buf = appendCanon(buf, nil, true)
					continue
				}
				v = anys[i]
			}
			canon, err := canonicalLive(tmp[:0], c, v, mysqlSide)
			if err != nil {
				return nil, fmt.Errorf("row %d column %s: %w", d.rows+1, c.name, err)
			}
			tmp = canon
			buf = appendCanon(buf, canon, false)
		}
		d.add(sha256.Sum256(buf))
	}
	return d, rows.Err()
}

// sqliteSignificantDigits reports whether a normalized decimal keeps its
// value in SQLite, whose NUMERIC columns store a REAL (15 significant
// digits) unless the value is an integer that fits 64 bits.
func decimalFitsSQLite(n string) bool {
	if _, err := strconv.ParseInt(n, 10, 64); err == nil {
		return true
	}
	digits := strings.TrimLeft(strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, n), "0")
	if !strings.Contains(n, ".") {
		digits = strings.TrimRight(digits, "0")
	}
	if len(digits) > 15 {
		return false
	}
	f, err := strconv.ParseFloat(n, 64)
	return err == nil && !math.IsInf(f, 0)
}

var errNotUTF8 = errors.New("text is not valid UTF-8")

func checkUTF8(b []byte) error {
	if !utf8.Valid(b) {
		return errNotUTF8
	}
	return nil
}
