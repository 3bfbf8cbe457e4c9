// Command changelog is `make changelog` and `make release`: it renders
// changelogs/changelog.yaml as collection/CHANGELOG.rst (antsibull-changelog's
// format and layout). When the collection's galaxy.yml carries a version no
// release has and fragments wait in changelogs/fragments, it first releases
// that version: the fragments are folded into changelog.yaml with the
// modules, roles and playbooks no earlier release added, and removed. A
// released version that galaxy.yml still carries while fragments wait is
// refused (raise the version), unless -update-existing folds them into that
// release, which must be the newest and not tagged. With -check it changes
// nothing and fails when the changelog, the modules' version_added or
// CHANGELOG.rst disagree. With -tag (make release) it refuses a work tree
// with uncommitted changes or an existing tag, releases as above, and, when
// that left nothing to commit, tags HEAD v<version>.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/changelog"
	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/releasetag"
)

type options struct {
	dir, coll, repo, date string
	check, update, tag    bool
}

func main() {
	var o options
	flag.StringVar(&o.dir, "changelogs", "changelogs", "the changelogs directory (config.yaml, changelog.yaml, fragments/)")
	flag.StringVar(&o.coll, "collection", "collection", "the collection tree (galaxy.yml, plugins/modules, roles, playbooks)")
	flag.StringVar(&o.repo, "repo", ".", "the git work tree (-tag, -update-existing)")
	flag.StringVar(&o.date, "date", "", "release date of a new release, YYYY-MM-DD (default: the day of $SOURCE_DATE_EPOCH if set, else today, UTC)")
	flag.BoolVar(&o.check, "check", false, "change nothing; fail if the changelog, version_added or the rendered changelog are out of date")
	flag.BoolVar(&o.update, "update-existing", false, "fold waiting fragments into galaxy.yml's version although it is released (the newest release, not tagged)")
	flag.BoolVar(&o.tag, "tag", false, "make release: refuse uncommitted changes or an existing tag, release, then tag HEAD v<version> if nothing is left to commit")
	flag.Parse()
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "changelog: %v\n", err)
		os.Exit(1)
	}
}

// releaseDate is the date a new release gets.
func releaseDate(flagDate string) (string, error) {
	if flagDate != "" {
		return flagDate, nil
	}
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return "", fmt.Errorf("SOURCE_DATE_EPOCH %q is not a number of seconds", s)
		}
		return time.Unix(n, 0).UTC().Format(time.DateOnly), nil
	}
	return time.Now().UTC().Format(time.DateOnly), nil
}

func run(o options, stdout io.Writer) error {
	g, err := changelog.ReadGalaxy(changelog.GalaxyPath(o.coll))
	if err != nil {
		return err
	}
	d, err := changelog.Open(o.dir)
	if err != nil {
		return err
	}
	cl, err := d.Load()
	if err != nil {
		return err
	}
	frags, err := d.Fragments()
	if err != nil {
		return err
	}
	have, err := changelog.Scan(o.coll)
	if err != nil {
		return err
	}
	if o.check {
		return check(d, cl, g, frags, have, stdout)
	}
	if o.tag {
		if err := releasetag.Check(o.repo, g.Version); err != nil {
			return err
		}
	}
	step, err := d.Plan(cl, g, frags, o.update)
	if err != nil {
		return err
	}
	switch step {
	case changelog.NewRelease:
		date, err := releaseDate(o.date)
		if err != nil {
			return err
		}
		if err := d.Release(cl, g.Version, date, have, frags); err != nil {
			return err
		}
	case changelog.UpdateRelease:
		if tagged, err := releasetag.Exists(o.repo, g.Version); err != nil {
			return err
		} else if tagged {
			return fmt.Errorf("release %s is tagged (%s): it is published and stays as it is; raise version in %s for the next release", g.Version, releasetag.Name(g.Version), g.Path)
		}
		if err := d.UpdateRelease(cl, g.Version, have, frags); err != nil {
			return err
		}
	}
	if step != changelog.RenderOnly {
		if err := d.Save(cl); err != nil {
			return err
		}
		if err := d.RemoveFragments(frags); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "released %s with %d fragment(s)\n", g.Version, len(frags))
	}
	if err := changelog.CheckVersionAdded(cl, have); err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(d.OutputPath(), []byte(d.RenderRST(cl, g.Namespace, g.Name)), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", d.OutputPath())
	if !o.tag {
		return nil
	}
	if l, err := releasetag.Uncommitted(o.repo); err != nil {
		return err
	} else if len(l) > 0 {
		fmt.Fprintf(stdout, "release %s is ready to commit (%d change(s)): review it, commit it "+
			"(git add -A %s %s && git commit -m 'Release %s'), then run 'make release' again to tag it %s\n",
			g.Version, len(l), d.Path, d.OutputPath(), g.Version, releasetag.Name(g.Version))
		return nil
	}
	msg := fmt.Sprintf("%s.%s %s", g.Namespace, g.Name, g.Version)
	if s, ok := cl.Releases[g.Version].Changes[d.Config.PreludeSectionName].(string); ok {
		msg += "\n\n" + s
	}
	if err := releasetag.Create(o.repo, g.Version, msg); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "tagged HEAD %s (push it: git push origin %s)\n", releasetag.Name(g.Version), releasetag.Name(g.Version))
	return nil
}

// check is -check: changes nothing, fails on what make changelog would
// change or refuse, except fragments waiting for the next release.
func check(d *changelog.Dir, cl *changelog.Changelog, g changelog.Galaxy, frags []changelog.Fragment, have changelog.Objects, stdout io.Writer) error {
	if _, released := cl.Releases[g.Version]; !released {
		return fmt.Errorf("%s's version %s is not in %s: run 'make changelog' to release it", g.Path, g.Version, d.Config.ChangesFile)
	}
	// Fragments waiting beside a released version are the next release's: fine here.
	if _, err := d.Plan(cl, g, frags, true); err != nil {
		return err
	}
	if len(frags) > 0 {
		fmt.Fprintf(stdout, "%d fragment(s) wait for the next release (raise version in %s, then 'make changelog')\n", len(frags), g.Path)
	}
	if err := changelog.CheckVersionAdded(cl, have); err != nil {
		return err
	}
	cur, err := os.ReadFile(d.OutputPath())
	if err != nil || !bytes.Equal(cur, []byte(d.RenderRST(cl, g.Namespace, g.Name))) {
		return fmt.Errorf("%s is not what %s renders to: run 'make changelog'", d.OutputPath(), d.Config.ChangesFile)
	}
	return nil
}
