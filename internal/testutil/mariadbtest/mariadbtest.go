// Package mariadbtest starts a private, throw-away MariaDB server for a test.
//
// Start initialises a fresh data directory with mariadb-install-db, runs
// mariadbd on 127.0.0.1 and a free TCP port (plus a private Unix socket),
// waits until it accepts connections, gives root a random password and
// registers a cleanup that stops the server by PID (SIGTERM, then SIGKILL
// after a grace period) and removes its directory. Every call gets its own
// server, so tests in different packages may run in parallel.
//
// The Debian packages mariadb-server and mariadb-client must be installed; when
// they are not, Start fails the test with the apt-get command to run.
package mariadbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// InstallHint is the command that provides the binaries this package needs.
const InstallHint = "DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends mariadb-server mariadb-client"

const (
	startTimeout = 60 * time.Second
	stopGrace    = 15 * time.Second
	maxAttempts  = 3
)

// Server is a running MariaDB instance owned by one test.
type Server struct {
	Host          string // always 127.0.0.1
	Port          int    // TCP port the server listens on
	AdminUser     string // account with all privileges (root)
	AdminPassword string // random hex password of AdminUser
	Socket        string // path of the server's Unix socket
	Dir           string // private directory holding datadir, socket, logs
	ClientConfig  string // option file for the mysql/mysqldump clients ([client] section)
	ErrorLog      string // path of the server error log
	Version       string // server version string, e.g. 10.11.6-MariaDB-0+deb12u1

	pid  int
	done chan struct{} // closed once the server process has exited
}

// Binaries holds the programs Start uses.
type Binaries struct {
	Server    string // mariadbd or mysqld
	InstallDB string // mariadb-install-db or mysql_install_db
	Client    string // mariadb or mysql
	Dump      string // mariadb-dump or mysqldump
}

// extraDirs are searched after PATH: Debian installs mariadbd in /usr/sbin,
// which is not on every user's PATH.
var extraDirs = []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin", "/usr/libexec", "/usr/local/mysql/bin"}

func lookup(names ...string) (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	for _, d := range extraDirs {
		for _, n := range names {
			p := filepath.Join(d, n)
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("none of %s found in PATH or %s: run `%s`", strings.Join(names, ", "), strings.Join(extraDirs, ", "), InstallHint)
}

// FindBinaries locates the MariaDB server and client programs.
func FindBinaries() (Binaries, error) {
	var b Binaries
	var err error
	var errs []error
	if b.Server, err = lookup("mariadbd", "mysqld"); err != nil {
		errs = append(errs, err)
	}
	if b.InstallDB, err = lookup("mariadb-install-db", "mysql_install_db"); err != nil {
		errs = append(errs, err)
	}
	if b.Client, err = lookup("mariadb", "mysql"); err != nil {
		errs = append(errs, err)
	}
	if b.Dump, err = lookup("mariadb-dump", "mysqldump"); err != nil {
		errs = append(errs, err)
	}
	return b, errors.Join(errs...)
}

// Start starts a new MariaDB server for t and stops it when t finishes.
func Start(t testing.TB) *Server {
	t.Helper()
	bins, err := FindBinaries()
	if err != nil {
		t.Fatalf("mariadbtest: MariaDB binaries missing: %v", err)
	}
	s, err := start(bins)
	if s != nil {
		t.Cleanup(func() {
			if err := s.stop(); err != nil {
				t.Errorf("mariadbtest: %v", err)
			}
			if err := os.RemoveAll(s.Dir); err != nil {
				t.Errorf("mariadbtest: remove %s: %v", s.Dir, err)
			}
		})
	}
	if err != nil {
		t.Fatalf("mariadbtest: %v", err)
	}
	return s
}

// start brings a server up. It returns a non-nil Server whenever a directory
// or process exists that needs cleaning up, even together with an error.
func start(bins Binaries) (*Server, error) {
	// A short base keeps the socket path below the 108-byte sun_path limit
	// even when TMPDIR is long.
	base := os.TempDir()
	if len(base) > 60 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "mariadbtest-")
	if err != nil {
		return nil, fmt.Errorf("create server directory: %w", err)
	}
	s := &Server{
		Host:      "127.0.0.1",
		AdminUser: "root",
		Dir:       dir,
		Socket:    filepath.Join(dir, "mysqld.sock"),
		ErrorLog:  filepath.Join(dir, "error.log"),
	}
	datadir := filepath.Join(dir, "data")
	tmpdir := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmpdir, 0o700); err != nil {
		return s, fmt.Errorf("create tmpdir: %w", err)
	}

	common := []string{
		"--datadir=" + datadir,
		// A private tmpdir for the bootstrap too: every starting server
		// deletes "#sql*" files it finds in its tmpdir, so bootstraps
		// sharing /tmp remove each other's temporary tables and fail with
		// "Unknown table 'mysql.tmp_user_sys'".
		"--tmpdir=" + tmpdir,
		"--innodb-log-file-size=48M",
		"--innodb-data-file-path=ibdata1:10M:autoextend",
		"--innodb-buffer-pool-size=128M",
	}
	if os.Geteuid() == 0 {
		// mariadbd refuses to run as root unless told to explicitly.
		common = append(common, "--user=root")
	}

	install := append([]string{"--no-defaults"}, common...)
	install = append(install,
		"--auth-root-authentication-method=normal",
		"--skip-test-db",
		"--skip-name-resolve",
	)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bins.InstallDB, install...).CombinedOutput()
	if err != nil {
		return s, fmt.Errorf("%s %s: %w\n%s", bins.InstallDB, strings.Join(install, " "), err, tail(string(out), 4000))
	}

	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return s, err
		}
		s.Port = port
		err = s.launch(ctx, bins.Server, common)
		if err == nil {
			break
		}
		logText, _ := os.ReadFile(s.ErrorLog)
		inUse := strings.Contains(string(logText), "Address already in use") || strings.Contains(string(logText), "errno: 98")
		if !inUse || attempt == maxAttempts {
			return s, err
		}
		// Another process grabbed the port between probe and bind: retry.
		if rmErr := os.Remove(s.ErrorLog); rmErr != nil && !os.IsNotExist(rmErr) {
			return s, fmt.Errorf("%w (and removing %s: %v)", err, s.ErrorLog, rmErr)
		}
	}

	if err := s.secure(ctx); err != nil {
		return s, err
	}
	if err := s.writeClientConfig(); err != nil {
		return s, err
	}
	return s, nil
}

// launch starts mariadbd and waits until it accepts a TCP connection.
func (s *Server) launch(ctx context.Context, server string, common []string) error {
	args := append([]string{"--no-defaults"}, common...)
	args = append(args,
		"--skip-networking=0",
		"--bind-address=127.0.0.1",
		"--port="+strconv.Itoa(s.Port),
		"--socket="+s.Socket,
		"--pid-file="+filepath.Join(s.Dir, "mysqld.pid"),
		"--log-error="+s.ErrorLog,
		"--skip-name-resolve",
		"--skip-log-bin",
		"--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_general_ci",
		"--innodb-flush-log-at-trx-commit=2",
		"--innodb-doublewrite=0",
		"--performance-schema=OFF",
		"--max-connections=200",
	)
	cmd := exec.Command(server, args...)
	cmd.Dir = s.Dir
	// The kernel kills the server if the test binary dies (for example on a
	// go test -timeout panic), so no orphan keeps running. Pdeathsig fires when
	// the forking OS thread exits, hence the thread stays locked for as long
	// as the server lives.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	s.done = make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			close(s.done)
			return
		}
		s.pid = cmd.Process.Pid
		started <- nil
		_ = cmd.Wait() // exit status is irrelevant: stop() or the log explains it
		close(s.done)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("start %s: %w", server, err)
	}

	db, err := sql.Open("mysql", s.rootDSN(""))
	if err != nil {
		return fmt.Errorf("open connection pool: %w", err)
	}
	defer db.Close()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		var version string
		err := db.QueryRowContext(pctx, "SELECT VERSION()").Scan(&version)
		pcancel()
		if err == nil {
			s.Version = version
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("%s exited during startup (port %d); error log %s:\n%s", server, s.Port, s.ErrorLog, s.logTail())
		case <-ctx.Done():
			return fmt.Errorf("%s did not accept connections on 127.0.0.1:%d within %s (last error: %v); error log:\n%s", server, s.Port, startTimeout, err, s.logTail())
		case <-tick.C:
		}
	}
}

// secure gives every root account a random password.
func (s *Server) secure(ctx context.Context) error {
	pw := make([]byte, 16)
	if _, err := rand.Read(pw); err != nil {
		return fmt.Errorf("generate password: %w", err)
	}
	password := hex.EncodeToString(pw)
	db, err := sql.Open("mysql", s.rootDSN(""))
	if err != nil {
		return fmt.Errorf("open connection pool: %w", err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connect as root: %w", err)
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, "SELECT Host FROM mysql.user WHERE User='root'")
	if err != nil {
		return fmt.Errorf("list root accounts: %w", err)
	}
	var hosts []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			rows.Close()
			return fmt.Errorf("list root accounts: %w", err)
		}
		hosts = append(hosts, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list root accounts: %w", err)
	}
	if len(hosts) == 0 {
		return errors.New("mariadb-install-db created no root account")
	}
	altered := 0
	for _, h := range hosts {
		switch h {
		case "localhost", "127.0.0.1", "::1", "%":
		default:
			// root@<hostname>: the server runs with --skip-name-resolve and
			// ignores such accounts (ALTER USER fails with 1396), and it
			// listens on loopback only, so they cannot be used.
			continue
		}
		// The password is hex, so formatting it into the statement is safe.
		q := fmt.Sprintf("ALTER USER 'root'@'%s' IDENTIFIED BY '%s'", strings.ReplaceAll(h, "'", "''"), password)
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("set password of root@%s: %w", h, err)
		}
		altered++
	}
	if altered == 0 {
		return fmt.Errorf("no loopback root account among %q", hosts)
	}
	s.AdminPassword = password
	return nil
}

func (s *Server) writeClientConfig() error {
	s.ClientConfig = filepath.Join(s.Dir, "client.cnf")
	cfg := fmt.Sprintf("[client]\nuser=%s\npassword=%s\nhost=%s\nport=%d\nprotocol=TCP\ndefault-character-set=utf8mb4\n",
		s.AdminUser, s.AdminPassword, s.Host, s.Port)
	if err := os.WriteFile(s.ClientConfig, []byte(cfg), 0o600); err != nil {
		return fmt.Errorf("write client config: %w", err)
	}
	return nil
}

// stop terminates the server by PID: SIGTERM, then SIGKILL after a grace.
func (s *Server) stop() error {
	if s.done == nil || s.pid == 0 {
		return nil
	}
	select {
	case <-s.done:
		return nil
	default:
	}
	if err := syscall.Kill(s.pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("send SIGTERM to mariadbd (pid %d): %w", s.pid, err)
	}
	select {
	case <-s.done:
		return nil
	case <-time.After(stopGrace):
	}
	if err := syscall.Kill(s.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("send SIGKILL to mariadbd (pid %d): %w", s.pid, err)
	}
	select {
	case <-s.done:
		return fmt.Errorf("mariadbd (pid %d) ignored SIGTERM for %s and was killed", s.pid, stopGrace)
	case <-time.After(stopGrace):
		return fmt.Errorf("mariadbd (pid %d) survived SIGKILL", s.pid)
	}
}

func (s *Server) logTail() string {
	b, err := os.ReadFile(s.ErrorLog)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", s.ErrorLog, err)
	}
	return tail(string(b), 4000)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) rootDSN(db string) string {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Passwd = s.AdminPassword
	cfg.Net = "tcp"
	cfg.Addr = net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
	cfg.DBName = db
	cfg.Timeout = 2 * time.Second
	return cfg.FormatDSN()
}

// DSN returns a go-sql-driver/mysql DSN for the admin account and database
// db (which may be empty).
func (s *Server) DSN(db string) string { return s.rootDSN(db) }

// URL returns mysql://user:password@127.0.0.1:port/db.
func (s *Server) URL(db string) string {
	u := url.URL{
		Scheme: "mysql",
		User:   url.UserPassword(s.AdminUser, s.AdminPassword),
		Host:   net.JoinHostPort(s.Host, strconv.Itoa(s.Port)),
		Path:   "/" + db,
	}
	return u.String()
}

// ClientArgs returns the leading arguments for the mariadb/mysql and
// mariadb-dump/mysqldump command-line clients (they must come first).
func (s *Server) ClientArgs() []string {
	return []string{"--defaults-file=" + s.ClientConfig}
}

// DumpTo runs dumpBin (Binaries.Dump) with the client arguments and args
// (options, then the database) and writes its output to path; the error
// names the command and carries what it printed on stderr.
func (s *Server) DumpTo(ctx context.Context, dumpBin, path string, args ...string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, dumpBin, append(s.ClientArgs(), args...)...)
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = f, &stderr
	err = cmd.Run()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", dumpBin, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// Open returns a connection pool for database db, closed when t finishes.
func (s *Server) Open(t testing.TB, db string) *sql.DB {
	t.Helper()
	pool, err := sql.Open("mysql", s.DSN(db))
	if err != nil {
		t.Fatalf("mariadbtest: open %s: %v", db, err)
	}
	t.Cleanup(func() { pool.Close() })
	return pool
}

// CreateDatabase creates database name with utf8mb4 and returns its DSN.
func (s *Server) CreateDatabase(t testing.TB, name string) string {
	t.Helper()
	if err := s.CreateDB(context.Background(), name); err != nil {
		t.Fatal(err)
	}
	return s.DSN(name)
}

// CreateDB creates database name with utf8mb4 (CreateDatabase for a
// program).
func (s *Server) CreateDB(ctx context.Context, name string) error {
	return s.admin(ctx, "CREATE DATABASE "+quoteName(name)+" CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci", "create database "+name)
}

// DropDB drops database name if it exists.
func (s *Server) DropDB(ctx context.Context, name string) error {
	return s.admin(ctx, "DROP DATABASE IF EXISTS "+quoteName(name), "drop database "+name)
}

// admin runs one statement as the admin account.
func (s *Server) admin(ctx context.Context, q, what string) error {
	db, err := sql.Open("mysql", s.DSN(""))
	if err != nil {
		return fmt.Errorf("mariadbtest: %s: %w", what, err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("mariadbtest: %s: %w", what, err)
	}
	return nil
}

// quoteName quotes a database name for MariaDB.
func quoteName(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }
