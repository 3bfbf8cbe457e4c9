package launch_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/mariadbtest"
)

// TestDumpWipeRestoreRoundTrip: a real Heat's database (sqlite, MySQL) is
// dumped and wiped by package dumps, and restored by a relaunch with
// restore_db; the stack is the same after. (It lives here, with the
// launcher it starts, so that internal/dumps' own tests stay fast.)
func TestDumpWipeRestoreRoundTrip(t *testing.T) {
	for _, kind := range []string{launch.SQLite, launch.MySQL} {
		t.Run(kind, func(t *testing.T) {
			heattest.RequireHeat(t)
			port, _ := proc.FreePort()
			dir := filepath.Join(t.TempDir(), "heat-launcher")
			o := launch.Options{HeatDir: dir, APIPort: port, Database: kind, Warn: t.Logf}
			var srv *mariadbtest.Server
			if kind == launch.MySQL {
				srv = mariadbtest.Start(t)
				o.DatabaseURL = srv.URL("")
			}
			t.Cleanup(func() {
				c := o
				c.State = launch.Absent
				launch.Run(context.Background(), c)
			})
			o.State = launch.Started
			out, err := launch.Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			id := heattest.CreateGroupStack(t, out.Endpoint, "overcloud")
			before := heattest.Snapshot(t, out.Endpoint, "overcloud", id)

			hd, err := heatdir.At(dir)
			if err != nil {
				t.Fatal(err)
			}
			target, err := hd.Database()
			if err != nil {
				t.Fatal(err)
			}
			var admin *heatdb.DB
			if o.DatabaseURL != "" {
				a, _ := heatdb.ParseAdmin(o.DatabaseURL)
				admin = &a
			}
			r, err := dumps.Dump(context.Background(), dumps.DumpOptions{HeatDir: hd, Keep: 5, Wipe: true,
				WipeFunc: func(ctx context.Context) ([]string, error) {
					return hd.DropDatabase(ctx, admin, t.Logf)
				}})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Changed || !r.Wiped || r.Tables < 10 || r.Rows == 0 || len(r.Stacks) != 1 || r.Stacks[0].Name != "overcloud" || r.Stacks[0].Status != "CREATE_COMPLETE" {
				t.Fatalf("dump result: %+v", r)
			}
			for _, p := range []string{r.Path, r.Path + dumps.SumSuffix, r.Path + dumps.ManifestSuff} {
				st, err := os.Stat(p)
				if err != nil || st.Mode().Perm() != 0o600 {
					t.Fatalf("%s: %v mode %v", p, err, st)
				}
			}
			if exists, err := heatdb.HasData(context.Background(), target.DB); (err != nil && !errors.Is(err, heatdb.ErrNoAccess)) || exists {
				t.Fatalf("live database still there after wipe: %v %v", exists, err)
			}
			// A second dump finds the database gone and the dump saved: no change.
			again, err := dumps.Dump(context.Background(), dumps.DumpOptions{HeatDir: hd, Wipe: true})
			if err != nil || again.Changed || again.Path != r.Path {
				t.Fatalf("second dump: %+v %v", again, err)
			}

			o.State = launch.Stopped
			if _, err := launch.Run(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			o.State = launch.Started
			o.RestoreDB = true
			out, err = launch.Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if out.Restored != r.Path {
				t.Errorf("restored %q, want %q", out.Restored, r.Path)
			}
			if after := heattest.Snapshot(t, out.Endpoint, "overcloud", id); after != before {
				t.Fatalf("stack differs after restore:\nbefore %s\nafter  %s", before, after)
			}
			if srv == nil {
				return
			}
			// A mysqldump file of the same database restores through state=restored.
			target, _ = hd.Database()
			file := filepath.Join(t.TempDir(), "heat.mysqldump.sql")
			cmd := exec.Command("mysqldump", "--defaults-extra-file="+srv.ClientConfig, "--single-transaction", "--result-file="+file, target.Database)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("mysqldump: %v %s", err, b)
			}
			o.State = launch.Stopped
			launch.Run(context.Background(), o)
			// Without a .sha256 it is refused unless told verify: false.
			if _, err := dumps.Restore(context.Background(), dumps.RestoreOptions{HeatDir: hd, Dump: file}); err == nil ||
				!strings.Contains(err.Error(), "verify: false") {
				t.Fatalf("an unverified dump was not refused: %v", err)
			}
			var warned []string
			rr, err := dumps.Restore(context.Background(), dumps.RestoreOptions{HeatDir: hd, Dump: file, AllowUnverified: true,
				Warn: func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }})
			if err != nil || !rr.Changed || len(rr.Stacks) != 1 || rr.Backup == "" {
				t.Fatalf("restoring the mysqldump file: %+v %v", rr, err)
			}
			if !strings.Contains(strings.Join(warned, "\n"), "has no .sha256") {
				t.Errorf("no warning about the missing checksum: %v", warned)
			}
			o.RestoreDB = false
			o.State = launch.Started
			out, err = launch.Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if after := heattest.Snapshot(t, out.Endpoint, "overcloud", id); after != before {
				t.Fatalf("stack differs after the mysqldump restore")
			}
		})
	}
}
