package heatdir

import (
	_ "embed"
	"path"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// SQLitePoolPlugin is the name of our SQLAlchemy engine plugin, which gives a
// sqlite file database a connection pool (see python/*.py). heat.conf names
// it in [database] connection_parameters as "plugin=" + SQLitePoolPlugin.
const SQLitePoolPlugin = "ephemeral_heat_sqlite_pool"

//go:embed python/ephemeral_heat_sqlite_pool.py
var sqlitePoolSource []byte

// PythonFiles returns the files of PythonDir, by path relative to the
// heat_dir: the plugin module and the distribution metadata through which
// SQLAlchemy finds its entry point.
func PythonFiles() map[string][]byte {
	dist := path.Join(PythonDir, SQLitePoolPlugin+"-1.0.dist-info")
	return map[string][]byte{
		path.Join(PythonDir, SQLitePoolPlugin+".py"): sqlitePoolSource,
		path.Join(dist, "METADATA"): []byte("Metadata-Version: 2.1\nName: " + SQLitePoolPlugin + "\nVersion: 1.0\n" +
			"Summary: ephemeral.heat: a connection pool for Heat's sqlite database\n"),
		path.Join(dist, "entry_points.txt"): []byte("[sqlalchemy.plugins]\n" + SQLitePoolPlugin + " = " +
			SQLitePoolPlugin + ":SQLitePool\n"),
	}
}

// WritePythonFiles writes PythonFiles into the heat_dir (directories 0700,
// files 0600, each written atomically).
func (d Dir) WritePythonFiles() error {
	if err := d.EnsureSub(PythonDir); err != nil {
		return err
	}
	for name, data := range PythonFiles() {
		p := d.File(name)
		if err := d.EnsureSub(path.Dir(name)); err != nil {
			return err
		}
		if err := fsutil.WriteFileAtomic(p, data, fsutil.SecretFileMode); err != nil {
			return err
		}
	}
	return nil
}

// PythonEnvVars are the environment variables, in order, with which heat-all
// and heat-manage find the files of pythonDir (a heat_dir's PythonDir): it
// goes first on PYTHONPATH, and Python writes no bytecode beside it. A
// container's shell script exports them; a process started from Go gets
// them through PythonEnv.
func PythonEnvVars(pythonDir string) [][2]string {
	return [][2]string{{"PYTHONPATH", pythonDir}, {"PYTHONDONTWRITEBYTECODE", "1"}}
}

// PythonEnv returns environ with PythonEnvVars(pythonDir) set: pythonDir is
// put before any PYTHONPATH environ already has, other variables are kept.
func PythonEnv(environ []string, pythonDir string) []string {
	vars := PythonEnvVars(pythonDir)
	env := make([]string, 0, len(environ)+len(vars))
	old := ""
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		switch name {
		case "PYTHONPATH":
			old = value
			continue
		case "PYTHONDONTWRITEBYTECODE":
			continue
		}
		env = append(env, kv)
	}
	for _, v := range vars {
		if v[0] == "PYTHONPATH" && old != "" {
			v[1] += ":" + old
		}
		env = append(env, v[0]+"="+v[1])
	}
	return env
}
