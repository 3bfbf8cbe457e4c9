package launch

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
)

// database is the lifecycle of the database the heat_dir's heat.conf
// names: that of the backend whose Create made it (backend.Database.Owns),
// else (database_url's, or one named by hand) provisioned's.
func (l *launcher) database() backend.Database {
	if db, err := l.d.Database(); err == nil {
		for _, d := range declarations() {
			if lc := d.New().Database(); lc.Owns(db) {
				return lc
			}
		}
	}
	return provisioned{l}
}

// provisioned is the lifecycle of a database on database_url's server: the
// launcher creates it, with its account; it is dropped through heat.conf,
// as database_url's user when given (which drops the account too).
type provisioned struct{ l *launcher }

// Create creates Heat's database and account on database_url's server,
// with a new random password at each launch.
func (p provisioned) Create(ctx context.Context, _ *backend.Spec, cfg *heatdir.Config, rec *heatdir.Record) error {
	l := p.l
	name := l.admin.Database
	if name == "" {
		// Stable per heat_dir, so two deployments do not share one.
		sum := sha256.Sum256([]byte(l.d.Path()))
		name = "heat_" + hex.EncodeToString(sum[:])[:10]
	}
	user := name
	if len(user) > 32 {
		user = user[:32]
	}
	pwb := make([]byte, 18)
	if _, err := rand.Read(pwb); err != nil {
		return fmt.Errorf("generating a password: %w", err)
	}
	pw := hex.EncodeToString(pwb)
	l.o.Secret(pw)
	db, err := heatdb.Provision(ctx, *l.admin, name, user, pw)
	if err != nil {
		return err
	}
	cfg.Database = db
	rec.Database, rec.DBLocation = MySQL, db.String()
	return nil
}

// Owns: any database no backend owns.
func (provisioned) Owns(heatdir.Database) bool { return true }

// Drop drops it, as database_url's user when given.
func (p provisioned) Drop(ctx context.Context, d heatdir.Dir, warn func(string, ...any)) ([]string, error) {
	return d.DropDatabase(ctx, p.l.admin, warn)
}

// Live lists it while it exists.
func (p provisioned) Live(ctx context.Context, d heatdir.Dir) []string {
	return d.LiveDatabase(ctx, p.l.admin)
}

// Teardown drops it, as Drop.
func (p provisioned) Teardown(ctx context.Context, d heatdir.Dir, warn func(string, ...any)) ([]string, error) {
	return p.Drop(ctx, d, warn)
}

// identified checks that a backend recorded what it started under the
// identity it declares.
func identified(d backend.Declaration, rec *heatdir.Record) error {
	ok := rec.Object != nil && rec.Object.Key == d.Identity
	if d.Identity == heatdir.ProcessIdentity {
		ok = rec.Process != nil
	}
	if !ok {
		return fmt.Errorf("heat_type %s started Heat but did not record it as %q in the launch record", d.HeatType, d.Identity)
	}
	return nil
}
