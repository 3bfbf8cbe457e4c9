package tripleocommon

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
)

// Stand-ins for tripleo-common's config.py: only what checkZed looks at.
const (
	fakeZedConfig     = "structure = [\n    'artifacts',\n    'profiling_data',\n]\n"
	fakeWallabyConfig = "def render_network_config(self, config_dir):\n    pass\n"
)

func writeTree(t *testing.T, dir, config string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(commonMarker))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeTarball(t *testing.T, p, config string) string {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	name := "tripleo-common-stable-zed/" + commonMarker
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(config)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(config)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []interface{ Close() error }{tw, gz, f} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// writeMirror makes a bare git repository whose branch holds config.py.
func writeMirror(t *testing.T, dir, branch, config string) string {
	t.Helper()
	work := writeTree(t, filepath.Join(dir, "work"), config)
	run := func(d string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid",
			"-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = d
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	run(work, "init", "-q")
	run(work, "checkout", "-q", "-b", branch)
	run(work, "add", ".")
	run(work, "commit", "-q", "-m", "tree")
	mirror := filepath.Join(dir, "mirror")
	run(dir, "clone", "-q", "--mirror", work, mirror)
	return mirror
}

// Which source a zed tree is taken from, and what is refused.
func TestZedSources(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed: apt-get install -y git")
	}
	base := t.TempDir()
	zedDir := writeTree(t, filepath.Join(base, "zed"), fakeZedConfig)
	wallabyDir := writeTree(t, filepath.Join(base, "wallaby"), fakeWallabyConfig)
	zedTarball := writeTarball(t, filepath.Join(base, "zed.tar.gz"), fakeZedConfig)
	wallabyTarball := writeTarball(t, filepath.Join(base, "wallaby.tar.gz"), fakeWallabyConfig)
	zedMirror := writeMirror(t, filepath.Join(base, "m1"), ZedBranch, fakeZedConfig)
	otherMirror := writeMirror(t, filepath.Join(base, "m2"), "stable/wallaby", fakeZedConfig)
	missing := filepath.Join(base, "missing")

	cases := []struct {
		name      string
		src       zedSources
		from      string // where it says the tree came from
		noTree    bool   // errors.Is(err, ErrNoZedTree)
		errSubstr string
	}{
		{name: "env dir", src: zedSources{env: zedDir, tarball: zedTarball, mirror: zedMirror}, from: EnvTripleoCommonZed + "=" + zedDir},
		{name: "env tarball", src: zedSources{env: zedTarball, mirror: zedMirror}, from: EnvTripleoCommonZed + "=" + zedTarball},
		{name: "tarball before mirror", src: zedSources{tarball: zedTarball, mirror: zedMirror}, from: zedTarball},
		{name: "mirror", src: zedSources{tarball: missing, mirror: zedMirror}, from: zedMirror + " " + ZedBranch + " ("},
		{name: "env set but missing is an error, not a skip", src: zedSources{env: missing, tarball: zedTarball},
			errSubstr: EnvTripleoCommonZed},
		{name: "env names a wallaby tree", src: zedSources{env: wallabyDir}, errSubstr: "is not stable/zed's"},
		{name: "tarball of wallaby", src: zedSources{tarball: wallabyTarball}, errSubstr: "is not stable/zed's"},
		{name: "none", src: zedSources{tarball: missing, mirror: missing}, noTree: true},
		{name: "mirror without the branch", src: zedSources{tarball: missing, mirror: otherMirror}, noTree: true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(base, "out", string(rune('a'+i)))
			tree, from, err := c.src.extract(context.Background(), dir)
			switch {
			case c.noTree:
				if !errors.Is(err, ErrNoZedTree) {
					t.Fatalf("err %v, want ErrNoZedTree", err)
				}
				// The skip message names all three sources.
				for _, s := range []string{EnvTripleoCommonZed, c.src.tarball, c.src.mirror, ZedBranch} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("%q does not name %s", err, s)
					}
				}
			case c.errSubstr != "":
				if err == nil || errors.Is(err, ErrNoZedTree) || !strings.Contains(err.Error(), c.errSubstr) {
					t.Fatalf("err %v, want one saying %q", err, c.errSubstr)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(from, c.from) {
					t.Errorf("from %q, want %q...", from, c.from)
				}
				if tree.Release != configdownload.Zed {
					t.Errorf("release %q", tree.Release)
				}
				b, err := os.ReadFile(filepath.Join(tree.Root, commonMarker))
				if err != nil || string(b) != fakeZedConfig {
					t.Errorf("config.py %q, %v", b, err)
				}
			}
		})
	}
}
