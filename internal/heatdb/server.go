package heatdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql" // the "mysql" database/sql driver
)

// ErrNoAccess means the database refused Heat's credentials: its user was
// dropped (by a wipe) or its password changed.
var ErrNoAccess = errors.New("the database refused Heat's credentials")

// accounts are the hosts a MySQL account of Heat is created for.
var accounts = []string{"%", "localhost"}

// Provision creates (if needed) database name on admin's server and the
// account user with password, allowed everything on it; an existing
// account gets the new password. It returns Heat's view of the database.
func Provision(ctx context.Context, admin DB, name, user, password string) (DB, error) {
	heat := admin.On(name, user, password)
	stmts := []string{"CREATE DATABASE IF NOT EXISTS " + quoteIdent(name) + " CHARACTER SET utf8"}
	for _, host := range accounts {
		acct := quoteStr(user) + "@" + quoteStr(host)
		stmts = append(stmts,
			"CREATE USER IF NOT EXISTS "+acct+" IDENTIFIED BY "+quoteStr(password),
			"ALTER USER "+acct+" IDENTIFIED BY "+quoteStr(password),
			"GRANT ALL PRIVILEGES ON "+quoteIdent(name)+".* TO "+acct)
	}
	if err := exec(ctx, admin, 30*time.Second, stmts); err != nil {
		return DB{}, fmt.Errorf("preparing the Heat database %s on %s as %s: %v (the admin user needs CREATE, CREATE USER and GRANT OPTION)",
			name, admin.Addr, admin.User, err)
	}
	return heat, nil
}

// HasData reports whether the database exists and is not empty (a sqlite
// file with content, a MySQL database with tables), connecting with its own
// credentials. A refused login is ErrNoAccess; a server that is not running
// says so, and how to start it.
func HasData(ctx context.Context, d DB) (bool, error) {
	if d.Kind == SQLite {
		st, err := os.Stat(d.Path)
		if os.IsNotExist(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return st.Size() > 0, nil
	}
	db, err := sql.Open("mysql", d.DSN())
	if err != nil {
		return false, err
	}
	defer db.Close()
	if err := db.PingContext(ctx); err != nil {
		// Unknown database (1049) means it is gone; a refused login (1045)
		// usually means a wipe dropped Heat's user with it.
		if strings.Contains(err.Error(), "1049") {
			return false, nil
		}
		if strings.Contains(err.Error(), "1045") {
			return false, fmt.Errorf("%w: connecting to %s: %v", ErrNoAccess, d, err)
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			return false, fmt.Errorf("connecting to %s: %w: the database server is not running. A pod's own MariaDB runs only "+
				"while its Heat runs: start Heat first (ephemeral_heat_launch state: started; the pod's data is kept in the "+
				"heat_dir), then dump or restore; an external MySQL must be started by whoever runs it", d, err)
		}
		return false, fmt.Errorf("connecting to %s: %w", d, err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()").Scan(&n); err != nil {
		return false, fmt.Errorf("counting tables in %s: %w", d, err)
	}
	return n > 0, nil
}

// Exists reports whether the database exists: the sqlite file, or the MySQL
// schema, looked up as as (an admin of the server, or Heat's own account).
func Exists(ctx context.Context, d DB, as DB) (bool, error) {
	if d.Kind == SQLite {
		for _, p := range d.Files() {
			if _, err := os.Stat(p); err == nil {
				return true, nil
			}
		}
		return false, nil
	}
	db, err := sql.Open("mysql", as.ServerDSN())
	if err != nil {
		return false, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var n int
	err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", d.Database).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("looking for database %s: %w", d, err)
	}
	return n > 0, nil
}

// AccountExists reports whether Heat's MySQL account (d.User) exists, as
// admin sees it.
func AccountExists(ctx context.Context, d DB, admin DB) (bool, error) {
	if d.Kind != MySQL || d.User == "" {
		return false, nil
	}
	db, err := sql.Open("mysql", admin.ServerDSN())
	if err != nil {
		return false, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM mysql.user WHERE User = ?", d.User).Scan(&n); err != nil {
		return false, fmt.Errorf("looking for the MySQL user %s: %w", d.User, err)
	}
	return n > 0, nil
}

// Drop removes the database: the sqlite file and its journals, or the MySQL
// database, dropped as admin when given (and then Heat's account too), else
// as Heat's own account. It returns what it removed: nothing when the
// database was already gone (and, given admin, Heat's account too: an
// account whose database a wipe dropped is dropped then).
func Drop(ctx context.Context, d DB, admin *DB) ([]string, error) {
	if d.Kind == SQLite {
		var removed []string
		for _, p := range d.Files() {
			err := os.Remove(p)
			if err == nil {
				removed = append(removed, p)
			} else if !os.IsNotExist(err) {
				return removed, fmt.Errorf("removing the Heat database %s: %w", p, err)
			}
		}
		return removed, nil
	}
	as := d
	if admin != nil {
		as = *admin
	}
	if exists, err := Exists(ctx, d, as); err == nil && !exists {
		// The database is gone (a wipe as Heat's own user): the account
		// created for the launch must not outlive it.
		if admin == nil {
			return nil, nil
		}
		if has, err := AccountExists(ctx, d, *admin); err != nil || !has {
			return nil, err
		}
	}
	stmts := []string{"DROP DATABASE IF EXISTS " + quoteIdent(d.Database)}
	if admin != nil {
		for _, host := range accounts {
			stmts = append(stmts, "DROP USER IF EXISTS "+quoteStr(d.User)+"@"+quoteStr(host))
		}
	}
	if err := exec(ctx, as, 60*time.Second, stmts); err != nil {
		return nil, fmt.Errorf("removing the Heat database %s: %v", d, err)
	}
	return []string{d.String()}, nil
}

// Empty makes the MySQL database exist and hold nothing (dropping it first
// when dropFirst), as Heat's own account: a restore starts from it, so no
// table the dump lacks survives.
func Empty(ctx context.Context, d DB, dropFirst bool) error {
	var stmts []string
	if dropFirst {
		stmts = append(stmts, "DROP DATABASE IF EXISTS "+quoteIdent(d.Database))
	}
	stmts = append(stmts, "CREATE DATABASE IF NOT EXISTS "+quoteIdent(d.Database)+" CHARACTER SET utf8")
	if err := exec(ctx, d, 60*time.Second, stmts); err != nil {
		return fmt.Errorf("emptying database %s: %w", d, err)
	}
	return nil
}

// exec runs statements on d's server (no default database), in order.
func exec(ctx context.Context, d DB, timeout time.Duration, stmts []string) error {
	db, err := sql.Open("mysql", d.ServerDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func quoteStr(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
