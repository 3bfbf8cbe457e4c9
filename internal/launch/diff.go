package launch

import (
	"context"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
)

// View is what ephemeral_heat_launch's diff shows of a heat_dir's Heat,
// before and after a run: its state (Started, Stopped: not running, its
// database kept; Absent: neither), and, while it runs, how (heat_type) and
// where (endpoint); the database's kind (sqlite, mysql) while there is one.
type View struct {
	State    string
	HeatType string
	Endpoint string
	Database string
}

// Map is the view as the diff's before or after: its fields by their
// option and result names, the empty ones left out.
func (v View) Map() map[string]any {
	m := map[string]any{"state": v.State}
	for k, s := range map[string]string{"heat_type": v.HeatType, "endpoint": v.Endpoint, "database": v.Database} {
		if s != "" {
			m[k] = s
		}
	}
	return m
}

// runningView is the view of the Heat rec records, running.
func runningView(rec *heatdir.Record) View {
	return View{State: Started, HeatType: rec.HeatType, Endpoint: rec.Endpoint, Database: rec.Database}
}

// idleView is the view of the heat_dir when no Heat of it runs: Stopped
// while the database heat.conf names is there (what state absent would
// remove), else Absent.
func (l *launcher) idleView(ctx context.Context) View {
	if len(l.d.LiveDatabase(ctx, l.admin)) == 0 {
		return View{State: Absent}
	}
	v := View{State: Stopped}
	if db, err := l.d.Database(); err == nil {
		v.Database = string(db.Kind)
	}
	return v
}

// currentView is the view before a run: rec's Heat when it runs (alive,
// recorded running), else the heat_dir's idle view.
func (l *launcher) currentView(ctx context.Context, rec *heatdir.Record, alive bool) View {
	if rec != nil && alive && rec.State == heatdir.Running {
		return runningView(rec)
	}
	return l.idleView(ctx)
}

// requestedView is the view check mode predicts for state started: the
// requested heat_type and endpoint (the database's kind is the backend's
// to choose when it starts: a pod runs its own MariaDB).
func (l *launcher) requestedView() View {
	cfg := heatdir.Config{BindHost: l.o.BindHost, APIPort: l.o.APIPort}
	return View{State: Started, HeatType: l.o.HeatType, Endpoint: cfg.Endpoint()}
}

// stoppedView is the view check mode predicts for state stopped or absent
// from the view before: stopped keeps the database, absent removes it.
func (l *launcher) stoppedView(before View) View {
	if l.o.State == Absent || before.State == Absent {
		return View{State: Absent}
	}
	return View{State: Stopped, Database: before.Database}
}
