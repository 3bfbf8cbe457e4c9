package dbdump

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/mariadbtest"
)

// heatLikeSchema has the shapes of Heat's tables (AUTO_INCREMENT ids,
// uuids, foreign keys with and without names, tinyint(1) booleans,
// longtext JSON, blobs, datetimes) plus the MySQL types Heat does not use.
const heatLikeSchema = `
CREATE TABLE raw_template (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME NULL,
  template LONGTEXT NULL,
  files LONGTEXT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE stack (
  id VARCHAR(36) NOT NULL PRIMARY KEY,
  created_at DATETIME NULL,
  deleted_at DATETIME NULL,
  name VARCHAR(255) NULL,
  raw_template_id INT NOT NULL,
  owner_id VARCHAR(36) NULL,
  tenant VARCHAR(256) NULL,
  disable_rollback TINYINT(1) NOT NULL,
  status_reason TEXT NULL,
  KEY ix_stack_name (name),
  KEY ix_stack_tenant (tenant(255)),
  FOREIGN KEY (raw_template_id) REFERENCES raw_template (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE event (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  uuid VARCHAR(36) NULL UNIQUE,
  stack_id VARCHAR(36) NOT NULL,
  created_at DATETIME NULL,
  resource_properties BLOB NULL,
  FOREIGN KEY (stack_id) REFERENCES stack (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE resource_data (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  ` + "`key`" + ` VARCHAR(255) NULL,
  value TEXT NULL,
  redact TINYINT(1) NULL,
  resource_id INT NOT NULL,
  CONSTRAINT fk_event_id FOREIGN KEY (resource_id) REFERENCES event (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE sync_point (
  entity_id VARCHAR(36) NOT NULL,
  traversal_id VARCHAR(36) NOT NULL,
  is_update TINYINT(1) NOT NULL,
  stack_id VARCHAR(36) NOT NULL,
  PRIMARY KEY (entity_id, traversal_id, is_update),
  CONSTRAINT fk_stack_id FOREIGN KEY (stack_id) REFERENCES stack (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE odd_types (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  precise DATETIME(6) NULL,
  ts TIMESTAMP NULL DEFAULT NULL,
  amount DECIMAL(12,4) NULL,
  f FLOAT NULL,
  d DOUBLE NULL,
  bits BIT(10) NULL,
  e ENUM('a','b','it''s') NULL,
  s SET('x','y') NULL,
  y YEAR NULL,
  day DATE NULL,
  hms TIME(3) NULL,
  j JSON NULL,
  neg BIGINT NULL,
  tiny TINYINT NULL,
  fixed BINARY(4) NULL,
  bin VARBINARY(16) NULL,
  l1 VARCHAR(20) CHARACTER SET latin1 NULL,
  upd TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  dflt VARCHAR(20) NOT NULL DEFAULT 'it''s\n'
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
`

func fillHeatLike(t *testing.T, s *mariadbtest.Server, db string) {
	t.Helper()
	s.CreateDatabase(t, db)
	conn, err := s.Open(t, db).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mysqlExec(t, conn, "SET SESSION time_zone='+02:00'")
	for _, stmt := range strings.Split(heatLikeSchema, ";\n") {
		if strings.TrimSpace(stmt) != "" {
			mysqlExec(t, conn, stmt)
		}
	}
	nasty := "it's \"quoted\" back\\slash\nnew\rline\x1a ctrl-Z \x00 nul, tab\t, emoji 😀, 日本語, 100\\% ' OR 1=1 -- ; /* */ #"
	nasty3 := strings.ReplaceAll(nasty, "😀", "☺") // utf8mb3 holds no 4-byte characters
	allBytes := make([]byte, 0, 256)
	for b := 0; b < 256; b++ {
		allBytes = append(allBytes, byte(b))
	}
	mysqlExec(t, conn, "INSERT INTO raw_template (created_at, template, files) VALUES ('2024-02-29 12:34:56', ?, '{}'), (NULL, '', NULL)", `{"heat_template_version": "2016-10-14", "x": "é\"\\"}`)
	mysqlExec(t, conn, "INSERT INTO stack VALUES ('top', '2024-02-29 12:34:56', NULL, 'overcloud', 1, NULL, 'admin', 1, ?), ('nested', '2024-02-29 12:35:00', NULL, 'overcloud-Compute-x', 2, 'top', 'admin', 0, ''), ('gone', NULL, '2024-03-01 00:00:00', 'old', 1, NULL, NULL, 1, NULL)", nasty3)
	var sb strings.Builder
	sb.WriteString("INSERT INTO event (uuid, stack_id, created_at, resource_properties) VALUES ")
	for i := 0; i < 3000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "('uuid-%d', '%s', '2024-02-29 12:%02d:%02d', %s)", i, []string{"top", "nested"}[i%2], i/60%60, i%60, []string{"NULL", "0x00FF27225C", "''", "'plain'"}[i%4])
	}
	mysqlExec(t, conn, sb.String())
	mysqlExec(t, conn, "INSERT INTO event (uuid, stack_id, resource_properties) VALUES ('all-bytes', 'top', ?)", allBytes)
	mysqlExec(t, conn, "INSERT INTO resource_data (`key`, value, redact, resource_id) VALUES ('password', ?, 1, 1), ('empty', '', 0, 2), ('null', NULL, NULL, 3)", nasty)
	mysqlExec(t, conn, "INSERT INTO sync_point VALUES ('e1', 't1', 1, 'top'), ('e1', 't1', 0, 'top')")
	mysqlExec(t, conn, `INSERT INTO odd_types (precise, ts, amount, f, d, bits, e, s, y, day, hms, j, neg, tiny, fixed, bin, l1) VALUES
		('2024-02-29 12:34:56.123456', '2024-03-31 01:30:00', -12345678.1234, 1234567.875, 0.1, b'1010101010', 'it''s', 'x,y', 2024, '2024-02-29', '-838:59:59.5', '{"a": [1, "é"]}', -9223372036854775808, -128, 0x00000000, 0x00275C22, 'café'),
		('2024-02-29 12:34:56.000001', NULL, 0, 3.4028e38, -2.2250738585072014e-308, b'0', 'a', '', 1901, '1000-01-01', '00:00:00', '[]', 9223372036854775807, 127, 'abcd', '', 'naïve ©'),
		(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`)
}

func mysqldump(t *testing.T, s *mariadbtest.Server, db string, args ...string) []byte {
	t.Helper()
	bins, err := mariadbtest.FindBinaries()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bins.Dump, append(append(s.ClientArgs(), args...), db)...).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", bins.Dump, strings.Join(args, " "), err)
	}
	return out
}

// TestMySQLDumpIntoSQLiteAndMySQL loads real mysqldump output (in the
// forms its options give) into SQLite through the conversion and into
// MySQL as it is, and checks every row of every table against the source
// database and the dump.
func TestMySQLDumpIntoSQLiteAndMySQL(t *testing.T) {
	t.Parallel()
	s := mariadbtest.Start(t)
	ctx := context.Background()
	fillHeatLike(t, s, "src")

	for i, opts := range [][]string{
		nil, // what python-tripleoclient runs: mysqldump heat
		{"--single-transaction", "--hex-blob"},
		{"--complete-insert", "--skip-extended-insert", "--insert-ignore"},
		{"--compact"}, // no SET NAMES, no comments
		{"--replace", "--skip-opt"},
	} {
		t.Run(strings.Join(append([]string{"mysqldump"}, opts...), " "), func(t *testing.T) {
			dump := mysqldump(t, s, "src", opts...)
			// The dump's rows are the source database's.
			d, err := ScanMySQLDump(bytes.NewReader(dump), nil)
			if err != nil {
				t.Fatal(err)
			}
			if d.TableRows["event"] != 3001 || d.TableRows["odd_types"] != 3 || len(d.Tables) != 6 {
				t.Fatalf("scan: %v %v", d.Tables, d.TableRows)
			}
			if err := d.VerifyMySQL(ctx, s.DSN("src")); err != nil {
				t.Fatalf("the dump does not match its source: %v", err)
			}

			path := filepath.Join(t.TempDir(), "heat.sqlite")
			st, d2, err := RestoreMySQLDumpSQLite(ctx, bytes.NewReader(dump), path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Tables != 6 || st.Rows != d2.Rows || d2.Rows != d.Rows {
				t.Errorf("restore stats %+v, dump rows %d", st, d.Rows)
			}
			wantNotes := []string{"table odd_types: column j: CHECK constraint left out (its MySQL expression is not translated)",
				"table odd_types: column upd: ON UPDATE current_timestamp left out (SQLite has no such clause)"}
			// (--skip-opt's --skip-create-options drops ON UPDATE from the dump.)
			if len(d2.Notes) == 0 || d2.Notes[0] != wantNotes[0] || len(d2.Notes) == 2 && d2.Notes[1] != wantNotes[1] || len(d2.Notes) > 2 {
				t.Errorf("notes %q", d2.Notes)
			}
			// Independently of the digests: values as Heat reads them.
			db := openSQLite(t, path)
			var reason, created string
			var rollback int
			if err := db.QueryRow("SELECT status_reason, +created_at, disable_rollback FROM stack WHERE id='top'").Scan(&reason, &created, &rollback); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(reason, "it's \"quoted\" back\\slash\nnew\rline\x1a ctrl-Z \x00 nul") || !strings.Contains(reason, "emoji ☺, 日本語, 100\\% '") ||
				created != "2024-02-29 12:34:56.000000" || rollback != 1 {
				t.Errorf("stack top: %q %q %d", reason, created, rollback)
			}
			var blob []byte
			if err := db.QueryRow("SELECT resource_properties FROM event WHERE uuid='all-bytes'").Scan(&blob); err != nil || len(blob) != 256 || blob[0] != 0 || blob[255] != 255 || blob[39] != 39 {
				t.Errorf("all bytes: %v %v", blob, err)
			}
			var ts, l1, bits string
			if err := db.QueryRow("SELECT +ts, l1, bits FROM odd_types WHERE id=1").Scan(&ts, &l1, &bits); err != nil || ts != "2024-03-30 23:30:00.000000" || l1 != "café" || bits != "682" {
				t.Errorf("odd_types 1: ts %q (UTC) l1 %q bits %q %v", ts, l1, bits, err)
			}

			// As is into MySQL.
			s.CreateDatabase(t, fmt.Sprintf("asis%d", i))
			if _, err := RestoreMySQL(ctx, s.DSN(fmt.Sprintf("asis%d", i)), bytes.NewReader(dump)); err != nil {
				t.Fatal(err)
			}
			if err := d.VerifyMySQL(ctx, s.DSN(fmt.Sprintf("asis%d", i))); err != nil {
				t.Fatal(err)
			}
		})
	}

	t.Run("a changed row is seen", func(t *testing.T) {
		d, err := ScanMySQLDump(bytes.NewReader(mysqldump(t, s, "src")), nil)
		if err != nil {
			t.Fatal(err)
		}
		s.CreateDatabase(t, "changed")
		if _, err := RestoreMySQL(ctx, s.DSN("changed"), bytes.NewReader(mysqldump(t, s, "src"))); err != nil {
			t.Fatal(err)
		}
		mysqlExec(t, s.Open(t, "changed"), "UPDATE event SET resource_properties = 0x00FF2722 WHERE uuid = 'uuid-1'")
		err = d.VerifyMySQL(ctx, s.DSN("changed"))
		if err == nil || !strings.Contains(err.Error(), "table event has the dump's 3001 rows but their values differ") {
			t.Fatalf("verify after a change: %v", err)
		}
	})

	t.Run("values SQLite cannot hold are refused", func(t *testing.T) {
		fillMySQL(t, s, "extreme") // BIGINT UNSIGNED max, DECIMAL(20,6) with 20 digits
		mysqlExec(t, s.Open(t, "extreme"), "DROP VIEW v_parent")
		mysqlExec(t, s.Open(t, "extreme"), "DROP TABLE gen")
		_, err := ConvertMySQLDump(bytes.NewReader(mysqldump(t, s, "extreme")), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "INSERT into z_parent row 1: column amount: -12345678901234.123456 has more digits than SQLite keeps (15): restore this dump into MySQL") {
			t.Fatalf("error = %v", err)
		}
	})
}
