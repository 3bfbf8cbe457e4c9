package dumps

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

func writeConf(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, heatdir.HeatConf), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
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
	_, err = Dump(context.Background(), DumpOptions{HeatDir: hdir(dir)})
	if err == nil || !strings.Contains(err.Error(), "not running") || !strings.Contains(err.Error(), "start Heat first") ||
		strings.Contains(err.Error(), "secret") {
		t.Errorf("dump with the database down: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed dump left files: %v", entries)
	}
}

// hdir is the heat_dir at dir (the zero Dir, which Dump and Restore refuse,
// when dir is not absolute).
func hdir(dir string) heatdir.Dir {
	d, _ := heatdir.At(dir)
	return d
}

func TestHeatDirRequired(t *testing.T) {
	if _, err := Dump(context.Background(), DumpOptions{}); err == nil || !strings.Contains(err.Error(), "heat_dir is required") {
		t.Errorf("dump without a heat_dir: %v", err)
	}
	if _, err := Restore(context.Background(), RestoreOptions{Dump: "/nonexistent"}); err == nil || !strings.Contains(err.Error(), "heat_dir is required") {
		t.Errorf("restore without a heat_dir: %v", err)
	}
}
