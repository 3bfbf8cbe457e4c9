// Package releasetag makes the git tag of a release: an annotated tag
// v<version> on HEAD of a work tree that holds nothing uncommitted. It owns
// the tag's name; `make release` (tools/changelog -tag) uses it.
package releasetag

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Name is the tag of release version.
func Name(version string) string { return "v" + version }

// git runs git in the work tree dir and returns its standard output.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// Exists reports whether the repository of dir has the tag of version.
func Exists(dir, version string) (bool, error) {
	_, err := git(dir, "rev-parse", "--quiet", "--verify", "refs/tags/"+Name(version))
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return false, nil
	}
	return false, fmt.Errorf("looking for tag %s: %w", Name(version), err)
}

// Uncommitted lists what the work tree dir holds that HEAD does not:
// changes, staged or not, and untracked files (git status --porcelain).
// It is empty for a clean tree.
func Uncommitted(dir string) ([]string, error) {
	out, err := git(dir, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return nil, fmt.Errorf("reading the work tree's state: %w", err)
	}
	var l []string
	for _, s := range strings.Split(out, "\n") {
		if strings.TrimSpace(s) != "" {
			l = append(l, strings.TrimSpace(s))
		}
	}
	return l, nil
}

// Check refuses to tag version in dir: a tag that exists (a release is
// tagged once; the next one raises the version) or a work tree with
// uncommitted changes (the tag would name a commit without them).
func Check(dir, version string) error {
	if ok, err := Exists(dir, version); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("tag %s exists: release %s is tagged already; raise the version for the next release", Name(version), version)
	}
	l, err := Uncommitted(dir)
	if err != nil {
		return err
	}
	if len(l) > 0 {
		more := ""
		if len(l) > 5 {
			l, more = l[:5], fmt.Sprintf(" and %d more", len(l)-5)
		}
		return fmt.Errorf("the work tree %s has uncommitted changes (%s%s): commit or stash them first, a release tags a commit", dir, strings.Join(l, "; "), more)
	}
	return nil
}

// Create tags HEAD of dir as release version: an annotated tag with
// message, after Check.
func Create(dir, version, message string) error {
	if err := Check(dir, version); err != nil {
		return err
	}
	if _, err := git(dir, "tag", "--annotate", "--message", message, Name(version), "HEAD"); err != nil {
		return fmt.Errorf("tagging release %s: %w", version, err)
	}
	return nil
}
