package dbdump

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// MySQLDump is what ScanMySQLDump (or ConvertMySQLDump) learned from the
// SQL text of a MySQL dump (mysqldump output, or DumpMySQL's): its tables,
// their rows, and a digest of every table's rows that VerifySQLite and VerifyMySQL compare
// with a database the dump was loaded into.
type MySQLDump struct {
	Tables    []string         // in the order the dump creates them
	TableRows map[string]int64 // rows per table
	Rows      int64
	Charset   string   // the dump's SET NAMES ("" when it has none)
	Views     []string // views the dump creates (not converted to SQLite)
	// Notes are what a conversion to SQLite leaves out (CHECK constraints,
	// FULLTEXT indexes, ON UPDATE clauses); empty for Heat's schema.
	Notes []string

	tables  map[string]*myTable
	digests map[string]*rowDigest
	// sqliteProblems say why the dump as a whole cannot be converted.
	sqliteProblems []string
	database       string // the first USE, if any
}

// RowFunc receives each row of a dump: get returns a column's value as
// text (dates as YYYY-MM-DD HH:MM:SS.ffffff, numbers in decimal, strings
// and bytes as they are) and whether it is NULL. get is valid only during
// the call.
type RowFunc func(table string, get func(column string) (value string, isNull bool)) error

// ScanMySQLDump reads a MySQL dump without loading it anywhere: it parses
// every statement (and refuses the ones a dump of a Heat database cannot
// hold), and returns the tables, row counts and row digests. onRow (may
// be nil) sees every row.
func ScanMySQLDump(r io.Reader, onRow RowFunc) (*MySQLDump, error) {
	return scanMySQLDump(r, nil, onRow)
}

// dumpHandler receives what the scan finds, in dump order.
type dumpHandler interface {
	createTable(t *myTable) error
	insertRow(t *myTable, mode string, vals []myValue) error
	endInsert() error // after the last row of an INSERT statement
	view(name string) error
	finish(d *MySQLDump) error
}

type valKind uint8

const (
	valAbsent valKind = iota // a column an INSERT's column list leaves out
	valNull
	valNum  // numeric literal text, with its sign
	valStr  // decoded string bytes
	valHex  // 0x.. / X'..' bytes
	valBits // b'..' digits
)

type myValue struct {
	kind valKind
	b    []byte
}

type mysqlScanner struct {
	d     *MySQLDump
	h     dumpHandler
	onRow RowFunc
	vals  []myValue
	buf   []byte // canonical values of a row
	line  int
}

func scanMySQLDump(r io.Reader, h dumpHandler, onRow RowFunc) (*MySQLDump, error) {
	d := &MySQLDump{TableRows: map[string]int64{}, tables: map[string]*myTable{}, digests: map[string]*rowDigest{}}
	s := &mysqlScanner{d: d, h: h, onRow: onRow}
	sp := newMySQLSplitter(r)
	for {
		stmt, line, err := sp.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return d, fmt.Errorf("reading the MySQL dump: %w", err)
		}
		s.line = line
		if err := s.statement(stmt); err != nil {
			return d, fmt.Errorf("MySQL dump line %d: %w", line, err)
		}
	}
	if len(d.Tables) == 0 {
		return d, errors.New("the MySQL dump creates no table")
	}
	if h != nil {
		if err := h.finish(d); err != nil {
			return d, err
		}
	}
	return d, nil
}

func (s *mysqlScanner) statement(stmt []byte) error {
	l := newMyLexer(stmt)
	// A statement that starts with an executable comment runs its body
	// (mysqldump wraps SET, ALTER TABLE ... KEYS and views in them).
	// MariaDB's /*M!999999\- enable the sandbox mode */ and optimizer
	// hints carry nothing to run.
	if t := l.peek(); t.kind == myCond {
		l.next()
		if t.hint || t.ver >= 999999 {
			if l.peek().kind == myEOF {
				return l.err
			}
			return s.statement(l.rest())
		}
		body := append(append([]byte{}, t.text...), ' ')
		return s.statement(append(body, l.rest()...))
	}
	t := l.next()
	if t.kind != myWord {
		if l.err != nil {
			return l.err
		}
		return fmt.Errorf("unsupported statement: %s", abbreviate(stmt))
	}
	switch strings.ToUpper(string(t.text)) {
	case "SET":
		return s.set(l)
	case "LOCK", "UNLOCK", "BEGIN", "COMMIT", "START", "DROP":
		// Table locks, transactions and DROP TABLE/VIEW IF EXISTS: the
		// target is always a new, empty database loaded in one transaction.
		return nil
	case "USE":
		db := l.nextSkipCond()
		if s.d.database == "" {
			s.d.database = string(db.text)
		} else if s.d.database != string(db.text) {
			return fmt.Errorf("the dump holds more than one database (%s and %s): dump Heat's database alone", s.d.database, db.text)
		}
		return nil
	case "ALTER":
		if l.nextSkipCond().is("TABLE") {
			if _, err := tableName(l, l.nextSkipCond()); err != nil {
				return err
			}
			if k := l.nextSkipCond(); (k.is("DISABLE") || k.is("ENABLE")) && l.nextSkipCond().is("KEYS") && l.nextSkipCond().kind == myEOF {
				return nil
			}
		}
		return fmt.Errorf("unsupported statement (a dump alters tables only to disable and enable keys): %s", abbreviate(stmt))
	case "CREATE":
		return s.create(l, stmt)
	case "INSERT", "REPLACE":
		return s.insert(l, t.is("REPLACE"))
	case "DELIMITER":
		return errors.New("DELIMITER is not supported (the dump holds triggers or routines)")
	}
	return fmt.Errorf("unsupported statement: %s", abbreviate(stmt))
}

// utf8Charsets are the SET NAMES under which dumped text is UTF-8.
var utf8Charsets = map[string]bool{"utf8": true, "utf8mb3": true, "utf8mb4": true}

func (s *mysqlScanner) set(l *myLexer) error {
	t := l.nextSkipCond()
	if !t.is("NAMES") {
		return nil // session variables
	}
	cs := l.nextSkipCond()
	name := strings.ToLower(string(cs.text))
	s.d.Charset = name
	if !utf8Charsets[name] {
		s.d.sqliteProblems = append(s.d.sqliteProblems, fmt.Sprintf("the dump's text is in character set %s, not UTF-8 (dump with --default-character-set=utf8mb4)", name))
	}
	return nil
}

// viewName finds the name in mysqldump's CREATE ... VIEW `name`, whose
// parts are spread over several executable comments.
var viewName = regexp.MustCompile("(?i)\\bVIEW\\s+`((?:[^`]|``)*)`")

func (s *mysqlScanner) create(l *myLexer, stmt []byte) error {
	t := l.nextSkipCond()
	for t.is("OR") || t.is("REPLACE") {
		t = l.nextSkipCond()
	}
	switch {
	case t.is("TABLE"):
		tb, err := parseCreateTable(l)
		if err != nil {
			return err
		}
		if _, dup := s.d.tables[tb.name]; dup {
			return fmt.Errorf("table %s is created twice", tb.name)
		}
		s.d.tables[tb.name] = tb
		s.d.digests[tb.name] = &rowDigest{}
		s.d.Tables = append(s.d.Tables, tb.name)
		s.d.Notes = append(s.d.Notes, tb.notes...)
		if s.h != nil {
			return s.h.createTable(tb)
		}
		return nil
	case t.is("DATABASE"), t.is("SCHEMA"):
		return nil
	case t.is("ALGORITHM"), t.is("DEFINER"), t.is("SQL"), t.is("VIEW"):
		name := ""
		if m := viewName.FindSubmatch(stmt); m != nil {
			name = strings.ReplaceAll(string(m[1]), "``", "`")
		}
		s.d.Views = append(s.d.Views, name)
		if s.h != nil {
			return s.h.view(name)
		}
		return nil
	case t.is("TEMPORARY"):
		return errors.New("CREATE TEMPORARY TABLE is not a dumped table")
	}
	return fmt.Errorf("unsupported statement: %s", abbreviate(stmt))
}

func (s *mysqlScanner) insert(l *myLexer, replace bool) error {
	mode := "INSERT"
	if replace {
		mode = "INSERT OR REPLACE"
	}
	t := l.nextSkipCond()
	for {
		switch {
		case t.is("LOW_PRIORITY"), t.is("DELAYED"), t.is("HIGH_PRIORITY"):
		case t.is("IGNORE"):
			mode = "INSERT OR IGNORE"
		case t.is("INTO"):
		default:
			goto name
		}
		t = l.nextSkipCond()
	}
name:
	name, err := tableName(l, t)
	if err != nil {
		return err
	}
	tb := s.d.tables[name]
	if tb == nil {
		return fmt.Errorf("INSERT into table %s, which the dump does not create", name)
	}
	// Where each value goes: the table's column order, or the INSERT's
	// column list.
	order := make([]int, 0, len(tb.cols))
	t = l.nextSkipCond()
	if t.isPunct('(') {
		cols, err := identList(l)
		if err != nil {
			return fmt.Errorf("INSERT into %s: %w", name, err)
		}
		seen := map[int]bool{}
		for _, c := range cols {
			i, ok := tb.byName[strings.ToLower(c)]
			if !ok {
				return fmt.Errorf("INSERT into %s names unknown column %s", name, c)
			}
			if seen[i] {
				return fmt.Errorf("INSERT into %s names column %s twice", name, c)
			}
			seen[i] = true
			order = append(order, i)
		}
		for i, c := range tb.cols {
			if !seen[i] && !c.generated {
				return fmt.Errorf("INSERT into %s leaves out column %s: dump with complete rows (mysqldump does)", name, c.name)
			}
		}
		t = l.nextSkipCond()
	} else {
		for i := range tb.cols {
			order = append(order, i)
		}
	}
	if !t.is("VALUES") && !t.is("VALUE") {
		return fmt.Errorf("INSERT into %s: only INSERT ... VALUES is supported, found %s", name, t)
	}
	if cap(s.vals) < len(tb.cols) {
		s.vals = make([]myValue, len(tb.cols))
	}
	vals := s.vals[:len(tb.cols)]
	dg := s.d.digests[name]
	for {
		if t := l.nextSkipCond(); !t.isPunct('(') {
			return fmt.Errorf("INSERT into %s: expected ( before row %d, found %s", name, s.d.TableRows[name]+1, t)
		}
		for i := range vals {
			vals[i] = myValue{kind: valAbsent}
		}
		for k, ci := range order {
			if k > 0 {
				if t := l.nextSkipCond(); !t.isPunct(',') {
					return fmt.Errorf("INSERT into %s row %d: expected , after column %s, found %s", name, s.d.TableRows[name]+1, tb.cols[order[k-1]].name, t)
				}
			}
			v, err := readValue(l)
			if err != nil {
				return fmt.Errorf("INSERT into %s row %d column %s: %w", name, s.d.TableRows[name]+1, tb.cols[ci].name, err)
			}
			vals[ci] = v
		}
		if t := l.nextSkipCond(); !t.isPunct(')') {
			return fmt.Errorf("INSERT into %s row %d: %d values expected, found %s", name, s.d.TableRows[name]+1, len(order), t)
		}
		if err := s.row(tb, dg, mode, vals); err != nil {
			return fmt.Errorf("INSERT into %s row %d: %w", name, s.d.TableRows[name], err)
		}
		t := l.nextSkipCond()
		if t.kind == myEOF {
			if l.err != nil {
				return l.err
			}
			if s.h != nil {
				return s.h.endInsert()
			}
			return nil
		}
		if t.is("ON") {
			return fmt.Errorf("INSERT into %s: ON DUPLICATE KEY UPDATE is not supported", name)
		}
		if !t.isPunct(',') {
			return fmt.Errorf("INSERT into %s: expected , or the end after row %d, found %s", name, s.d.TableRows[name], t)
		}
	}
}

func (s *mysqlScanner) row(tb *myTable, dg *rowDigest, mode string, vals []myValue) error {
	s.d.TableRows[tb.name]++
	s.d.Rows++
	var err error
	if s.buf, err = dg.addSource(s.buf[:0], tb, vals); err != nil {
		return err
	}
	if s.onRow != nil {
		get := func(column string) (string, bool) {
			c := tb.column(column)
			if c == nil {
				return "", true
			}
			v := vals[tb.byName[strings.ToLower(column)]]
			if v.kind == valNull || v.kind == valAbsent {
				return "", true
			}
			canon, err := canonicalSource(nil, c, v)
			if err != nil {
				return "", true
			}
			return string(canon), false
		}
		if err := s.onRow(tb.name, get); err != nil {
			return err
		}
	}
	if s.h != nil {
		return s.h.insertRow(tb, mode, vals)
	}
	return nil
}

// readValue reads one literal: NULL, TRUE/FALSE, a signed number, a string
// (with an optional character set introducer such as _binary or _utf8mb4),
// a hex or a bit literal.
func readValue(l *myLexer) (myValue, error) {
	t := l.nextSkipCond()
	neg := false
	signed := false
	for t.isPunct('-') || t.isPunct('+') {
		signed = true
		if t.isPunct('-') {
			neg = !neg
		}
		t = l.nextSkipCond()
	}
	switch t.kind {
	case myNumber:
		if neg {
			return myValue{kind: valNum, b: append([]byte{'-'}, t.text...)}, nil
		}
		return myValue{kind: valNum, b: t.text}, nil
	case myString, myHex, myBits:
		if signed {
			return myValue{}, fmt.Errorf("a sign before %s", t)
		}
		return literalValue(t), nil
	case myWord:
		if signed {
			return myValue{}, fmt.Errorf("a sign before %s", t)
		}
		switch {
		case t.is("NULL"):
			return myValue{kind: valNull}, nil
		case t.is("TRUE"):
			return myValue{kind: valNum, b: []byte("1")}, nil
		case t.is("FALSE"):
			return myValue{kind: valNum, b: []byte("0")}, nil
		case len(t.text) > 1 && t.text[0] == '_':
			cs := strings.ToLower(string(t.text[1:]))
			if cs != "binary" && !utf8Charsets[cs] && cs != "ascii" {
				return myValue{}, fmt.Errorf("a string in character set %s (only UTF-8 and binary strings are supported)", cs)
			}
			v := l.nextSkipCond()
			if v.kind != myString && v.kind != myHex && v.kind != myBits {
				return myValue{}, fmt.Errorf("expected a string after %s, found %s", t, v)
			}
			return literalValue(v), nil
		}
	}
	if l.err != nil {
		return myValue{}, l.err
	}
	return myValue{}, fmt.Errorf("unsupported value %s (a dump holds literals only)", t)
}

func literalValue(t myTok) myValue {
	switch t.kind {
	case myHex:
		return myValue{kind: valHex, b: t.text}
	case myBits:
		return myValue{kind: valBits, b: t.text}
	}
	return myValue{kind: valStr, b: t.text}
}
