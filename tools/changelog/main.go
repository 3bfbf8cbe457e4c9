// Command changelog is `make changelog`: it renders changelogs/changelog.yaml
// as CHANGELOG.rst (antsibull-changelog's format and layout). When
// galaxy.yml's version is not released yet and fragments wait in
// changelogs/fragments, it first releases that version: the fragments are
// folded into changelog.yaml with the modules, roles and playbooks no
// earlier release added, and removed. With -check it changes nothing and
// fails when CHANGELOG.rst is not what the changelog renders to.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/changelog"
	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

func main() {
	dir := flag.String("changelogs", "changelogs", "the changelogs directory (config.yaml, changelog.yaml, fragments/)")
	coll := flag.String("collection", "collection", "the collection tree (galaxy.yml, plugins/modules, roles, playbooks)")
	date := flag.String("date", time.Now().UTC().Format("2006-01-02"), "release date of a new release")
	check := flag.Bool("check", false, "change nothing; fail if the rendered changelog is out of date")
	flag.Parse()
	if err := run(*dir, *coll, *date, *check); err != nil {
		fmt.Fprintf(os.Stderr, "changelog: %v\n", err)
		os.Exit(1)
	}
}

func run(dir, coll, date string, check bool) error {
	galaxyPath := changelog.GalaxyPath(coll)
	g, err := changelog.ReadGalaxy(galaxyPath)
	if err != nil {
		return err
	}
	d, err := changelog.Open(dir)
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
	if _, released := cl.Releases[g.Version]; !released {
		if check {
			return fmt.Errorf("%s's version %s is not in %s: run 'make changelog' to release it", galaxyPath, g.Version, d.Config.ChangesFile)
		}
		have, err := changelog.Scan(coll)
		if err != nil {
			return err
		}
		if err := d.Release(cl, g.Version, date, have, frags); err != nil {
			return err
		}
		if err := d.Save(cl); err != nil {
			return err
		}
		if err := d.RemoveFragments(frags); err != nil {
			return err
		}
		fmt.Printf("released %s with %d fragment(s)\n", g.Version, len(frags))
	} else if len(frags) > 0 {
		fmt.Printf("%d fragment(s) wait for the next release (raise version in %s, then 'make changelog')\n", len(frags), galaxyPath)
	}
	out := []byte(d.RenderRST(cl, g.Namespace, g.Name))
	if check {
		cur, err := os.ReadFile(d.OutputPath())
		if err != nil || !bytes.Equal(cur, out) {
			return fmt.Errorf("%s is not what %s renders to: run 'make changelog'", d.OutputPath(), d.Config.ChangesFile)
		}
		return nil
	}
	if err := fsutil.WriteFileAtomic(d.OutputPath(), out, 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s\n", d.OutputPath())
	return nil
}
