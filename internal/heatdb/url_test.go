package heatdb

import (
	"reflect"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		url     string
		want    DB
		wantCfg *mysql.Config // checked field by field when set
		wantErr string
	}{
		{
			name: "sqlite absolute",
			url:  "sqlite:////var/lib/heat/heat.sqlite",
			want: DB{Kind: SQLite, Path: "/var/lib/heat/heat.sqlite"},
		},
		{
			name: "sqlite with query and escapes",
			url:  "sqlite:////var/lib/heat%20db/heat.sqlite?check_same_thread=False",
			want: DB{Kind: SQLite, Path: "/var/lib/heat db/heat.sqlite", IgnoredParams: []string{"check_same_thread"}},
		},
		{
			name: "sqlite driver suffix",
			url:  "sqlite+pysqlite:////tmp/x.db",
			want: DB{Kind: SQLite, Path: "/tmp/x.db"},
		},
		{name: "sqlite relative", url: "sqlite:///heat.db", wantErr: "relative"},
		{name: "sqlite memory", url: "sqlite://", wantErr: "in-memory"},
		{name: "sqlite memory explicit", url: "sqlite:///:memory:", wantErr: "in-memory"},
		{
			name:    "pymysql with charset",
			url:     "mysql+pymysql://heat:s3cr%40t@db.example.com:3307/heat?charset=utf8",
			want:    DB{Kind: MySQL, Database: "heat", User: "heat", Net: "tcp", Addr: "db.example.com:3307", IgnoredParams: []string{"charset"}},
			wantCfg: &mysql.Config{User: "heat", Passwd: "s3cr@t", Net: "tcp", Addr: "db.example.com:3307", DBName: "heat"},
		},
		{
			name:    "plain mysql default port and host",
			url:     "mysql://root@/heat",
			want:    DB{Kind: MySQL, Database: "heat", User: "root", Net: "tcp", Addr: "localhost:3306"},
			wantCfg: &mysql.Config{User: "root", Net: "tcp", Addr: "localhost:3306", DBName: "heat"},
		},
		{
			name:    "mariadb ipv6 with unix socket and devstack plugin",
			url:     "mariadb+pymysql://heat:pw@[::1]:3306/heat?unix_socket=/run/mysqld/mysqld.sock&plugin=dbcounter",
			want:    DB{Kind: MySQL, Database: "heat", User: "heat", Net: "unix", Addr: "/run/mysqld/mysqld.sock", IgnoredParams: []string{"plugin"}},
			wantCfg: &mysql.Config{User: "heat", Passwd: "pw", Net: "unix", Addr: "/run/mysqld/mysqld.sock", DBName: "heat"},
		},
		{
			name:    "password with at sign unescaped",
			url:     "mysql+pymysql://heat:p@ss@127.0.0.1/heat",
			want:    DB{Kind: MySQL, Database: "heat", User: "heat", Net: "tcp", Addr: "127.0.0.1:3306"},
			wantCfg: &mysql.Config{User: "heat", Passwd: "p@ss", Net: "tcp", Addr: "127.0.0.1:3306", DBName: "heat"},
		},
		{name: "no database", url: "mysql+pymysql://heat:pw@host/", wantErr: "database name"},
		{name: "bad port", url: "mysql://heat:pw@host:99999/heat", wantErr: "port"},
		{name: "postgres", url: "postgresql://heat:pw@host/heat", wantErr: "unsupported dialect"},
		{name: "no scheme", url: "/var/lib/heat.db", wantErr: "missing scheme"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.url)
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
			dsn := ""
			if got.Kind == MySQL {
				dsn = got.DSN()
			}
			got.Password = ""
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

func TestParseAdmin(t *testing.T) {
	tests := []struct {
		in      string
		want    DB
		wantErr string
	}{
		{"mysql://root:pw@127.0.0.1:3307/", DB{Kind: MySQL, User: "root", Password: "pw", Net: "tcp", Addr: "127.0.0.1:3307"}, ""},
		{"mysql+pymysql://heat:x@db.example/heat?charset=utf8",
			DB{Kind: MySQL, User: "heat", Password: "x", Net: "tcp", Addr: "db.example:3306", Database: "heat", IgnoredParams: []string{"charset"}}, ""},
		{"mysql://[::1]:3306/h", DB{}, "no user name"},
		{"postgres://u:pw@h/", DB{}, "must start with mysql://"},
		{"mysql://u:pw@h:bad/", DB{}, "invalid port"},
		{"mysql://u:pw@h/a/b", DB{}, "more than one database"},
		{"root:pw@127.0.0.1", DB{}, "must start with mysql://"},
	}
	for _, tc := range tests {
		got, err := ParseAdmin(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err %v, want %q", tc.in, err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "pw@") {
				t.Errorf("%s: error leaks credentials: %v", tc.in, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v %v", tc.in, got, err)
		}
	}
}

// URL writes what Parse reads back, for every kind heat.conf holds.
func TestURLRoundTrip(t *testing.T) {
	for _, d := range []DB{
		{Kind: SQLite, Path: "/srv/heat dir/heat.sqlite"},
		{Kind: MySQL, User: "heat_1", Password: "p@ss:w/rd", Net: "tcp", Addr: "127.0.0.1:3306", Database: "heat_1"},
		{Kind: MySQL, User: "heat", Password: "x", Net: "tcp", Addr: "[::1]:3307", Database: "heat"},
		{Kind: MySQL, User: "heat", Password: "x", Net: "unix", Addr: "/run/mysqld/mysqld.sock", Database: "heat"},
	} {
		got, err := Parse(d.URL())
		if err != nil {
			t.Errorf("%s: %v", d.URL(), err)
			continue
		}
		got.IgnoredParams = nil
		if !reflect.DeepEqual(got, d) {
			t.Errorf("%s parses to %+v, want %+v", d.URL(), got, d)
		}
		if strings.Contains(d.String(), "x@") || (d.Password != "" && strings.Contains(d.String(), d.Password)) {
			t.Errorf("String() shows the password: %s", d)
		}
	}
}
