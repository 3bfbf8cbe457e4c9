package dumps

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dbdump"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatconf"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

func writeConf(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, heatconf.HeatConf), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestTargetPrefersHostConnection(t *testing.T) {
	// The pod's own MariaDB: Heat reaches it inside the pod, the host
	// through the port published on its loopback.
	dir := writeConf(t, `[DEFAULT]
transport_url = fake://

[database]
connection = mysql+pymysql://heat:secret@127.0.0.1:3306/heat?charset=utf8
host_connection = mysql+pymysql://heat:secret@127.0.0.1:43210/heat?charset=utf8
`)
	tg, err := Target(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Kind != dbdump.KindMySQL || tg.Addr != "127.0.0.1:43210" || tg.Database != "heat" || tg.User != "heat" {
		t.Errorf("target: %+v", tg)
	}
	if d := Describe(tg); d != "mysql://heat@127.0.0.1:43210/heat" {
		t.Errorf("describe: %s", d)
	}

	// Without it: connection.
	dir = writeConf(t, "[database]\nconnection = mysql+pymysql://heat:secret@db.example:3307/heat_x\n")
	if tg, err = Target(dir); err != nil || tg.Addr != "db.example:3307" || tg.Database != "heat_x" {
		t.Errorf("connection only: %+v %v", tg, err)
	}
	dir = writeConf(t, "[database]\nconnection = sqlite:////srv/h/heat.sqlite\n")
	if tg, err = Target(dir); err != nil || tg.Kind != dbdump.KindSQLite || tg.Path != "/srv/h/heat.sqlite" {
		t.Errorf("sqlite: %+v %v", tg, err)
	}

	// A broken host_connection is reported by name, without its password.
	dir = writeConf(t, "[database]\nconnection = sqlite:////srv/h/heat.sqlite\nhost_connection = postgresql://heat:secret@h/heat\n")
	_, err = Target(dir)
	if err == nil || !strings.Contains(err.Error(), "host_connection") || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad host_connection: %v", err)
	}
	dir = writeConf(t, "[database]\n")
	if _, err = Target(dir); err == nil || !strings.Contains(err.Error(), "no [database] connection") {
		t.Errorf("no connection: %v", err)
	}
}

// A stopped pod's MariaDB (nothing listens on its published port): dump and
// restore say to start Heat first, not only "connection refused".
func TestDatabaseServerDown(t *testing.T) {
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := writeConf(t, fmt.Sprintf("[database]\nconnection = mysql+pymysql://heat:secret@127.0.0.1:3306/heat\n"+
		"host_connection = mysql+pymysql://heat:secret@127.0.0.1:%d/heat\n", port))
	_, err = Dump(context.Background(), DumpOptions{HeatDir: dir})
	if err == nil || !strings.Contains(err.Error(), "not running") || !strings.Contains(err.Error(), "start Heat first") ||
		strings.Contains(err.Error(), "secret") {
		t.Errorf("dump with the database down: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed dump left files: %v", entries)
	}
}
