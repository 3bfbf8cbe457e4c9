package dbdump

import (
	"bufio"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// mysqlConnector returns a connector for dsn with the settings dumps and
// restores rely on: no multi-statements, no client-side interpolation, raw
// (unparsed) dates.
func mysqlConnector(dsn string) (driver.Connector, *mysql.Config, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		// The parse error may quote the DSN, password included.
		return nil, nil, errors.New("invalid MySQL DSN")
	}
	if cfg.DBName == "" {
		return nil, nil, errors.New("the MySQL DSN names no database")
	}
	cfg.MultiStatements = false
	cfg.InterpolateParams = false
	cfg.ParseTime = false
	cfg.ClientFoundRows = false
	cfg.Collation = "utf8mb4_general_ci"
	if cfg.Params != nil {
		delete(cfg.Params, "charset")
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("MySQL connector: %w", err)
	}
	return c, cfg, nil
}

// DumpMySQL writes the tables and views of the DSN's database as SQL text
// that the mysql client (and RestoreMySQL) loads. All data comes from one
// consistent snapshot (START TRANSACTION WITH CONSISTENT SNAPSHOT at
// REPEATABLE READ), which is consistent for InnoDB tables. Rows are written
// as multi-row INSERTs of at most WithMaxStatementBytes bytes (default 1 MiB)
// unless a single row is longer. Triggers, routines and sequences are not
// supported and make the dump fail.
func DumpMySQL(ctx context.Context, dsn string, w io.Writer, opts ...Option) (Stats, error) {
	o := buildOptions(opts)
	var st Stats
	connector, cfg, err := mysqlConnector(dsn)
	if err != nil {
		return st, fmt.Errorf("mysql dump: %w", err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return st, fmt.Errorf("mysql dump: connect to %s: %w", cfg.Addr, err)
	}
	defer conn.Close()

	bw, cw := newDumpWriter(w)
	d := &mysqlDumper{ctx: ctx, conn: conn, w: bw, stats: &st, maxStmt: o.maxStatementBytes, db: cfg.DBName, addr: cfg.Addr}
	err = d.run()
	st.Bytes = cw.n
	if err != nil {
		return st, fmt.Errorf("mysql dump of %s: %w", cfg.DBName, err)
	}
	return st, nil
}

type mysqlDumper struct {
	ctx     context.Context
	conn    *sql.Conn
	w       *bufio.Writer
	stats   *Stats
	maxStmt int
	db      string
	addr    string
	row     []byte
}

func (d *mysqlDumper) exec(q string) error {
	if _, err := d.conn.ExecContext(d.ctx, q); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	return nil
}

func (d *mysqlDumper) run() (err error) {
	for _, q := range []string{
		"SET NAMES utf8mb4",
		"SET SESSION time_zone='+00:00'", // TIMESTAMPs as UTC, as the header declares
		"SET SESSION sql_mode=''",        // plain SHOW CREATE output (no ANSI_QUOTES)
		"SET SESSION sql_quote_show_create=1",
		"SET SESSION net_write_timeout=600",
		"SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
		"START TRANSACTION WITH CONSISTENT SNAPSHOT",
	} {
		if err := d.exec(q); err != nil {
			return err
		}
	}
	defer func() {
		if _, rbErr := d.conn.ExecContext(context.Background(), "ROLLBACK"); rbErr != nil && err == nil {
			err = fmt.Errorf("end snapshot transaction: %w", rbErr)
		}
	}()

	var version string
	if err := d.conn.QueryRowContext(d.ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return fmt.Errorf("server version: %w", err)
	}
	tables, views, err := d.listTables()
	if err != nil {
		return err
	}
	if err := d.refuseTriggers(); err != nil {
		return err
	}

	d.writeHeader(version)
	for _, t := range tables {
		if err := d.dumpTable(t); err != nil {
			return fmt.Errorf("table %s: %w", t, err)
		}
		d.stats.Tables++
	}
	for _, v := range views {
		if err := d.dumpView(v); err != nil {
			return fmt.Errorf("view %s: %w", v, err)
		}
	}
	d.writeFooter()
	if err := d.w.Flush(); err != nil {
		return fmt.Errorf("write dump: %w", err)
	}
	return nil
}

func (d *mysqlDumper) listTables() (tables, views []string, err error) {
	rows, err := d.conn.QueryContext(d.ctx, "SHOW FULL TABLES")
	if err != nil {
		return nil, nil, fmt.Errorf("list tables: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return nil, nil, fmt.Errorf("list tables: %w", err)
		}
		switch typ {
		case "BASE TABLE", "SYSTEM VERSIONED":
			tables = append(tables, name)
		case "VIEW":
			views = append(views, name)
		default:
			return nil, nil, fmt.Errorf("%s is a %s: not supported", name, typ)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("list tables: %w", err)
	}
	return tables, views, nil
}

func (d *mysqlDumper) refuseTriggers() error {
	rows, err := d.conn.QueryContext(d.ctx, "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()")
	if err != nil {
		return fmt.Errorf("list triggers: %w", err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return fmt.Errorf("list triggers: %w", err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list triggers: %w", err)
	}
	if len(names) > 0 {
		return fmt.Errorf("database has triggers (%s): not supported", strings.Join(names, ", "))
	}
	return nil
}

func (d *mysqlDumper) writeHeader(version string) {
	fmt.Fprintf(d.w, "-- ephemeral-heat dbdump (MySQL dialect)\n--\n-- Host: %s    Database: %s\n", d.addr, d.db)
	fmt.Fprintf(d.w, "-- ------------------------------------------------------\n-- Server version\t%s\n\n", version)
	d.w.WriteString(`/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET @OLD_CHARACTER_SET_RESULTS=@@CHARACTER_SET_RESULTS */;
/*!40101 SET @OLD_COLLATION_CONNECTION=@@COLLATION_CONNECTION */;
/*!40101 SET NAMES utf8mb4 */;
/*!40103 SET @OLD_TIME_ZONE=@@TIME_ZONE */;
/*!40103 SET TIME_ZONE='+00:00' */;
/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;
/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;
/*!40111 SET @OLD_SQL_NOTES=@@SQL_NOTES, SQL_NOTES=0 */;
`)
}

func (d *mysqlDumper) writeFooter() {
	d.w.WriteString(`/*!40103 SET TIME_ZONE=@OLD_TIME_ZONE */;

/*!40101 SET SQL_MODE=@OLD_SQL_MODE */;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
/*!40014 SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS */;
/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;
/*!40101 SET CHARACTER_SET_RESULTS=@OLD_CHARACTER_SET_RESULTS */;
/*!40101 SET COLLATION_CONNECTION=@OLD_COLLATION_CONNECTION */;
/*!40111 SET SQL_NOTES=@OLD_SQL_NOTES */;

`)
	fmt.Fprintf(d.w, "-- Dump completed on %s\n", time.Now().UTC().Format("2006-01-02 15:04:05"))
}

// mysqlColumn is a column as the dump selects it.
type mysqlColumn struct {
	name      string
	float     bool // FLOAT: selected widened to DOUBLE (the text protocol rounds FLOAT to 6 digits)
	generated bool // virtual/stored generated columns are not inserted
}

func (d *mysqlDumper) columns(table string) ([]mysqlColumn, error) {
	rows, err := d.conn.QueryContext(d.ctx, `SELECT COLUMN_NAME, DATA_TYPE, EXTRA FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, table)
	if err != nil {
		return nil, fmt.Errorf("list columns: %w", err)
	}
	defer rows.Close()
	var cols []mysqlColumn
	for rows.Next() {
		var name, typ, extra string
		if err := rows.Scan(&name, &typ, &extra); err != nil {
			return nil, fmt.Errorf("list columns: %w", err)
		}
		extra = strings.ToUpper(extra)
		cols = append(cols, mysqlColumn{
			name:      name,
			float:     strings.EqualFold(typ, "float"),
			generated: strings.Contains(extra, "GENERATED") || extra == "VIRTUAL" || extra == "PERSISTENT" || extra == "STORED",
		})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list columns: %w", err)
	}
	if len(cols) == 0 {
		return nil, errors.New("no columns found")
	}
	return cols, nil
}

func (d *mysqlDumper) dumpTable(table string) error {
	var name, create string
	if err := d.conn.QueryRowContext(d.ctx, "SHOW CREATE TABLE "+mysqlIdent(table)).Scan(&name, &create); err != nil {
		return fmt.Errorf("SHOW CREATE TABLE: %w", err)
	}
	cols, err := d.columns(table)
	if err != nil {
		return err
	}
	qt := mysqlIdent(table)
	fmt.Fprintf(d.w, "\n--\n-- Table structure for table %s\n--\n\nDROP TABLE IF EXISTS %s;\n", qt, qt)
	d.w.WriteString("/*!40101 SET @saved_cs_client     = @@character_set_client */;\n/*!40101 SET character_set_client = utf8mb4 */;\n")
	d.w.WriteString(create)
	d.w.WriteString(";\n/*!40101 SET character_set_client = @saved_cs_client */;\n")
	fmt.Fprintf(d.w, "\n--\n-- Dumping data for table %s\n--\n\n", qt)
	fmt.Fprintf(d.w, "/*!40000 ALTER TABLE %s DISABLE KEYS */;\n", qt)

	var sel strings.Builder
	var insertCols []string
	anyGenerated := false
	sel.WriteString("SELECT /*!40001 SQL_NO_CACHE */ ")
	first := true
	for _, c := range cols {
		if c.generated {
			anyGenerated = true
			continue
		}
		if !first {
			sel.WriteByte(',')
		}
		first = false
		if c.float {
			sel.WriteString(mysqlIdent(c.name) + "+0e0")
		} else {
			sel.WriteString(mysqlIdent(c.name))
		}
		insertCols = append(insertCols, mysqlIdent(c.name))
	}
	if len(insertCols) == 0 {
		return errors.New("every column is generated")
	}
	sel.WriteString(" FROM ")
	sel.WriteString(qt)
	prefix := "INSERT INTO " + qt
	if anyGenerated {
		prefix += " (" + strings.Join(insertCols, ",") + ")"
	}
	prefix += " VALUES\n"

	var floats []bool
	for _, c := range cols {
		if !c.generated {
			floats = append(floats, c.float)
		}
	}
	n, err := d.streamRows(sel.String(), prefix, floats)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.w, "/*!40000 ALTER TABLE %s ENABLE KEYS */;\n", qt)
	d.stats.addRows(table, n)
	return nil
}

// valueKind says how a column's non-NULL values are written.
type valueKind uint8

const (
	kindString  valueKind = iota // quoted, escaped
	kindHex                      // 0x... (binary data)
	kindNumber                   // verbatim (DECIMAL text)
	kindFloat32                  // FLOAT selected as DOUBLE
)

func kindOf(dbType string, float bool) valueKind {
	if float {
		return kindFloat32
	}
	switch dbType {
	case "BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "BINARY", "VARBINARY", "BIT", "GEOMETRY":
		return kindHex
	case "DECIMAL":
		return kindNumber
	}
	return kindString
}

// streamRows runs query over the raw driver connection (values arrive as
// slices of the driver's read buffer, without copies) and writes them as
// bounded multi-row INSERTs.
func (d *mysqlDumper) streamRows(query, prefix string, floats []bool) (int64, error) {
	var n int64
	err := d.conn.Raw(func(dc any) error {
		q, ok := dc.(driver.QueryerContext)
		if !ok {
			return errors.New("mysql driver connection cannot run queries")
		}
		rows, err := q.QueryContext(d.ctx, query, nil)
		if err != nil {
			return fmt.Errorf("select rows: %w", err)
		}
		defer rows.Close()
		cols := rows.Columns()
		if len(cols) != len(floats) {
			return fmt.Errorf("select returned %d columns, want %d", len(cols), len(floats))
		}
		kinds := make([]valueKind, len(cols))
		typed, _ := rows.(driver.RowsColumnTypeDatabaseTypeName)
		for i := range cols {
			name := ""
			if typed != nil {
				name = typed.ColumnTypeDatabaseTypeName(i)
			}
			kinds[i] = kindOf(name, floats[i])
		}
		vals := make([]driver.Value, len(cols))
		stmtLen := 0 // bytes of the open INSERT statement, 0 if none
		for {
			if err := rows.Next(vals); err == io.EOF {
				break
			} else if err != nil {
				return fmt.Errorf("read row %d: %w", n+1, err)
			}
			b := append(d.row[:0], '(')
			for i, v := range vals {
				if i > 0 {
					b = append(b, ',')
				}
				if b, err = appendMySQLValue(b, v, kinds[i]); err != nil {
					return fmt.Errorf("column %s: %w", cols[i], err)
				}
			}
			b = append(b, ')')
			d.row = b
			switch {
			case stmtLen == 0:
				d.w.WriteString(prefix)
				stmtLen = len(prefix)
			case stmtLen+2+len(b) > d.maxStmt:
				d.w.WriteString(";\n")
				d.w.WriteString(prefix)
				stmtLen = len(prefix)
			default:
				d.w.WriteString(",\n")
				stmtLen += 2
			}
			if _, err := d.w.Write(b); err != nil {
				return fmt.Errorf("write dump: %w", err)
			}
			stmtLen += len(b)
			n++
			if n&1023 == 0 {
				if err := d.ctx.Err(); err != nil {
					return err
				}
			}
		}
		if stmtLen > 0 {
			d.w.WriteString(";\n")
		}
		return nil
	})
	return n, err
}

// appendMySQLValue appends one value as a MySQL literal.
func appendMySQLValue(b []byte, v driver.Value, kind valueKind) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "NULL"...), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case float64:
		// FLOAT columns arrive widened to DOUBLE (kindFloat32); their exact
		// double text converts back to the same float without double rounding.
		return strconv.AppendFloat(b, x, 'g', -1, 64), nil
	case float32:
		return strconv.AppendFloat(b, float64(x), 'g', -1, 32), nil
	case []byte:
		switch kind {
		case kindHex:
			if len(x) == 0 {
				return append(b, "''"...), nil
			}
			b = append(b, '0', 'x')
			return appendHex(b, x), nil
		case kindNumber:
			return append(b, x...), nil
		default:
			return appendMySQLString(b, x), nil
		}
	case string:
		return appendMySQLString(b, []byte(x)), nil
	case time.Time:
		return nil, errors.New("unexpected time.Time value (parseTime must be off)")
	default:
		return nil, fmt.Errorf("unexpected driver value of type %T", v)
	}
}

// appendMySQLString quotes s like mysql_real_escape_string (the escaping
// mysqldump uses); valid unless the loading session has NO_BACKSLASH_ESCAPES.
func appendMySQLString(b, s []byte) []byte {
	b = append(b, '\'')
	start := 0
	for i, c := range s {
		var esc byte
		switch c {
		case 0:
			esc = '0'
		case '\n':
			esc = 'n'
		case '\r':
			esc = 'r'
		case '\\':
			esc = '\\'
		case '\'':
			esc = '\''
		case '"':
			esc = '"'
		case 0x1a:
			esc = 'Z'
		default:
			continue
		}
		b = append(b, s[start:i]...)
		b = append(b, '\\', esc)
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '\'')
}

func (d *mysqlDumper) dumpView(view string) error {
	var name, create, cs, coll string
	if err := d.conn.QueryRowContext(d.ctx, "SHOW CREATE VIEW "+mysqlIdent(view)).Scan(&name, &create, &cs, &coll); err != nil {
		return fmt.Errorf("SHOW CREATE VIEW: %w", err)
	}
	qv := mysqlIdent(view)
	fmt.Fprintf(d.w, "\n--\n-- View structure for view %s\n--\n\nDROP TABLE IF EXISTS %s;\nDROP VIEW IF EXISTS %s;\n", qv, qv, qv)
	d.w.WriteString(create)
	d.w.WriteString(";\n")
	return nil
}

// mysqlIdent quotes an identifier with backticks.
func mysqlIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}
