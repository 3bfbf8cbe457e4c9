package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, b)
	}
	return strings.TrimSpace(string(b))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReleaseAndTag runs `make release` and `make changelog` in a
// temporary git repository laid out as this one, with this project's
// changelogs/config.yaml: a release, its commit, its tag, then the
// refusals of a dirty tree, of an existing tag and of fragments waiting
// beside a released version.
func TestReleaseAndTag(t *testing.T) {
	config, err := os.ReadFile(filepath.Join("..", "..", "changelogs", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	o := options{dir: filepath.Join(repo, "changelogs"), coll: filepath.Join(repo, "collection"), repo: repo, date: "2026-02-01"}
	galaxy := filepath.Join(o.coll, "galaxy.yml")
	writeFile(t, galaxy, "namespace: ns\nname: coll\nversion: 1.0.0\n")
	writeFile(t, filepath.Join(o.coll, "plugins", "modules", "mod.yml"), "DOCUMENTATION:\n  short_description: A module\n  version_added: 1.0.0\n")
	writeFile(t, filepath.Join(o.dir, "config.yaml"), string(config))
	writeFile(t, filepath.Join(o.dir, "changelog.yaml"), "ancestor: null\nreleases: {}\n")
	writeFile(t, filepath.Join(o.dir, "fragments", "1.0.0.yml"), "release_summary: The first release.\n")
	writeFile(t, filepath.Join(o.dir, "fragments", ".keep"), "")
	for _, args := range [][]string{
		{"init", "-q"}, {"config", "user.name", "Release Test"}, {"config", "user.email", "release@test.invalid"},
		{"config", "commit.gpgsign", "false"}, {"config", "tag.gpgsign", "false"}, {"add", "-A"}, {"commit", "-q", "-m", "start"},
	} {
		git(t, repo, args...)
	}
	step := func(o options, wantErr string, wantOut ...string) {
		t.Helper()
		var out bytes.Buffer
		err := run(o, &out)
		if wantErr == "" && err != nil {
			t.Fatalf("run(%+v): %v\n%s", o, err, out.String())
		}
		if wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)) {
			t.Fatalf("run(%+v): error %v, want %q\n%s", o, err, wantErr, out.String())
		}
		for _, w := range wantOut {
			if !strings.Contains(out.String(), w) {
				t.Errorf("run(%+v) printed %q, want %q", o, out.String(), w)
			}
		}
	}
	tags := func() string { return git(t, repo, "tag", "--list") }
	tag := o
	tag.tag = true

	// make release: releases 1.0.0, leaves it to commit, tags nothing.
	step(tag, "", "released 1.0.0 with 1 fragment(s)", "release 1.0.0 is ready to commit", "then run 'make release' again to tag it v1.0.0")
	if tags() != "" {
		t.Fatalf("tagged before the release was committed: %s", tags())
	}
	rst, err := os.ReadFile(filepath.Join(o.coll, "CHANGELOG.rst"))
	if err != nil || !strings.Contains(string(rst), "v1.0.0\n======\n\nRelease Summary\n---------------\n\nThe first release.\n\nNew Modules\n-----------\n\n- ns.coll.mod - A module\n") {
		t.Fatalf("CHANGELOG.rst: %v\n%s", err, rst)
	}
	if _, err := os.Stat(filepath.Join(o.dir, "fragments", "1.0.0.yml")); !os.IsNotExist(err) {
		t.Errorf("the released fragment is still there: %v", err)
	}
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "Release 1.0.0")

	// Committed: make release tags it; make changelog -check agrees.
	step(tag, "", "tagged HEAD v1.0.0")
	if kind := git(t, repo, "cat-file", "-t", "v1.0.0"); kind != "tag" {
		t.Errorf("v1.0.0 is a %s, want an annotated tag", kind)
	}
	if msg := git(t, repo, "tag", "--list", "--format=%(contents)", "v1.0.0"); msg != "ns.coll 1.0.0\n\nThe first release." {
		t.Errorf("tag message %q", msg)
	}
	chk := o
	chk.check = true
	step(chk, "")
	step(tag, "tag v1.0.0 exists")

	// A fragment waits beside the released version galaxy.yml still carries.
	writeFile(t, filepath.Join(o.dir, "fragments", "fix.yml"), "bugfixes:\n  - a fix\n")
	step(chk, "", "1 fragment(s) wait for the next release")
	step(o, "version 1.0.0 is already released (changelog.yaml) and 1 fragment(s) wait", "")
	step(o, "raise version in "+galaxy)
	upd := o
	upd.update = true
	step(upd, "release 1.0.0 is tagged (v1.0.0): it is published")

	// The next version: refused before it is committed, then released, committed, tagged.
	writeFile(t, galaxy, "namespace: ns\nname: coll\nversion: 1.1.0\n")
	step(tag, "uncommitted changes (M collection/galaxy.yml; ?? changelogs/fragments/fix.yml)")
	if _, err := os.Stat(filepath.Join(o.dir, "fragments", "fix.yml")); err != nil {
		t.Fatalf("a refused make release touched the fragments: %v", err)
	}
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "fix")
	step(chk, "version 1.1.0 is not in changelog.yaml: run 'make changelog'")
	step(tag, "", "released 1.1.0 with 1 fragment(s)", "ready to commit")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "Release 1.1.0")
	step(tag, "", "tagged HEAD v1.1.0")
	if got := tags(); got != "v1.0.0\nv1.1.0" {
		t.Errorf("tags %q", got)
	}
	if at, head := git(t, repo, "rev-parse", "v1.1.0^{commit}"), git(t, repo, "rev-parse", "HEAD"); at != head {
		t.Errorf("v1.1.0 names %s, HEAD is %s", at, head)
	}
	step(chk, "")
}

func TestReleaseDate(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1800000000")
	if d, err := releaseDate(""); err != nil || d != "2027-01-15" {
		t.Errorf("SOURCE_DATE_EPOCH 1800000000: %q, %v", d, err)
	}
	if d, err := releaseDate("2026-03-04"); err != nil || d != "2026-03-04" {
		t.Errorf("-date wins: %q, %v", d, err)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	if _, err := releaseDate(""); err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
		t.Errorf("a bad SOURCE_DATE_EPOCH: %v", err)
	}
}
