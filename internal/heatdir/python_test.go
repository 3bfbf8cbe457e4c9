package heatdir_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
)

// heatPython is the interpreter heat-all runs with (its #! line).
func heatPython(t *testing.T) string {
	t.Helper()
	heattest.RequireHeat(t)
	p, _ := exec.LookPath("heat-all")
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	fields := strings.Fields(strings.TrimPrefix(line, "#!"))
	if len(fields) == 0 {
		t.Fatalf("%s has no #! line", p)
	}
	return fields[0]
}

// The plugin, loaded the way Heat loads it (oslo.db's create_engine with
// [database] connection_parameters), pools sqlite file databases only.
func TestSQLitePoolPlugin(t *testing.T) {
	py := heatPython(t)
	dir := t.TempDir()
	hd, err := heatdir.At(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := hd.WritePythonFiles(); err != nil {
		t.Fatal(err)
	}
	for name := range heatdir.PythonFiles() {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", name, st, err)
		}
	}
	db := filepath.Join(dir, "heat.sqlite")
	script := `
import json, sys
from oslo_db.sqlalchemy import engines
from sqlalchemy import text
out = {}
for name, url, params in json.loads(sys.argv[1]):
    e = engines.create_engine(url, connection_parameters=params, max_retries=0)
    r = {"pool": type(e.pool).__name__}
    if r["pool"] == "QueuePool":
        r["overflow"] = e.pool._max_overflow
    if e.dialect.name == "sqlite":
        with e.connect() as c:
            first = c.connection.dbapi_connection
            c.execute(text("select 1"))
        with e.connect() as c:
            r["reused"] = c.connection.dbapi_connection is first
    out[name] = r
print(json.dumps(out))
`
	cases := [][3]string{
		{"file", "sqlite:///" + db, "plugin=" + heatdir.SQLitePoolPlugin},
		{"file_stock", "sqlite:///" + db, ""},
		{"memory", "sqlite://", "plugin=" + heatdir.SQLitePoolPlugin},
		{"mysql", "mysql+pymysql://heat:pw@127.0.0.1:1/heat", "plugin=" + heatdir.SQLitePoolPlugin},
	}
	arg, _ := json.Marshal(cases)
	cmd := exec.Command(py, "-c", script, string(arg))
	cmd.Env = heatdir.PythonEnv(os.Environ(), filepath.Join(dir, heatdir.PythonDir))
	b, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("%s: %v\n%s", py, err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var got map[string]map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	want := map[string]map[string]any{
		// Pooled, no overflow limit, the connection reused.
		"file": {"pool": "QueuePool", "overflow": -1.0, "reused": true},
		// SQLAlchemy 1.4's own choice, what Heat gets without the plugin.
		"file_stock": {"pool": "NullPool", "reused": false},
		// oslo.db's own choice for :memory:, untouched.
		"memory": {"pool": "StaticPool", "reused": true},
		// MySQL keeps SQLAlchemy's pool and its overflow limit.
		"mysql": {"pool": "QueuePool", "overflow": 10.0},
	}
	for name, w := range want {
		for k, v := range w {
			if got[name][k] != v {
				t.Errorf("%s: %s = %v, want %v (all: %v)", name, k, got[name][k], v, got[name])
			}
		}
	}
}

// heat.conf and heatrc tell an operator about the PYTHONPATH Heat needs.
func TestPythonPathRendered(t *testing.T) {
	c := heatdir.Config{Dir: "/srv/heat", APIPort: 8006, Database: heatdb.DB{Kind: heatdb.SQLite, Path: "/srv/heat/heat.sqlite"}, PythonPath: "/srv/heat/python"}
	if conf := string(c.RenderHeatConf()); !strings.Contains(conf, "PYTHONPATH=/srv/heat/python") {
		t.Errorf("heat.conf does not mention PYTHONPATH:\n%s", conf)
	}
	if rc := string(c.RenderHeatRC()); !strings.Contains(rc, "export PYTHONPATH='/srv/heat/python'${PYTHONPATH:+:$PYTHONPATH}") {
		t.Errorf("heatrc does not export PYTHONPATH:\n%s", rc)
	}
	c.PythonPath = ""
	if rc := string(c.RenderHeatRC()); strings.Contains(rc, "PYTHONPATH") {
		t.Errorf("heatrc exports PYTHONPATH without one:\n%s", rc)
	}
}

func TestPythonEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ []string
		want    []string
	}{
		{"empty", nil, []string{"PYTHONPATH=/h/python", "PYTHONDONTWRITEBYTECODE=1"}},
		{"kept", []string{"HOME=/root", "PATH=/usr/bin"},
			[]string{"HOME=/root", "PATH=/usr/bin", "PYTHONPATH=/h/python", "PYTHONDONTWRITEBYTECODE=1"}},
		{"prepended", []string{"PYTHONPATH=/opt/lib:/x", "LANG=C"},
			[]string{"LANG=C", "PYTHONPATH=/h/python:/opt/lib:/x", "PYTHONDONTWRITEBYTECODE=1"}},
		{"empty PYTHONPATH", []string{"PYTHONPATH="}, []string{"PYTHONPATH=/h/python", "PYTHONDONTWRITEBYTECODE=1"}},
		{"bytecode setting replaced", []string{"PYTHONDONTWRITEBYTECODE=", "A=PYTHONPATH=z"},
			[]string{"A=PYTHONPATH=z", "PYTHONPATH=/h/python", "PYTHONDONTWRITEBYTECODE=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := heatdir.PythonEnv(tc.environ, "/h/python")
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("PythonEnv(%q) = %q, want %q", tc.environ, got, tc.want)
			}
		})
	}
}
