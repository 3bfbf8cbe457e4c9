// Package migrate moves an overcloud off an installed (long-lived) Heat:
// it writes, from that Heat's stack, the working dir python-tripleoclient
// stable/wallaby would have after a deploy (package workdir owns its names
// and formats): the passwords, kept from the stack's environment as
// tripleo-common's generate_passwords keeps existing ones; the saved
// outputs, environment and nodes; the scale-down environment that keeps
// the member indices the installed stack's removal policies skipped;
// config-download; and a first dump of the stack's database in this
// collection's format (package dumps). The installed Heat is only read:
// API GETs, and one consistent read of its database.
//
// Open checks everything before anything is written (the working dir is
// new or empty, the stack is there, the database holds it); Write then
// writes, under the working dir's lock the caller holds, the record last,
// so that a migrate that completed is recognised (a second one changes
// nothing) and one that did not is refused as a non-empty working dir.
package migrate

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/passwords"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
)

// Options say what to migrate, from where, to where.
type Options struct {
	Layout workdir.Layout
	// Heat is the installed Heat's API (cloud or endpoint).
	Heat *heatapi.Client
	// DatabaseURL is the URL of its database (read only); Param names the
	// option in messages.
	DatabaseURL string
	Param       string
	// Names are the password parameter names (passwords.Names).
	Names []string
	Now   func() time.Time
	Warn  func(string, ...any)
	// Secret masks a value in every result (the database password).
	Secret func(string)
	// Render renders config-download (configdownload.Run when nil).
	Render func(context.Context, *heatapi.Client, configdownload.RunOptions) (configdownload.Outcome, error)
}

// Source is an installed Heat's stack checked for a migrate: nothing has
// been written yet.
type Source struct {
	o     Options
	db    heatdb.DB
	ref   heatapi.StackRef
	stack *heatapi.Stack
	env   map[string]any
	// Done is the record of a migrate that completed into this working
	// dir from the same stack: Write does nothing.
	Done *workdir.Migration
}

// Result is what Write did (or, in check mode, would do).
type Result struct {
	Changed     bool
	StackID     string
	StackStatus string
	// Files are the files written (check mode: that would be).
	Files []string
	// Kept are the passwords the stack's environment had; Generated those
	// it did not (generated as a first deploy does).
	Kept, Generated []string
	// Skipped are, per node group, the indices its removal policies skip.
	Skipped map[string][]string
	Dump    string
	Record  string
	Msg     string
}

// Open checks a migrate before anything is written: the working dir does
// not exist or is empty (or a completed migrate of the same stack is
// there: Done), database_url is a Heat database, the stack is in the Heat
// and in that database, and not in progress. Its refusals name the option.
func Open(ctx context.Context, o Options) (*Source, error) {
	if o.Param == "" {
		o.Param = "database_url"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Warn == nil {
		o.Warn = func(string, ...any) {}
	}
	if o.Secret == nil {
		o.Secret = func(string) {}
	}
	if o.Names == nil {
		o.Names = passwords.Names
	}
	if o.Render == nil {
		o.Render = configdownload.Run
	}
	l := o.Layout
	if err := l.Guard(); err != nil {
		return nil, err
	}
	done, err := l.ReadMigration()
	if err != nil {
		return nil, fmt.Errorf("work_dir: %w", err)
	}
	if done == nil {
		if err := l.Fresh(); err != nil {
			return nil, err
		}
	}
	if strings.TrimSpace(o.DatabaseURL) == "" {
		return nil, fmt.Errorf("%s is required: the URL of the installed Heat's database (its heat.conf [database] connection), read only", o.Param)
	}
	db, err := heatdb.Parse(o.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Param, err)
	}
	if db.Kind == heatdb.MySQL {
		o.Secret(db.Password)
	}
	if o.Heat == nil {
		return nil, fmt.Errorf("no installed Heat given: set cloud or endpoint")
	}
	ref, err := o.Heat.FindStack(ctx, l.Stack)
	if heatapi.IsNotFound(err) {
		return nil, fmt.Errorf("stack: the Heat at %s has no stack %q: give stack the name of the overcloud stack it holds "+
			"(openstack stack list), or cloud/endpoint the Heat that holds it; nothing was written", o.Heat.Endpoint(), l.Stack)
	}
	if err != nil {
		return nil, fmt.Errorf("finding stack %s in the Heat at %s: %w", l.Stack, o.Heat.Endpoint(), err)
	}
	if done != nil {
		if done.StackID != ref.ID {
			return nil, fmt.Errorf("work_dir %s holds a migrate of stack %s (id %s), not of stack %s (id %s): give a new work_dir",
				l.Dir, done.Stack, done.StackID, ref.Name, ref.ID)
		}
		return &Source{o: o, db: db, ref: ref, Done: done}, nil
	}
	st, err := o.Heat.GetStack(ctx, ref, true)
	if err != nil {
		return nil, fmt.Errorf("reading stack %s: %w", ref, err)
	}
	if strings.HasSuffix(st.Status, "_IN_PROGRESS") {
		return nil, fmt.Errorf("stack: %s is %s on the installed Heat: wait until it ends, then migrate; nothing was written", ref.Name, st.Status)
	}
	stacks, err := heatdb.ListStacks(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the stacks of %s: %w", o.Param, db, err)
	}
	if !holds(stacks, ref.ID) {
		return nil, fmt.Errorf("%s: the database %s does not hold stack %s (id %s), which the Heat at %s has (it holds %s): "+
			"give the database of that Heat (its heat.conf [database] connection); nothing was written",
			o.Param, db, ref.Name, ref.ID, o.Heat.Endpoint(), stackList(stacks))
	}
	// Heat's API shows hidden parameters, the passwords among them, as
	// "******": they are read from the environment Heat stored.
	env, err := heatdb.StackEnvironment(ctx, db, ref.ID)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Param, err)
	}
	if enc := encrypted(env, o.Names); len(enc) > 0 {
		return nil, fmt.Errorf("%s: the installed Heat stored %s of stack %s encrypted (heat.conf encrypt_parameters_and_properties): "+
			"migrate cannot read them; give them in an environment of your own after migrating, or decrypt them on the installed Heat first; "+
			"nothing was written", o.Param, strings.Join(enc, ", "), ref.Name)
	}
	return &Source{o: o, db: db, ref: ref, stack: st, env: env}, nil
}

// encrypted lists the names whose values the environment holds
// encrypted.
func encrypted(env map[string]any, names []string) []string {
	enc := map[string]bool{}
	list, _ := env["encrypted_param_names"].([]any)
	for _, n := range list {
		enc[fmt.Sprint(n)] = true
	}
	var out []string
	for _, n := range names {
		if enc[n] {
			out = append(out, n)
		}
	}
	return out
}

func holds(stacks []heatdb.Stack, id string) bool {
	for _, s := range stacks {
		if s.ID == id {
			return true
		}
	}
	return false
}

func stackList(stacks []heatdb.Stack) string {
	if len(stacks) == 0 {
		return "no stack"
	}
	var s []string
	for _, x := range stacks {
		s = append(s, x.Name+" "+x.ID)
	}
	return strings.Join(s, ", ")
}

// Passwords are the passwords a migrated working dir keeps, as
// tripleo-common stable/wallaby's plan.generate_passwords makes them with
// the installed stack's environment (heat.stacks.environment): each of
// names the environment's parameter_defaults has is kept as it is, the
// others are generated (passwords.Generate). (Its RpcPassword and
// NotifyPassword from RabbitPassword never applies: both are names it
// generates.) Where the stack has no
// EndpointMap with PlacementPublic (placement not yet extracted from nova,
// before train), PlacementPassword is NovaPassword's, so that keystone's
// placement user keeps its password, unless the environment had one: that
// is kept (tripleo-common would replace it; the overcloud has it).
func Passwords(env map[string]any, names []string, placementExtracted bool) (values map[string]any, kept, generated []string, err error) {
	defaults, _ := env["parameter_defaults"].(map[string]any)
	values = map[string]any{}
	for _, n := range names {
		if v, ok := defaults[n]; ok {
			if v == masked {
				return nil, nil, nil, fmt.Errorf("%s is %q, as Heat's API shows a hidden parameter: read the environment from Heat's database", n, masked)
			}
			values[n] = v
			kept = append(kept, n)
			continue
		}
		v, err := passwords.Generate(n)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("generating %s: %w", n, err)
		}
		values[n] = v
		generated = append(generated, n)
	}
	if _, had := defaults["PlacementPassword"]; !placementExtracted && !had {
		if v, ok := values["NovaPassword"]; ok {
			values["PlacementPassword"] = v
			generated = remove(generated, "PlacementPassword")
		}
	}
	return values, kept, generated, nil
}

func remove(s []string, x string) []string {
	out := s[:0]
	for _, e := range s {
		if e != x {
			out = append(out, e)
		}
	}
	return out
}

// masked is how Heat's API shows a hidden parameter.
const masked = "******"

// placementExtracted is tripleo-common's test: the stack's EndpointMap
// resource's endpoint_map names PlacementPublic (no EndpointMap: not).
func (s *Source) placementExtracted(ctx context.Context) (bool, error) {
	r, err := s.o.Heat.GetResourceAttrs(ctx, s.ref, "EndpointMap", "endpoint_map")
	if heatapi.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the EndpointMap of %s: %w", s.ref, err)
	}
	m, _ := r.Attributes["endpoint_map"].(map[string]any)
	_, ok := m["PlacementPublic"]
	return ok, nil
}

// Write writes the working dir (the caller holds its lock), or in check
// mode says what it would write: the passwords, the deployment status, the
// outputs, environment and nodes (workdir.Save), the scale-down
// environment of the skipped members, config-download, the first dump into
// the heat_dir, and the record last. A completed migrate (Done) writes
// nothing.
func (s *Source) Write(ctx context.Context, check bool) (*Result, error) {
	l := s.o.Layout
	if s.Done != nil {
		return &Result{StackID: s.Done.StackID, Skipped: s.Done.Skipped, Dump: s.Done.Dump, Record: l.Migration(), Files: []string{},
			Msg: fmt.Sprintf("%s was migrated from stack %s (%s) at %s: nothing to do", l.Dir, s.Done.Stack, s.Done.StackID,
				s.Done.Time.UTC().Format(time.RFC3339))}, nil
	}
	res := &Result{Changed: true, StackID: s.ref.ID, StackStatus: s.stack.Status, Files: []string{}, Record: l.Migration()}
	extracted, err := s.placementExtracted(ctx)
	if err != nil {
		return nil, err
	}
	pw, kept, generated, err := Passwords(s.env, s.o.Names, extracted)
	if err != nil {
		return nil, err
	}
	res.Kept, res.Generated = kept, generated
	if len(generated) > 0 {
		s.o.Warn("the stack's environment had no %s: generated as a first deploy generates them (the overcloud does not use them yet)",
			strings.Join(generated, ", "))
	}
	pwContent, err := passwords.Marshal(pw)
	if err != nil {
		return nil, err
	}
	status := workdir.Status{Status: workdir.StatusSuccess}
	if !strings.HasSuffix(s.stack.Status, "_COMPLETE") {
		status = workdir.Status{Status: workdir.StatusFailed, Phase: "stack"}
		s.o.Warn("stack %s is %s on the installed Heat: the working dir says %s", s.ref.Name, s.stack.Status, workdir.StatusFailed)
	}

	// The stack's outputs, environment and nodes.
	saved, err := l.Save(ctx, s.o.Heat, check)
	if err != nil {
		return nil, err
	}
	for _, w := range saved.Warnings {
		s.o.Warn("%s", w)
	}
	res.Files = append(res.Files, saved.Files...)
	env, skipped, unrecorded := workdir.SkippedEnvironment(l.Stack, saved.Nodes)
	res.Skipped = skipped
	if len(unrecorded) > 0 {
		s.o.Warn("ResourceGroup(s) %s skipped members but take count or removal_policies from no parameter: "+
			"the first ephemeral deploy cannot be told to skip them, and numbers their members anew", strings.Join(unrecorded, ", "))
	}
	files := map[string][]byte{l.Passwords(): pwContent}
	if env != nil {
		files[l.ScaleDown()] = env
	}
	written, err := l.WriteFiles(files, check)
	if err != nil {
		return nil, err
	}
	res.Files = append(res.Files, written...)
	if changed, err := l.WriteStatus(status, check); err != nil {
		return nil, err
	} else if changed {
		res.Files = append(res.Files, l.Status())
	}

	// config-download, as a deploy renders it.
	cd, err := s.o.Render(ctx, s.o.Heat, configdownload.RunOptions{Stack: l.Stack, Dest: l.ConfigDownload(),
		SSHUser: configdownload.DefaultSSHUser, SSHNetwork: configdownload.DefaultSSHNetwork, Release: configdownload.Wallaby,
		Commit: true, CheckMode: check, Now: s.o.Now})
	for _, w := range cd.Warnings {
		s.o.Warn("config-download: %s", w)
	}
	if err != nil {
		return nil, fmt.Errorf("config-download of %s: %w", s.ref, err)
	}
	res.Files = append(res.Files, l.ConfigDownload())

	// The first dump, into the heat_dir a deploy launches its Heat in.
	hd, err := heatdir.At(l.HeatDir())
	if err != nil {
		return nil, err
	}
	if !check {
		if _, err := hd.Ensure(); err != nil {
			return nil, err
		}
	}
	d, err := dumps.Dump(ctx, dumps.DumpOptions{HeatDir: hd, Source: &s.db, Keep: 5, CheckMode: check, Now: s.o.Now,
		Warn: s.o.Warn, Secret: s.o.Secret})
	if err != nil {
		return nil, fmt.Errorf("dumping the installed Heat's database (%s): %w", s.o.Param, err)
	}
	res.Dump = d.Path
	res.Files = append(res.Files, d.Path)

	if !check {
		if err := l.WriteMigration(workdir.Migration{Stack: s.ref.Name, StackID: s.ref.ID, Heat: s.o.Heat.Endpoint(),
			Database: s.db.String(), Dump: d.Path, Skipped: skipped, Time: s.o.Now().UTC()}); err != nil {
			return nil, err
		}
	}
	res.Files = append(res.Files, l.Migration())
	sort.Strings(res.Files)
	groups := make([]string, 0, len(skipped))
	for g, ix := range skipped {
		groups = append(groups, fmt.Sprintf("%s skips %s", g, strings.Join(ix, ", ")))
	}
	sort.Strings(groups)
	verb := "migrated"
	if check {
		verb = "would migrate"
	}
	res.Msg = fmt.Sprintf("%s stack %s (%s) into %s: %d password(s) kept, %d generated", verb, s.ref.Name, s.ref.ID, l.Dir, len(kept), len(generated))
	if len(groups) > 0 {
		res.Msg += "; " + strings.Join(groups, "; ") + " (recorded in " + l.ScaleDown() + ")"
	}
	return res, nil
}
