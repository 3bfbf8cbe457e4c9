package launch

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatconf"
	"github.com/ephemeral-heat/ephemeral-heat/internal/podheat"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// mysqlTarget is a MySQL server and the credentials to use on it.
type mysqlTarget struct {
	User, Password, Host string
	Port                 int
	DB                   string
}

func (t mysqlTarget) addr() string { return net.JoinHostPort(t.Host, fmt.Sprint(t.Port)) }

// dsn is the go-sql-driver DSN for db ("" for no default database).
func (t mysqlTarget) dsn(db string) string {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = t.User, t.Password, "tcp", t.addr(), db
	c.Timeout = 10 * time.Second
	return c.FormatDSN()
}

// parseMySQLURL accepts mysql://user:pw@host[:port][/db] and the
// SQLAlchemy form mysql+pymysql://... that heat.conf uses.
func parseMySQLURL(raw, what string) (mysqlTarget, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return mysqlTarget{}, fmt.Errorf("%s is not a URL: %v", what, redactErr(err))
	}
	if u.Scheme != "mysql" && !strings.HasPrefix(u.Scheme, "mysql+") {
		return mysqlTarget{}, fmt.Errorf("%s must start with mysql:// (e.g. mysql://root:PASSWORD@127.0.0.1:3306/), got scheme %q", what, u.Scheme)
	}
	t := mysqlTarget{Host: u.Hostname(), Port: 3306, DB: strings.Trim(u.Path, "/")}
	if u.User != nil {
		t.User = u.User.Username()
		t.Password, _ = u.User.Password()
	}
	if t.User == "" {
		return mysqlTarget{}, fmt.Errorf("%s has no user name; give mysql://USER:PASSWORD@HOST:PORT/", what)
	}
	if t.Host == "" {
		return mysqlTarget{}, fmt.Errorf("%s has no host", what)
	}
	if p := u.Port(); p != "" {
		if _, err := fmt.Sscan(p, &t.Port); err != nil {
			return mysqlTarget{}, fmt.Errorf("%s has a bad port %q", what, p)
		}
	}
	return t, nil
}

// redactErr drops URL text (which may hold a password) from url.Parse errors.
func redactErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func randomSecret() (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// heatDBName is the database (and user) name of a heat_dir when database_url
// names none: stable per heat_dir, so two deployments do not share one.
func heatDBName(heatDir string) string {
	s := sha256.Sum256([]byte(heatDir))
	return "heat_" + hex.EncodeToString(s[:])[:10]
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
func quoteStr(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// prepareDatabase returns the SQLAlchemy URL for heat.conf and a
// credential-free description of the database.
func (o *Options) prepareDatabase(ctx context.Context) (string, string, error) {
	if o.Database == SQLite {
		p := o.path(SQLiteFile)
		return "sqlite:///" + p, p, nil
	}
	admin, err := parseMySQLURL(o.DatabaseURL, "database_url")
	if err != nil {
		return "", "", err
	}
	o.Secret(admin.Password)
	name := admin.DB
	if name == "" {
		name = heatDBName(o.HeatDir)
	}
	user := name
	if len(user) > 32 {
		user = user[:32]
	}
	pw, err := randomSecret()
	if err != nil {
		return "", "", err
	}
	o.Secret(pw)
	db, err := sql.Open("mysql", admin.dsn(""))
	if err != nil {
		return "", "", fmt.Errorf("database_url: %w", err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	stmts := []string{"CREATE DATABASE IF NOT EXISTS " + quoteIdent(name) + " CHARACTER SET utf8"}
	for _, host := range []string{"%", "localhost"} {
		acct := quoteStr(user) + "@" + quoteStr(host)
		stmts = append(stmts,
			"CREATE USER IF NOT EXISTS "+acct+" IDENTIFIED BY "+quoteStr(pw),
			// Random credentials per launch: a relaunch gets a new password.
			"ALTER USER "+acct+" IDENTIFIED BY "+quoteStr(pw),
			"GRANT ALL PRIVILEGES ON "+quoteIdent(name)+".* TO "+acct)
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return "", "", fmt.Errorf("preparing the Heat database %s on %s as %s: %v (the database_url user needs CREATE, CREATE USER and GRANT OPTION)",
				name, admin.addr(), admin.User, err)
		}
	}
	heatURL := fmt.Sprintf("mysql+pymysql://%s:%s@%s/%s?charset=utf8", url.PathEscape(user), pw, admin.addr(), name)
	return heatURL, fmt.Sprintf("mysql://%s@%s/%s", user, admin.addr(), name), nil
}

// liveDatabase describes what state=absent would remove (nothing if the
// database is already gone).
func (o *Options) liveDatabase(rec *Record) []string {
	conn := o.heatConnection()
	switch {
	case strings.HasPrefix(conn, "sqlite:"):
		var out []string
		for _, p := range sqliteFiles(conn) {
			if _, err := os.Stat(p); err == nil {
				out = append(out, p)
			}
		}
		return out
	case strings.HasPrefix(conn, "mysql"):
		t, err := parseMySQLURL(conn, "[database] connection in heat.conf")
		if err != nil {
			return nil
		}
		o.Secret(t.Password)
		if exists, err := o.mysqlDBExists(t); err == nil && !exists {
			return nil
		}
		return []string{fmt.Sprintf("mysql://%s@%s/%s", t.User, t.addr(), t.DB)}
	}
	return nil
}

// heatConnection is [database] connection of heat_dir/heat.conf ("" if none).
func (o *Options) heatConnection() string {
	ini, err := heatconf.ReadINI(o.path(heatconf.HeatConf))
	if err != nil {
		return ""
	}
	return ini.Get("database", "connection")
}

// sqliteFiles is the database file of a sqlite:/// URL and its journals.
func sqliteFiles(conn string) []string {
	p := strings.TrimPrefix(conn, "sqlite:///")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	if !filepath.IsAbs(p) {
		return nil
	}
	return []string{p, p + "-journal", p + "-wal", p + "-shm"}
}

// mysqlDBExists checks whether the heat database exists, as the admin of
// database_url if given, else as Heat's own user.
func (o *Options) mysqlDBExists(heat mysqlTarget) (bool, error) {
	who := heat
	if o.DatabaseURL != "" {
		a, err := parseMySQLURL(o.DatabaseURL, "database_url")
		if err != nil {
			return false, err
		}
		o.Secret(a.Password)
		who = a
	}
	db, err := sql.Open("mysql", who.dsn(""))
	if err != nil {
		return false, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var n int
	err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", heat.DB).Scan(&n)
	if err != nil {
		return false, err
	}
	return n > 0, nil
}

// removeDatabase drops the live database named by heat.conf.
func (o *Options) removeDatabase(ctx context.Context, rec *Record) ([]string, error) {
	conn := o.heatConnection()
	switch {
	case conn == "":
		return nil, nil
	case strings.HasPrefix(conn, "sqlite:"):
		var removed []string
		for _, p := range sqliteFiles(conn) {
			err := os.Remove(p)
			if err == nil {
				removed = append(removed, p)
			} else if !os.IsNotExist(err) {
				return removed, fmt.Errorf("removing the Heat database %s: %w", p, err)
			}
		}
		return removed, nil
	case strings.HasPrefix(conn, "mysql"):
		heat, err := parseMySQLURL(conn, "[database] connection in heat.conf")
		if err != nil {
			return nil, err
		}
		o.Secret(heat.Password)
		if exists, err := o.mysqlDBExists(heat); err == nil && !exists {
			return nil, nil
		}
		who := heat
		dropUser := false
		if o.DatabaseURL != "" {
			if who, err = parseMySQLURL(o.DatabaseURL, "database_url"); err != nil {
				return nil, err
			}
			dropUser = true
		} else {
			o.Warn("database_url was not given: dropping database %s as its own user; the MySQL user %s remains (give database_url to drop it too)", heat.DB, heat.User)
		}
		db, err := sql.Open("mysql", who.dsn(""))
		if err != nil {
			return nil, err
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		stmts := []string{"DROP DATABASE IF EXISTS " + quoteIdent(heat.DB)}
		if dropUser {
			for _, host := range []string{"%", "localhost"} {
				stmts = append(stmts, "DROP USER IF EXISTS "+quoteStr(heat.User)+"@"+quoteStr(host))
			}
		}
		for _, s := range stmts {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return nil, fmt.Errorf("removing the Heat database %s on %s: %v", heat.DB, heat.addr(), err)
			}
		}
		return []string{fmt.Sprintf("mysql://%s@%s/%s", heat.User, heat.addr(), heat.DB)}, nil
	}
	return nil, fmt.Errorf("heat.conf names a database this module cannot remove: %q", strings.SplitN(conn, ":", 2)[0])
}

// RemoveDatabase drops the live database that heatDir's heat.conf names (the
// sqlite file, or the MySQL database; and its user when databaseURL, an
// admin URL, is given). It returns what it removed; nothing when the
// database is already gone.
//
// A pod's own MariaDB (heat.conf has [database] host_connection) is reached
// through the port the pod publishes on the host's loopback: its database is
// dropped there (its user stays in the pod's MariaDB until state: absent
// removes the datadir). When nothing listens on that port any more (the pod
// is stopped), the MariaDB datadir in heat_dir, which holds nothing but
// Heat's database and MariaDB's own tables, is removed instead; the next
// launch creates it afresh.
func RemoveDatabase(ctx context.Context, heatDir, databaseURL string, warn func(string, ...any), secret func(string)) ([]string, error) {
	o := Options{HeatDir: heatDir, DatabaseURL: databaseURL, Warn: warn, Secret: secret}
	o.defaults()
	if ini, err := heatconf.ReadINI(o.path(heatconf.HeatConf)); err == nil {
		if hc := ini.Get("database", dumps.HostConnectionKey); hc != "" {
			return o.removePodDatabase(ctx, hc)
		}
	}
	return o.removeDatabase(ctx, nil)
}

// removePodDatabase drops the database of a pod's own MariaDB through
// host_connection, or removes the datadir of a stopped one.
func (o *Options) removePodDatabase(ctx context.Context, hostConn string) ([]string, error) {
	heat, err := parseMySQLURL(hostConn, "[database] "+dumps.HostConnectionKey+" in heat.conf")
	if err != nil {
		return nil, err
	}
	o.Secret(heat.Password)
	// database_url names another server: the pod's MariaDB has no admin on the host.
	o.DatabaseURL = ""
	exists, err := o.mysqlDBExists(heat)
	if err == nil && !exists {
		return nil, nil
	}
	if err != nil {
		rec, _ := readRecord(o.HeatDir)
		if rec != nil || !proc.PortFree(heat.Host, heat.Port) {
			return nil, fmt.Errorf("the pod's MariaDB does not answer on %s (%v): start Heat (ephemeral_heat_launch) to drop its database, or stop it (state: stopped) to have its datadir removed", heat.addr(), err)
		}
		datadir := o.path(podheat.MariaDBDir)
		if _, err := os.Stat(datadir); os.IsNotExist(err) {
			return nil, nil
		}
		if err := os.RemoveAll(datadir); err != nil {
			return nil, fmt.Errorf("removing the MariaDB datadir of the stopped pod: %w", err)
		}
		o.Warn("the pod's MariaDB is not running (nothing listens on %s): removed its datadir %s, and Heat's database with it", heat.addr(), datadir)
		return []string{datadir}, nil
	}
	db, err := sql.Open("mysql", heat.dsn(""))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+quoteIdent(heat.DB)); err != nil {
		return nil, fmt.Errorf("removing the Heat database %s of the pod's MariaDB (published on %s): %v", heat.DB, heat.addr(), err)
	}
	return []string{fmt.Sprintf("mysql://%s@%s/%s (the pod's MariaDB)", heat.User, heat.addr(), heat.DB)}, nil
}

// HeatRunning reports whether heatDir's launch record names a live Heat.
func HeatRunning(heatDir string) (bool, string) {
	rec, err := readRecord(heatDir)
	if err != nil || rec == nil {
		return false, ""
	}
	alive, _ := rec.Process.Check()
	return alive, rec.Endpoint
}
