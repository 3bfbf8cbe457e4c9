package heatdb

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/mariadbtest"
)

// Provision, HasData, Exists, Empty and Drop against a real MariaDB: Heat's
// account works on its database only, and Drop with the admin removes the
// account as well.
func TestMySQLLifecycle(t *testing.T) {
	srv := mariadbtest.Start(t)
	ctx := context.Background()
	admin, err := ParseAdmin(srv.URL(""))
	if err != nil {
		t.Fatal(err)
	}
	heat, err := Provision(ctx, admin, "heat_x", "heat_x", "first-password")
	if err != nil {
		t.Fatal(err)
	}
	if heat.Database != "heat_x" || heat.User != "heat_x" || heat.Addr != admin.Addr {
		t.Fatalf("provisioned %+v", heat)
	}
	if has, err := HasData(ctx, heat); err != nil || has {
		t.Fatalf("a new database has data=%v (%v)", has, err)
	}
	// A second Provision gives the account a new password: the old one fails.
	heat2, err := Provision(ctx, admin, "heat_x", "heat_x", "second-password")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := HasData(ctx, heat); err == nil || !strings.Contains(err.Error(), ErrNoAccess.Error()) {
		t.Errorf("the old password still works: %v", err)
	}
	db := srv.Open(t, "heat_x")
	if _, err := db.Exec("CREATE TABLE stack (id INT)"); err != nil {
		t.Fatal(err)
	}
	if has, err := HasData(ctx, heat2); err != nil || !has {
		t.Fatalf("a database with a table has data=%v (%v)", has, err)
	}
	if err := Empty(ctx, heat2, true); err != nil {
		t.Fatal(err)
	}
	if has, _ := HasData(ctx, heat2); has {
		t.Error("Empty left tables")
	}
	removed, err := Drop(ctx, heat2, &admin)
	if err != nil || len(removed) != 1 || removed[0] != "mysql://heat_x@"+admin.Addr+"/heat_x" {
		t.Fatalf("drop: %v %v", removed, err)
	}
	if ok, err := Exists(ctx, heat2, admin); err != nil || ok {
		t.Errorf("database still exists (%v)", err)
	}
	var n int
	srv.Open(t, "").QueryRow("SELECT COUNT(*) FROM mysql.user WHERE User = 'heat_x'").Scan(&n)
	if n != 0 {
		t.Errorf("Heat's account survived a drop with the admin")
	}
	if again, err := Drop(ctx, heat2, &admin); err != nil || len(again) != 0 {
		t.Errorf("a second drop: %v %v", again, err)
	}
}

func TestSQLiteDrop(t *testing.T) {
	dir := t.TempDir()
	d := DB{Kind: SQLite, Path: filepath.Join(dir, "heat.sqlite")}
	ctx := context.Background()
	if has, err := HasData(ctx, d); err != nil || has {
		t.Fatalf("missing file has data=%v %v", has, err)
	}
	os.WriteFile(d.Path, []byte("x"), 0o600)
	os.WriteFile(d.Path+"-journal", []byte("x"), 0o600)
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte("x"), 0o600)
	if has, _ := HasData(ctx, d); !has {
		t.Fatal("file with content has no data")
	}
	removed, err := Drop(ctx, d, nil)
	if err != nil || len(removed) != 2 {
		t.Fatalf("drop: %v %v", removed, err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("drop removed an unrelated file")
	}
	if ok, _ := Exists(ctx, d, DB{}); ok {
		t.Error("exists after drop")
	}
}
