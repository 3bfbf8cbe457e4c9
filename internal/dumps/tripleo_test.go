package dumps

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/tripleotest"
)

// heatSQL is mysqldump output of a small Heat database (Heat's own table
// definitions, as MariaDB prints them).
const heatSQL = "/*!40101 SET NAMES utf8 */;\n" +
	"DROP TABLE IF EXISTS `stack`;\n" +
	"CREATE TABLE `stack` (\n  `id` varchar(36) NOT NULL,\n  `created_at` datetime DEFAULT NULL,\n  `deleted_at` datetime DEFAULT NULL,\n" +
	"  `name` varchar(255) DEFAULT NULL,\n  `owner_id` varchar(36) DEFAULT NULL,\n  `action` varchar(255) DEFAULT NULL,\n  `status` varchar(255) DEFAULT NULL,\n" +
	"  `disable_rollback` tinyint(1) NOT NULL,\n  PRIMARY KEY (`id`),\n  KEY `ix_stack_name` (`name`),\n  KEY `ix_stack_owner_id` (`owner_id`)\n" +
	") ENGINE=InnoDB DEFAULT CHARSET=utf8;\n" +
	"LOCK TABLES `stack` WRITE;\n/*!40000 ALTER TABLE `stack` DISABLE KEYS */;\n" +
	"INSERT INTO `stack` VALUES ('s1','2024-02-29 12:34:56',NULL,'overcloud',NULL,'CREATE','COMPLETE',1)," +
	"('s2','2024-02-29 12:35:00',NULL,'overcloud-Controller-x','s1','CREATE','COMPLETE',1),('s3','2024-02-29 12:00:00','2024-02-29 12:10:00','old',NULL,'DELETE','COMPLETE',1);\n" +
	"/*!40000 ALTER TABLE `stack` ENABLE KEYS */;\nUNLOCK TABLES;\n" +
	"CREATE TABLE `event` (\n  `id` int(11) NOT NULL AUTO_INCREMENT,\n  `stack_id` varchar(36) NOT NULL,\n  `resource_status_reason` varchar(255) DEFAULT NULL,\n" +
	"  PRIMARY KEY (`id`),\n  KEY `stack_id` (`stack_id`),\n  CONSTRAINT `event_ibfk_1` FOREIGN KEY (`stack_id`) REFERENCES `stack` (`id`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8;\n" +
	"INSERT INTO `event` VALUES (1,'s1','state changed'),(2,'s2','it\\'s \\\"done\\\"\\n');\n" +
	"/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;\n\n-- Dump completed on 2024-02-29 12:40:00\n"

var wantStacks = []Stack{{ID: "s1", Name: "overcloud", Status: "CREATE_COMPLETE"}}

// tripleoDump writes sql as tripleoclient's dump in dir, named with stamp.
func tripleoDump(t *testing.T, dir, sql, stamp, format string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "heat-db.sql")
	if err := os.WriteFile(p, []byte(sql), 0o644); err != nil {
		t.Fatal(err)
	}
	return tripleotest.TarFile(t, p, stamp, format)
}

// python runs a Python snippet with args (for archives tripleoclient would
// not write).
func python(t *testing.T, code string, args ...string) {
	t.Helper()
	if out, err := exec.Command(tripleotest.Python(t), append([]string{"-c", code}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
}

func TestCheckTripleO(t *testing.T) {
	t.Parallel()
	for _, format := range []string{tripleotest.PAX, tripleotest.GNU} {
		dir := t.TempDir()
		p := tripleoDump(t, dir, heatSQL, "1700000000.1234567", format)
		if filepath.Base(p) != "heat-db.sql-1700000000.1234567.tar.bzip2" {
			t.Fatalf("tripleoclient's name: %s", p)
		}
		d, err := CheckTripleO(p)
		if err != nil {
			t.Fatalf("%s format: %v", format, err)
		}
		sum, size, _ := fileSHA256(p)
		if d.SHA256 != sum || d.Size != size || d.SQLSize != int64(len(heatSQL)) || !reflect.DeepEqual(d.Stacks, wantStacks) ||
			d.SQL.TableRows["stack"] != 3 || d.SQL.TableRows["event"] != 2 {
			t.Errorf("%s format: %+v", format, d)
		}
	}

	good := tripleoDump(t, t.TempDir(), heatSQL, "1700000000.5", tripleotest.PAX)
	archive, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(t *testing.T, b []byte) string {
		p := filepath.Join(t.TempDir(), "heat-db.sql-1700000000.5.tar.bzip2")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		make func(t *testing.T) string
		want string
	}{
		{"truncated archive", func(t *testing.T) string { return write(t, archive[:len(archive)/2]) }, "it ends too early (truncated"},
		{"cut in the last bytes", func(t *testing.T) string { return write(t, archive[:len(archive)-3]) }, "it ends too early (truncated"},
		{"block CRC mismatch", func(t *testing.T) string {
			// After "BZh9" and the block magic 314159265359 comes the block's CRC.
			b := bytes.Clone(archive)
			b[10] ^= 0xff
			return write(t, b)
		}, "its bzip2 data is corrupt"},
		{"bytes after the stream", func(t *testing.T) string { return write(t, append(bytes.Clone(archive), "garbage"...)) }, "bzip2 data is invalid"},
		{"empty file", func(t *testing.T) string { return write(t, nil) }, "it is not bzip2-compressed"},
		{"gzip tar", func(t *testing.T) string {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(archive)
			zw.Close()
			return write(t, buf.Bytes())
		}, "it is not bzip2-compressed"},
		{"bzip2 of the bare SQL", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "heat-db.sql-1.tar.bzip2")
			python(t, "import bz2,sys; open(sys.argv[1],'wb').write(bz2.compress(sys.argv[2].encode()))", p, heatSQL)
			return p
		}, "it is bzip2 data but not a tar archive"},
		{"another member name", func(t *testing.T) string {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "dump.sql"), []byte(heatSQL), 0o644)
			p := filepath.Join(dir, "heat-db.sql-1.tar.bzip2")
			python(t, "import tarfile,sys; tf=tarfile.open(sys.argv[1],'w:bz2'); tf.add(sys.argv[2],'dump.sql'); tf.close()", p, filepath.Join(dir, "dump.sql"))
			return p
		}, `its tar archive holds "dump.sql" (type 0), where a tripleoclient dump holds exactly the regular file heat-db.sql`},
		{"a second member", func(t *testing.T) string {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "heat-db.sql"), []byte(heatSQL), 0o644)
			p := filepath.Join(dir, "heat-db.sql-1.tar.bzip2")
			python(t, "import tarfile,sys; tf=tarfile.open(sys.argv[1],'w:bz2'); tf.add(sys.argv[2],'heat-db.sql'); tf.add(sys.argv[2],'extra.sql'); tf.close()", p, filepath.Join(dir, "heat-db.sql"))
			return p
		}, `its tar archive holds "extra.sql" after heat-db.sql`},
		{"a directory member", func(t *testing.T) string {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, "heat-db.sql"), 0o755)
			p := filepath.Join(dir, "heat-db.sql-1.tar.bzip2")
			python(t, "import tarfile,sys; tf=tarfile.open(sys.argv[1],'w:bz2'); tf.add(sys.argv[2],'heat-db.sql'); tf.close()", p, filepath.Join(dir, "heat-db.sql"))
			return p
		}, `holds "heat-db.sql/" (type 5)`},
		{"dump cut at a statement end", func(t *testing.T) string {
			return tripleoDump(t, t.TempDir(), heatSQL[:strings.Index(heatSQL, "CREATE TABLE `event`")], "1", tripleotest.PAX)
		}, `heat-db.sql does not end with mysqldump's "-- Dump completed" line (last line: "UNLOCK TABLES;"): the dump was cut short`},
		{"dump cut inside a row", func(t *testing.T) string {
			return tripleoDump(t, t.TempDir(), heatSQL[:strings.Index(heatSQL, "'overcloud-Controller")+5], "1", tripleotest.PAX)
		}, "heat-db.sql is not a complete MySQL dump: reading the MySQL dump: line 18: unterminated '-quoted string"},
		{"not a Heat database", func(t *testing.T) string {
			return tripleoDump(t, t.TempDir(), "CREATE TABLE `instances` (`id` int);\nINSERT INTO `instances` VALUES (1);\n-- Dump completed\n", "1", tripleotest.PAX)
		}, "heat-db.sql holds no Heat database (no stack table; tables: instances)"},
		{"not SQL", func(t *testing.T) string {
			return tripleoDump(t, t.TempDir(), "hello world\n-- Dump completed\n", "1", tripleotest.PAX)
		}, "heat-db.sql is not a complete MySQL dump"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.make(t)
			_, err := CheckTripleO(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "refusing "+p+": not a complete tripleoclient Heat dump: ") {
				t.Fatalf("error = %v\nwant %q", err, tc.want)
			}
		})
	}

	fifo := filepath.Join(t.TempDir(), "heat-db.sql-1.tar.bzip2")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckTripleO(fifo); err == nil || !strings.Contains(err.Error(), "is a FIFO (named pipe), not a regular file") {
		t.Errorf("FIFO: %v", err)
	}
}

func TestTripleOStampAndCandidates(t *testing.T) {
	for _, tc := range []struct {
		name string
		want time.Time
		ok   bool
	}{
		{"heat-db.sql-1700000000.1234567.tar.bzip2", time.Unix(1700000000, 123456700).UTC(), true},
		{"heat-db.sql-1700000000.5.tar.bzip2", time.Unix(1700000000, 500000000).UTC(), true},
		{"heat-db.sql-1700000000.tar.bzip2", time.Unix(1700000000, 0).UTC(), true},
		{"heat-db.sql-backup.tar.bzip2", time.Time{}, false},
		{"heat-db.sql-1700000000.5.tar.bz2", time.Time{}, false},
		{"heat-db.sql-.tar.bzip2", time.Time{}, false},
	} {
		got, ok := tripleoStamp(tc.name)
		if ok != tc.ok || !got.Equal(tc.want) {
			t.Errorf("%s: %v %v, want %v %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}

	// Ours and tripleoclient's, ordered together by the time their names carry.
	dir := t.TempDir()
	names := []string{
		"heat-db-20231114T221320.000000Z.sql.gz",  // 1700000000 + 0
		"heat-db.sql-1700000001.25.tar.bzip2",     // one second later: tripleoclient's
		"heat-db-20231114T221322.000000Z.sql.gz",  // two seconds later: ours
		"heat-db.sql-1700000002.tar.bzip2",        // the same second as ours
		"heat-db.sql-1699999999.999999.tar.bzip2", // oldest
		"heat-db.sql-hand-renamed.tar.bzip2",      // no time: last
		"heat-db.sql-1700000009.tar.bzip2.sha256", // not a dump
		"heat-db.sql", // tripleoclient's unpacked SQL: not a dump name
		"heat-db-20231114T221329.000000Z.sql.gz.tmp", // not a dump
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(dir, "heat-db.sql-1800000000.tar.bzip2"), 0o700) // a directory is no dump
	got, err := Candidates(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	want := []string{"heat-db-20231114T221322.000000Z.sql.gz", "heat-db.sql-1700000002.tar.bzip2", "heat-db.sql-1700000001.25.tar.bzip2",
		"heat-db-20231114T221320.000000Z.sql.gz", "heat-db.sql-1699999999.999999.tar.bzip2", "heat-db.sql-hand-renamed.tar.bzip2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("candidates:\n%q\nwant\n%q", got, want)
	}
	if n, _ := Newest(dir); filepath.Base(n) != want[0] {
		t.Errorf("newest %s", n)
	}
	// Rotation and our own listing never see tripleoclient's dumps.
	ours, _ := List(dir)
	if len(ours) != 2 {
		t.Errorf("List: %v", ours)
	}
}

// dirState is what must not change in a directory adoption only reads:
// every entry's name, mode, size, modification and change time.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		lines = append(lines, fmt.Sprintf("%s %v %d %d %d.%d", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), st.Ctim.Sec, st.Ctim.Nsec))
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func sqliteConfDir(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "heat.sqlite")
	if err := os.WriteFile(filepath.Join(dir, "heat.conf"), []byte("[database]\nconnection = sqlite:///"+db+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, db
}

func TestRestoreTripleODump(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// A tripleoclient working dir: ~/overcloud-deploy/overcloud/heat-launcher, 0755, files 0644.
	work := filepath.Join(t.TempDir(), "overcloud-deploy", "overcloud")
	launcher := filepath.Join(work, "heat-launcher")
	older := tripleoDump(t, launcher, strings.Replace(heatSQL, "'overcloud'", "'older'", 1), "1700000000.1", tripleotest.PAX)
	newest := tripleoDump(t, launcher, heatSQL, "1700000100.2", tripleotest.GNU)
	os.Chmod(older, 0o644)
	os.Chmod(newest, 0o644)
	for _, d := range []string{launcher, work} {
		os.Chmod(d, 0o755)
	}
	before := dirState(t, work)

	heatDir, dbPath := sqliteConfDir(t)
	var warnings []string
	warn := func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }

	// Check mode: checked, nothing copied or loaded.
	r, err := Restore(ctx, RestoreOptions{HeatDir: hdir(heatDir), Dump: work, CheckMode: true, Warn: warn})
	if err != nil || !r.Changed || !strings.Contains(r.Msg, "would copy "+newest+" into "+heatDir) {
		t.Fatalf("check mode: %+v %v", r, err)
	}
	if ents, _ := os.ReadDir(heatDir); len(ents) != 1 {
		t.Fatalf("check mode wrote into heat_dir: %v", ents)
	}

	// The working dir stands for its newest dump; it is copied, then loaded.
	warnings = nil
	r, err = Restore(ctx, RestoreOptions{HeatDir: hdir(heatDir), Dump: work, Warn: warn})
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(heatDir, filepath.Base(newest))
	if !r.Changed || r.Path != copied || r.CopiedFrom != newest || !reflect.DeepEqual(r.Stacks, wantStacks) || r.Tables != 2 || r.Rows != 5 {
		t.Errorf("restore: %+v", r)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "it carries no checksum") {
		t.Errorf("warnings: %q", warnings)
	}
	if fi, err := os.Stat(copied); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the copy: %v %v", fi, err)
	}
	if a, _, _ := fileSHA256(copied); a != r.SHA256 {
		t.Errorf("the copy's sha256 %s, result %s", a, r.SHA256)
	}
	if after := dirState(t, work); after != before {
		t.Errorf("the tripleoclient working dir changed:\n%s\nwas\n%s", after, before)
	}
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var reason, created string
	if err := db.QueryRow("SELECT resource_status_reason FROM event WHERE id = 2").Scan(&reason); err != nil || reason != "it's \"done\"\n" {
		t.Errorf("event 2: %q %v", reason, err)
	}
	if err := db.QueryRow("SELECT +created_at FROM stack WHERE id = 's1'").Scan(&created); err != nil || created != "2024-02-29 12:34:56.000000" {
		t.Errorf("stack s1 created_at: %q %v", created, err)
	}

	// Again: the database holds the dump already; nothing copied or loaded.
	r, err = Restore(ctx, RestoreOptions{HeatDir: hdir(heatDir), Dump: newest, Warn: warn})
	if err != nil || r.Changed || r.CopiedFrom != "" || !strings.Contains(r.Msg, "already holds the content of "+copied) {
		t.Errorf("second restore: %+v %v", r, err)
	}
	// restore_db's choice: the newest dump in heat_dir is the copy.
	if n, _ := Newest(heatDir); n != copied {
		t.Errorf("newest in heat_dir: %s", n)
	}

	// Another dump replaces the database; what it held is dumped first.
	r, err = Restore(ctx, RestoreOptions{HeatDir: hdir(heatDir), Dump: older, Warn: warn})
	if err != nil || !r.Changed || r.Backup == "" || r.Stacks[0].Name != "older" {
		t.Fatalf("restore of the older dump: %+v %v", r, err)
	}
	if m, _ := ReadManifest(r.Backup); m == nil || m.Stacks[0].Name != "overcloud" {
		t.Errorf("backup manifest: %+v", m)
	}
	// Our backup is now the newest dump in heat_dir.
	if n, _ := Newest(heatDir); n != r.Backup {
		t.Errorf("newest after the backup: %s", n)
	}

	// A same-named file with other content is not overwritten.
	if err := os.WriteFile(filepath.Join(heatDir, filepath.Base(older)+".x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	other := tripleoDump(t, filepath.Join(t.TempDir(), "elsewhere"), strings.Replace(heatSQL, "'s1'", "'s9'", 1), "1700000100.2", tripleotest.PAX)
	_, err = Restore(ctx, RestoreOptions{HeatDir: hdir(heatDir), Dump: other, Warn: warn})
	if err == nil || !strings.Contains(err.Error(), copied+" exists with other content") {
		t.Errorf("same name, other content: %v", err)
	}
	if after := dirState(t, work); after != before {
		t.Errorf("the tripleoclient working dir changed:\n%s\nwas\n%s", after, before)
	}
}

func TestRestoreRefusesWhatItCannotLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	heatDir, dbPath := sqliteConfDir(t)
	src := t.TempDir()
	truncated := tripleoDump(t, filepath.Join(src, "t"), heatSQL, "1700000000.1", tripleotest.PAX)
	b, _ := os.ReadFile(truncated)
	os.WriteFile(truncated, b[:len(b)-40], 0o644)
	write := func(name string, data []byte) string {
		p := filepath.Join(src, name)
		os.WriteFile(p, data, 0o644)
		return p
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(b)
	zw.Close()
	tarHead := make([]byte, 1024)
	copy(tarHead, "heat-db.sql")
	copy(tarHead[257:], "ustar\x0000")
	var gzTar bytes.Buffer
	zw = gzip.NewWriter(&gzTar)
	zw.Write(tarHead)
	zw.Close()
	for _, tc := range []struct{ path, want string }{
		{truncated, "not a complete tripleoclient Heat dump: it ends too early"},
		{write("x.sql.xz", []byte("\xfd7zXZ\x00rest")), "it is xz-compressed data, not a dump restore loads"},
		{write("x.tar", tarHead), "it is a tar archive, not a dump restore loads"},
		{write("x.tgz", gzTar.Bytes()), "it is a gzip-compressed tar archive"},
		{write("x.zip", []byte("PK\x03\x04rest")), "it is a zip archive"},
		{write("x.bin", []byte("\x00\x01\x02")), "it is binary data"},
		{write("empty.sql", nil), "it is an empty file"},
		{src, "holds no dump"},
	} {
		before := dirState(t, heatDir)
		_, err := Restore(ctx, RestoreOptions{HeatDir: hdir(heatDir), Dump: tc.path})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
		if after := dirState(t, heatDir); after != before {
			t.Errorf("%s: a refused restore changed heat_dir:\n%s", tc.path, after)
		}
	}
	if _, err := os.Stat(dbPath); !os.IsNotExist(err) {
		t.Errorf("a refused restore created the database: %v", err)
	}
	// restore_db: a truncated newest dump in heat_dir is refused, not skipped.
	if err := os.WriteFile(filepath.Join(heatDir, filepath.Base(truncated)), b[:len(b)-40], 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Restore(ctx, RestoreOptions{HeatDir: hdir(heatDir)})
	if err == nil || !strings.Contains(err.Error(), "it ends too early") {
		t.Errorf("truncated newest: %v", err)
	}
}
