package dbdump

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"github.com/go-sql-driver/mysql"
)

// mysqlErrEmptyQuery is ER_EMPTY_QUERY: the server got only comments, for
// example an executable comment for a newer server version.
const mysqlErrEmptyQuery = 1065

// RestoreMySQL loads SQL text (written by DumpMySQL or by
// `mysqldump --single-transaction`) into the DSN's database, statement by
// statement over one connection with multi-statements off. Foreign key
// checks are off for the session. A database that already has tables is
// refused unless WithOverwrite is given. DELIMITER blocks (triggers,
// routines) are not supported.
func RestoreMySQL(ctx context.Context, dsn string, r io.Reader, opts ...Option) (Stats, error) {
	o := buildOptions(opts)
	var st Stats
	connector, cfg, err := mysqlConnector(dsn)
	if err != nil {
		return st, fmt.Errorf("mysql restore: %w", err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return st, fmt.Errorf("mysql restore: connect to %s: %w", cfg.Addr, err)
	}
	defer conn.Close()

	if !o.overwrite {
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()").Scan(&n); err != nil {
			return st, fmt.Errorf("mysql restore: count existing tables: %w", err)
		}
		if n > 0 {
			return st, fmt.Errorf("mysql restore: database %s already has %d tables (refusing to overwrite without the overwrite option)", cfg.DBName, n)
		}
	}
	for _, q := range []string{"SET NAMES utf8mb4", "SET SESSION FOREIGN_KEY_CHECKS=0", "SET SESSION UNIQUE_CHECKS=0"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return st, fmt.Errorf("mysql restore: %s: %w", q, err)
		}
	}

	cr := &countingReader{r: r}
	sp := newMySQLSplitter(cr)
	for {
		stmt, line, err := sp.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			st.Bytes = cr.n
			return st, fmt.Errorf("mysql restore into %s: %w", cfg.DBName, err)
		}
		kind, table := classifyStatement(stmt, true)
		if kind == stmtDelimiter {
			st.Bytes = cr.n
			return st, fmt.Errorf("mysql restore into %s: line %d: DELIMITER is not supported (the dump holds triggers or routines)", cfg.DBName, line)
		}
		res, err := conn.ExecContext(ctx, string(stmt))
		if err != nil {
			var me *mysql.MySQLError
			if errors.As(err, &me) && me.Number == mysqlErrEmptyQuery {
				continue
			}
			st.Bytes = cr.n
			return st, fmt.Errorf("mysql restore into %s: line %d: %w (statement: %s)", cfg.DBName, line, err, abbreviate(stmt))
		}
		st.Statements++
		switch kind {
		case stmtCreateTable:
			st.Tables++
		case stmtInsert:
			if n, err := res.RowsAffected(); err == nil {
				st.addRows(table, n)
			}
		}
	}
	st.Bytes = cr.n
	return st, nil
}
