package dbdump

import (
	"bufio"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// sqliteBusyTimeoutMS is how long a dump waits for a writer's lock (journal
// mode) before giving up.
const sqliteBusyTimeoutMS = 30000

func sqliteURI(path string, params string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", path, err)
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: params}
	return u.String(), nil
}

// DumpSQLite writes the database file dbPath as SQL text in the format of the
// sqlite3 shell's .dump command. The database is opened read-only and read
// inside one transaction, so the dump is a consistent snapshot even while
// another process (Heat) writes to it. Virtual tables are not supported.
func DumpSQLite(ctx context.Context, dbPath string, w io.Writer) (Stats, error) {
	var st Stats
	fi, err := os.Stat(dbPath)
	if err != nil {
		return st, fmt.Errorf("sqlite dump: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return st, fmt.Errorf("sqlite dump: %s is not a regular file", dbPath)
	}
	uri, err := sqliteURI(dbPath, fmt.Sprintf("mode=ro&_pragma=busy_timeout(%d)", sqliteBusyTimeoutMS))
	if err != nil {
		return st, fmt.Errorf("sqlite dump: %w", err)
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return st, fmt.Errorf("sqlite dump: open %s: %w", dbPath, err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return st, fmt.Errorf("sqlite dump: open %s: %w", dbPath, err)
	}
	defer conn.Close()

	bw, cw := newDumpWriter(w)
	err = conn.Raw(func(dc any) error {
		d := &sqliteDumper{ctx: ctx, w: bw, stats: &st}
		var ok bool
		if d.q, ok = dc.(driver.QueryerContext); !ok {
			return errors.New("sqlite driver connection cannot run queries")
		}
		if d.x, ok = dc.(driver.ExecerContext); !ok {
			return errors.New("sqlite driver connection cannot execute statements")
		}
		return d.run()
	})
	st.Bytes = cw.n
	if err != nil {
		return st, fmt.Errorf("sqlite dump of %s: %w", dbPath, err)
	}
	return st, nil
}

type sqliteDumper struct {
	ctx   context.Context
	q     driver.QueryerContext
	x     driver.ExecerContext
	w     *bufio.Writer
	stats *Stats
	row   []byte
}

type sqliteObject struct{ name, typ, sql string }

func (d *sqliteDumper) run() (err error) {
	// A deferred transaction takes its snapshot at the first read and keeps
	// it (WAL) or holds the shared lock (rollback journal) until the end.
	if _, err := d.x.ExecContext(d.ctx, "BEGIN", nil); err != nil {
		return fmt.Errorf("begin read transaction: %w", err)
	}
	defer func() {
		if _, rbErr := d.x.ExecContext(context.Background(), "ROLLBACK", nil); rbErr != nil && err == nil {
			err = fmt.Errorf("end read transaction: %w", rbErr)
		}
	}()

	tables, err := d.objects(`SELECT name, type, sql FROM sqlite_schema
		WHERE type=='table' AND sql NOT NULL ORDER BY tbl_name=='sqlite_sequence', rowid`)
	if err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	others, err := d.objects(`SELECT name, type, sql FROM sqlite_schema
		WHERE sql NOT NULL AND type IN ('index','trigger','view') ORDER BY rowid`)
	if err != nil {
		return fmt.Errorf("list indexes, triggers and views: %w", err)
	}

	d.w.WriteString("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n")
	for _, t := range tables {
		switch {
		case t.name == "sqlite_sequence":
			d.w.WriteString("DELETE FROM sqlite_sequence;\n")
		case t.name == "sqlite_stat1":
			d.w.WriteString("ANALYZE sqlite_schema;\n")
		case strings.HasPrefix(t.name, "sqlite_"):
			// Internal tables, and sqlite_stat2/3/4: the shell dumps the
			// latter too, but a SQLite built without STAT4 (Debian's
			// sqlite3, Python's sqlite3) cannot load them, and they only
			// hold optional planner statistics.
			continue
		case hasPrefixFold(t.sql, "CREATE VIRTUAL TABLE"):
			return fmt.Errorf("table %s is a virtual table: not supported", t.name)
		default:
			d.writeSchemaLine(t.sql)
			d.stats.Tables++
		}
		if err := d.dumpRows(t.name); err != nil {
			return fmt.Errorf("table %s: %w", t.name, err)
		}
	}
	for _, o := range others {
		d.w.WriteString(o.sql)
		if strings.Contains(o.sql, "--") {
			d.w.WriteString("\n;\n")
		} else {
			d.w.WriteString(";\n")
		}
	}
	d.w.WriteString("COMMIT;\n")
	if err := d.w.Flush(); err != nil {
		return fmt.Errorf("write dump: %w", err)
	}
	return nil
}

// writeSchemaLine mirrors the shell's printSchemaLine: SQL ending inside a
// comment gets the comment closed before the ';', and CREATE TABLE of a
// quoted name becomes CREATE TABLE IF NOT EXISTS.
func (d *sqliteDumper) writeSchemaLine(sql string) {
	if strings.Contains(sql, "/*") || strings.Contains(sql, "--") {
		for _, term := range []string{"", "*/", "\n"} {
			if sqliteComplete(sql + term + ";") {
				sql += term
				break
			}
		}
	}
	if len(sql) > 13 && strings.HasPrefix(sql, "CREATE TABLE ") && (sql[13] == '\'' || sql[13] == '"') {
		sql = "CREATE TABLE IF NOT EXISTS " + sql[13:]
	}
	d.w.WriteString(sql)
	d.w.WriteString(";\n")
}

func (d *sqliteDumper) objects(query string) ([]sqliteObject, error) {
	rows, err := d.q.QueryContext(d.ctx, query, nil)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sqliteObject
	vals := make([]driver.Value, 3)
	for {
		if err := rows.Next(vals); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		var o sqliteObject
		o.name, _ = vals[0].(string)
		o.typ, _ = vals[1].(string)
		o.sql, _ = vals[2].(string)
		out = append(out, o)
	}
}

// columns returns the table's columns as PRAGMA table_info lists them
// (generated columns excluded), like the shell's tableColumnList.
func (d *sqliteDumper) columns(table string) ([]string, error) {
	rows, err := d.q.QueryContext(d.ctx, "PRAGMA table_info("+sqliteQuoteString(table)+")", nil)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	vals := make([]driver.Value, len(rows.Columns()))
	var cols []string
	for {
		if err := rows.Next(vals); err == io.EOF {
			return cols, nil
		} else if err != nil {
			return nil, err
		}
		name, ok := vals[1].(string)
		if !ok {
			return nil, fmt.Errorf("table_info returned column name of type %T", vals[1])
		}
		cols = append(cols, name)
	}
}

func (d *sqliteDumper) dumpRows(table string) error {
	cols, err := d.columns(table)
	if err != nil {
		return fmt.Errorf("list columns: %w", err)
	}
	if len(cols) == 0 {
		return errors.New("no columns")
	}
	// "+col" drops the declared type, so the driver hands back the stored
	// value instead of converting DATETIME text to time.Time.
	var q strings.Builder
	q.WriteString("SELECT ")
	for i, c := range cols {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteByte('+')
		q.WriteString(sqliteQuoteIdent(c))
	}
	q.WriteString(" FROM ")
	q.WriteString(sqliteQuoteIdent(table))
	rows, err := d.q.QueryContext(d.ctx, q.String(), nil)
	if err != nil {
		return fmt.Errorf("select rows: %w", err)
	}
	defer rows.Close()

	prefix := "INSERT INTO " + sqliteIdent(table) + " VALUES("
	vals := make([]driver.Value, len(cols))
	var n int64
	for {
		if err := rows.Next(vals); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("read row %d: %w", n+1, err)
		}
		b := append(d.row[:0], prefix...)
		for i, v := range vals {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendSQLiteValue(b, v); !ok {
				return fmt.Errorf("column %s: unexpected driver value of type %T", cols[i], v)
			}
		}
		b = append(b, ");\n"...)
		d.row = b
		if _, err := d.w.Write(b); err != nil {
			return fmt.Errorf("write dump: %w", err)
		}
		n++
		if n&1023 == 0 {
			if err := d.ctx.Err(); err != nil {
				return err
			}
		}
	}
	if !strings.HasPrefix(table, "sqlite_") {
		d.stats.addRows(table, n)
	}
	return nil
}

// sqliteQuoteIdent always double-quotes a name.
func sqliteQuoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

func sqliteQuoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
