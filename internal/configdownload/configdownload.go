package configdownload

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stackname"
)

// RunOptions are the module's parameters.
type RunOptions struct {
	Stack             string
	Dest              string
	SSHUser           string
	SSHNetwork        string
	Release           Release
	ConfigType        []string
	PythonInterpreter string
	Commit            bool
	CheckMode         bool
	Now               func() time.Time
}

// Outcome is what Run reports.
type Outcome struct {
	Changed   bool
	Roles     []string
	Hosts     []string
	Inventory string
	Commit    string
	Files     Changes
	StackID   string
	APICalls  int
	// DeploymentLookup says how the TripleODeployment resources were
	// found: LookupStacks or LookupListing ("" with no deployment).
	DeploymentLookup string
	Warnings         []string
	Msg              string
}

// renderGCPercent is the garbage collector's target while Run renders
// (runtime/debug.SetGCPercent): render x10 of the THT overcloud took 0.66 s
// with it against 0.91-1.09 s with the default 100.
const renderGCPercent = 400

// Run downloads the config of a stack into dest.
func Run(ctx context.Context, c *heatapi.Client, o RunOptions) (Outcome, error) {
	out := Outcome{Roles: []string{}, Hosts: []string{}, Inventory: filepath.Join(o.Dest, InventoryFile)}
	if o.Now == nil {
		o.Now = time.Now
	}
	if err := stackname.Check("stack", o.Stack, stackname.Heat); err != nil {
		return out, err
	}
	if o.Dest == "" {
		return out, fmt.Errorf("dest is required")
	}
	switch o.Release {
	case "":
		o.Release = Wallaby
	case Wallaby, Zed:
	default:
		return out, fmt.Errorf("tripleo_release %q is not one of %s", o.Release, strings.Join(Releases, ", "))
	}
	// Refused before Heat is asked anything.
	if err := CheckDest(o.Dest); err != nil {
		return out, err
	}
	f, err := Fetch(ctx, c, o.Stack, o.Release)
	out.Warnings = append(out.Warnings, f.Warnings...)
	out.APICalls = f.Calls
	out.DeploymentLookup = f.Lookup
	out.StackID = f.Ref.ID
	if err != nil {
		return out, err
	}
	// Rendering allocates many short-lived YAML nodes around a few MB that
	// stay: with the collector's default target it spends about a third of
	// the render collecting. The render and the write are short; the
	// previous target comes back when Run returns.
	defer debug.SetGCPercent(debug.SetGCPercent(renderGCPercent))
	r, err := Render(&f.Data, Options{SSHUser: o.SSHUser, SSHNetwork: o.SSHNetwork, Release: o.Release,
		ConfigType: o.ConfigType, PythonInterpreter: o.PythonInterpreter})
	if err != nil {
		return out, err
	}
	out.Warnings = append(out.Warnings, r.Warnings...)
	out.Roles, out.Hosts = r.Roles, r.Hosts
	msg := fmt.Sprintf("config-download of %s at %s", f.Data.Name, o.Now().UTC().Format(time.RFC3339))
	res, err := Sync(o.Dest, r, SyncOptions{Commit: o.Commit, CheckMode: o.CheckMode, Message: msg, Now: o.Now})
	out.Changed, out.Files, out.Commit = res.Changed, res.Files, res.Commit
	if err != nil {
		return out, fmt.Errorf("writing %s: %w", o.Dest, err)
	}
	n := len(res.Files.Added) + len(res.Files.Modified) + len(res.Files.Removed)
	switch {
	case o.CheckMode && out.Changed:
		out.Msg = fmt.Sprintf("%d file(s) of %s would change", n, o.Dest)
	case o.CheckMode:
		out.Msg = fmt.Sprintf("%s is up to date with stack %s", o.Dest, f.Data.Name)
	case res.Uncommitted:
		out.Msg = fmt.Sprintf("%s was up to date but not committed: committed %s", o.Dest, short(res.Commit))
	case out.Changed && out.Commit != "":
		out.Msg = fmt.Sprintf("rendered stack %s into %s: %d file(s) changed, commit %s", f.Data.Name, o.Dest, n, short(out.Commit))
	case out.Changed:
		out.Msg = fmt.Sprintf("rendered stack %s into %s: %d file(s) changed", f.Data.Name, o.Dest, n)
	default:
		out.Msg = fmt.Sprintf("%s is up to date with stack %s", o.Dest, f.Data.Name)
	}
	return out, nil
}

// DiffText lists changed files for Ansible's diff ("prepared").
func (c Changes) DiffText() string {
	var b strings.Builder
	for _, p := range c.Added {
		fmt.Fprintf(&b, "+ %s\n", p)
	}
	for _, p := range c.Modified {
		fmt.Fprintf(&b, "~ %s\n", p)
	}
	for _, p := range c.Removed {
		fmt.Fprintf(&b, "- %s\n", p)
	}
	return b.String()
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
