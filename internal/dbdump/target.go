package dbdump

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// Kind is the database engine of a Target.
type Kind string

// Supported kinds.
const (
	KindSQLite Kind = "sqlite"
	KindMySQL  Kind = "mysql"
)

// Target is a database named by a Heat [database] connection URL.
type Target struct {
	Kind Kind
	// Path is the absolute database file (KindSQLite).
	Path string
	// DSN is a go-sql-driver/mysql DSN (KindMySQL).
	DSN string
	// Database, User, Net and Addr describe the MySQL target without the
	// password, for messages.
	Database string
	User     string
	Net      string // "tcp" or "unix"
	Addr     string // host:port or socket path
	// IgnoredParams lists URL query parameters that have no meaning here
	// (for example charset: dumps always use utf8mb4).
	IgnoredParams []string
}

// ParseHeatConnection parses the SQLAlchemy URL Heat uses in [database]
// connection: sqlite:////abs/path.db, or mysql[+driver]://user:pw@host[:port]/db[?...]
// (mariadb[+driver]:// is accepted too). Relative and in-memory SQLite
// databases are rejected because they cannot be located from outside Heat.
func ParseHeatConnection(raw string) (Target, error) {
	raw = strings.TrimSpace(raw)
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return Target{}, fmt.Errorf("database connection %q: missing scheme://", redactURL(raw))
	}
	dialect, _, _ := strings.Cut(strings.ToLower(scheme), "+")
	switch dialect {
	case "sqlite":
		return parseSQLite(rest)
	case "mysql", "mariadb":
		return parseMySQL(raw)
	default:
		return Target{}, fmt.Errorf("database connection %q: unsupported dialect %q (want sqlite, mysql or mariadb)", redactURL(raw), dialect)
	}
}

func parseSQLite(rest string) (Target, error) {
	// SQLAlchemy: sqlite:// + "/" + database path; the path of an absolute
	// file therefore starts after the third slash (sqlite:////abs).
	rest, query, _ := strings.Cut(rest, "?")
	if rest == "" || rest == "/" {
		return Target{}, errors.New("sqlite connection names no file (in-memory database): nothing to dump")
	}
	if !strings.HasPrefix(rest, "/") {
		return Target{}, fmt.Errorf("sqlite connection %q: expected sqlite:////absolute/path", "sqlite://"+rest)
	}
	p, err := url.PathUnescape(rest[1:])
	if err != nil {
		return Target{}, fmt.Errorf("sqlite connection path %q: %w", rest[1:], err)
	}
	if p == ":memory:" {
		return Target{}, errors.New("sqlite connection names an in-memory database: nothing to dump")
	}
	if !filepath.IsAbs(p) {
		return Target{}, fmt.Errorf("sqlite connection path %q is relative to Heat's working directory: use sqlite:////absolute/path", p)
	}
	t := Target{Kind: KindSQLite, Path: filepath.Clean(p)}
	if query != "" {
		vals, err := url.ParseQuery(query)
		if err != nil {
			return Target{}, fmt.Errorf("sqlite connection query %q: %w", query, err)
		}
		t.IgnoredParams = sortedKeys(vals)
	}
	return t, nil
}

func parseMySQL(raw string) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the URL, password included: report the cause only.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return Target{}, fmt.Errorf("mysql connection %q: %w", redactURL(raw), err)
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" || strings.Contains(db, "/") {
		return Target{}, fmt.Errorf("mysql connection %q: want exactly one database name in the path", redactURL(raw))
	}
	cfg := mysql.NewConfig()
	cfg.DBName = db
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	cfg.Net = "tcp"
	host := u.Hostname()
	if host == "" {
		host = "localhost"
	}
	port := 3306
	if p := u.Port(); p != "" {
		port, err = strconv.Atoi(p)
		if err != nil || port <= 0 || port > 65535 {
			return Target{}, fmt.Errorf("mysql connection %q: bad port %q", redactURL(raw), p)
		}
	}
	cfg.Addr = net.JoinHostPort(host, strconv.Itoa(port))

	t := Target{Kind: KindMySQL, Database: db, User: cfg.User}
	q := u.Query()
	for _, k := range sortedKeys(q) {
		switch k {
		case "unix_socket":
			cfg.Net = "unix"
			cfg.Addr = q.Get(k)
		default:
			t.IgnoredParams = append(t.IgnoredParams, k)
		}
	}
	t.Net, t.Addr = cfg.Net, cfg.Addr
	t.DSN = cfg.FormatDSN()
	return t, nil
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
