package dbdump

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func collectSQLite(t *testing.T, r io.Reader) ([]string, error) {
	t.Helper()
	sp := newSQLiteSplitter(r)
	var out []string
	for {
		s, _, err := sp.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, strings.TrimSpace(string(s)))
	}
}

func TestSQLiteSplitter(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr error
	}{
		{"simple", "SELECT 1;SELECT 2;\n", []string{"SELECT 1;", "SELECT 2;"}, nil},
		{"semicolon in strings and identifiers", `INSERT INTO "a;b" VALUES('x;''y', [c;d], ` + "`e;f`" + `);`, []string{`INSERT INTO "a;b" VALUES('x;''y', [c;d], ` + "`e;f`" + `);`}, nil},
		{"newline inside string", "INSERT INTO t VALUES('a\nb;c');\nSELECT 1;", []string{"INSERT INTO t VALUES('a\nb;c');", "SELECT 1;"}, nil},
		{"comments", "-- x; y\nSELECT 1; /* a; b */ SELECT 2;", []string{"-- x; y\nSELECT 1;", "/* a; b */ SELECT 2;"}, nil},
		{"comment only statements skipped", "-- hi\n;\n/* x */;\nSELECT 1;\n-- trailing", []string{"SELECT 1;"}, nil},
		{"comment with star slash", "/**/SELECT 1;/*/ still comment; */SELECT 2;", []string{"/**/SELECT 1;", "/*/ still comment; */SELECT 2;"}, nil},
		{
			"trigger body",
			"CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO u VALUES(1); UPDATE u SET x=2; END;\nSELECT 1;",
			[]string{"CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO u VALUES(1); UPDATE u SET x=2; END;", "SELECT 1;"},
			nil,
		},
		{
			"temp trigger lower case",
			"create temp trigger tr after delete on t begin delete from u; end ;select 1;",
			[]string{"create temp trigger tr after delete on t begin delete from u; end ;", "select 1;"},
			nil,
		},
		{"create table named trigger is not a trigger", "CREATE TABLE trigger(x);SELECT 1;", []string{"CREATE TABLE trigger(x);", "SELECT 1;"}, nil},
		{"end as column name", "SELECT end FROM t;SELECT 1;", []string{"SELECT end FROM t;", "SELECT 1;"}, nil},
		{"incomplete", "SELECT 1;SELECT 2", []string{"SELECT 1;"}, errIncomplete},
		{"unterminated string", "SELECT 'abc;", nil, io.EOF},
		{"unterminated comment", "SELECT 1 /* x;", nil, io.EOF},
	}
	for _, tc := range tests {
		for _, reader := range []struct {
			name string
			wrap func(io.Reader) io.Reader
		}{{"whole", func(r io.Reader) io.Reader { return r }}, {"onebyte", iotest.OneByteReader}} {
			t.Run(tc.name+"/"+reader.name, func(t *testing.T) {
				got, err := collectSQLite(t, reader.wrap(strings.NewReader(tc.in)))
				if tc.wantErr != nil {
					if !errors.Is(err, tc.wantErr) {
						t.Fatalf("error = %v, want %v", err, tc.wantErr)
					}
				} else if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("got %q\nwant %q", got, tc.want)
				}
			})
		}
	}
}

func TestSQLiteSplitterLongString(t *testing.T) {
	long := strings.Repeat("ab;'' \n", 200000) // far larger than the read buffer
	in := "INSERT INTO t VALUES('" + long + "');SELECT 2;"
	got, err := collectSQLite(t, strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "INSERT INTO t VALUES('"+long+"');" || got[1] != "SELECT 2;" {
		t.Fatalf("long string split wrongly into %d statements", len(got))
	}
}

func TestSQLiteComplete(t *testing.T) {
	for in, want := range map[string]bool{
		"SELECT 1;":                      true,
		"SELECT 1":                       false,
		"SELECT 1; -- c":                 true,
		"CREATE TABLE t(x) -- c;":        false,
		"CREATE TABLE t(x) -- c\n;":      true,
		"CREATE TABLE t(x) /* c;":        false,
		"CREATE TABLE t(x) /* c*/;":      true,
		"CREATE TRIGGER a BEGIN x; ;":    false,
		"CREATE TRIGGER a BEGIN x; END;": true,
	} {
		if got := sqliteComplete(in); got != want {
			t.Errorf("sqliteComplete(%q) = %v, want %v", in, got, want)
		}
	}
}

func collectMySQL(t *testing.T, r io.Reader) ([]string, error) {
	t.Helper()
	sp := newMySQLSplitter(r)
	var out []string
	for {
		s, _, err := sp.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, string(s))
	}
}

func TestMySQLSplitter(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr string
	}{
		{"simple", "SELECT 1;\nSELECT 2;", []string{"SELECT 1", "SELECT 2"}, ""},
		{"final statement without semicolon", "SELECT 1;\nSELECT 2\n", []string{"SELECT 1", "SELECT 2"}, ""},
		{"backslash escapes", `INSERT INTO t VALUES ('a\';b','c\\'),("d\";e");SELECT 1;`, []string{`INSERT INTO t VALUES ('a\';b','c\\'),("d\";e")`, "SELECT 1"}, ""},
		{"doubled quotes", `INSERT INTO t VALUES ('it''s;');`, []string{`INSERT INTO t VALUES ('it''s;')`}, ""},
		{"backtick identifiers", "INSERT INTO `a;``b` VALUES (1);", []string{"INSERT INTO `a;``b` VALUES (1)"}, ""},
		{"line comments dropped", "-- a; b\n# c; d\nSELECT 1; -- tail\n", []string{"SELECT 1"}, ""},
		{"double dash without space is minus", "SELECT 1--1;", []string{"SELECT 1--1"}, ""},
		{"double dash at end of input", "SELECT 1;--", []string{"SELECT 1"}, ""},
		{"block comments dropped", "/* x; y */SELECT /* z */ 1;/**/", []string{"SELECT   1"}, ""},
		{
			"executable comments kept",
			"/*!40101 SET NAMES utf8mb4 */;\n/*!40000 ALTER TABLE `t` DISABLE KEYS */;",
			[]string{"/*!40101 SET NAMES utf8mb4 */", "/*!40000 ALTER TABLE `t` DISABLE KEYS */"}, "",
		},
		{"semicolon inside executable comment", "/*!50001 SELECT 'a;b'; SELECT 2 */;", []string{"/*!50001 SELECT 'a;b'; SELECT 2 */"}, ""},
		{
			"mariadb sandbox line and dump header",
			"/*M!999999\\- enable the sandbox mode */ \n-- MariaDB dump 10.19\n--\n/*!40101 SET @OLD=@@X */;\n",
			[]string{"/*M!999999\\- enable the sandbox mode */ \n\n\n/*!40101 SET @OLD=@@X */"}, "",
		},
		{"optimizer hint kept", "SELECT /*+ MAX_EXECUTION_TIME(1) */ 1;", []string{"SELECT /*+ MAX_EXECUTION_TIME(1) */ 1"}, ""},
		{"quotes inside comments ignored", "-- it's\n/* don't */ SELECT 1;", []string{"SELECT 1"}, ""},
		{"comment markers inside strings", "INSERT INTO t VALUES ('-- x','/* y','# z');", []string{"INSERT INTO t VALUES ('-- x','/* y','# z')"}, ""},
		{"empty statements", ";;  ;\nSELECT 1;", []string{"SELECT 1"}, ""},
		{"unterminated string", "SELECT 'abc", nil, "unterminated"},
		{"unterminated comment", "SELECT 1 /* x", nil, "unterminated"},
		{"unterminated executable comment", "/*!40101 SET x=1;", nil, "unterminated"},
	}
	for _, tc := range tests {
		for _, reader := range []struct {
			name string
			wrap func(io.Reader) io.Reader
		}{{"whole", func(r io.Reader) io.Reader { return r }}, {"onebyte", iotest.OneByteReader}} {
			t.Run(tc.name+"/"+reader.name, func(t *testing.T) {
				got, err := collectMySQL(t, reader.wrap(strings.NewReader(tc.in)))
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("got %q\nwant %q", got, tc.want)
				}
			})
		}
	}
}

func TestMySQLSplitterLongValues(t *testing.T) {
	long := strings.Repeat(`x\'; \\ "`, 100000)
	in := "INSERT INTO t VALUES ('" + long + "'),(0x00ff);\nSELECT 2;"
	got, err := collectMySQL(t, strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "INSERT INTO t VALUES ('"+long+"'),(0x00ff)" || got[1] != "SELECT 2" {
		t.Fatalf("long value split wrongly into %d statements", len(got))
	}
}

func TestClassifyStatement(t *testing.T) {
	tests := []struct {
		in        string
		mysql     bool
		wantKind  stmtKind
		wantTable string
	}{
		{"BEGIN TRANSACTION;", false, stmtBegin, ""},
		{"start transaction", true, stmtBegin, ""},
		{"COMMIT;", false, stmtCommit, ""},
		{"-- c\nCREATE TABLE t(x);", false, stmtCreateTable, ""},
		{"CREATE TABLE IF NOT EXISTS \"order\"(x);", false, stmtCreateTable, ""},
		{"CREATE TEMP TABLE t(x);", false, stmtCreateTable, ""},
		{"CREATE INDEX i ON t(x);", false, stmtOther, ""},
		{"INSERT INTO t VALUES(1);", false, stmtInsert, "t"},
		{`INSERT INTO "we""ird" VALUES(1);`, false, stmtInsert, `we"ird`},
		{"INSERT OR REPLACE INTO [b] VALUES(1);", false, stmtInsert, "b"},
		{"INSERT INTO `a``b` VALUES (1)", true, stmtInsert, "a`b"},
		{"/*!40000 x */ INSERT IGNORE INTO `db`.`t` (a) VALUES (1)", true, stmtInsert, "t"},
		{"# c\nREPLACE INTO t VALUES (1)", true, stmtInsert, "t"},
		{"ATTACH 'x' AS y;", false, stmtAttach, ""},
		{"DELIMITER ;;", true, stmtDelimiter, ""},
		{"/*!40101 SET NAMES utf8mb4 */", true, stmtOther, ""},
		{"", true, stmtOther, ""},
	}
	for _, tc := range tests {
		kind, table := classifyStatement([]byte(tc.in), tc.mysql)
		if kind != tc.wantKind || table != tc.wantTable {
			t.Errorf("classifyStatement(%q) = %v %q, want %v %q", tc.in, kind, table, tc.wantKind, tc.wantTable)
		}
	}
}

func TestSplittersReportStartLines(t *testing.T) {
	in := "\n\n-- comment\nSELECT 'a\nb';\n\n/* c\n*/ SELECT\n2;\n"
	want := []int{4, 8} // lines where the statement text (not a comment) begins
	var got []int
	sp := newSQLiteSplitter(strings.NewReader(in))
	for {
		_, line, err := sp.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, line)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sqlite splitter lines %v, want %v", got, want)
	}
	got = nil
	mp := newMySQLSplitter(strings.NewReader(in))
	for {
		_, line, err := mp.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, line)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mysql splitter lines %v, want %v", got, want)
	}
}
