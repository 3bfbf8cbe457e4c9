package launch

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/mariadbtest"
)

func TestNativeWithMySQL(t *testing.T) {
	requireHeat(t)
	srv := mariadbtest.Start(t)
	var w warnings
	var secrets []string
	o := newOpts(t, &w)
	o.Database = MySQL
	o.DatabaseURL = srv.URL("")
	o.Secret = func(s string) { secrets = append(secrets, s) }

	out := run(t, o, Started)
	if out.Database != MySQL || !strings.HasPrefix(out.DatabaseLocation, "mysql://heat_") || strings.Contains(out.DatabaseLocation, srv.AdminPassword) {
		t.Fatalf("outcome: %+v", out)
	}
	createStack(t, out.Endpoint, "on-mysql")

	ini, err := heatdir.ReadINI(filepath.Join(o.HeatDir, heatdir.HeatConf))
	if err != nil {
		t.Fatal(err)
	}
	conn1 := ini.Get("database", "connection")
	heat1, err := heatdb.Parse(conn1)
	if err != nil {
		t.Fatal(err)
	}
	if heat1.User == srv.AdminUser || len(heat1.Password) < 24 {
		t.Fatalf("Heat does not use its own random credentials: user %s", heat1.User)
	}
	masked := strings.Join(secrets, " ")
	if !strings.Contains(masked, srv.AdminPassword) || !strings.Contains(masked, heat1.Password) {
		t.Errorf("passwords not registered as secrets")
	}
	// Nothing but heat.conf (0600) holds Heat's password.
	rec, _ := os.ReadFile(filepath.Join(o.HeatDir, heatdir.RecordFile))
	if strings.Contains(string(rec), heat1.Password) || strings.Contains(string(rec), srv.AdminPassword) {
		t.Errorf("launch record holds a password: %s", rec)
	}

	// stop/start: the data stays, the password changes.
	run(t, o, Stopped)
	out = run(t, o, Started)
	if !stackListed(t, out.Endpoint, "on-mysql") {
		t.Fatal("stack lost across stop/start on MySQL")
	}
	ini, _ = heatdir.ReadINI(filepath.Join(o.HeatDir, heatdir.HeatConf))
	heat2, _ := heatdb.Parse(ini.Get("database", "connection"))
	if heat2.Password == heat1.Password || heat2.User != heat1.User {
		t.Errorf("relaunch kept the old password or changed the user")
	}

	// absent drops the database and the user.
	ab := run(t, o, Absent)
	if !ab.Changed || len(ab.Removed) != 1 {
		t.Fatalf("absent: %+v", ab)
	}
	db, err := sql.Open("mysql", srv.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	db.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", heat1.Database).Scan(&n)
	if n != 0 {
		t.Errorf("database %s still exists", heat1.Database)
	}
	db.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM mysql.user WHERE User = ?", heat1.User).Scan(&n)
	if n != 0 {
		t.Errorf("user %s still exists", heat1.User)
	}
	if ab := run(t, o, Absent); ab.Changed {
		t.Errorf("second absent changed: %+v", ab)
	}

	// A wipe without database_url (heat_db_dump wipe: true alone) drops the
	// database as Heat's own user, and the user remains; absent with
	// database_url then drops that user: no account with a valid password
	// outlives the deploy.
	run(t, o, Started)
	d, _ := heatdir.At(o.HeatDir)
	if _, err := dumps.Dump(context.Background(), dumps.DumpOptions{HeatDir: d, Wipe: true,
		WipeFunc: func(c context.Context) ([]string, error) { return d.DropDatabase(c, nil, o.Warn) }}); err != nil {
		t.Fatal(err)
	}
	ini, _ = heatdir.ReadINI(filepath.Join(o.HeatDir, heatdir.HeatConf))
	heat3, _ := heatdb.Parse(ini.Get("database", "connection"))
	db.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM mysql.user WHERE User = ?", heat3.User).Scan(&n)
	if n == 0 {
		t.Fatalf("the wipe without database_url dropped the user %s (the test needs it to remain)", heat3.User)
	}
	if ab := run(t, o, Absent); !ab.Changed || ab.Dumped != "" {
		t.Errorf("absent after the wipe: %+v", ab)
	}
	db.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM mysql.user WHERE User = ?", heat3.User).Scan(&n)
	if n != 0 {
		t.Errorf("user %s outlived absent", heat3.User)
	}
}
