package tripleocommon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
)

// Where a stable/zed tripleo-common tree comes from, in this order: the
// environment variable (a directory or .tar.gz), the tarball in
// ../shared/reference, a git clone or mirror of tripleo-common holding the
// branch (git archive). No package registry serves zed's tripleo-common and
// the project never vendors its files, so none of them may be there.
const (
	EnvTripleoCommonZed     = "EPHEMERAL_HEAT_TRIPLEO_COMMON_ZED"
	TripleoCommonZedTarball = "tripleo-common-stable-zed.tar.gz"
	ZedBranch               = "stable/zed"
	// EnvRequireZed set to 1 makes a missing zed tree a failure of the zed
	// parity test instead of a skip (make parity-zed sets it).
	EnvRequireZed = "EPHEMERAL_HEAT_REQUIRE_ZED"
)

// ErrNoZedTree is returned when none of the zed sources exists.
var ErrNoZedTree = errors.New("no stable/zed tripleo-common tree")

// ZedMirror is the default git mirror of tripleo-common:
// ../.mirror/openstack+tripleo-common/repo beside the checkout.
func ZedMirror() string {
	return filepath.Join(RepoRoot(), "..", ".mirror", "openstack+tripleo-common", "repo")
}

// RequireZed reports whether EnvRequireZed asks for a zed tree.
func RequireZed() bool { return os.Getenv(EnvRequireZed) == "1" }

// zedSources are the three places a zed tree is looked for.
type zedSources struct {
	env     string // EnvTripleoCommonZed's value
	tarball string
	mirror  string
}

func defaultZedSources() zedSources {
	return zedSources{env: os.Getenv(EnvTripleoCommonZed),
		tarball: filepath.Join(RepoRoot(), "..", "shared", "reference", TripleoCommonZedTarball), mirror: ZedMirror()}
}

// ExtractTripleoCommonZed makes a stable/zed tripleo-common tree available
// under dir (an empty directory) and says where it came from. It returns
// an error wrapping ErrNoZedTree, naming the three sources, when none
// exists; a source that exists but is not a zed tree is an error of its own.
func ExtractTripleoCommonZed(ctx context.Context, dir string) (Tree, string, error) {
	return defaultZedSources().extract(ctx, dir)
}

func (s zedSources) extract(ctx context.Context, dir string) (Tree, string, error) {
	var (
		t    Tree
		from string
		err  error
	)
	switch {
	case s.env != "":
		// Set but unusable is an error, never a skip.
		from = EnvTripleoCommonZed + "=" + s.env
		t, err = extract(s.env, dir, commonMarker, EnvTripleoCommonZed, "tripleo_common/")
	case exists(s.tarball):
		from = s.tarball
		t, err = extract(s.tarball, dir, commonMarker, EnvTripleoCommonZed, "tripleo_common/")
	case s.mirror != "" && hasBranch(ctx, s.mirror, ZedBranch):
		var commit string
		t, commit, err = archiveBranch(ctx, s.mirror, ZedBranch, dir)
		from = fmt.Sprintf("%s %s (%s)", s.mirror, ZedBranch, commit)
	default:
		return Tree{}, "", fmt.Errorf("%w: set %s to a directory or .tar.gz of tripleo-common %s, or put %s or a git mirror "+
			"of tripleo-common with branch %s at %s", ErrNoZedTree, EnvTripleoCommonZed, ZedBranch, s.tarball, ZedBranch, s.mirror)
	}
	if err != nil {
		return Tree{}, from, fmt.Errorf("stable/zed tripleo-common from %s: %w", from, err)
	}
	if err := checkZed(t.Root); err != nil {
		return Tree{}, from, fmt.Errorf("%s: %w", from, err)
	}
	t.Release = configdownload.Zed
	return t, from, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// hasBranch reports whether the git repository (bare or not) at repo has
// branch.
func hasBranch(ctx context.Context, repo, branch string) bool {
	if !exists(repo) {
		return false
	}
	return exec.CommandContext(ctx, "git", "--git-dir", gitDir(repo), "rev-parse", "--verify", "-q",
		"refs/heads/"+branch+"^{commit}").Run() == nil
}

// gitDir is repo's .git when it is a work tree, else repo (a bare one).
func gitDir(repo string) string {
	if exists(filepath.Join(repo, ".git")) {
		return filepath.Join(repo, ".git")
	}
	return repo
}

// archiveBranch exports tripleo_common/ of branch (git archive) and
// extracts it under dir; it returns the tree and the branch's commit.
func archiveBranch(ctx context.Context, repo, branch, dir string) (Tree, string, error) {
	gd := gitDir(repo)
	out, err := exec.CommandContext(ctx, "git", "--git-dir", gd, "rev-parse", "refs/heads/"+branch+"^{commit}").Output()
	if err != nil {
		return Tree{}, "", fmt.Errorf("git rev-parse %s: %w", branch, err)
	}
	commit := strings.TrimSpace(string(out))
	tarball := filepath.Join(dir, "tripleo-common-"+strings.ReplaceAll(branch, "/", "-")+".tar.gz")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Tree{}, commit, err
	}
	cmd := exec.CommandContext(ctx, "git", "--git-dir", gd, "archive", "--format=tar.gz", "-o", tarball, commit, "--", "tripleo_common")
	if b, err := cmd.CombinedOutput(); err != nil {
		return Tree{}, commit, fmt.Errorf("git archive %s: %v: %s", branch, err, strings.TrimSpace(string(b)))
	}
	t, err := extract(tarball, filepath.Join(dir, "tree"), commonMarker, EnvTripleoCommonZed, "tripleo_common/")
	return t, commit, err
}

// checkZed refuses a tree whose config download is not stable/zed's: zed's
// create_config_dir makes ansible-runner's directories (profiling_data
// among them) and its write_config no longer renders NetworkConfig.
func checkZed(root string) error {
	b, err := os.ReadFile(filepath.Join(root, commonMarker))
	if err != nil {
		return err
	}
	s := string(b)
	if !strings.Contains(s, "'profiling_data'") || strings.Contains(s, "def render_network_config") {
		return fmt.Errorf("%s is not stable/zed's (no ansible-runner directories in create_config_dir, "+
			"or render_network_config still there): point %s at a %s tree", filepath.Join(root, commonMarker), EnvTripleoCommonZed, ZedBranch)
	}
	return nil
}
