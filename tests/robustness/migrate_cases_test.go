package robustness

import (
	"database/sql"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/fakeheat"
)

// heatDatabase makes a sqlite database in the sandbox with Heat's stack
// table holding a stack of id (none when id is empty).
func heatDatabase(s *sandbox, name, id string) string {
	s.t.Helper()
	p := s.path(name)
	db, err := sql.Open("sqlite", p)
	if err != nil {
		s.t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{"CREATE TABLE stack (id VARCHAR(36) PRIMARY KEY, name VARCHAR(255), action VARCHAR(255), status VARCHAR(255), " +
		"deleted_at DATETIME, owner_id VARCHAR(36))"}
	if id != "" {
		stmts = append(stmts, "INSERT INTO stack (id, name, action, status) VALUES ('"+id+"', 'overcloud', 'CREATE', 'COMPLETE')")
	}
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			s.t.Fatal(err)
		}
	}
	return "sqlite:///" + p
}

// TestHandCasesMigrate: overcloud_workdir action=migrate (issue 30 item 4's
// bad input) fails before writing, naming the option, with nothing changed:
// a working dir that is not new or empty, a source Heat without the stack,
// a database that does not hold it, no database_url, an ephemeral heat_dir
// as the source.
func TestHandCasesMigrate(t *testing.T) {
	h := fakeheat.Start(t, fakeheat.Stack{Name: "overcloud", ID: "5a1e-0001", Template: map[string]any{}})
	cases := []badCase{
		{name: "migrate into a non-empty working dir", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			wd := ourWorkDir(s, "wd")
			s.file("wd/overcloud-passwords.yaml", "parameter_defaults: {AdminPassword: kept}\n", 0o600)
			return a{"work_dir": wd, "action": "migrate", "endpoint": h.Endpoint, "database_url": heatDatabase(s, "heat.sqlite", "5a1e-0001")}, ""
		}, want: []string{"work_dir", "is not empty", "overcloud-passwords.yaml", "nothing was changed"}},
		{name: "migrate into a directory of someone else's files", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			s.file("docs/notes.txt", "mine\n", 0o600)
			return a{"work_dir": s.path("docs"), "action": "migrate", "endpoint": h.Endpoint, "database_url": heatDatabase(s, "heat.sqlite", "5a1e-0001")}, ""
		}, want: []string{"work_dir", "is not empty and is not a work_dir"}},
		{name: "migrate from a Heat without the stack", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			return a{"work_dir": s.path("new", "overcloud"), "stack": "other", "action": "migrate", "endpoint": h.Endpoint,
				"database_url": heatDatabase(s, "heat.sqlite", "5a1e-0001")}, ""
		}, want: []string{"stack: the Heat at", `has no stack "other"`, "nothing was written"}},
		{name: "migrate with a database without the stack", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			return a{"work_dir": s.path("new", "overcloud"), "action": "migrate", "endpoint": h.Endpoint,
				"database_url": heatDatabase(s, "heat.sqlite", "")}, ""
		}, want: []string{"database_url: the database", "does not hold stack overcloud", "nothing was written"}},
		{name: "migrate without database_url", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			return a{"work_dir": s.path("new", "overcloud"), "action": "migrate", "endpoint": h.Endpoint}, ""
		}, want: []string{"action migrate needs database_url"}},
		{name: "migrate from an ephemeral heat_dir", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			return a{"work_dir": s.path("new", "overcloud"), "action": "migrate", "heat_dir": s.path("hd"),
				"database_url": heatDatabase(s, "heat.sqlite", "5a1e-0001")}, ""
		}, want: []string{`"heat_dir" does not apply to action migrate`}},
	}
	start := time.Now()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			counted.hand.Add(1)
			r := c.check(t)
			t.Logf("%s in %s: %s", c.module, r.elapsed.Round(time.Millisecond), truncate(r.msg(), 300))
		})
	}
	t.Logf("%d migrate cases in %s", len(cases), time.Since(start).Round(time.Millisecond))
	if b := h.Bodies(); len(b) > 0 {
		t.Errorf("the installed Heat was sent %v", b)
	}
}
