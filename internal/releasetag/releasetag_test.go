package releasetag

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo makes a git repository with one commit in a temporary directory.
func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q"},
		{"config", "user.name", "Release Test"},
		{"config", "user.email", "release@test.invalid"},
		{"config", "commit.gpgsign", "false"},
		{"config", "tag.gpgsign", "false"},
	} {
		run(t, dir, args...)
	}
	write(t, dir, "galaxy.yml", "version: 1.1.0\n")
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "first")
	return dir
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, b)
	}
	return strings.TrimSpace(string(b))
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCreate(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string)
		wantErr string
	}{
		{"clean tree", func(*testing.T, string) {}, ""},
		{"tag exists", func(t *testing.T, dir string) { run(t, dir, "tag", "v1.1.0") }, "tag v1.1.0 exists: release 1.1.0 is tagged already"},
		{"an annotated tag exists", func(t *testing.T, dir string) { run(t, dir, "tag", "-a", "-m", "x", "v1.1.0") }, "tag v1.1.0 exists"},
		{"a modified file", func(t *testing.T, dir string) { write(t, dir, "galaxy.yml", "version: 1.2.0\n") }, "uncommitted changes (M galaxy.yml)"},
		{"a staged file", func(t *testing.T, dir string) {
			write(t, dir, "new.yml", "x\n")
			run(t, dir, "add", "new.yml")
		}, "uncommitted changes (A  new.yml)"},
		{"an untracked file", func(t *testing.T, dir string) {
			os.MkdirAll(filepath.Join(dir, "changelogs", "fragments"), 0o755)
			write(t, dir, "changelogs/fragments/x.yml", "x\n")
		}, "?? changelogs/fragments/x.yml"},
		{"another version's tag", func(t *testing.T, dir string) { run(t, dir, "tag", "v1.0.0") }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := repo(t)
			tc.prepare(t, dir)
			before := run(t, dir, "tag", "--list")
			err := Create(dir, "1.1.0", "ephemeral.heat 1.1.0\n\nThe summary.")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if after := run(t, dir, "tag", "--list"); after != before {
					t.Errorf("a refused Create changed the tags: %q, then %q", before, after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if kind := run(t, dir, "cat-file", "-t", "v1.1.0"); kind != "tag" {
				t.Errorf("v1.1.0 is a %s, want an annotated tag", kind)
			}
			if at, head := run(t, dir, "rev-parse", "v1.1.0^{commit}"), run(t, dir, "rev-parse", "HEAD"); at != head {
				t.Errorf("v1.1.0 names %s, HEAD is %s", at, head)
			}
			if msg := run(t, dir, "tag", "--list", "--format=%(contents)", "v1.1.0"); msg != "ephemeral.heat 1.1.0\n\nThe summary." {
				t.Errorf("tag message %q", msg)
			}
			if ok, err := Exists(dir, "1.1.0"); !ok || err != nil {
				t.Errorf("Exists after Create: %v, %v", ok, err)
			}
		})
	}
}

func TestOutsideARepository(t *testing.T) {
	dir := t.TempDir()
	if _, err := Exists(dir, "1.0.0"); err == nil || !strings.Contains(err.Error(), "looking for tag v1.0.0") {
		t.Errorf("Exists outside a repository: %v", err)
	}
	if err := Create(dir, "1.0.0", "x"); err == nil {
		t.Error("Create outside a repository succeeded")
	}
}
