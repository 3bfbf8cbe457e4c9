package dbdump

import (
	"reflect"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestParseHeatConnection(t *testing.T) {
	tests := []struct {
		name    string
		url     string
		want    Target
		wantCfg *mysql.Config // checked field by field when set
		wantErr string
	}{
		{
			name: "sqlite absolute",
			url:  "sqlite:////var/lib/heat/heat.sqlite",
			want: Target{Kind: KindSQLite, Path: "/var/lib/heat/heat.sqlite"},
		},
		{
			name: "sqlite with query and escapes",
			url:  "sqlite:////var/lib/heat%20db/heat.sqlite?check_same_thread=False",
			want: Target{Kind: KindSQLite, Path: "/var/lib/heat db/heat.sqlite", IgnoredParams: []string{"check_same_thread"}},
		},
		{
			name: "sqlite driver suffix",
			url:  "sqlite+pysqlite:////tmp/x.db",
			want: Target{Kind: KindSQLite, Path: "/tmp/x.db"},
		},
		{name: "sqlite relative", url: "sqlite:///heat.db", wantErr: "relative"},
		{name: "sqlite memory", url: "sqlite://", wantErr: "in-memory"},
		{name: "sqlite memory explicit", url: "sqlite:///:memory:", wantErr: "in-memory"},
		{
			name:    "pymysql with charset",
			url:     "mysql+pymysql://heat:s3cr%40t@db.example.com:3307/heat?charset=utf8",
			want:    Target{Kind: KindMySQL, Database: "heat", User: "heat", Net: "tcp", Addr: "db.example.com:3307", IgnoredParams: []string{"charset"}},
			wantCfg: &mysql.Config{User: "heat", Passwd: "s3cr@t", Net: "tcp", Addr: "db.example.com:3307", DBName: "heat"},
		},
		{
			name:    "plain mysql default port and host",
			url:     "mysql://root@/heat",
			want:    Target{Kind: KindMySQL, Database: "heat", User: "root", Net: "tcp", Addr: "localhost:3306"},
			wantCfg: &mysql.Config{User: "root", Net: "tcp", Addr: "localhost:3306", DBName: "heat"},
		},
		{
			name:    "mariadb ipv6 with unix socket and devstack plugin",
			url:     "mariadb+pymysql://heat:pw@[::1]:3306/heat?unix_socket=/run/mysqld/mysqld.sock&plugin=dbcounter",
			want:    Target{Kind: KindMySQL, Database: "heat", User: "heat", Net: "unix", Addr: "/run/mysqld/mysqld.sock", IgnoredParams: []string{"plugin"}},
			wantCfg: &mysql.Config{User: "heat", Passwd: "pw", Net: "unix", Addr: "/run/mysqld/mysqld.sock", DBName: "heat"},
		},
		{
			name:    "password with at sign unescaped",
			url:     "mysql+pymysql://heat:p@ss@127.0.0.1/heat",
			want:    Target{Kind: KindMySQL, Database: "heat", User: "heat", Net: "tcp", Addr: "127.0.0.1:3306"},
			wantCfg: &mysql.Config{User: "heat", Passwd: "p@ss", Net: "tcp", Addr: "127.0.0.1:3306", DBName: "heat"},
		},
		{name: "no database", url: "mysql+pymysql://heat:pw@host/", wantErr: "database name"},
		{name: "bad port", url: "mysql://heat:pw@host:99999/heat", wantErr: "port"},
		{name: "postgres", url: "postgresql://heat:pw@host/heat", wantErr: "unsupported dialect"},
		{name: "no scheme", url: "/var/lib/heat.db", wantErr: "missing scheme"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseHeatConnection(tc.url)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "pw@") {
					t.Errorf("error leaks the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			dsn := got.DSN
			got.DSN = ""
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
			if tc.wantCfg == nil {
				if dsn != "" {
					t.Errorf("unexpected DSN %q", dsn)
				}
				return
			}
			cfg, err := mysql.ParseDSN(dsn)
			if err != nil {
				t.Fatalf("DSN %q does not parse: %v", dsn, err)
			}
			if cfg.User != tc.wantCfg.User || cfg.Passwd != tc.wantCfg.Passwd || cfg.Net != tc.wantCfg.Net ||
				cfg.Addr != tc.wantCfg.Addr || cfg.DBName != tc.wantCfg.DBName {
				t.Errorf("DSN %q parses to user=%q pw=%q net=%q addr=%q db=%q", dsn, cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"mysql://heat:secret@host/heat":     "mysql://heat:xxxxx@host/heat",
		"mysql://heat@host/heat":            "mysql://heat@host/heat",
		"mysql://heat:p@ss@host/heat?x=a@b": "mysql://heat:xxxxx@host/heat?x=a@b",
		"sqlite:////tmp/x":                  "sqlite:////tmp/x",
		"no-scheme":                         "no-scheme",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
