package main

// heat_type fake: a launch backend in one file, as a new backend of the
// collection would be (TestFakeBackend registers it, the one other line it
// takes). It declares an option of its own with its default, keeps Heat's
// database in heat_dir's sqlite file (backend.SQLiteFile), and records its
// Heat as a host process. Its "Heat" is this test binary run again with
// fakeHeatEnv set (init below): it makes the database's stack table, as
// db_sync would, and answers the API calls the launcher makes, with the
// option's value in a header.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

var fakeGreeting = &backend.Option{Param: module.Param{Name: "fake_greeting", Default: "hello",
	Help: "fake: what the stand-in Heat says in X-Fake-Greeting"}}

var fakeDeclaration = backend.Declaration{
	HeatType: "fake",
	Options:  []*backend.Option{fakeGreeting},
	Identity: heatdir.ProcessIdentity,
	New:      func() backend.Backend { return &fakeBackend{} },
}

// fakeHeatEnv holds "ADDRESS DATABASE GREETING" in the stand-in Heat's environment.
const fakeHeatEnv = "EPHEMERAL_HEAT_FAKE_HEAT"

func init() {
	if v := os.Getenv(fakeHeatEnv); v != "" {
		os.Exit(serveFakeHeat(strings.SplitN(v, " ", 3)))
	}
}

func serveFakeHeat(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "fake heat: want ADDRESS DATABASE GREETING")
		return 2
	}
	db, err := sql.Open("sqlite", args[1])
	if err == nil {
		_, err = db.Exec("CREATE TABLE IF NOT EXISTS stack (id VARCHAR(36) PRIMARY KEY, name VARCHAR(255), action VARCHAR(255), " +
			"status VARCHAR(255), owner_id VARCHAR(36), deleted_at DATETIME, convergence BOOLEAN)")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake heat: db_sync:", err)
		return 1
	}
	http.HandleFunc("/v1/admin/stacks", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Fake-Greeting", args[2])
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"stacks": []}`)
	})
	fmt.Fprintln(os.Stderr, "fake heat: serving on", args[0])
	fmt.Fprintln(os.Stderr, http.ListenAndServe(args[0], nil))
	return 1
}

type fakeBackend struct{ started *proc.Started }

func (b *fakeBackend) Check(s *backend.Spec) error {
	if strings.ContainsAny(s.Options.Str(fakeGreeting.Name), " \n") {
		return errors.New("fake_greeting must be one word")
	}
	return nil
}

// Start runs the stand-in Heat under a name of its own (proc.Start knows
// a process by its command line once it differs from the launcher's).
func (b *fakeBackend) Start(ctx context.Context, s *backend.Spec, rec *heatdir.Record, restore func(context.Context) error) error {
	exe, err := os.Executable()
	if err != nil || restore == nil {
		return b.run(s, rec, exe, err)
	}
	if err := restore(ctx); err != nil {
		return err
	}
	return b.run(s, rec, exe, nil)
}

func (b *fakeBackend) run(s *backend.Spec, rec *heatdir.Record, exe string, err error) error {
	if err != nil {
		return err
	}
	link := s.Dir.File("fake-heat")
	if err := os.Remove(link); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := os.Symlink(exe, link); err != nil {
		return err
	}
	env := append(os.Environ(), fmt.Sprintf("%s=%s %s %s", fakeHeatEnv, heatdir.HostPort(s.BindHost, s.APIPort),
		s.Dir.File(heatdir.SQLiteFile), s.Options.Str(fakeGreeting.Name)))
	started, err := proc.Start([]string{link}, s.Dir.Path(), s.Dir.Log("fake-heat.log"), env, rec.Tag())
	if err != nil {
		return err
	}
	b.started, rec.Process = started, &started.Record
	return nil
}

// Database: heat_dir's sqlite file, which the stand-in Heat makes.
func (b *fakeBackend) Database() backend.Database { return backend.SQLiteFile{} }

func (b *fakeBackend) Configure(context.Context, *backend.Spec, *heatdir.Config, *heatdir.Record) error {
	return nil
}

func (b *fakeBackend) Ready(ctx context.Context, s *backend.Spec, rec *heatdir.Record) error {
	return backend.ProcessServes(ctx, b.started, rec.Endpoint, func() string { return b.Logs(ctx, s, rec) })
}

func (b *fakeBackend) Logs(_ context.Context, s *backend.Spec, _ *heatdir.Record) string {
	data, _ := os.ReadFile(s.Dir.Log("fake-heat.log"))
	return "last lines of its log: " + proc.TailLines(data, 5)
}

func (b *fakeBackend) Alive(_ context.Context, _ *backend.Spec, rec *heatdir.Record) (bool, string) {
	if rec == nil || rec.Process == nil {
		return false, "no process was recorded"
	}
	return rec.Process.Check()
}

func (b *fakeBackend) Find(ctx context.Context, s *backend.Spec, rec *heatdir.Record) ([]string, error) {
	if alive, _ := b.Alive(ctx, s, rec); alive {
		return []string{fmt.Sprintf("process group %d", rec.Process.PGID)}, nil
	}
	return nil, nil
}

func (b *fakeBackend) StopHeat(ctx context.Context, s *backend.Spec, rec *heatdir.Record) error {
	return b.Remove(ctx, s, rec)
}

func (b *fakeBackend) Remove(ctx context.Context, s *backend.Spec, rec *heatdir.Record) error {
	if alive, _ := b.Alive(ctx, s, rec); alive {
		if err := proc.StopGroup(rec.Process.PGID, 5*time.Second, 5*time.Second); err != nil {
			return err
		}
	}
	return os.RemoveAll(filepath.Join(s.Dir.Path(), "fake-heat"))
}
