package heatdir

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
)

func writeConf(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, HeatConf), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func mustAt(t *testing.T, p string) Dir {
	t.Helper()
	d, err := At(p)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDatabasePrefersHostConnection(t *testing.T) {
	// The pod's own MariaDB: Heat reaches it inside the pod, the host
	// through the port published on its loopback.
	dir := writeConf(t, `[DEFAULT]
transport_url = fake://

[database]
connection = mysql+pymysql://heat:secret@127.0.0.1:3306/heat?charset=utf8
host_connection = mysql+pymysql://heat:secret@127.0.0.1:43210/heat?charset=utf8
`)
	tg, err := mustAt(t, dir).Database()
	if err != nil {
		t.Fatal(err)
	}
	if tg.Kind != heatdb.MySQL || !tg.Published || tg.Addr != "127.0.0.1:43210" || tg.Database != "heat" || tg.User != "heat" {
		t.Errorf("target: %+v", tg)
	}
	if d := tg.String(); d != "mysql://heat@127.0.0.1:43210/heat" {
		t.Errorf("describe: %s", d)
	}

	// Without it: connection.
	dir = writeConf(t, "[database]\nconnection = mysql+pymysql://heat:secret@db.example:3307/heat_x\n")
	if tg, err = mustAt(t, dir).Database(); err != nil || tg.Addr != "db.example:3307" || tg.Database != "heat_x" {
		t.Errorf("connection only: %+v %v", tg, err)
	}
	dir = writeConf(t, "[database]\nconnection = sqlite:////srv/h/heat.sqlite\n")
	if tg, err = mustAt(t, dir).Database(); err != nil || tg.Kind != heatdb.SQLite || tg.Published || tg.Path != "/srv/h/heat.sqlite" {
		t.Errorf("sqlite: %+v %v", tg, err)
	}

	// A broken host_connection is reported by name, without its password.
	dir = writeConf(t, "[database]\nconnection = sqlite:////srv/h/heat.sqlite\nhost_connection = postgresql://heat:secret@h/heat\n")
	_, err = mustAt(t, dir).Database()
	if err == nil || !strings.Contains(err.Error(), "host_connection") || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad host_connection: %v", err)
	}
	dir = writeConf(t, "[database]\n")
	if _, err = mustAt(t, dir).Database(); err == nil || !strings.Contains(err.Error(), "no [database] connection") {
		t.Errorf("no connection: %v", err)
	}
}

// What Config writes into [database], Database reads back: the one writer
// and the one reader of that section.
func TestConfigDatabaseRoundTrip(t *testing.T) {
	d := mustAt(t, t.TempDir())
	inPod := heatdb.DB{Kind: heatdb.MySQL, User: "heat", Password: "pw", Net: "tcp", Addr: "127.0.0.1:3306", Database: "heat"}
	host := inPod
	host.Addr = "127.0.0.1:41234"
	for _, tc := range []struct {
		cfg       Config
		want      heatdb.DB
		published bool
	}{
		{Config{Database: heatdb.DB{Kind: heatdb.SQLite, Path: d.File(SQLiteFile)}}, heatdb.DB{Kind: heatdb.SQLite, Path: d.File(SQLiteFile)}, false},
		{Config{Database: inPod}, inPod, false},
		{Config{Database: inPod, HostDatabase: &host}, host, true},
	} {
		tc.cfg.Dir, tc.cfg.APIPort = d.Path(), 8006
		if err := d.WriteConfig(tc.cfg); err != nil {
			t.Fatal(err)
		}
		got, err := d.Database()
		got.IgnoredParams = nil
		if err != nil || !reflect.DeepEqual(got.DB, tc.want) || got.Published != tc.published {
			t.Errorf("wrote %+v, read %+v %v", tc.cfg.Database, got, err)
		}
	}
}
