package migrate

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	_ "modernc.org/sqlite"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/passwords"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stack"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/fakeheat"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
)

// Passwords keeps what the stack's environment has, generates the rest,
// and gives PlacementPassword NovaPassword's value only where placement
// was not extracted and the environment had none.
func TestPasswords(t *testing.T) {
	names := []string{"AdminPassword", "NovaPassword", "PlacementPassword", "RabbitPassword"}
	for _, tc := range []struct {
		name      string
		defaults  map[string]any
		extracted bool
		kept      []string
		same      map[string]string // name -> the value it must equal
		differ    [][2]string       // pairs that must differ
		err       string
	}{
		{name: "all kept", extracted: true,
			defaults: map[string]any{"AdminPassword": "a", "NovaPassword": "n", "PlacementPassword": "p", "RabbitPassword": "r", "Other": "o"},
			kept:     names, same: map[string]string{"AdminPassword": "a", "PlacementPassword": "p"}},
		{name: "missing generated", extracted: true, defaults: map[string]any{"AdminPassword": "a"},
			kept: []string{"AdminPassword"}, differ: [][2]string{{"NovaPassword", "PlacementPassword"}}},
		{name: "placement not extracted takes nova's", defaults: map[string]any{"NovaPassword": "n"},
			kept: []string{"NovaPassword"}, same: map[string]string{"PlacementPassword": "n"}},
		{name: "placement not extracted keeps its own", defaults: map[string]any{"NovaPassword": "n", "PlacementPassword": "p"},
			kept: []string{"NovaPassword", "PlacementPassword"}, same: map[string]string{"PlacementPassword": "p"}},
		{name: "no environment", extracted: true, defaults: nil, kept: nil},
		{name: "masked value refused", extracted: true, defaults: map[string]any{"AdminPassword": "******"}, err: "AdminPassword"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]any{}
			if tc.defaults != nil {
				env["parameter_defaults"] = tc.defaults
			}
			v, kept, gen, err := Passwords(env, names, tc.extracted)
			if tc.err != "" || err != nil {
				if err == nil || !strings.Contains(err.Error(), tc.err) || tc.err == "" {
					t.Fatalf("error %v, want one naming %q", err, tc.err)
				}
				return
			}
			if !reflect.DeepEqual(kept, tc.kept) {
				t.Errorf("kept %v, want %v", kept, tc.kept)
			}
			if len(v) != len(names) || len(kept)+len(gen) > len(names) {
				t.Errorf("values %d, kept %v, generated %v", len(v), kept, gen)
			}
			if _, ok := v["Other"]; ok {
				t.Errorf("a parameter that is no password was taken")
			}
			for k, want := range tc.same {
				if v[k] != want {
					t.Errorf("%s = %v, want %s", k, v[k], want)
				}
			}
			for _, p := range tc.differ {
				if v[p[0]] == v[p[1]] || v[p[0]] == "" {
					t.Errorf("%s and %s: %v %v", p[0], p[1], v[p[0]], v[p[1]])
				}
			}
		})
	}
}

// sqliteWith makes a sqlite database with Heat's stack table holding ids.
func sqliteWith(t *testing.T, ids ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "heat.sqlite")
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE stack (id VARCHAR(36) PRIMARY KEY, name VARCHAR(255), action VARCHAR(255), status VARCHAR(255), deleted_at DATETIME, owner_id VARCHAR(36))"); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := db.Exec("INSERT INTO stack (id, name, action, status) VALUES (?, 'overcloud', 'CREATE', 'COMPLETE')", id); err != nil {
			t.Fatal(err)
		}
	}
	return "sqlite:///" + p
}

// Each bad input is refused before anything is written, naming the
// option: a non-empty work_dir, a Heat without the stack, a database that
// does not hold it, a database_url that is none; the installed Heat gets
// no request with a body (nothing but GETs reach it).
func TestOpenRefusals(t *testing.T) {
	h := fakeheat.Start(t, fakeheat.Stack{Name: "overcloud", ID: "1111-2222", Template: map[string]any{}})
	c, err := heatapi.NewNoAuth(h.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	good := sqliteWith(t, "1111-2222")
	for _, tc := range []struct {
		name, stack, url, want string
		prepare                func(dir string)
	}{
		{name: "non-empty work_dir", stack: "overcloud", url: good, want: "work_dir",
			prepare: func(dir string) {
				os.MkdirAll(dir, 0o700)
				os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600)
			}},
		{name: "no such stack", stack: "other", url: good, want: `stack: the Heat at`},
		{name: "database without the stack", stack: "overcloud", url: sqliteWith(t, "3333"), want: "database_url: the database"},
		{name: "database_url not a URL", stack: "overcloud", url: "heat", want: "database_url:"},
		{name: "database_url missing", stack: "overcloud", url: "", want: "database_url is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "work")
			if tc.prepare != nil {
				tc.prepare(dir)
			}
			before := listing(t, filepath.Dir(dir))
			l, err := workdir.New(dir, tc.stack)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Open(context.Background(), Options{Layout: l, Heat: c, DatabaseURL: tc.url})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
			if after := listing(t, filepath.Dir(dir)); !reflect.DeepEqual(before, after) {
				t.Errorf("changed:\n%v\n%v", before, after)
			}
		})
	}
	if b := h.Bodies(); len(b) > 0 {
		t.Errorf("the installed Heat was sent %v", b)
	}
}

// listing is every path under dir with its size and mode.
func listing(t *testing.T, dir string) []string {
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			out = append(out, fmt.Sprint(p, " ", fi.Mode(), " ", fi.Size(), " ", fi.ModTime().UnixNano()))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

const (
	topTemplate = `heat_template_version: wallaby
parameters:
  WorkerCount: {type: number, default: 3}
  WorkerRemovals: {type: json, default: []}
  AdminPassword: {type: string, hidden: true}
resources:
  Workers:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: WorkerCount}
      removal_policies: {get_param: WorkerRemovals}
      resource_def:
        type: OS::TripleO::Worker
        properties:
          Name: 'worker-%index%'
outputs:
  KeystoneURL:
    value: http://192.0.2.5:5000
`
	workerTemplate = `heat_template_version: wallaby
parameters:
  Name: {type: string}
resources:
  Nothing: {type: OS::Heat::None}
outputs:
  hostname: {value: {get_param: Name}}
`
)

// A migrate from a real Heat (sqlite: the database read as the installed
// one's) writes the working dir: the stack's password kept, the others
// generated; the members' indices with the one the removal policy skipped
// recorded in the scale-down environment as a scale-down records one; a
// verified dump holding the stack; the record last. Check mode writes
// nothing; a second migrate changes nothing; the stack is not touched.
func TestMigrateFromHeat(t *testing.T) {
	h := heattest.Start(t, nil)
	c, err := heatapi.NewNoAuth(h.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "top.yaml"), []byte(topTemplate), 0o600)
	os.WriteFile(filepath.Join(src, "worker.yaml"), []byte(workerTemplate), 0o600)
	os.WriteFile(filepath.Join(src, "registry.yaml"), []byte("resource_registry:\n  OS::TripleO::Worker: worker.yaml\n"+
		"parameter_defaults:\n  AdminPassword: installed-admin-secret\n  WorkerCount: 2\n  WorkerRemovals: [{resource_list: [1]}]\n"), 0o600)
	req, err := stack.Prepare(stack.Options{Name: "overcloud", Template: filepath.Join(src, "top.yaml"),
		EnvironmentFiles: []string{filepath.Join(src, "registry.yaml")}, Wait: true, Timeout: 10})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := req.Run(context.Background(), c); err != nil || out.Failed {
		t.Fatalf("create: %+v %v", out, err)
	}
	ref, _ := c.FindStack(context.Background(), "overcloud")
	before, _ := c.GetStack(context.Background(), ref, false)
	hd, _ := heatdir.At(h.Dir)
	db, err := hd.Database()
	if err != nil {
		t.Fatal(err)
	}

	l, _ := workdir.New(filepath.Join(t.TempDir(), "overcloud-deploy", "overcloud"), "overcloud")
	var rendered []string
	opts := Options{Layout: l, Heat: c, DatabaseURL: db.DB.URL(), Names: passwords.Names,
		Render: func(_ context.Context, _ *heatapi.Client, o configdownload.RunOptions) (configdownload.Outcome, error) {
			if !o.CheckMode {
				rendered = append(rendered, o.Dest)
			}
			return configdownload.Outcome{}, nil
		}}
	s, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := s.Write(context.Background(), true); err != nil || !r.Changed {
		t.Fatalf("check: %+v %v", r, err)
	}
	if _, err := os.Stat(l.Dir); !os.IsNotExist(err) {
		t.Fatalf("check mode made %s", l.Dir)
	}
	s, _ = Open(context.Background(), opts)
	r, err := s.Write(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Skipped, map[string][]string{"Workers": {"1"}}) {
		t.Errorf("skipped %v", r.Skipped)
	}
	pw, err := passwords.Read(l.Passwords())
	if err != nil || pw["AdminPassword"] != "installed-admin-secret" || len(pw) != len(passwords.Names) {
		t.Errorf("passwords: %d %v %v", len(pw), pw["AdminPassword"], err)
	}
	var env struct {
		ParameterDefaults map[string]any `yaml:"parameter_defaults"`
	}
	b, err := os.ReadFile(l.ScaleDown())
	if err != nil || yaml.Unmarshal(b, &env) != nil {
		t.Fatalf("scale-down environment: %s %v", b, err)
	}
	want := map[string]any{"WorkerCount": 2, "WorkerRemovals": []any{map[string]any{"resource_list": []any{1}}}}
	if !reflect.DeepEqual(env.ParameterDefaults, want) {
		t.Errorf("scale-down environment %v, want %v", env.ParameterDefaults, want)
	}
	n, err := l.ReadNodes()
	if err != nil || len(n.Groups) != 1 || len(n.Groups[0].Members) != 2 || n.Groups[0].Members[1].Hostname != "worker-2" {
		t.Errorf("nodes %+v %v", n, err)
	}
	// A scale-down after the migrate counts the skipped index as removed.
	plan, err := l.PlanScaleDown([]string{"worker-2"}, workdir.ScaleDownOptions{})
	if err != nil || plan.Counts["Worker"] != 1 ||
		!reflect.DeepEqual(plan.ParameterDefaults["WorkerRemovals"], []any{map[string]any{"resource_list": []any{1, 2}}}) {
		t.Errorf("scale-down after migrate: %+v %v", plan, err)
	}
	if st, err := l.ReadStatus(); err != nil || st.Status != workdir.StatusSuccess {
		t.Errorf("status %+v %v", st, err)
	}
	if !reflect.DeepEqual(rendered, []string{l.ConfigDownload()}) {
		t.Errorf("config-download rendered into %v", rendered)
	}
	if _, err := dumps.VerifyChecksum(r.Dump); err != nil || filepath.Dir(r.Dump) != l.HeatDir() {
		t.Errorf("dump %s: %v", r.Dump, err)
	}
	if m, err := dumps.ReadManifest(r.Dump); err != nil || m == nil || len(m.Stacks) != 1 || m.Stacks[0].ID != ref.ID {
		t.Errorf("dump manifest %+v %v", m, err)
	}
	if k, err := heatdir.At(l.HeatDir()); err != nil || k.Guard() != nil {
		t.Errorf("the heat_dir is not one a deploy launches in: %v", err)
	}
	rec, err := l.ReadMigration()
	if err != nil || rec == nil || rec.StackID != ref.ID {
		t.Errorf("record %+v %v", rec, err)
	}

	// Again: nothing to do, nothing changed.
	snap := listing(t, l.Dir)
	s, err = Open(context.Background(), opts)
	if err != nil || s.Done == nil {
		t.Fatalf("second open: %+v %v", s, err)
	}
	if r, err := s.Write(context.Background(), false); err != nil || r.Changed {
		t.Errorf("second migrate: %+v %v", r, err)
	}
	if after := listing(t, l.Dir); !reflect.DeepEqual(snap, after) {
		t.Errorf("second migrate changed the working dir")
	}
	after, _ := c.GetStack(context.Background(), ref, false)
	if after.UpdatedTime != before.UpdatedTime || after.Status != before.Status {
		t.Errorf("the installed stack changed: %+v -> %+v", before, after)
	}
}

// encrypted names the password parameters Heat stored encrypted, and
// only those.
func TestEncrypted(t *testing.T) {
	names := []string{"AdminPassword", "NovaPassword"}
	for _, tc := range []struct {
		env  map[string]any
		want []string
	}{
		{env: map[string]any{}, want: nil},
		{env: map[string]any{"encrypted_param_names": []any{}}, want: nil},
		{env: map[string]any{"encrypted_param_names": []any{"NovaPassword", "SomethingElse"}}, want: []string{"NovaPassword"}},
	} {
		if got := encrypted(tc.env, names); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("encrypted(%v) = %v, want %v", tc.env, got, tc.want)
		}
	}
}
