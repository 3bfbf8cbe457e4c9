// Package tripleotest makes Heat database dumps the way python-tripleoclient
// makes them, for the tests of their adoption.
//
// Facts, from python-tripleoclient stable/wallaby (f3599d06), file
// tripleoclient/heat_launcher.py:
//   - HeatPodLauncher.do_backup_db runs `mysqldump heat` (no options) in the
//     undercloud's mysql container, stdout to <heat_dir>/heat-db.sql;
//   - HeatBaseLauncher.tar_file then writes
//     '{}-{}{}'.format(file_path, self.timestamp, '.tar.bzip2') with
//     tarfile.open(name, 'w:bz2') and tf.add(file_path, basename(file_path)),
//     and deletes heat-db.sql; self.timestamp is time.time() taken when the
//     launcher was created;
//   - heat_dir is os.path.join(working_dir, 'heat-launcher') (v1/overcloud_deploy.py
//     setup_ephemeral_heat), the working dir ~/overcloud-deploy/<stack>
//     (utils.get_default_working_dir).
//
// TarFile runs Python's own tarfile module with those calls, so the archive
// is the one tripleoclient writes.
package tripleotest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/mariadbtest"
)

// Tar formats of Python's tarfile: PAX is the default since Python 3.8
// (CentOS Stream 9's tripleoclient), GNU before (CentOS 8's python 3.6).
const (
	PAX = "PAX"
	GNU = "GNU"
)

const tarFile = `
import os, sys, tarfile, time
file_path, stamp, fmt = sys.argv[1:4]
timestamp = float(stamp) if stamp else time.time()
tf_name = '{}-{}{}'.format(file_path, timestamp, '.tar.bzip2')
tf = tarfile.open(tf_name, 'w:bz2', format=getattr(tarfile, fmt + '_FORMAT'))
tf.add(file_path, os.path.basename(file_path))
tf.close()
os.unlink(file_path)
print(tf_name)
`

// Python returns the system's python3 (tripleoclient runs on the
// distribution's Python; a pyenv shim on PATH also costs a second a call),
// else the first python3 on PATH; it fails the test when there is none.
func Python(t testing.TB) string {
	t.Helper()
	if fi, err := os.Stat("/usr/bin/python3"); err == nil && !fi.IsDir() {
		return "/usr/bin/python3"
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed to write dumps as tripleoclient does: apt-get install -y python3")
	}
	return py
}

// TarFile turns sqlPath (named heat-db.sql) into tripleoclient's
// "<sqlPath>-<stamp>.tar.bzip2" and removes sqlPath, as tar_file does.
// stamp is the float text of time.time() ("" for now); format is PAX or
// GNU. It returns the archive's path.
func TarFile(t testing.TB, sqlPath, stamp, format string) string {
	t.Helper()
	out, err := exec.Command(Python(t), "-c", tarFile, sqlPath, stamp, format).CombinedOutput()
	if err != nil {
		t.Fatalf("tarfile as tripleoclient: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// DumpHeat dumps database db of srv as tripleoclient does: `mysqldump db`
// into heatDir/heat-db.sql, then TarFile. It returns the archive's path.
func DumpHeat(t testing.TB, srv *mariadbtest.Server, db, heatDir, stamp, format string) string {
	t.Helper()
	bins, err := mariadbtest.FindBinaries()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(heatDir, 0o755); err != nil {
		t.Fatal(err)
	}
	sqlPath := filepath.Join(heatDir, "heat-db.sql")
	if err := srv.DumpTo(context.Background(), bins.Dump, sqlPath, db); err != nil {
		t.Fatal(err)
	}
	return TarFile(t, sqlPath, stamp, format)
}
