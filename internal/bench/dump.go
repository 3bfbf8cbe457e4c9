package bench

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dbdump"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/mariadbtest"
)

// tb lets a program use mariadbtest (written for tests): Fatalf panics with
// errFatal, recovered by startMariaDB; cleanups run at Close.
type tb struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
	errs     []string
}

type errFatal string

func (t *tb) Helper()                        {}
func (t *tb) Cleanup(f func())               { t.mu.Lock(); t.cleanups = append(t.cleanups, f); t.mu.Unlock() }
func (t *tb) Logf(format string, a ...any)   {}
func (t *tb) Errorf(format string, a ...any) { t.errs = append(t.errs, fmt.Sprintf(format, a...)) }
func (t *tb) Fatalf(format string, a ...any) { panic(errFatal(fmt.Sprintf(format, a...))) }
func (t *tb) Fatal(a ...any)                 { panic(errFatal(fmt.Sprint(a...))) }
func (t *tb) Name() string                   { return "bench" }

// Close runs the cleanups, last first.
func (t *tb) Close() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

func startMariaDB() (s *mariadbtest.Server, t *tb, err error) {
	t = &tb{}
	defer func() {
		if r := recover(); r != nil {
			msg, ok := r.(errFatal)
			if !ok {
				panic(r)
			}
			t.Close()
			s, err = nil, errors.New(string(msg))
		}
	}()
	return mariadbtest.Start(t), t, nil
}

// fillHeatDB creates stacks through a Heat launched on the MariaDB until
// its database holds at least minBytes: each stack carries a TripleO-like
// files map (2.5 MB, as a deployment's templates are) and a ResourceGroup
// of 10 members, so raw_template(_files), stack, resource, event and
// resource_properties_data all have rows.
func fillHeatDB(ctx context.Context, env *Env, adminURL string, minBytes int64) (heatDB string, stacks int, err error) {
	base, err := os.MkdirTemp(env.Work, "dumpheat-")
	if err != nil {
		return "", 0, err
	}
	port, err := proc.FreePort()
	if err != nil {
		return "", 0, err
	}
	o := launch.Options{State: launch.Started, HeatDir: filepath.Join(base, "heat-launcher"), APIPort: port,
		Database: launch.MySQL, DatabaseURL: adminURL, Timeout: 180 * time.Second}
	out, err := launch.Run(ctx, o)
	if err != nil {
		return "", 0, fmt.Errorf("launching Heat on MariaDB: %w", err)
	}
	defer func() {
		o.State = launch.Stopped // keep the database
		launch.Run(context.Background(), o)
		os.RemoveAll(base)
	}()
	heatDB = out.DatabaseLocation[strings.LastIndexByte(out.DatabaseLocation, '/')+1:]
	c, err := heatapi.NewNoAuth(out.Endpoint)
	if err != nil {
		return "", 0, err
	}
	member := "heat_template_version: wallaby\nparameters:\n  index: {type: string}\nresources:\n  v:\n    type: OS::Heat::Value\n    properties:\n      value: {list_join: ['-', [node, {get_param: index}]]}\n  r:\n    type: OS::Heat::RandomString\noutputs:\n  value: {value: {get_attr: [v, value]}}\n"
	var total int64
	for stacks = 0; total < minBytes; stacks++ {
		files := map[string]string{"file:///bench/member.yaml": member}
		for i := 0; i < 10; i++ {
			blob := make([]byte, 190*1024)
			rand.Read(blob)
			files[fmt.Sprintf("file:///bench/deployment/svc%02d.yaml", i)] = "# " + base64.StdEncoding.EncodeToString(blob)
		}
		tpl := map[string]any{
			"heat_template_version": "wallaby",
			"resources": map[string]any{"group": map[string]any{
				"type": "OS::Heat::ResourceGroup",
				"properties": map[string]any{"count": 10, "resource_def": map[string]any{
					"type": "file:///bench/member.yaml", "properties": map[string]any{"index": "%index%"}}},
			}},
		}
		name := fmt.Sprintf("fill-%02d", stacks)
		body, _ := json.Marshal(map[string]any{"stack_name": name, "template": tpl, "files": files, "timeout_mins": 10})
		ref, err := c.CreateStack(ctx, name, body)
		if err != nil {
			return heatDB, stacks, fmt.Errorf("creating %s: %w", name, err)
		}
		for {
			st, err := c.GetStack(ctx, ref, false)
			if err != nil {
				return heatDB, stacks, err
			}
			if st.Status == "CREATE_COMPLETE" {
				break
			}
			if !strings.HasSuffix(st.Status, "IN_PROGRESS") {
				return heatDB, stacks, fmt.Errorf("stack %s: %s %s", name, st.Status, st.StatusReason)
			}
			time.Sleep(200 * time.Millisecond)
		}
		for _, b := range files {
			total += int64(len(b))
		}
	}
	return heatDB, stacks, nil
}

// DumpRow compares dbdump.DumpMySQL with mysqldump --single-transaction on
// a Heat database of at least 40 MB in a private MariaDB.
func DumpRow(ctx context.Context, env *Env, rounds int) Row {
	const name, title = "db_dump", "dump of a Heat database (MariaDB, private server)"
	cand, base := "internal/dbdump.DumpMySQL to a file", "mysqldump --single-transaction to a file"
	srv, t, err := startMariaDB()
	if err != nil {
		return Unavailable(name, title, cand, base, "MariaDB: "+err.Error())
	}
	defer t.Close()
	fillStart := time.Now()
	heatDB, stacks, err := fillHeatDB(ctx, env, srv.URL(""), 42<<20)
	if err != nil {
		return Unavailable(name, title, cand, base, "filling the Heat database: "+err.Error())
	}
	fmt.Fprintf(env.Log, "  db_dump: %d stacks created in %.0fs\n", stacks, time.Since(fillStart).Seconds())
	dir, err := os.MkdirTemp(env.Work, "dumps-")
	if err != nil {
		return Unavailable(name, title, cand, base, err.Error())
	}
	defer os.RemoveAll(dir)
	bins, _ := mariadbtest.FindBinaries()
	var goSize, sqlSize int64
	s := Interleave(ctx, env.Log, name, rounds, []Variant{
		{Name: "go", Run: func(ctx context.Context) (time.Duration, error) {
			p := filepath.Join(dir, "go.sql")
			return timed(func() error {
				f, err := os.Create(p)
				if err != nil {
					return err
				}
				_, err = dbdump.DumpMySQL(ctx, srv.DSN(heatDB), f)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if st, serr := os.Stat(p); serr == nil {
					goSize = st.Size()
				}
				return err
			})
		}},
		{Name: "mysqldump", Run: func(ctx context.Context) (time.Duration, error) {
			p := filepath.Join(dir, "mysqldump.sql")
			return timed(func() error {
				if err := srv.DumpTo(ctx, bins.Dump, p, "--single-transaction", heatDB); err != nil {
					return err
				}
				if st, serr := os.Stat(p); serr == nil {
					sqlSize = st.Size()
				}
				return nil
			})
		}},
	})
	note := fmt.Sprintf("database %s: %d stacks of a 10-member ResourceGroup, each with a 2.5 MB files map; dump sizes: DumpMySQL %.1f MB, mysqldump %.1f MB; MariaDB %s",
		"of Heat 19 schema (db_sync)", stacks, float64(goSize)/(1<<20), float64(sqlSize)/(1<<20), srv.Version)
	return NewRow(name, title, cand, base, s["go"], s["mysqldump"], note)
}
