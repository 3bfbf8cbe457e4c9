package dbdump

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// colClass says how a column's values are read, compared and written to
// SQLite.
type colClass uint8

const (
	classInt      colClass = iota // integers, BOOL, YEAR
	classBit                      // BIT(n): big-endian bytes in MySQL, an integer in SQLite
	classReal                     // FLOAT, DOUBLE
	classDecimal                  // DECIMAL, NUMERIC
	classText                     // CHAR, VARCHAR, TEXT, ENUM, SET, JSON
	classBlob                     // BINARY, VARBINARY, BLOB
	classDateTime                 // DATETIME, TIMESTAMP
	classDate                     // DATE
	classTime                     // TIME
)

// myColumn is a column of a CREATE TABLE in a MySQL dump.
type myColumn struct {
	name      string
	myType    string // the MySQL type as written, for messages
	sqlType   string // the SQLite declared type
	class     colClass
	notNull   bool
	autoInc   bool
	generated bool
	dflt      string // SQLite DEFAULT clause value ("" when none)
}

// myIndexCol is a column of a key, without MySQL's prefix length.
type myIndexCol struct {
	name string
	desc bool
}

type myIndex struct {
	name string
	cols []myIndexCol
}

func (x *myIndex) colNames() []string {
	out := make([]string, len(x.cols))
	for i, c := range x.cols {
		out[i] = c.name
	}
	return out
}

type myForeignKey struct {
	name               string
	cols, refCols      []string
	refTable           string
	onDelete, onUpdate string
}

// myTable is a table of a MySQL dump as SHOW CREATE TABLE (mysqldump)
// writes it.
type myTable struct {
	name    string
	cols    []*myColumn
	byName  map[string]int // lower-case column name → index (MySQL column names ignore case)
	pk      *myIndex
	uniques []*myIndex
	keys    []*myIndex
	fks     []*myForeignKey
	// sqliteProblem says why the table cannot be converted to SQLite ("" if it can).
	sqliteProblem string
	// notes are what a conversion to SQLite leaves out.
	notes []string
}

// parseCreateTable parses a CREATE TABLE statement of mysqldump (the
// lexer is positioned after CREATE TABLE).
func parseCreateTable(l *myLexer) (*myTable, error) {
	t := l.nextSkipCond()
	if t.is("IF") {
		for _, w := range []string{"NOT", "EXISTS"} {
			if !l.nextSkipCond().is(w) {
				return nil, errors.New("CREATE TABLE IF: expected IF NOT EXISTS")
			}
		}
		t = l.nextSkipCond()
	}
	name, err := tableName(l, t)
	if err != nil {
		return nil, err
	}
	tb := &myTable{name: name, byName: map[string]int{}}
	if t := l.nextSkipCond(); !t.isPunct('(') {
		if t.is("LIKE") || t.is("AS") || t.is("SELECT") {
			return nil, fmt.Errorf("table %s: CREATE TABLE ... %s is not a dump's table definition", name, t)
		}
		return nil, fmt.Errorf("table %s: expected ( after the table name, found %s", name, t)
	}
	for {
		if err := tb.parseItem(l); err != nil {
			if l.err != nil {
				err = l.err
			}
			return nil, fmt.Errorf("table %s: %w", name, err)
		}
		t := l.nextSkipCond()
		if t.isPunct(')') {
			break
		}
		if !t.isPunct(',') {
			if l.err != nil {
				return nil, fmt.Errorf("table %s: %w", name, l.err)
			}
			return nil, fmt.Errorf("table %s: expected , or ) in the definition, found %s", name, t)
		}
	}
	// Table options (ENGINE, AUTO_INCREMENT, DEFAULT CHARSET, COLLATE,
	// ROW_FORMAT, COMMENT, PARTITION BY ...) have no SQLite meaning.
	for t := l.next(); t.kind != myEOF; t = l.next() {
	}
	if l.err != nil {
		return nil, fmt.Errorf("table %s: %w", name, l.err)
	}
	if len(tb.cols) == 0 {
		return nil, fmt.Errorf("table %s has no columns", name)
	}
	if err := tb.check(); err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	return tb, nil
}

// tableName reads `name` or `db`.`name` (only the table part is kept).
func tableName(l *myLexer, t myTok) (string, error) {
	if t.kind != myIdent && t.kind != myWord {
		return "", fmt.Errorf("expected a table name, found %s", t)
	}
	name := string(t.text)
	if l.peek().isPunct('.') {
		l.next()
		t2 := l.next()
		if t2.kind != myIdent && t2.kind != myWord {
			return "", fmt.Errorf("expected a table name after %s., found %s", name, t2)
		}
		name = string(t2.text)
	}
	return name, nil
}

func (tb *myTable) note(format string, a ...any) {
	n := fmt.Sprintf("table %s: ", tb.name) + fmt.Sprintf(format, a...)
	for _, x := range tb.notes {
		if x == n {
			return
		}
	}
	tb.notes = append(tb.notes, n)
}

func (tb *myTable) cannot(format string, a ...any) {
	if tb.sqliteProblem == "" {
		tb.sqliteProblem = fmt.Sprintf(format, a...)
	}
}

// column returns the column named name (any case), or nil.
func (tb *myTable) column(name string) *myColumn {
	if i, ok := tb.byName[strings.ToLower(name)]; ok {
		return tb.cols[i]
	}
	return nil
}

// parseItem parses one column definition or key/constraint clause.
func (tb *myTable) parseItem(l *myLexer) error {
	t := l.peekSkipCond()
	if t.kind == myWord {
		switch strings.ToUpper(string(t.text)) {
		case "PRIMARY":
			l.next()
			if !l.nextSkipCond().is("KEY") {
				return errors.New("expected PRIMARY KEY")
			}
			return tb.parseKey(l, "", "primary")
		case "UNIQUE":
			l.next()
			if p := l.peekSkipCond(); p.is("KEY") || p.is("INDEX") {
				l.next()
			}
			return tb.parseKey(l, "", "unique")
		case "KEY", "INDEX":
			l.next()
			return tb.parseKey(l, "", "key")
		case "FULLTEXT", "SPATIAL", "VECTOR":
			l.next()
			if p := l.peekSkipCond(); p.is("KEY") || p.is("INDEX") {
				l.next()
			}
			if err := tb.parseKey(l, "", "skip"); err != nil {
				return err
			}
			tb.note("%s index left out (SQLite has none)", strings.ToUpper(string(t.text)))
			return nil
		case "CONSTRAINT":
			l.next()
			name := ""
			if p := l.peekSkipCond(); p.kind == myIdent || p.kind == myWord && !p.is("PRIMARY") && !p.is("UNIQUE") && !p.is("FOREIGN") && !p.is("CHECK") {
				name = string(l.next().text)
			}
			return tb.parseConstraint(l, name)
		case "FOREIGN", "CHECK":
			return tb.parseConstraint(l, "")
		case "PERIOD":
			return errors.New("PERIOD FOR (system-versioned or application-time tables) is not supported")
		}
	}
	return tb.parseColumn(l)
}

func (tb *myTable) parseConstraint(l *myLexer, name string) error {
	t := l.nextSkipCond()
	switch {
	case t.is("PRIMARY"):
		if !l.nextSkipCond().is("KEY") {
			return errors.New("expected PRIMARY KEY")
		}
		return tb.parseKey(l, name, "primary")
	case t.is("UNIQUE"):
		if p := l.peekSkipCond(); p.is("KEY") || p.is("INDEX") {
			l.next()
		}
		return tb.parseKey(l, name, "unique")
	case t.is("FOREIGN"):
		if !l.nextSkipCond().is("KEY") {
			return errors.New("expected FOREIGN KEY")
		}
		return tb.parseForeignKey(l, name)
	case t.is("CHECK"):
		if err := skipParens(l); err != nil {
			return fmt.Errorf("CHECK: %w", err)
		}
		tb.note("CHECK constraint %s left out (its MySQL expression is not translated)", name)
		return nil
	}
	return fmt.Errorf("unsupported constraint %s", t)
}

// parseKey parses [name] [USING x] (cols) [options] of a key.
func (tb *myTable) parseKey(l *myLexer, name, kind string) error {
	t := l.nextSkipCond()
	if t.kind == myIdent || t.kind == myWord && !t.is("USING") {
		name = string(t.text)
		t = l.nextSkipCond()
	}
	if t.is("USING") {
		l.nextSkipCond()
		t = l.nextSkipCond()
	}
	if !t.isPunct('(') {
		return fmt.Errorf("key %s: expected (, found %s", name, t)
	}
	x := &myIndex{name: name}
	for {
		c := l.nextSkipCond()
		if c.kind != myIdent && c.kind != myWord {
			return fmt.Errorf("key %s: expected a column, found %s", name, c)
		}
		ic := myIndexCol{name: string(c.text)}
		if l.peek().isPunct('(') { // prefix length
			if err := skipParens(l); err != nil {
				return fmt.Errorf("key %s: %w", name, err)
			}
		}
		if p := l.peekSkipCond(); p.is("ASC") {
			l.next()
		} else if p.is("DESC") {
			l.next()
			ic.desc = true
		}
		x.cols = append(x.cols, ic)
		t := l.nextSkipCond()
		if t.isPunct(')') {
			break
		}
		if !t.isPunct(',') {
			return fmt.Errorf("key %s: expected , or ), found %s", name, t)
		}
	}
	// Index options: USING BTREE, KEY_BLOCK_SIZE=n, COMMENT '...',
	// INVISIBLE/IGNORED, WITH PARSER p, CLUSTERING=yes.
	for {
		p := l.peekSkipCond()
		if p.kind == myEOF || p.isPunct(',') || p.isPunct(')') {
			break
		}
		l.next()
	}
	switch kind {
	case "primary":
		if tb.pk != nil {
			return errors.New("two primary keys")
		}
		tb.pk = x
	case "unique":
		tb.uniques = append(tb.uniques, x)
	case "key":
		tb.keys = append(tb.keys, x)
	}
	return nil
}

func (tb *myTable) parseForeignKey(l *myLexer, name string) error {
	t := l.nextSkipCond()
	if t.kind == myIdent || t.kind == myWord {
		if name == "" {
			name = string(t.text) // FOREIGN KEY index_name (...)
		}
		t = l.nextSkipCond()
	}
	if !t.isPunct('(') {
		return fmt.Errorf("foreign key %s: expected (, found %s", name, t)
	}
	fk := &myForeignKey{name: name}
	var err error
	if fk.cols, err = identList(l); err != nil {
		return fmt.Errorf("foreign key %s: %w", name, err)
	}
	if !l.nextSkipCond().is("REFERENCES") {
		return fmt.Errorf("foreign key %s: expected REFERENCES", name)
	}
	rt := l.nextSkipCond()
	if rt.kind != myIdent && rt.kind != myWord {
		return fmt.Errorf("foreign key %s: expected the referenced table, found %s", name, rt)
	}
	fk.refTable = string(rt.text)
	if l.peek().isPunct('.') {
		return fmt.Errorf("foreign key %s references a table of another database (%s.%s)", name, rt.text, l.rest())
	}
	if !l.nextSkipCond().isPunct('(') {
		return fmt.Errorf("foreign key %s: expected ( after REFERENCES %s", name, fk.refTable)
	}
	if fk.refCols, err = identList(l); err != nil {
		return fmt.Errorf("foreign key %s: %w", name, err)
	}
	for {
		p := l.peekSkipCond()
		switch {
		case p.is("MATCH"):
			l.next()
			l.nextSkipCond()
		case p.is("ON"):
			l.next()
			ev := l.nextSkipCond()
			action, err := fkAction(l)
			if err != nil {
				return fmt.Errorf("foreign key %s: %w", name, err)
			}
			switch {
			case ev.is("DELETE"):
				fk.onDelete = action
			case ev.is("UPDATE"):
				fk.onUpdate = action
			default:
				return fmt.Errorf("foreign key %s: ON %s", name, ev)
			}
		default:
			tb.fks = append(tb.fks, fk)
			return nil
		}
	}
}

func fkAction(l *myLexer) (string, error) {
	t := l.nextSkipCond()
	switch {
	case t.is("CASCADE"), t.is("RESTRICT"):
		return strings.ToUpper(string(t.text)), nil
	case t.is("SET"):
		n := l.nextSkipCond()
		if n.is("NULL") || n.is("DEFAULT") {
			return "SET " + strings.ToUpper(string(n.text)), nil
		}
	case t.is("NO"):
		if l.nextSkipCond().is("ACTION") {
			return "NO ACTION", nil
		}
	}
	return "", fmt.Errorf("unknown referential action at %s", t)
}

// identList reads `a`,`b`) after an opening parenthesis.
func identList(l *myLexer) ([]string, error) {
	var out []string
	for {
		t := l.nextSkipCond()
		if t.kind != myIdent && t.kind != myWord {
			return nil, fmt.Errorf("expected a column name, found %s", t)
		}
		out = append(out, string(t.text))
		t = l.nextSkipCond()
		if t.isPunct(')') {
			return out, nil
		}
		if !t.isPunct(',') {
			return nil, fmt.Errorf("expected , or ), found %s", t)
		}
	}
}

// skipParens skips a parenthesised group; the next token must be '('.
func skipParens(l *myLexer) error {
	if t := l.next(); !t.isPunct('(') {
		return fmt.Errorf("expected (, found %s", t)
	}
	depth := 1
	for depth > 0 {
		t := l.next()
		switch {
		case t.kind == myEOF:
			return errors.New("unbalanced parentheses")
		case t.isPunct('('):
			depth++
		case t.isPunct(')'):
			depth--
		}
	}
	return nil
}

// parseColumn parses `name` type [attributes].
func (tb *myTable) parseColumn(l *myLexer) error {
	t := l.nextSkipCond()
	if t.kind != myIdent && t.kind != myWord {
		return fmt.Errorf("expected a column definition, found %s", t)
	}
	col := &myColumn{name: string(t.text)}
	tt := l.nextSkipCond()
	if tt.kind != myWord {
		return fmt.Errorf("column %s: expected a type, found %s", col.name, tt)
	}
	typeName := strings.ToLower(string(tt.text))
	if typeName == "double" && l.peekSkipCond().is("PRECISION") {
		l.next()
	}
	if typeName == "national" || typeName == "long" {
		// NATIONAL CHAR/VARCHAR, LONG VARCHAR/VARBINARY: read the real type.
		n := l.nextSkipCond()
		typeName = typeName + " " + strings.ToLower(string(n.text))
	}
	var args []myTok
	if l.peek().isPunct('(') {
		l.next()
		for {
			a := l.next()
			if a.kind == myEOF {
				return fmt.Errorf("column %s: unterminated type arguments", col.name)
			}
			if a.isPunct(')') {
				break
			}
			if !a.isPunct(',') {
				args = append(args, a)
			}
		}
	}
	unsigned := false
	for {
		p := l.peekSkipCond()
		if p.is("UNSIGNED") || p.is("ZEROFILL") || p.is("SIGNED") {
			unsigned = unsigned || !p.is("SIGNED")
			l.next()
			continue
		}
		break
	}
	col.myType = typeName
	if len(args) > 0 {
		var as []string
		for _, a := range args {
			as = append(as, a.String())
		}
		col.myType += "(" + strings.Join(as, ",") + ")"
	}
	var err error
	if col.sqlType, col.class, err = sqliteTypeOf(typeName, args, unsigned); err != nil {
		return fmt.Errorf("column %s: %w", col.name, err)
	}
	if err := tb.parseColumnAttributes(l, col); err != nil {
		return fmt.Errorf("column %s: %w", col.name, err)
	}
	key := strings.ToLower(col.name)
	if _, dup := tb.byName[key]; dup {
		return fmt.Errorf("column %s defined twice", col.name)
	}
	tb.byName[key] = len(tb.cols)
	tb.cols = append(tb.cols, col)
	return nil
}

func (tb *myTable) parseColumnAttributes(l *myLexer, col *myColumn) error {
	for {
		p := l.peekSkipCond()
		if p.kind == myEOF || p.isPunct(',') || p.isPunct(')') {
			return nil
		}
		t := l.next()
		switch strings.ToUpper(string(t.text)) {
		case "NOT":
			if !l.nextSkipCond().is("NULL") {
				return errors.New("expected NOT NULL")
			}
			col.notNull = true
		case "NULL":
		case "CHARACTER", "CHARSET", "COLLATE":
			// Text is UTF-8 in SQLite and compares bytewise, as in a
			// database Heat creates on SQLite.
			if t.is("CHARACTER") && !l.nextSkipCond().is("SET") {
				return errors.New("expected CHARACTER SET")
			}
			l.nextSkipCond()
		case "DEFAULT":
			if err := tb.parseDefault(l, col); err != nil {
				return fmt.Errorf("DEFAULT: %w", err)
			}
		case "AUTO_INCREMENT":
			col.autoInc = true
		case "ON":
			if !l.nextSkipCond().is("UPDATE") {
				return errors.New("expected ON UPDATE")
			}
			f := l.nextSkipCond()
			if l.peek().isPunct('(') {
				if err := skipParens(l); err != nil {
					return err
				}
			}
			tb.note("column %s: ON UPDATE %s left out (SQLite has no such clause)", col.name, f)
		case "COMMENT":
			if c := l.nextSkipCond(); c.kind != myString {
				return fmt.Errorf("COMMENT: expected a string, found %s", c)
			}
		case "PRIMARY":
			if !l.nextSkipCond().is("KEY") {
				return errors.New("expected PRIMARY KEY")
			}
			if tb.pk != nil {
				return errors.New("two primary keys")
			}
			tb.pk = &myIndex{cols: []myIndexCol{{name: col.name}}}
		case "UNIQUE":
			if l.peekSkipCond().is("KEY") {
				l.next()
			}
			tb.uniques = append(tb.uniques, &myIndex{name: col.name, cols: []myIndexCol{{name: col.name}}})
		case "KEY":
			tb.keys = append(tb.keys, &myIndex{name: col.name, cols: []myIndexCol{{name: col.name}}})
		case "GENERATED", "AS":
			if t.is("GENERATED") {
				if !l.nextSkipCond().is("ALWAYS") || !l.nextSkipCond().is("AS") {
					return errors.New("expected GENERATED ALWAYS AS")
				}
			}
			if l.peek().is("ROW") { // system-versioned tables: AS ROW START/END
				return errors.New("system-versioned tables are not supported")
			}
			if err := skipParens(l); err != nil {
				return fmt.Errorf("generated column: %w", err)
			}
			col.generated = true
			tb.cannot("column %s is a generated column", col.name)
		case "VIRTUAL", "PERSISTENT", "STORED", "INVISIBLE", "VISIBLE":
		case "CHECK":
			if err := skipParens(l); err != nil {
				return fmt.Errorf("CHECK: %w", err)
			}
			tb.note("column %s: CHECK constraint left out (its MySQL expression is not translated)", col.name)
		case "COLUMN_FORMAT", "STORAGE", "SRID":
			l.nextSkipCond()
		case "COMPRESSED":
			if l.peek().isPunct('=') {
				l.next()
				l.next()
			}
		case "REFERENCES":
			// An inline REFERENCES is parsed but ignored by MySQL itself.
			l.nextSkipCond()
			if l.peek().isPunct('(') {
				if err := skipParens(l); err != nil {
					return err
				}
			}
		case "WITH", "WITHOUT":
			if !l.nextSkipCond().is("SYSTEM") || !l.nextSkipCond().is("VERSIONING") {
				return errors.New("expected WITH[OUT] SYSTEM VERSIONING")
			}
		default:
			if l.err != nil {
				return l.err
			}
			return fmt.Errorf("unsupported column attribute %s", t)
		}
	}
}

var currentTimeFuncs = map[string]string{
	"CURRENT_TIMESTAMP": "CURRENT_TIMESTAMP", "NOW": "CURRENT_TIMESTAMP", "LOCALTIME": "CURRENT_TIMESTAMP",
	"LOCALTIMESTAMP": "CURRENT_TIMESTAMP", "CURRENT_DATE": "CURRENT_DATE", "CURDATE": "CURRENT_DATE",
	"CURRENT_TIME": "CURRENT_TIME", "CURTIME": "CURRENT_TIME",
}

// parseDefault reads a DEFAULT value and renders it for SQLite.
func (tb *myTable) parseDefault(l *myLexer, col *myColumn) error {
	p := l.peekSkipCond()
	if p.kind == myWord {
		if f, ok := currentTimeFuncs[strings.ToUpper(string(p.text))]; ok {
			l.next()
			if l.peek().isPunct('(') {
				if err := skipParens(l); err != nil {
					return err
				}
			}
			col.dflt = f
			return nil
		}
		if p.is("NULL") {
			l.next()
			return nil
		}
	}
	if p.isPunct('(') {
		return errors.New("expression defaults are not supported")
	}
	v, err := readValue(l)
	if err != nil {
		return err
	}
	lit, err := sqliteLiteral(nil, col, v)
	if err != nil {
		return err
	}
	if v.kind != valNull {
		s := string(lit)
		if strings.ContainsRune(s, '(') {
			s = "(" + s + ")" // replace(...)/CAST(...) are expressions
		}
		col.dflt = s
	}
	return nil
}

var (
	typeArgNumber = regexp.MustCompile(`^[0-9]+$`)
)

// sqliteTypeOf maps a MySQL column type to the SQLite declared type Heat's
// own SQLAlchemy models get on SQLite (so that the converted database
// looks like one `heat-manage db_sync` made there), and the value class.
func sqliteTypeOf(name string, args []myTok, unsigned bool) (string, colClass, error) {
	numArgs := func() string {
		var as []string
		for _, a := range args {
			if a.kind != myNumber || !typeArgNumber.Match(a.text) {
				return ""
			}
			as = append(as, string(a.text))
		}
		if len(as) == 0 {
			return ""
		}
		return "(" + strings.Join(as, ", ") + ")"
	}
	switch name {
	case "tinyint", "bool", "boolean":
		if name != "tinyint" || numArgs() == "(1)" {
			return "BOOLEAN", classInt, nil // SQLAlchemy's Boolean is tinyint(1) in MySQL
		}
		return "TINYINT", classInt, nil
	case "smallint", "int2":
		return "SMALLINT", classInt, nil
	case "mediumint", "int3", "middleint":
		return "MEDIUMINT", classInt, nil
	case "int", "integer", "int4":
		return "INTEGER", classInt, nil
	case "bigint", "int8", "serial":
		return "BIGINT", classInt, nil
	case "year":
		return "INTEGER", classInt, nil
	case "bit":
		return "INTEGER", classBit, nil
	case "float", "float4":
		return "FLOAT", classReal, nil
	case "double", "real", "float8":
		return "DOUBLE", classReal, nil
	case "decimal", "dec", "numeric", "fixed":
		return "NUMERIC" + numArgs(), classDecimal, nil
	case "char", "national char", "nchar", "character":
		return "CHAR" + numArgs(), classText, nil
	case "varchar", "national varchar", "nvarchar", "character varying", "varchar2", "long varchar":
		return "VARCHAR" + numArgs(), classText, nil
	case "tinytext", "text", "mediumtext", "longtext", "long", "json", "clob":
		return "TEXT", classText, nil
	case "enum", "set":
		// SQLAlchemy's non-native Enum is VARCHAR(longest value).
		n := 0
		for _, a := range args {
			if a.kind != myString {
				return "", 0, fmt.Errorf("%s: expected string values", name)
			}
			if name == "set" {
				n += len(a.text) + 1
			} else {
				n = max(n, len([]rune(string(a.text))))
			}
		}
		return "VARCHAR(" + strconv.Itoa(max(n, 1)) + ")", classText, nil
	case "uuid":
		return "CHAR(36)", classText, nil
	case "inet4", "inet6":
		return "VARCHAR(39)", classText, nil
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "long varbinary", "char byte":
		return "BLOB", classBlob, nil
	case "datetime":
		return "DATETIME", classDateTime, nil
	case "timestamp":
		return "TIMESTAMP", classDateTime, nil
	case "date":
		return "DATE", classDate, nil
	case "time":
		return "TIME", classTime, nil
	}
	return "", 0, fmt.Errorf("MySQL type %s has no SQLite conversion", name)
}

// check validates the table as a whole.
func (tb *myTable) check() error {
	cols := func(x *myIndex) error {
		for _, c := range x.cols {
			if tb.column(c.name) == nil {
				return fmt.Errorf("key %s names unknown column %s", x.name, c.name)
			}
		}
		return nil
	}
	for _, x := range append(append([]*myIndex{tb.pk}, tb.uniques...), tb.keys...) {
		if x == nil {
			continue
		}
		if err := cols(x); err != nil {
			return err
		}
	}
	for _, fk := range tb.fks {
		for _, c := range fk.cols {
			if tb.column(c) == nil {
				return fmt.Errorf("foreign key %s names unknown column %s", fk.name, c)
			}
		}
		if len(fk.cols) != len(fk.refCols) {
			return fmt.Errorf("foreign key %s: %d columns reference %d", fk.name, len(fk.cols), len(fk.refCols))
		}
	}
	for _, c := range tb.cols {
		if !c.autoInc {
			continue
		}
		if tb.pk == nil || len(tb.pk.cols) != 1 || !strings.EqualFold(tb.pk.cols[0].name, c.name) {
			tb.cannot("column %s is AUTO_INCREMENT but not the table's single-column primary key (SQLite numbers only such a column)", c.name)
		}
		if c.class != classInt {
			return fmt.Errorf("column %s is AUTO_INCREMENT but of type %s", c.name, c.myType)
		}
	}
	return nil
}
