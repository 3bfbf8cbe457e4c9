package changelog

import (
	"fmt"
	"sort"
	"strings"
)

// Step is what `make changelog` does for galaxy.yml's version.
type Step int

const (
	// RenderOnly: the version is the newest release and no fragment waits.
	RenderOnly Step = iota
	// NewRelease: the version is new; the waiting fragments make its release.
	NewRelease
	// UpdateRelease: the version is the newest release and, asked to
	// (update), the waiting fragments are folded into it.
	UpdateRelease
)

// Plan decides what to do with galaxy.yml's version g.Version given the
// changelog and the waiting fragments, or refuses: a released version that
// galaxy.yml still carries while fragments wait (the fragments belong to
// the next release: raise the version), a version older than the newest
// release, a new version without fragments, and fragments a release
// already lists.
func (d *Dir) Plan(cl *Changelog, g Galaxy, frags []Fragment, update bool) (Step, error) {
	if err := released(cl, frags); err != nil {
		return 0, fmt.Errorf("%s: %w", d.fragmentsDir(), err)
	}
	newest := cl.Newest()
	_, isReleased := cl.Releases[g.Version]
	switch {
	case !isReleased && newest != "" && !newer(g.Version, newest):
		return 0, fmt.Errorf("%s's version %s is older than the newest release %s in %s: raise it above %s", g.Path, g.Version, newest, d.Config.ChangesFile, newest)
	case !isReleased && len(frags) == 0:
		return 0, fmt.Errorf("%s's version %s is not released and no fragment in %s says what it changes: add one (see README, Releases)", g.Path, g.Version, d.fragmentsDir())
	case !isReleased && update:
		return 0, fmt.Errorf("%s's version %s is not released yet: there is no release to update; run without update-existing to release it", g.Path, g.Version)
	case !isReleased:
		return NewRelease, nil
	case g.Version != newest:
		return 0, fmt.Errorf("%s's version %s is older than the newest release %s in %s: set it to %s or above", g.Path, g.Version, newest, d.Config.ChangesFile, newest)
	case len(frags) == 0:
		return RenderOnly, nil
	case update:
		return UpdateRelease, nil
	}
	return 0, fmt.Errorf("%s's version %s is already released (%s) and %d fragment(s) wait in %s (%s): "+
		"raise version in %s for the next release, then run 'make changelog'. "+
		"(Only if %s is not published, no tag v%s: 'make changelog UPDATE_EXISTING=1' folds them into it.)",
		g.Path, g.Version, d.Config.ChangesFile, len(frags), d.fragmentsDir(), fragmentNames(frags),
		g.Path, g.Version, g.Version)
}

func fragmentNames(frags []Fragment) string {
	var n []string
	for _, f := range frags {
		n = append(n, f.Name)
	}
	sort.Strings(n)
	if len(n) > 3 {
		n = append(n[:3], "...")
	}
	return strings.Join(n, ", ")
}

// CheckVersionAdded holds the modules' version_added against the releases:
// a module a release added says that release's version, and a module no
// release added yet says a version newer than the newest release.
func CheckVersionAdded(cl *Changelog, have Objects) error {
	addedIn := map[string]string{}
	for v, r := range cl.Releases {
		for _, m := range r.Modules {
			addedIn[m.Name] = v
		}
	}
	newest := cl.Newest()
	var bad []string
	for _, m := range have["module"] {
		sidecar := "plugins/modules/" + m.Name + ".yml"
		if _, err := parseVersion(m.VersionAdded); err != nil {
			bad = append(bad, fmt.Sprintf("module %s: version_added %q in %s is not a version X.Y.Z", m.Name, m.VersionAdded, sidecar))
			continue
		}
		switch v, ok := addedIn[m.Name]; {
		case ok && m.VersionAdded != v:
			bad = append(bad, fmt.Sprintf("module %s: release %s added it but %s says version_added: %s; set %s", m.Name, v, sidecar, m.VersionAdded, v))
		case !ok && newest != "" && !newer(m.VersionAdded, newest):
			bad = append(bad, fmt.Sprintf("module %s: no release added it yet but %s says version_added: %s, not newer than the newest release %s; set the version that will add it", m.Name, sidecar, m.VersionAdded, newest))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("version_added disagrees with the changelog:\n  %s", strings.Join(bad, "\n  "))
	}
	return nil
}
