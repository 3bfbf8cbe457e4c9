package heatconf

import (
	_ "embed"
	"path"
	"path/filepath"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// PythonDir is the directory of a heat_dir that heat-all and heat-manage
// get on their PYTHONPATH: it holds the SQLAlchemy plugin below.
const PythonDir = "python"

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

// WritePythonFiles writes PythonFiles into heatDir (directories 0700, files
// 0600, each written atomically).
func WritePythonFiles(heatDir string) error {
	if _, err := fsutil.EnsurePrivateDir(filepath.Join(heatDir, PythonDir)); err != nil {
		return err
	}
	for name, data := range PythonFiles() {
		p := filepath.Join(heatDir, filepath.FromSlash(name))
		if _, err := fsutil.EnsurePrivateDir(filepath.Dir(p)); err != nil {
			return err
		}
		if err := fsutil.WriteFileAtomic(p, data, fsutil.SecretFileMode); err != nil {
			return err
		}
	}
	return nil
}
