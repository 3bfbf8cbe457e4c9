package dbdump

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func TestDecodeMySQLString(t *testing.T) {
	tests := []struct {
		in, want string
		end      int // index after the closing quote
		err      bool
	}{
		{in: `abc'`, want: "abc", end: 4},
		{in: `it\'s'`, want: "it's", end: 6},
		{in: `it''s'`, want: "it's", end: 6},
		{in: `a\0b\nc\rd\te\Zf\\g\"h\bi'`, want: "a\x00b\nc\rd\te\x1af\\g\"h\bi", end: 26},
		{in: `100\%\_x'`, want: `100\%\_x`, end: 9}, // \% and \_ keep the backslash outside LIKE
		{in: `\q\y'`, want: "qy", end: 5},           // other escapes drop the backslash
		{in: "日本\\'語'", want: "日本'語", end: len("日本\\'語'")},
		{in: `'`, want: "", end: 1},
		{in: `abc`, err: true},
		{in: `abc\'`, err: true},
		{in: `abc\`, err: true},
	}
	for _, tc := range tests {
		got, end, err := decodeMySQLString(nil, []byte(tc.in), 0, '\'')
		if tc.err {
			if err == nil {
				t.Errorf("%q: no error", tc.in)
			}
			continue
		}
		if err != nil || string(got) != tc.want || end != tc.end {
			t.Errorf("%q: got %q, %d, %v; want %q, %d", tc.in, got, end, err, tc.want, tc.end)
		}
	}
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ fn, in, want string }{
		{"int", "0042", "42"}, {"int", "-0", "0"}, {"int", "+7", "7"}, {"int", "18446744073709551615", "18446744073709551615"},
		{"int", "1.5", ""}, {"int", "", ""}, {"int", "-", ""},
		{"dec", "1.500000", "1.5"}, {"dec", "-0.000", "0"}, {"dec", "100.00", "100"}, {"dec", "1e3", "1000"},
		{"dec", "-12345678901234.123456", "-12345678901234.123456"}, {"dec", "0.1", "0.1"}, {"dec", "2.5e-3", "0.0025"},
		{"dec", "abc", ""},
		{"dt", "2024-02-29 12:34:56", "2024-02-29 12:34:56.000000"}, {"dt", "2024-02-29 12:34:56.1", "2024-02-29 12:34:56.100000"},
		{"dt", "2024-02-29 12:34:56.123456", "2024-02-29 12:34:56.123456"}, {"dt", "0000-00-00 00:00:00", "0000-00-00 00:00:00.000000"},
		{"dt", "2024-02-29", ""}, {"dt", "2024-02-29 12:34:56.", ""}, {"dt", "2024-02-29 12:34:56.1234567", ""}, {"dt", "2024-02-29T12:34:56", ""},
	} {
		var got string
		var ok bool
		switch tc.fn {
		case "int":
			got, ok = normalizeInteger(tc.in)
		case "dec":
			got, ok = normalizeDecimal(tc.in)
		case "dt":
			got, ok = normalizeDateTime(tc.in)
		}
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("%s(%q) = %q, %v; want %q", tc.fn, tc.in, got, ok, tc.want)
		}
	}
}

// A dump in the form mysqldump writes (MariaDB 10.11, Heat's style of
// tables), with every kind of value Heat's database holds and some it does
// not.
const sampleMySQLDump = `/*M!999999\- enable the sandbox mode */ 
-- MariaDB dump 10.19  Distrib 10.11.19-MariaDB, for debian-linux-gnu (x86_64)
--
-- Host: localhost    Database: heat
-- ------------------------------------------------------
-- Server version	10.11.19-MariaDB-0+deb12u1

/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET NAMES utf8mb4 */;
/*!40103 SET @OLD_TIME_ZONE=@@TIME_ZONE */;
/*!40103 SET TIME_ZONE='+00:00' */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;
/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;

--
-- Table structure for table ` + "`stack`" + `
--

DROP TABLE IF EXISTS ` + "`stack`" + `;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!40101 SET character_set_client = utf8mb4 */;
CREATE TABLE ` + "`stack`" + ` (
  ` + "`id`" + ` varchar(36) NOT NULL,
  ` + "`created_at`" + ` datetime DEFAULT NULL,
  ` + "`name`" + ` varchar(255) DEFAULT NULL,
  ` + "`raw_template_id`" + ` int(11) NOT NULL,
  ` + "`owner_id`" + ` varchar(36) DEFAULT NULL,
  ` + "`tenant`" + ` varchar(256) DEFAULT NULL,
  ` + "`disable_rollback`" + ` tinyint(1) NOT NULL,
  ` + "`status_reason`" + ` text DEFAULT NULL,
  PRIMARY KEY (` + "`id`" + `),
  KEY ` + "`raw_template_id`" + ` (` + "`raw_template_id`" + `),
  KEY ` + "`ix_stack_tenant`" + ` (` + "`tenant`" + `(255)),
  KEY ` + "`ix_stack_name`" + ` (` + "`name`" + `),
  CONSTRAINT ` + "`stack_ibfk_1`" + ` FOREIGN KEY (` + "`raw_template_id`" + `) REFERENCES ` + "`raw_template`" + ` (` + "`id`" + `)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci;
/*!40101 SET character_set_client = @saved_cs_client */;

LOCK TABLES ` + "`stack`" + ` WRITE;
/*!40000 ALTER TABLE ` + "`stack`" + ` DISABLE KEYS */;
INSERT INTO ` + "`stack`" + ` VALUES
('0b7e','2024-02-29 12:34:56','over;cloud',1,NULL,'admin',1,'it\'s \"done\"\nline2 \\ 100\%'),
('1c8f','2024-02-29 12:35:00.5','nested',1,'0b7e','admin',0,'日本語 😀 \0 nul');
/*!40000 ALTER TABLE ` + "`stack`" + ` ENABLE KEYS */;
UNLOCK TABLES;

DROP TABLE IF EXISTS ` + "`raw_template`" + `;
CREATE TABLE ` + "`raw_template`" + ` (
  ` + "`id`" + ` int(11) NOT NULL AUTO_INCREMENT,
  ` + "`template`" + ` longtext DEFAULT NULL,
  ` + "`props`" + ` blob DEFAULT NULL,
  ` + "`score`" + ` double DEFAULT 1.5,
  ` + "`price`" + ` decimal(10,2) NOT NULL DEFAULT 0.00,
  ` + "`flags`" + ` bit(10) DEFAULT NULL,
  ` + "`kind`" + ` enum('a','bb','it''s') DEFAULT 'a' COMMENT 'the ''kind''',
  ` + "`day`" + ` date DEFAULT NULL,
  ` + "`at`" + ` time DEFAULT NULL,
  ` + "`upd`" + ` timestamp NOT NULL DEFAULT current_timestamp() ON UPDATE current_timestamp(),
  ` + "`key`" + ` varchar(10) CHARACTER SET latin1 COLLATE latin1_bin DEFAULT 'x''y',
  PRIMARY KEY (` + "`id`" + `),
  UNIQUE KEY ` + "`key`" + ` (` + "`key`" + `),
  FULLTEXT KEY ` + "`ft`" + ` (` + "`template`" + `),
  CONSTRAINT ` + "`positive`" + ` CHECK (` + "`price`" + ` >= 0)
) ENGINE=InnoDB AUTO_INCREMENT=7 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;
INSERT INTO ` + "`raw_template`" + ` VALUES (1,'{\"heat_template_version\": \"2016-10-14\"}','\0\Z\'\"\\',0.1,12.50,'\0',` +
	"'bb','2024-01-31','-01:02:03','2024-02-29 12:34:56','k1'),(2,NULL,_binary 'ab',-1e-300,-0.5,b'1010101010','it\\'s',NULL,NULL,'2024-02-29 12:34:56','k2')," +
	"(5,'',0x00FF,1e300,99999999.99,0x02AA,'a',NULL,'838:59:59','2024-02-29 12:34:56',NULL);\n" + `
-- Dump completed on 2026-11-24 15:06:30
`

func loadConverted(t *testing.T, dump string) (*sql.DB, *MySQLDump, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "heat.sqlite")
	_, d, err := RestoreMySQLDumpSQLite(context.Background(), strings.NewReader(dump), path)
	if err != nil {
		t.Fatal(err)
	}
	return openSQLite(t, path), d, path
}

func TestConvertMySQLDumpValues(t *testing.T) {
	db, d, path := loadConverted(t, sampleMySQLDump)
	if !reflect.DeepEqual(d.Tables, []string{"stack", "raw_template"}) || d.TableRows["stack"] != 2 || d.TableRows["raw_template"] != 3 || d.Rows != 5 || d.Charset != "utf8mb4" {
		t.Errorf("scan: %+v", d)
	}
	wantNotes := []string{
		"table raw_template: column upd: ON UPDATE current_timestamp left out (SQLite has no such clause)",
		"table raw_template: FULLTEXT index left out (SQLite has none)",
		"table raw_template: CHECK constraint positive left out (its MySQL expression is not translated)",
	}
	if !reflect.DeepEqual(d.Notes, wantNotes) {
		t.Errorf("notes:\n%q\nwant\n%q", d.Notes, wantNotes)
	}

	type row []any
	query := func(q string) []row {
		t.Helper()
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var out []row
		for rows.Next() {
			r := make(row, len(cols))
			ptrs := make([]any, len(cols))
			for i := range r {
				ptrs[i] = &r[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	got := query(`SELECT id, +created_at, name, raw_template_id, owner_id, disable_rollback, status_reason, typeof(disable_rollback) FROM stack ORDER BY id`)
	want := []row{
		{"0b7e", "2024-02-29 12:34:56.000000", "over;cloud", int64(1), nil, int64(1), "it's \"done\"\nline2 \\ 100\\%", "integer"},
		{"1c8f", "2024-02-29 12:35:00.500000", "nested", int64(1), "0b7e", int64(0), "日本語 😀 \x00 nul", "integer"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stack rows:\n%#v\nwant\n%#v", got, want)
	}
	got = query(`SELECT id, template, props, score, price, flags, kind, +day, +at, +upd, "key", typeof(price) FROM raw_template ORDER BY id`)
	want = []row{
		{int64(1), `{"heat_template_version": "2016-10-14"}`, []byte{0, 0x1a, '\'', '"', '\\'}, 0.1, 12.5, int64(0), "bb", "2024-01-31", "-01:02:03", "2024-02-29 12:34:56.000000", "k1", "real"},
		{int64(2), nil, []byte("ab"), -1e-300, -0.5, int64(0x2aa), "it's", nil, nil, "2024-02-29 12:34:56.000000", "k2", "real"},
		{int64(5), "", []byte{0, 0xff}, 1e300, 99999999.99, int64(0x2aa), "a", nil, "838:59:59", "2024-02-29 12:34:56.000000", nil, "real"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("raw_template rows:\n%#v\nwant\n%#v", got, want)
	}

	// The schema is SQLite's, as SQLAlchemy declares it on SQLite.
	var schema []string
	for _, r := range query(`SELECT sql FROM sqlite_schema WHERE sql NOT NULL ORDER BY name`) {
		schema = append(schema, r[0].(string))
	}
	all := strings.Join(schema, "\n")
	for _, s := range []string{
		"id INTEGER NOT NULL", "disable_rollback BOOLEAN NOT NULL", "created_at DATETIME", "props BLOB", "price NUMERIC(10, 2) NOT NULL DEFAULT 0",
		"score DOUBLE DEFAULT 1.5", "kind VARCHAR(4) DEFAULT 'a'", `"key" VARCHAR(10) DEFAULT 'x''y'`, "upd TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP",
		"flags INTEGER", "PRIMARY KEY (id)", `UNIQUE ("key")`, "FOREIGN KEY(raw_template_id) REFERENCES raw_template (id)",
		"CREATE INDEX ix_stack_tenant ON stack (tenant)", "CREATE INDEX ix_stack_name ON stack (name)",
	} {
		if !strings.Contains(all, s) {
			t.Errorf("schema lacks %q:\n%s", s, all)
		}
	}
	for _, s := range []string{"AUTO_INCREMENT", "ENGINE", "CHARSET", "COLLATE", "CONSTRAINT stack_ibfk_1", "raw_template_id ON", "ft", "CHECK", "COMMENT", "`"} {
		if strings.Contains(all, s) {
			t.Errorf("schema holds %q:\n%s", s, all)
		}
	}
	// AUTO_INCREMENT: the next row is numbered after the highest id.
	if _, err := db.Exec(`INSERT INTO raw_template (price, upd) VALUES (1, '2024-01-01 00:00:00.000000')`); err != nil {
		t.Fatal(err)
	}
	if r := query(`SELECT max(id) FROM raw_template`); r[0][0] != int64(6) {
		t.Errorf("new AUTO_INCREMENT id %v, want 6", r[0][0])
	}
	if _, err := db.Exec(`DELETE FROM raw_template WHERE id = 6`); err != nil {
		t.Fatal(err)
	}

	// The check after loading sees any difference.
	if err := d.VerifySQLite(context.Background(), path); err != nil {
		t.Fatalf("verify: %v", err)
	}
	for _, tc := range []struct{ stmt, want string }{
		{`UPDATE stack SET status_reason = 'x' WHERE id = '0b7e'`, "table stack has the dump's 2 rows but their values differ"},
		{`UPDATE raw_template SET upd = '2024-02-29 12:34:57.000000' WHERE id = 1`, "table raw_template has the dump's 3 rows but their values differ"},
		{`DELETE FROM raw_template WHERE id = 5`, "table raw_template has 2 rows, the dump 3"},
	} {
		copyPath := filepath.Join(t.TempDir(), "copy.sqlite")
		execAll(t, db, "VACUUM INTO '"+copyPath+"'")
		execAll(t, openSQLite(t, copyPath), tc.stmt)
		err := d.VerifySQLite(context.Background(), copyPath)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("after %s: %v, want %q", tc.stmt, err, tc.want)
		}
	}
}

func TestConvertMySQLDumpStreams(t *testing.T) {
	var whole bytes.Buffer
	if _, err := ConvertMySQLDump(strings.NewReader(sampleMySQLDump), &whole); err != nil {
		t.Fatal(err)
	}
	var oneByte bytes.Buffer
	if _, err := ConvertMySQLDump(iotest.OneByteReader(strings.NewReader(sampleMySQLDump)), &oneByte); err != nil {
		t.Fatal(err)
	}
	if whole.String() != oneByte.String() {
		t.Error("conversion depends on how the input is read")
	}
	if !strings.HasPrefix(whole.String(), "PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n") || !strings.HasSuffix(whole.String(), "COMMIT;\n") {
		t.Errorf("not one transaction:\n%s", whole.String())
	}
	// The sqlite3 shell loads the converted text too.
	sqlite3 := requireBinary(t, "sqlite3", "sqlite3")
	path := filepath.Join(t.TempDir(), "shell.sqlite")
	shellLoad(t, sqlite3, path, whole.Bytes())
	var n int
	if err := openSQLite(t, path).QueryRow("SELECT count(*) FROM raw_template").Scan(&n); err != nil || n != 3 {
		t.Errorf("shell-loaded rows: %d, %v", n, err)
	}
}

func TestConvertMySQLDumpRefuses(t *testing.T) {
	table := "CREATE TABLE `t` (`id` int(11) NOT NULL, `v` %s DEFAULT NULL, PRIMARY KEY (`id`)) ENGINE=InnoDB;\n"
	tests := []struct {
		name, dump, want string
	}{
		{"no table", "/*!40101 SET NAMES utf8 */;\n-- Dump completed\n", "creates no table"},
		{"empty", "", "creates no table"},
		{"view", fmt.Sprintf(table, "int") + "/*!50001 CREATE ALGORITHM=UNDEFINED */\n/*!50013 DEFINER=`root`@`localhost` SQL SECURITY DEFINER */\n/*!50001 VIEW `v` AS select 1 AS `x` */;\n", "view v: views are not converted"},
		{"generated column", "CREATE TABLE `g` (`a` int, `b` int GENERATED ALWAYS AS (`a` * 2) VIRTUAL);\n", "column b is a generated column"},
		{"latin1 dump", "/*!40101 SET NAMES latin1 */;\n" + fmt.Sprintf(table, "int"), "character set latin1"},
		{"unknown type", fmt.Sprintf(table, "geometry"), "MySQL type geometry has no SQLite conversion"},
		{"integer beyond 64 bits", fmt.Sprintf(table, "bigint(20) unsigned") + "INSERT INTO `t` VALUES (1,18446744073709551615);\n", "row 1: column v: 18446744073709551615 does not fit SQLite's 64-bit integers"},
		{"decimal beyond 15 digits", fmt.Sprintf(table, "decimal(20,6)") + "INSERT INTO `t` VALUES (1,1.5),(2,-12345678901234.123456);\n", "row 2: column v: -12345678901234.123456 has more digits than SQLite keeps"},
		{"text not UTF-8", fmt.Sprintf(table, "text") + "INSERT INTO `t` VALUES (1,'caf\xe9');\n", "column v: text is not valid UTF-8"},
		{"bad datetime", fmt.Sprintf(table, "datetime") + "INSERT INTO `t` VALUES (1,'yesterday');\n", `"yesterday" is not a DATETIME value`},
		{"string in int column", fmt.Sprintf(table, "int") + "INSERT INTO `t` VALUES (1,'many');\n", `"many" is not an integer`},
		{"insert into unknown table", fmt.Sprintf(table, "int") + "INSERT INTO `u` VALUES (1,2);\n", "INSERT into table u, which the dump does not create"},
		{"too few values", fmt.Sprintf(table, "int") + "INSERT INTO `t` VALUES (1);\n", "expected , after column id"},
		{"too many values", fmt.Sprintf(table, "int") + "INSERT INTO `t` VALUES (1,2,3);\n", "2 values expected"},
		{"partial column list", fmt.Sprintf(table, "int") + "INSERT INTO `t` (`id`) VALUES (1);\n", "leaves out column v"},
		{"on duplicate key", fmt.Sprintf(table, "int") + "INSERT INTO `t` VALUES (1,2) ON DUPLICATE KEY UPDATE `v`=3;\n", "ON DUPLICATE KEY UPDATE"},
		{"expression value", fmt.Sprintf(table, "int") + "INSERT INTO `t` VALUES (1,NOW());\n", "unsupported value NOW"},
		{"delimiter", "DELIMITER ;;\n", "DELIMITER is not supported"},
		{"other statement", fmt.Sprintf(table, "int") + "UPDATE `t` SET `v` = 1;\n", "line 2: unsupported statement: UPDATE"},
		{"alter table", fmt.Sprintf(table, "int") + "ALTER TABLE `t` ADD COLUMN `w` int;\n", "a dump alters tables only to disable and enable keys"},
		{"two databases", "USE `heat`;\n" + fmt.Sprintf(table, "int") + "USE `nova`;\n", "more than one database (heat and nova)"},
		{"truncated string", fmt.Sprintf(table, "text") + "INSERT INTO `t` VALUES (1,'abc", "unterminated"},
		{"truncated row", fmt.Sprintf(table, "text") + "INSERT INTO `t` VALUES (1,'abc'),(2,", "row 2 column v: unsupported value end of statement"},
		{"auto_increment not the key", "CREATE TABLE `a` (`id` int NOT NULL AUTO_INCREMENT, `k` int NOT NULL, PRIMARY KEY (`k`,`id`));\n", "AUTO_INCREMENT but not the table's single-column primary key"},
		{"foreign key to other database", "CREATE TABLE `a` (`id` int, CONSTRAINT `f` FOREIGN KEY (`id`) REFERENCES `other`.`b` (`id`));\n", "references a table of another database"},
		{"table twice", fmt.Sprintf(table, "int") + fmt.Sprintf(table, "int"), "table t is created twice"},
		{"case-insensitive clash", fmt.Sprintf(table, "int") + "CREATE TABLE `T` (`id` int);\n", "SQLite names are case-insensitive"},
		{"bad column attribute", fmt.Sprintf(table, "int FANCY"), "unsupported column attribute FANCY"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ConvertMySQLDump(strings.NewReader(tc.dump), io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
			// Nothing is left behind by a refused restore.
			dir := t.TempDir()
			if _, _, err := RestoreMySQLDumpSQLite(context.Background(), strings.NewReader(tc.dump), filepath.Join(dir, "heat.sqlite")); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("restore error = %v, want %q", err, tc.want)
			}
			assertNoTempFiles(t, dir)
			if _, err := os.Stat(filepath.Join(dir, "heat.sqlite")); !os.IsNotExist(err) {
				t.Errorf("a refused restore left heat.sqlite: %v", err)
			}
		})
	}
}

func TestScanMySQLDumpRows(t *testing.T) {
	var got []string
	d, err := ScanMySQLDump(strings.NewReader(sampleMySQLDump), func(table string, get func(string) (string, bool)) error {
		if table != "stack" {
			return nil
		}
		owner, null := get("owner_id")
		if null {
			owner = "NULL"
		}
		name, _ := get("NAME") // any case
		created, _ := get("created_at")
		got = append(got, name+"|"+owner+"|"+created)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"over;cloud|NULL|2024-02-29 12:34:56.000000", "nested|0b7e|2024-02-29 12:35:00.500000"}
	if !reflect.DeepEqual(got, want) || d.Rows != 5 {
		t.Errorf("rows %q, want %q (%d rows)", got, want, d.Rows)
	}
	// The scan accepts what only a conversion refuses.
	if _, err := ScanMySQLDump(strings.NewReader("/*!40101 SET NAMES latin1 */;\nCREATE TABLE `g` (`a` int, `b` int AS (`a`+1) VIRTUAL);\nINSERT INTO `g` VALUES (1,2);\n"), nil); err != nil {
		t.Errorf("scan refused a dump MySQL loads: %v", err)
	}
}

func TestConvertMySQLDumpSplitsLongInserts(t *testing.T) {
	big := strings.Repeat("x", 400<<10)
	dump := "CREATE TABLE `t` (`id` int NOT NULL, `v` longtext, PRIMARY KEY (`id`));\n" +
		"INSERT INTO `t` VALUES (1,'" + big + "'),(2,'" + big + "'),(3,'" + big + "'),(4,'small');\n" +
		// mysqldump --replace and --insert-ignore (rows never collide in a dump).
		"INSERT INTO `t` VALUES (5,'a');\nREPLACE INTO `t` VALUES (6,'b');\nINSERT IGNORE INTO `t` VALUES (7,'c'),(8,'d');\n"
	var out bytes.Buffer
	if _, err := ConvertMySQLDump(strings.NewReader(dump), &out); err != nil {
		t.Fatal(err)
	}
	var heads []string
	for _, line := range strings.Split(out.String(), "\n") {
		if i := strings.Index(line, " VALUES("); i > 0 && strings.HasPrefix(line, "INSERT") {
			heads = append(heads, line[:i]+fmt.Sprintf(" %d rows", strings.Count(line, "),(")+1))
		}
	}
	want := []string{"INSERT INTO t 2 rows", "INSERT INTO t 2 rows", "INSERT INTO t 1 rows", "INSERT OR REPLACE INTO t 1 rows", "INSERT OR IGNORE INTO t 2 rows"}
	if !reflect.DeepEqual(heads, want) {
		t.Errorf("statements %q, want %q", heads, want)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if len(line) > maxInsertBytes+len(big) {
			t.Errorf("a %d-byte statement", len(line))
		}
	}
	db, _, _ := loadConverted(t, dump)
	var n int
	var v string
	if err := db.QueryRow("SELECT count(*), (SELECT v FROM t WHERE id = 6) FROM t").Scan(&n, &v); err != nil || n != 8 || v != "b" {
		t.Errorf("loaded %d rows, id 6 = %q, %v", n, v, err)
	}
}
