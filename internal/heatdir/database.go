package heatdir

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
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
// A pod's own MariaDB (Published) is reached through the port the pod
// publishes on the host's loopback: its database is dropped there (the
// account stays in the pod's MariaDB until state: absent removes the
// datadir). When no launch is recorded and nothing listens on that port any
// more (the pod is gone), the datadir, which holds nothing but Heat's
// database and MariaDB's own tables, is removed instead, with the
// credentials beside it; the next launch creates it afresh.
func (d Dir) DropDatabase(ctx context.Context, admin *heatdb.DB, warn func(string, ...any)) ([]string, error) {
	if _, err := os.Stat(d.File(HeatConf)); os.IsNotExist(err) {
		return nil, nil
	}
	db, err := d.Database()
	if err != nil {
		return nil, err
	}
	if db.Published {
		return d.dropPodDatabase(ctx, db.DB, warn)
	}
	if db.Kind == heatdb.MySQL && admin == nil {
		if exists, err := heatdb.Exists(ctx, db.DB, db.DB); err == nil && exists {
			warn("database_url was not given: dropping database %s as its own user; the MySQL user %s remains (give database_url to drop it too)",
				db.Database, db.User)
		}
	}
	return heatdb.Drop(ctx, db.DB, admin)
}

func (d Dir) dropPodDatabase(ctx context.Context, db heatdb.DB, warn func(string, ...any)) ([]string, error) {
	exists, err := heatdb.Exists(ctx, db, db)
	if err == nil {
		if !exists {
			return nil, nil
		}
		if _, err := heatdb.Drop(ctx, db, nil); err != nil {
			return nil, fmt.Errorf("%w (the pod's MariaDB, published on %s)", err, db.Addr)
		}
		return []string{db.String() + " (the pod's MariaDB)"}, nil
	}
	rec, _ := d.ReadRecord()
	host, portStr, _ := net.SplitHostPort(db.Addr)
	port, _ := strconv.Atoi(portStr)
	if rec != nil || !proc.PortFree(host, port) {
		return nil, fmt.Errorf("the pod's MariaDB does not answer on %s (%v): start Heat (ephemeral_heat_launch) to drop its database, "+
			"or stop it (state: stopped) to have its datadir removed", db.Addr, err)
	}
	removed, err := d.RemovePodDatabase()
	if len(removed) > 0 {
		warn("the pod's MariaDB is not running (nothing listens on %s): removed its datadir %s, and Heat's database with it",
			db.Addr, d.File(MariaDBDir))
	}
	return removed, err
}

// RemovePodDatabase removes a stopped pod's own MariaDB: its datadir, and
// the credentials of its MariaDB and RabbitMQ (the pod must be gone).
func (d Dir) RemovePodDatabase() ([]string, error) {
	var removed []string
	datadir := d.File(MariaDBDir)
	if st, err := os.Lstat(datadir); err == nil && st.IsDir() {
		if err := os.RemoveAll(datadir); err != nil {
			return nil, fmt.Errorf("removing the MariaDB datadir %s of the stopped pod: %w", datadir, err)
		}
		removed = append(removed, datadir)
	}
	for _, f := range []string{MariaDBInit, RabbitConf} {
		if err := os.Remove(d.File(f)); err != nil && !os.IsNotExist(err) {
			return removed, err
		}
	}
	return removed, nil
}

// LiveDatabase says what DropDatabase would remove now, without credentials
// (for check mode): nothing when the database is gone.
func (d Dir) LiveDatabase(ctx context.Context, admin *heatdb.DB) []string {
	db, err := d.Database()
	if err != nil {
		return nil
	}
	if db.Published {
		if st, err := os.Lstat(d.File(MariaDBDir)); err == nil && st.IsDir() {
			return []string{d.File(MariaDBDir)}
		}
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
