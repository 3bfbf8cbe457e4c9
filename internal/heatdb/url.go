// Package heatdb is Heat's database as a server sees it: the URLs that name
// it (heat.conf's SQLAlchemy form, and the admin URL of an existing MySQL the
// modules take), and creating, checking and dropping it, for a sqlite file
// and for MySQL/MariaDB. The launcher, the dumps, restore and every teardown
// use it; which database a heat_dir uses is heat.conf's business (package
// heatdir reads and writes it).
package heatdb

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Kind is the database engine.
type Kind string

// Supported kinds.
const (
	SQLite Kind = "sqlite"
	MySQL  Kind = "mysql"
)

// DB is a database named by a URL: a sqlite file, or a database (or, in an
// admin URL, only a server and an account) on a MySQL/MariaDB server.
type DB struct {
	Kind Kind
	// Path is the absolute database file (SQLite).
	Path string
	// User and Password are the MySQL account; Net ("tcp" or "unix") and
	// Addr (host:port or socket path) the server; Database the database
	// ("" in an admin URL that names none).
	User, Password string
	Net, Addr      string
	Database       string
	// IgnoredParams lists URL query parameters that have no meaning here
	// (for example charset: dumps always use utf8mb4).
	IgnoredParams []string
}

// Parse parses the SQLAlchemy URL Heat uses in [database] connection:
// sqlite:////abs/path.db, or mysql[+driver]://user:pw@host[:port]/db[?...]
// (mariadb[+driver]:// is accepted too). Relative and in-memory SQLite
// databases are rejected because they cannot be located from outside Heat.
// Errors never repeat the password.
func Parse(raw string) (DB, error) {
	raw = strings.TrimSpace(raw)
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return DB{}, fmt.Errorf("database connection %q: missing scheme://", redactURL(raw))
	}
	dialect, _, _ := strings.Cut(strings.ToLower(scheme), "+")
	switch dialect {
	case "sqlite":
		return parseSQLite(rest)
	case "mysql", "mariadb":
		d, err := parseMySQL(raw)
		if err == nil && (d.Database == "" || strings.Contains(d.Database, "/")) {
			err = fmt.Errorf("mysql connection %q: want exactly one database name in the path", redactURL(raw))
		}
		return d, err
	default:
		return DB{}, fmt.Errorf("database connection %q: unsupported dialect %q (want sqlite, mysql or mariadb)", redactURL(raw), dialect)
	}
}

// ParseAdmin parses the URL of an existing MySQL server and an account on it
// allowed to create databases and users: mysql://USER:PASSWORD@HOST[:PORT]/[DB]
// (the database is optional).
func ParseAdmin(raw string) (DB, error) {
	raw = strings.TrimSpace(raw)
	scheme, _, ok := strings.Cut(raw, "://")
	dialect, _, _ := strings.Cut(strings.ToLower(scheme), "+")
	if !ok {
		return DB{}, errors.New("must start with mysql:// (e.g. mysql://root:PASSWORD@127.0.0.1:3306/)")
	}
	if dialect != "mysql" && dialect != "mariadb" {
		return DB{}, fmt.Errorf("must start with mysql:// (e.g. mysql://root:PASSWORD@127.0.0.1:3306/), got scheme %q", scheme)
	}
	d, err := parseMySQL(raw)
	if err != nil {
		return DB{}, err
	}
	if d.User == "" {
		return DB{}, errors.New("has no user name; give mysql://USER:PASSWORD@HOST:PORT/")
	}
	if strings.Contains(d.Database, "/") {
		return DB{}, fmt.Errorf("%q names more than one database", redactURL(raw))
	}
	return d, nil
}

func parseSQLite(rest string) (DB, error) {
	// SQLAlchemy: sqlite:// + "/" + database path; the path of an absolute
	// file therefore starts after the third slash (sqlite:////abs).
	rest, query, _ := strings.Cut(rest, "?")
	if rest == "" || rest == "/" {
		return DB{}, errors.New("sqlite connection names no file (in-memory database): nothing to dump")
	}
	if !strings.HasPrefix(rest, "/") {
		return DB{}, fmt.Errorf("sqlite connection %q: expected sqlite:////absolute/path", "sqlite://"+rest)
	}
	p, err := url.PathUnescape(rest[1:])
	if err != nil {
		return DB{}, fmt.Errorf("sqlite connection path %q: %w", rest[1:], err)
	}
	if p == ":memory:" {
		return DB{}, errors.New("sqlite connection names an in-memory database: nothing to dump")
	}
	if !filepath.IsAbs(p) {
		return DB{}, fmt.Errorf("sqlite connection path %q is relative to Heat's working directory: use sqlite:////absolute/path", p)
	}
	d := DB{Kind: SQLite, Path: filepath.Clean(p)}
	if query != "" {
		vals, err := url.ParseQuery(query)
		if err != nil {
			return DB{}, fmt.Errorf("sqlite connection query %q: %w", query, err)
		}
		d.IgnoredParams = sortedKeys(vals)
	}
	return d, nil
}

func parseMySQL(raw string) (DB, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the URL, password included: report the cause only.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return DB{}, fmt.Errorf("mysql connection %q: %w", redactURL(raw), err)
	}
	d := DB{Kind: MySQL, Database: strings.TrimPrefix(u.Path, "/"), Net: "tcp"}
	if u.User != nil {
		d.User = u.User.Username()
		d.Password, _ = u.User.Password()
	}
	host := u.Hostname()
	if host == "" {
		host = "localhost"
	}
	port := 3306
	if p := u.Port(); p != "" {
		port, err = strconv.Atoi(p)
		if err != nil || port <= 0 || port > 65535 {
			return DB{}, fmt.Errorf("mysql connection %q: bad port %q", redactURL(raw), p)
		}
	}
	d.Addr = net.JoinHostPort(host, strconv.Itoa(port))
	q := u.Query()
	for _, k := range sortedKeys(q) {
		switch k {
		case "unix_socket":
			d.Net, d.Addr = "unix", q.Get(k)
		default:
			d.IgnoredParams = append(d.IgnoredParams, k)
		}
	}
	return d, nil
}

// DSN is the go-sql-driver/mysql DSN of the database (MySQL).
func (d DB) DSN() string { return d.dsn(d.Database) }

// ServerDSN is the DSN of the server, without a default database.
func (d DB) ServerDSN() string { return d.dsn("") }

func (d DB) dsn(db string) string {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = d.User, d.Password, d.Net, d.Addr, db
	c.Timeout = 10 * time.Second
	return c.FormatDSN()
}

// On returns the database name on the same server with another account.
func (d DB) On(name, user, password string) DB {
	return DB{Kind: MySQL, Net: d.Net, Addr: d.Addr, Database: name, User: user, Password: password}
}

// URL is the SQLAlchemy URL heat.conf's [database] connection takes.
func (d DB) URL() string {
	if d.Kind == SQLite {
		return "sqlite:///" + d.Path
	}
	u := url.URL{Scheme: "mysql+pymysql", User: url.UserPassword(d.User, d.Password), Path: "/" + d.Database}
	q := url.Values{"charset": {"utf8"}}
	if d.Net == "unix" {
		u.Host = "localhost"
		q.Set("unix_socket", d.Addr)
	} else {
		u.Host = d.Addr
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// String names the database without credentials: the sqlite file, or
// mysql://USER@ADDR/DATABASE.
func (d DB) String() string {
	if d.Kind == SQLite {
		return d.Path
	}
	return fmt.Sprintf("mysql://%s@%s/%s", d.User, d.Addr, d.Database)
}

// Files are the sqlite database file and its journals (nil for MySQL).
func (d DB) Files() []string {
	if d.Kind != SQLite {
		return nil
	}
	return []string{d.Path, d.Path + "-journal", d.Path + "-wal", d.Path + "-shm"}
}

func sortedKeys(v url.Values) []string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// redactURL hides the password of a URL for messages.
func redactURL(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	authEnd := strings.IndexAny(rest, "/?#")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	at := strings.LastIndex(rest[:authEnd], "@")
	if at < 0 {
		return raw
	}
	userinfo := rest[:at]
	if user, _, hasPw := strings.Cut(userinfo, ":"); hasPw {
		userinfo = user + ":xxxxx"
	}
	return scheme + "://" + userinfo + rest[at:]
}
