package heatdir

import (
	"context"
	"fmt"
	"os"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
)

// hostConnection is the heat.conf [database] option that holds the URL by
// which the host reaches Heat's database when Heat itself reaches it by
// another (the pod's own MariaDB, published on the host's loopback). Heat
// ignores it.
const hostConnection = "host_connection"

// Database is the database a heat_dir's heat.conf names, as the host
// reaches it.
type Database struct {
	heatdb.DB
	// Published: Heat reaches it by another address; this one is the port
	// a pod publishes on the host's loopback for its own MariaDB, whose
	// datadir is MariaDBDir.
	Published bool
}

// Database reads heat.conf's [database]: host_connection when present, else
// connection.
func (d Dir) Database() (Database, error) {
	p := d.File(HeatConf)
	ini, err := ReadINI(p)
	if err != nil {
		return Database{}, fmt.Errorf("finding Heat's database: %w (is %s a heat_dir written by ephemeral_heat_launch?)", err, d.root)
	}
	key := hostConnection
	conn := ini.Get("database", key)
	if conn == "" {
		key = "connection"
		conn = ini.Get("database", key)
	}
	if conn == "" {
		return Database{}, fmt.Errorf("%s has no [database] connection", p)
	}
	db, err := heatdb.Parse(conn)
	if err != nil {
		return Database{}, fmt.Errorf("%s [database] %s: %w", p, key, err)
	}
	return Database{DB: db, Published: key == hostConnection}, nil
}

// DropDatabase drops the live database heat.conf names and returns what it
// removed (nothing when it is already gone): the sqlite file, or the MySQL
// database, as admin when given (which also drops Heat's account), else as
// Heat's own account, with a warning that the account remains.
//
// A database Heat reaches by another address (Published: a pod's own
// MariaDB) is dropped where the host reaches it, as Heat's own account,
// which stays with that server: the backend that made it removes the rest
// (backend.Database's Teardown).
func (d Dir) DropDatabase(ctx context.Context, admin *heatdb.DB, warn func(string, ...any)) ([]string, error) {
	if _, err := os.Stat(d.File(HeatConf)); os.IsNotExist(err) {
		return nil, nil
	}
	db, err := d.Database()
	if err != nil {
		return nil, err
	}
	if db.Published {
		return dropPublished(ctx, db.DB)
	}
	if db.Kind == heatdb.MySQL && admin == nil {
		if exists, err := heatdb.Exists(ctx, db.DB, db.DB); err == nil && exists {
			warn("database_url was not given: dropping database %s as its own user; the MySQL user %s remains (give database_url to drop it too)",
				db.Database, db.User)
		}
	}
	return heatdb.Drop(ctx, db.DB, admin)
}

func dropPublished(ctx context.Context, db heatdb.DB) ([]string, error) {
	exists, err := heatdb.Exists(ctx, db, db)
	if err != nil {
		return nil, fmt.Errorf("Heat's database %s ([database] %s) does not answer (%v): start Heat (ephemeral_heat_launch state: started) "+
			"and run this again", db, hostConnection, err)
	}
	if !exists {
		return nil, nil
	}
	if _, err := heatdb.Drop(ctx, db, nil); err != nil {
		return nil, fmt.Errorf("%w (Heat's database as the host reaches it, [database] %s)", err, hostConnection)
	}
	return []string{db.String() + " (Heat's own database server)"}, nil
}

// LiveDatabase says what DropDatabase would remove now, without credentials
// (for check mode): nothing when the database is gone, or when Heat reaches
// it by another address (Published: its backend says).
func (d Dir) LiveDatabase(ctx context.Context, admin *heatdb.DB) []string {
	db, err := d.Database()
	if err != nil {
		return nil
	}
	if db.Published {
		// The backend that made it knows what removing it takes.
		return nil
	}
	as := db.DB
	if admin != nil {
		as = *admin
	}
	if exists, err := heatdb.Exists(ctx, db.DB, as); err == nil && !exists {
		// The database is gone; its account may remain (DropDatabase
		// drops it given admin).
		if admin != nil {
			if has, _ := heatdb.AccountExists(ctx, db.DB, *admin); has {
				return []string{"MySQL user " + db.User}
			}
		}
		return nil
	}
	if db.Kind == heatdb.SQLite {
		var out []string
		for _, p := range db.Files() {
			if _, err := os.Stat(p); err == nil {
				out = append(out, p)
			}
		}
		return out
	}
	return []string{db.String()}
}
