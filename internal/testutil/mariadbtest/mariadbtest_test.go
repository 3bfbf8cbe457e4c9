package mariadbtest

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStartServesTCPSocketAndClients(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	s := Start(t)
	t.Logf("server %s on port %d ready in %s", s.Version, s.Port, time.Since(begin))

	if s.Host != "127.0.0.1" || s.Port <= 0 || s.AdminUser == "" || len(s.AdminPassword) < 16 {
		t.Fatalf("incomplete server description: %+v", s)
	}
	if st, err := os.Stat(s.Socket); err != nil || st.Mode()&os.ModeSocket == 0 {
		t.Fatalf("socket %s missing or not a socket: %v", s.Socket, err)
	}

	dsn := s.CreateDatabase(t, "heat")
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var name, charset string
	if err := db.QueryRow("SELECT DATABASE(), @@character_set_database").Scan(&name, &charset); err != nil {
		t.Fatalf("query through DSN: %v", err)
	}
	if name != "heat" || charset != "utf8mb4" {
		t.Fatalf("got database %q charset %q, want heat utf8mb4", name, charset)
	}

	// The empty root password set by mariadb-install-db must be gone.
	noPw := strings.Replace(s.DSN(""), ":"+s.AdminPassword+"@", "@", 1)
	if noPw == s.DSN("") {
		t.Fatalf("DSN %q does not carry the password", s.DSN(""))
	}
	anon, err := sql.Open("mysql", noPw)
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	if err := anon.Ping(); err == nil {
		t.Fatal("root without password can still log in")
	}

	u, err := url.Parse(s.URL("heat"))
	if err != nil {
		t.Fatalf("URL %q: %v", s.URL("heat"), err)
	}
	pw, _ := u.User.Password()
	if u.Scheme != "mysql" || u.Hostname() != "127.0.0.1" || u.Port() == "" || u.Path != "/heat" || u.User.Username() != s.AdminUser || pw != s.AdminPassword {
		t.Fatalf("unexpected URL %q", s.URL("heat"))
	}

	bins, err := FindBinaries()
	if err != nil {
		t.Fatal(err)
	}
	args := append(s.ClientArgs(), "-N", "-B", "-e", "SELECT CONCAT(DATABASE(), '/', CURRENT_USER())", "heat")
	out, err := exec.Command(bins.Client, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", bins.Client, args, err, out)
	}
	if got := strings.TrimSpace(string(out)); !strings.HasPrefix(got, "heat/root@") {
		t.Fatalf("client printed %q", got)
	}
}

func TestServersAreIndependentAndStopByPID(t *testing.T) {
	t.Parallel()
	a, err := startForTest(t)
	if err != nil {
		t.Fatal(err)
	}
	b := Start(t)
	if a.Port == b.Port || a.Dir == b.Dir {
		t.Fatalf("servers share port or directory: %d %d %s %s", a.Port, b.Port, a.Dir, b.Dir)
	}
	pid := a.pid
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("server pid %d not running: %v", pid, err)
	}
	if err := a.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	select {
	case <-a.done:
	default:
		t.Fatal("stop returned while the process is still running")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("pid %d still exists after stop (kill 0: %v)", pid, err)
	}
	// The other server is unaffected.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := b.Open(t, "").PingContext(ctx); err != nil {
		t.Fatalf("second server died with the first: %v", err)
	}
}

// startForTest is Start with the cleanup registered but the server returned
// for manual stopping.
func startForTest(t *testing.T) (*Server, error) {
	bins, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	s, err := start(bins)
	if s != nil {
		t.Cleanup(func() {
			if err := s.stop(); err != nil {
				t.Error(err)
			}
			os.RemoveAll(s.Dir)
		})
	}
	return s, err
}

func TestFindBinariesMissingNamesInstallCommand(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	saved := extraDirs
	extraDirs = []string{t.TempDir()}
	t.Cleanup(func() { extraDirs = saved })

	_, err := FindBinaries()
	if err == nil {
		t.Fatal("FindBinaries succeeded with an empty PATH")
	}
	for _, want := range []string{"mariadbd", "mariadb-install-db", "apt-get install -y", "mariadb-server", "mariadb-client"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestTail(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abcdef", 3, "...def"},
		{"", 1, ""},
	} {
		if got := tail(tc.in, tc.n); got != tc.want {
			t.Errorf("tail(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
