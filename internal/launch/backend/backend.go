// Package backend is what a way of running Heat (a launch backend) is: its
// Declaration (heat_type, options and their defaults, identity in the
// launch record), the Spec it starts Heat from, the Backend interface every
// one implements (check, database lifecycle, start, ready, identity, stop),
// the sqlite database lifecycle that several share, and Running, which
// tells from a launch record alone, for every backend, whether that Heat
// still answers. Package launch drives the backends; its registry lists
// them.
package backend

import (
	"context"
	"errors"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
)

// Spec is what the launcher asks of a backend: one Heat for one heat_dir.
type Spec struct {
	Dir      heatdir.Dir
	HeatType string
	BindHost string
	APIPort  int
	// Extra is added to heat.conf last: our tuning and the caller's settings.
	Extra map[string]map[string]string
	// AdminDB is the existing MySQL server (database_url) Heat's database
	// was provisioned on, or nil: the backend provides the database.
	AdminDB *heatdb.DB
	// Options are the backend's own options (Declaration.Options): those
	// given, the declared defaults of the others; Check fills in the rest.
	Options Values
	// Timeout bounds the start; StopGrace is how long Heat gets to exit.
	Timeout, StopGrace time.Duration
	// LaunchID marks what this launch starts (heatdir.Record.LaunchID).
	LaunchID string
	Warn     func(format string, args ...any)
	Secret   func(string)
}

// Backend runs Heat one way. A backend value serves one launch (package
// launch makes a new one each time), so it may keep what it started.
type Backend interface {
	// Check validates the options only this backend uses and fills their
	// defaults (they are part of the launch's fingerprint), before
	// anything is touched.
	Check(s *Spec) error
	// Database is the backend's database lifecycle, for this launch: the
	// launcher has it Create Heat's database when database_url names none
	// (no AdminDB), before Configure.
	Database() Database
	// Configure completes heat.conf's settings for this backend; it may
	// write files of its own into the heat_dir.
	Configure(ctx context.Context, s *Spec, cfg *heatdir.Config, rec *heatdir.Record) error
	// Start starts Heat from the written configuration and records its
	// identity in rec (Process, or Object under the declared Identity
	// key). restore, when not nil, loads the
	// newest dump: Start calls it once the database is reachable and before
	// db_sync.
	Start(ctx context.Context, s *Spec, rec *heatdir.Record, restore func(context.Context) error) error
	// Ready returns nil once Heat serves, an error wrapping ErrNotReady while
	// it starts, and any other error when it cannot become ready (it exited).
	Ready(ctx context.Context, s *Spec, rec *heatdir.Record) error
	// Logs returns the last lines of Heat's logs, for error messages.
	Logs(ctx context.Context, s *Spec, rec *heatdir.Record) string
	// Alive tells whether what rec names runs and is provably ours; when
	// not, why.
	Alive(ctx context.Context, s *Spec, rec *heatdir.Record) (bool, string)
	// Find lists what Remove would stop or remove: what rec names, what
	// carries rec's launch id, and (podman) objects labelled for this
	// heat_dir. rec may be nil.
	Find(ctx context.Context, s *Spec, rec *heatdir.Record) ([]string, error)
	// StopHeat stops Heat's own services and leaves its database serving
	// (the watchdog then drops the database while nothing writes to it).
	StopHeat(ctx context.Context, s *Spec, rec *heatdir.Record) error
	// Remove stops and removes all that Find lists. Nothing else is ever
	// signalled or removed.
	Remove(ctx context.Context, s *Spec, rec *heatdir.Record) error
}

// ErrNotReady means Heat is starting and not serving yet.
var ErrNotReady = errors.New("not ready")
