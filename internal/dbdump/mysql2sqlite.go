package dbdump

// Conversion of a MySQL dump (mysqldump of Heat's database, as
// python-tripleoclient's ephemeral Heat writes it) into SQLite.
//
// Why convert the dump's own CREATE TABLEs rather than let
// `heat-manage db_sync` create Heat's schema on SQLite and convert the
// data only: the dump carries the schema of the Heat that wrote it, at its
// migration version (migrate_version), and the relaunch runs db_sync after
// the load as for any restore, so an older dump is upgraded by Heat's own
// migrations exactly as on MySQL; a db_sync-first schema would be the
// installed Heat's version, into which an older dump's rows may not fit.
// The conversion needs no Heat process, so heat_db_dump restores without
// one. It is faithful to what db_sync makes on SQLite: the MySQL types map
// to the types SQLAlchemy declares there (INTEGER, VARCHAR(n), TEXT,
// BOOLEAN for tinyint(1), DATETIME, BLOB), AUTO_INCREMENT becomes an
// INTEGER primary key (SQLite's rowid, numbered like db_sync's own), the
// indexes MySQL creates implicitly for foreign keys are left out (SQLite
// needs none and db_sync makes none), and DATETIME values get the
// microseconds SQLAlchemy writes on SQLite. The adoption test
// (internal/launch) checks on a real Heat that the converted schema has
// db_sync's tables, columns, keys, indexes and foreign keys, and that the
// migration versions agree.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// ConvertMySQLDump reads the SQL text of a MySQL dump and writes SQLite SQL
// text that RestoreSQLite (or the sqlite3 shell) loads into a new database:
// one transaction with foreign keys off, the tables, their rows, then the
// indexes. It refuses what SQLite cannot hold faithfully (views, generated
// columns, text that is not UTF-8, integers beyond 64 bits, decimals
// beyond 15 digits) with an error naming the table, column and row.
func ConvertMySQLDump(r io.Reader, w io.Writer) (*MySQLDump, error) {
	bw := bufio.NewWriterSize(w, ioBufferSize)
	c := &sqliteConverter{w: bw, names: map[string]bool{}}
	c.w.WriteString("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n")
	d, err := scanMySQLDump(r, c, nil)
	if err == nil {
		err = c.err
	}
	if err != nil {
		return d, err
	}
	if err := bw.Flush(); err != nil {
		return d, fmt.Errorf("write converted SQL: %w", err)
	}
	return d, nil
}

// RestoreMySQLDumpSQLite converts a MySQL dump (ConvertMySQLDump) and loads
// it into a new SQLite database at dbPath (RestoreSQLite, whose options
// apply), then checks every table's rows against the dump's (VerifySQLite).
func RestoreMySQLDumpSQLite(ctx context.Context, r io.Reader, dbPath string, opts ...Option) (Stats, *MySQLDump, error) {
	pr, pw := io.Pipe()
	type result struct {
		d   *MySQLDump
		err error
	}
	done := make(chan result, 1)
	go func() {
		d, err := ConvertMySQLDump(r, pw)
		pw.CloseWithError(err) // nil: the reader sees io.EOF
		done <- result{d, err}
	}()
	st, err := RestoreSQLite(ctx, pr, dbPath, opts...)
	pr.CloseWithError(errors.New("the SQLite restore stopped"))
	conv := <-done
	if conv.err != nil {
		return st, conv.d, fmt.Errorf("converting the MySQL dump for SQLite: %w", conv.err)
	}
	if err != nil {
		return st, conv.d, err
	}
	if err := conv.d.VerifySQLite(ctx, dbPath); err != nil {
		return st, conv.d, fmt.Errorf("sqlite restore into %s: %w", dbPath, err)
	}
	return st, conv.d, nil
}

type sqliteConverter struct {
	w       *bufio.Writer
	names   map[string]bool // lower-case names of tables and indexes (one namespace in SQLite)
	indexes []string        // CREATE INDEX statements, written after the rows
	row     []byte
	err     error
	// The open multi-row INSERT: its table and mode, and its size so far
	// (0 when none is open).
	insTable *myTable
	insMode  string
	insLen   int
}

// maxInsertBytes bounds the multi-row INSERTs of the converted SQL (one per
// INSERT of the dump, split when longer).
const maxInsertBytes = 1 << 20

var mysqlAutoFKName = regexp.MustCompile(`^(.*)_ibfk_[0-9]+$`)

func (c *sqliteConverter) view(name string) error {
	return fmt.Errorf("view %s: views are not converted to SQLite (a Heat database has none)", name)
}

func (c *sqliteConverter) finish(d *MySQLDump) error {
	if len(d.sqliteProblems) > 0 {
		return errors.New(strings.Join(d.sqliteProblems, "; "))
	}
	for _, s := range c.indexes {
		c.w.WriteString(s)
	}
	_, err := c.w.WriteString("COMMIT;\n")
	return err
}

func (c *sqliteConverter) createTable(tb *myTable) error {
	if tb.sqliteProblem != "" {
		return fmt.Errorf("table %s cannot be converted to SQLite: %s", tb.name, tb.sqliteProblem)
	}
	lname := strings.ToLower(tb.name)
	if c.names[lname] {
		return fmt.Errorf("table %s: SQLite names are case-insensitive and another table or index is already named so", tb.name)
	}
	c.names[lname] = true

	var parts []string
	for _, col := range tb.cols {
		typ := col.sqlType
		if col.autoInc {
			typ = "INTEGER" // SQLite numbers an INTEGER PRIMARY KEY (the rowid)
		}
		s := sqliteIdent(col.name) + " " + typ
		if col.notNull || col.autoInc {
			s += " NOT NULL"
		}
		if col.dflt != "" {
			s += " DEFAULT " + col.dflt
		}
		parts = append(parts, s)
	}
	if tb.pk != nil {
		parts = append(parts, "PRIMARY KEY ("+joinIdents(tb.pk.colNames())+")")
	}
	for _, u := range tb.uniques {
		// MySQL names an unnamed UNIQUE after its first column; SQLAlchemy
		// leaves it unnamed.
		s := "UNIQUE (" + joinIdents(u.colNames()) + ")"
		if u.name != "" && !strings.EqualFold(u.name, u.cols[0].name) {
			s = "CONSTRAINT " + sqliteIdent(u.name) + " " + s
		}
		parts = append(parts, s)
	}
	for _, fk := range tb.fks {
		s := "FOREIGN KEY(" + joinIdents(fk.cols) + ") REFERENCES " + sqliteIdent(fk.refTable) + " (" + joinIdents(fk.refCols) + ")"
		if fk.onDelete != "" {
			s += " ON DELETE " + fk.onDelete
		}
		if fk.onUpdate != "" {
			s += " ON UPDATE " + fk.onUpdate
		}
		// tablename_ibfk_N is MySQL's name for an unnamed constraint.
		if m := mysqlAutoFKName.FindStringSubmatch(fk.name); fk.name != "" && (m == nil || m[1] != tb.name) {
			s = "CONSTRAINT " + sqliteIdent(fk.name) + " " + s
		}
		parts = append(parts, s)
	}
	c.w.WriteString("CREATE TABLE " + sqliteIdent(tb.name) + " (\n\t" + strings.Join(parts, ", \n\t") + "\n);\n")

	for _, k := range tb.keys {
		if tb.implicitFKIndex(k) {
			continue
		}
		name := k.name
		if name == "" {
			name = k.cols[0].name
		}
		for c.names[strings.ToLower(name)] {
			name = tb.name + "_" + name // index names are per table in MySQL, per database in SQLite
		}
		c.names[strings.ToLower(name)] = true
		var cols []string
		for _, ic := range k.cols {
			s := sqliteIdent(ic.name)
			if ic.desc {
				s += " DESC"
			}
			cols = append(cols, s)
		}
		c.indexes = append(c.indexes, "CREATE INDEX "+sqliteIdent(name)+" ON "+sqliteIdent(tb.name)+" ("+strings.Join(cols, ", ")+");\n")
	}
	return nil
}

// implicitFKIndex reports whether k is the index MySQL creates by itself for
// a foreign key: same columns, named after the constraint or its first
// column.
func (tb *myTable) implicitFKIndex(k *myIndex) bool {
	for _, fk := range tb.fks {
		if len(fk.cols) != len(k.cols) {
			continue
		}
		same := true
		for i, c := range fk.cols {
			if !strings.EqualFold(c, k.cols[i].name) || k.cols[i].desc {
				same = false
			}
		}
		if same && (k.name == fk.name || strings.EqualFold(k.name, fk.cols[0])) {
			return true
		}
	}
	return false
}

func joinIdents(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = sqliteIdent(n)
	}
	return strings.Join(q, ", ")
}

func (c *sqliteConverter) insertRow(tb *myTable, mode string, vals []myValue) error {
	b := append(c.row[:0], '(')
	for i, col := range tb.cols {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = sqliteLiteral(b, col, vals[i]); err != nil {
			return fmt.Errorf("column %s: %w", col.name, err)
		}
	}
	b = append(b, ')')
	c.row = b
	switch {
	case c.insLen > 0 && (c.insTable != tb || c.insMode != mode || c.insLen+len(b) > maxInsertBytes):
		c.w.WriteString(";\n")
		c.insLen = 0
		fallthrough
	case c.insLen == 0:
		head := mode + " INTO " + sqliteIdent(tb.name) + " VALUES"
		c.w.WriteString(head)
		c.insTable, c.insMode, c.insLen = tb, mode, len(head)
	default:
		c.w.WriteByte(',')
		c.insLen++
	}
	c.insLen += len(b)
	if _, err := c.w.Write(b); err != nil {
		c.err = fmt.Errorf("write converted SQL: %w", err)
		return c.err
	}
	return nil
}

func (c *sqliteConverter) endInsert() error {
	if c.insLen > 0 {
		c.w.WriteString(";\n")
		c.insLen = 0
	}
	return nil
}

// sqliteLiteral appends v, a value of column col, as a SQLite literal.
func sqliteLiteral(b []byte, col *myColumn, v myValue) ([]byte, error) {
	if v.kind == valNull || v.kind == valAbsent {
		return append(b, "NULL"...), nil
	}
	canon, err := canonicalSource(nil, col, v)
	if err != nil {
		return b, err
	}
	switch col.class {
	case classInt, classBit:
		if _, err := strconv.ParseInt(string(canon), 10, 64); err != nil {
			return b, fmt.Errorf("%s does not fit SQLite's 64-bit integers: restore this dump into MySQL", canon)
		}
		return append(b, canon...), nil
	case classReal:
		return appendSQLiteReal(b, mustFloat(canon)), nil
	case classDecimal:
		if !decimalFitsSQLite(string(canon)) {
			return b, fmt.Errorf("%s has more digits than SQLite keeps (15): restore this dump into MySQL", canon)
		}
		return append(b, canon...), nil
	case classBlob:
		b = append(b, "X'"...)
		b = appendHex(b, canon)
		return append(b, '\''), nil
	}
	// Text, DATETIME (normalized), DATE, TIME.
	if err := checkUTF8(canon); err != nil {
		return b, err
	}
	return appendSQLiteText(b, string(canon)), nil
}

func mustFloat(canon []byte) float64 {
	f, _ := strconv.ParseFloat(string(canon), 64) // canonical: always parses
	return f
}
