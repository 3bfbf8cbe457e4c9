package backend

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
)

// Declaration is a launch backend as the rest of the collection sees it,
// declared in the backend's own package: its heat_type, the module options
// it uses beyond those every backend shares, with their defaults (Options),
// and how its launch record names what it starts (Identity). Its database
// lifecycle is its Backend's Database. Package launch's registry lists the
// declarations; the module's spec and documentation check, the refusal of
// an option given with a heat_type that does not use it, the defaults a
// launch fills in, Spec.Options and the launch fingerprint all follow from
// them.
type Declaration struct {
	HeatType string
	// Options are the module options only some backends use. One that
	// several backends use is one *Option value they all list.
	Options []*Option
	// Identity is the key under which the launch record holds what the
	// backend started: heatdir.ProcessIdentity for a host process group
	// (heatdir.Record.Process), or its own key for anything else
	// (heatdir.Record.Object).
	Identity string
	// OwnDatabaseServer: the backend gives Heat a database server of its
	// own whatever database says (a pod's MariaDB), which database_url,
	// when given, replaces. Otherwise database: sqlite is its Database's
	// file, and database: mysql needs database_url.
	OwnDatabaseServer bool
	// New returns the backend for one launch.
	New func() Backend
}

// Option is a module option of one or more backends. Param is the
// module's declaration of it (name, type, default, range, help: the spec
// and its documentation check follow from it). Launch refuses it when
// given with a heat_type whose declaration does not list it, fills in its
// Default otherwise, and holds its value in the fingerprint (a change
// restarts a running Heat) unless NoRestart.
type Option struct {
	module.Param
	// NoRestart: another value does not restart Heat (it says where to
	// reach a service, not how Heat runs).
	NoRestart bool
	// Why is added to the refusal with another heat_type, e.g. "(heat-all
	// runs its RPC in-process)".
	Why string
}

// Values are the backend options of one launch by name: what the caller
// gave, the declared defaults of the others, then what Check fills in.
type Values map[string]any

// Str is a str or path option ("" when unset).
func (v Values) Str(name string) string {
	s, _ := v[name].(string)
	return s
}

// Int is an int option (0 when unset).
func (v Values) Int(name string) int {
	n, _ := v[name].(int)
	return n
}

// Bool is a bool option (false when unset).
func (v Values) Bool(name string) bool {
	b, _ := v[name].(bool)
	return b
}

// Has tells whether the declaration lists the option name.
func (d Declaration) Has(name string) bool {
	for _, o := range d.Options {
		if o.Name == name {
			return true
		}
	}
	return false
}

// Database is a backend's database lifecycle: the database it gives Heat
// when database_url names none (the launcher provisions that one), and how
// that database is dropped and removed.
type Database interface {
	// Create sets heat.conf's database (cfg.Database, and
	// cfg.HostDatabase when the host reaches it by another address) and
	// records it in rec (Database, DBLocation, DBHostPort); called before
	// Configure.
	Create(ctx context.Context, s *Spec, cfg *heatdir.Config, rec *heatdir.Record) error
	// Owns tells whether db, as a heat_dir's heat.conf names it, is one
	// that Create makes: its Live and Teardown apply to it.
	Owns(db heatdir.Database) bool
	// Drop drops the database while its server runs (a wipe after a
	// verified dump) and returns what it removed.
	Drop(ctx context.Context, d heatdir.Dir, warn func(string, ...any)) ([]string, error)
	// Live lists what Teardown would remove now, without credentials.
	Live(ctx context.Context, d heatdir.Dir) []string
	// Teardown removes the database once Heat is stopped (state: absent),
	// and returns what it removed.
	Teardown(ctx context.Context, d heatdir.Dir, warn func(string, ...any)) ([]string, error)
}

// SQLiteFile is the database lifecycle of a backend whose Heat can use a
// file on the host: heat.sqlite in heat_dir, dropped and removed through
// heat.conf (heatdir.Dir.DropDatabase).
type SQLiteFile struct{}

// Create names heat_dir's sqlite file in heat.conf.
func (SQLiteFile) Create(_ context.Context, s *Spec, cfg *heatdir.Config, rec *heatdir.Record) error {
	cfg.Database = heatdb.DB{Kind: heatdb.SQLite, Path: s.Dir.File(heatdir.SQLiteFile)}
	rec.Database, rec.DBLocation = string(heatdb.SQLite), cfg.Database.Path
	return nil
}

// Owns: a sqlite database.
func (SQLiteFile) Owns(db heatdir.Database) bool { return db.Kind == heatdb.SQLite && !db.Published }

// Drop removes the file.
func (SQLiteFile) Drop(ctx context.Context, d heatdir.Dir, warn func(string, ...any)) ([]string, error) {
	return d.DropDatabase(ctx, nil, warn)
}

// Live lists the file (and its journal) if it exists.
func (SQLiteFile) Live(ctx context.Context, d heatdir.Dir) []string { return d.LiveDatabase(ctx, nil) }

// Teardown removes the file, as Drop.
func (f SQLiteFile) Teardown(ctx context.Context, d heatdir.Dir, warn func(string, ...any)) ([]string, error) {
	return f.Drop(ctx, d, warn)
}

// Check checks declarations together: heat types unique and non-empty,
// each with a constructor and an identity, each option with a name and a
// help line, and an option that several backends use declared once (the
// same *Option).
func Check(decls []Declaration) error {
	var problems []string
	types := map[string]bool{}
	byName := map[string]*Option{}
	for _, d := range decls {
		switch {
		case d.HeatType == "":
			problems = append(problems, "a backend has no heat_type")
		case types[d.HeatType]:
			problems = append(problems, fmt.Sprintf("heat_type %s is declared twice", d.HeatType))
		case d.New == nil || d.Identity == "":
			problems = append(problems, fmt.Sprintf("heat_type %s declares no constructor or no identity", d.HeatType))
		}
		types[d.HeatType] = true
		for _, o := range d.Options {
			switch prev, seen := byName[o.Name]; {
			case o.Name == "" || o.Help == "":
				problems = append(problems, fmt.Sprintf("heat_type %s declares an option without a name or help (%q)", d.HeatType, o.Name))
			case seen && prev != o:
				problems = append(problems, fmt.Sprintf("option %s is declared twice (heat_type %s): share one *Option", o.Name, d.HeatType))
			}
			byName[o.Name] = o
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("launch backends: %s", strings.Join(problems, "; "))
	}
	return nil
}
