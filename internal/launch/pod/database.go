package pod

import (
	"context"
	"fmt"
	"os"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// Database: the pod's own MariaDB, its datadir in heat_dir (MariaDBDir).
func (b *Backend) Database() backend.Database { return ownMariaDB{b} }

// ownMariaDB is the database lifecycle of a pod: its own MariaDB, which
// runs while the pod runs, published on the host's loopback; heat.conf
// names it as Heat reaches it inside the pod and, as host_connection, as
// the host reaches it (heatdir.Database.Published).
type ownMariaDB struct{ b *Backend }

// Create gives Heat the pod's own MariaDB: a random password per launch,
// published on a free port of the host's 127.0.0.1 (heat.conf's host
// database) for heat_db_dump, restore_db and the watchdog.
func (o ownMariaDB) Create(_ context.Context, s *backend.Spec, cfg *heatdir.Config, rec *heatdir.Record) error {
	b := o.b
	b.S = s
	p, err := b.choosePorts()
	if err != nil {
		return err
	}
	if b.sec.DBPassword, err = b.NewSecret(); err != nil {
		return err
	}
	p.HostMySQL = p.MySQL
	if !b.hostNetwork() {
		if p.HostMySQL, err = proc.FreePort(); err != nil {
			return err
		}
	}
	inPod := heatdb.DB{Kind: heatdb.MySQL, User: "heat", Password: b.sec.DBPassword, Net: "tcp",
		Addr: fmt.Sprintf("127.0.0.1:%d", p.MySQL), Database: "heat"}
	host := inPod
	host.Addr = fmt.Sprintf("127.0.0.1:%d", p.HostMySQL)
	cfg.Database, cfg.HostDatabase = inPod, &host
	rec.Database, rec.DBHostPort = string(heatdb.MySQL), p.HostMySQL
	rec.DBLocation = fmt.Sprintf("%s (MariaDB of pod %s, datadir %s)", host, b.Name(), b.Path(heatdir.MariaDBDir))
	if p.HostMySQL != p.MySQL {
		rec.DBLocation = fmt.Sprintf("%s (MariaDB of pod %s, 127.0.0.1:%d inside the pod, datadir %s)",
			host, b.Name(), p.MySQL, b.Path(heatdir.MariaDBDir))
	}
	return nil
}

// Owns: the database heat.conf names by host_connection.
func (ownMariaDB) Owns(db heatdir.Database) bool { return db.Published }

// Drop drops Heat's database in the running MariaDB, through the port
// the pod publishes; its account stays until Teardown removes the datadir.
func (ownMariaDB) Drop(ctx context.Context, d heatdir.Dir, warn func(string, ...any)) ([]string, error) {
	return d.DropDatabase(ctx, nil, warn)
}

// Live lists the datadir, if it exists.
func (ownMariaDB) Live(_ context.Context, d heatdir.Dir) []string {
	if st, err := os.Lstat(d.File(heatdir.MariaDBDir)); err == nil && st.IsDir() {
		return []string{d.File(heatdir.MariaDBDir)}
	}
	return nil
}

// Teardown removes a stopped pod's own MariaDB: its datadir, and the
// credentials of its MariaDB and RabbitMQ (the pod must be gone).
func (ownMariaDB) Teardown(_ context.Context, d heatdir.Dir, _ func(string, ...any)) ([]string, error) {
	var removed []string
	datadir := d.File(heatdir.MariaDBDir)
	if st, err := os.Lstat(datadir); err == nil && st.IsDir() {
		if err := os.RemoveAll(datadir); err != nil {
			return nil, fmt.Errorf("removing the MariaDB datadir %s of the stopped pod: %w", datadir, err)
		}
		removed = append(removed, datadir)
	}
	for _, f := range []string{heatdir.MariaDBInit, heatdir.RabbitConf} {
		if err := os.Remove(d.File(f)); err != nil && !os.IsNotExist(err) {
			return removed, err
		}
	}
	return removed, nil
}
