package configdownload

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
)

func fileModes(t *testing.T, dest string) {
	t.Helper()
	filepath.Walk(dest, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dest, p)
		if strings.HasPrefix(rel, ".git") && rel != ".gitignore" {
			if rel == ".git" && info.Mode().Perm() != DirMode {
				t.Errorf(".git has mode %v", info.Mode().Perm())
			}
			return nil
		}
		want := FileMode
		if info.IsDir() {
			want = DirMode
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", rel, info.Mode().Perm(), want)
		}
		return nil
	})
}

func TestSyncCommitsChangesOnly(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "config-download", "overcloud")
	d := syntheticStack("overcloud", 1, 2)
	r := mustRender(t, d, Options{})

	// Check mode on nothing: would change, writes nothing.
	res, err := Sync(dest, r, SyncOptions{Commit: true, CheckMode: true, Message: "m0"})
	if err != nil || !res.Changed || len(res.Files.Added) != len(r.Files) {
		t.Fatalf("check of a first download: %+v %v", res, err)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatalf("check mode created %s", dest)
	}

	res, err = Sync(dest, r, SyncOptions{Commit: true, Message: "m1"})
	if err != nil || !res.Changed || res.Commit == "" {
		t.Fatalf("first download: %+v %v", res, err)
	}
	fileModes(t, dest)
	log, _ := Log(dest)
	if len(log) != 1 || !strings.HasSuffix(log[0], " m1") {
		t.Fatalf("log %v", log)
	}

	// The same again: nothing changes, no commit.
	res, err = Sync(dest, mustRender(t, d, Options{}), SyncOptions{Commit: true, Message: "m2"})
	if err != nil || res.Changed || res.Commit != "" {
		t.Fatalf("identical download: %+v %v", res, err)
	}
	if log, _ := Log(dest); len(log) != 1 {
		t.Fatalf("log %v", log)
	}

	// A changed task: one commit with just that.
	tasks := asObject(asObject(d.Outputs.Value(OutRoleData)).Value("Compute")).Value("deploy_steps_tasks").([]any)
	asObject(tasks[2]).Set("name", "renamed")
	r2 := mustRender(t, d, Options{})
	res, err = Sync(dest, r2, SyncOptions{Commit: true, CheckMode: true})
	if err != nil || !res.Changed || len(res.Files.Modified) == 0 {
		t.Fatalf("check of a change: %+v %v", res, err)
	}
	res, err = Sync(dest, r2, SyncOptions{Commit: true, Message: "m3"})
	if err != nil || !res.Changed || res.Commit == "" {
		t.Fatalf("changed download: %+v %v", res, err)
	}
	want := []string{"Compute/deploy_steps_tasks.yaml", "Compute/deploy_steps_tasks_step2.yaml"}
	if !reflect.DeepEqual(res.Files.Modified, want) || len(res.Files.Added)+len(res.Files.Removed) != 0 {
		t.Errorf("changed files %+v, want modified %v", res.Files, want)
	}
	show, err := git(dest, "show", "--name-only", "--format=%s", "HEAD")
	if err != nil || show != "m3\n\n"+strings.Join(want, "\n") {
		t.Errorf("last commit: %q %v", show, err)
	}
	// No working directory is left beside dest.
	entries, _ := os.ReadDir(filepath.Dir(dest))
	if len(entries) != 1 {
		t.Errorf("left beside dest: %v", entries)
	}

	// A file someone added is removed (and committed); a file whose mode
	// changed is rewritten; so is a directory; an empty directory that is
	// not the rendering's goes.
	os.WriteFile(filepath.Join(dest, "stray.txt"), []byte("x"), 0o644)
	os.Chmod(filepath.Join(dest, "global_vars.yaml"), 0o644)
	os.Chmod(filepath.Join(dest, "Compute"), 0o755)
	os.Mkdir(filepath.Join(dest, "empty"), 0o700)
	res, err = Sync(dest, r2, SyncOptions{Commit: true, Message: "m4"})
	if err != nil || !res.Changed || !reflect.DeepEqual(res.Files.Removed, []string{"empty/", "stray.txt"}) ||
		!reflect.DeepEqual(res.Files.Modified, []string{"Compute/", "global_vars.yaml"}) {
		t.Fatalf("stray file: %+v %v", res, err)
	}
	fileModes(t, dest)
	if _, err := os.Stat(filepath.Join(dest, "empty")); !os.IsNotExist(err) {
		t.Errorf("stray directory kept: %v", err)
	}
}

// Empty directories of a rendering (stable/zed's ansible-runner ones, a
// role without files) are made and kept.
func TestSyncEmptyDirectories(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "overcloud")
	r := mustRender(t, syntheticStack("overcloud", 0, 0), Options{Release: Zed})
	if _, err := Sync(dest, r, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"artifacts", "roles", "group_vars", "host_vars"} {
		if st, err := os.Stat(filepath.Join(dest, d)); err != nil || !st.IsDir() {
			t.Errorf("%s: %v", d, err)
		}
	}
	fileModes(t, dest)
	res, err := Sync(dest, r, SyncOptions{})
	if err != nil || res.Changed {
		t.Fatalf("second sync: %+v %v", res, err)
	}
	os.Remove(filepath.Join(dest, "artifacts"))
	res, err = Sync(dest, r, SyncOptions{})
	if err != nil || !res.Changed || !reflect.DeepEqual(res.Files.Added, []string{"artifacts/"}) {
		t.Fatalf("a missing directory: %+v %v", res, err)
	}
}

func TestSyncRecoversAndCommitsLeftovers(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "overcloud")
	r := mustRender(t, syntheticStack("overcloud", 1, 1), Options{})
	if _, err := Sync(dest, r, SyncOptions{Commit: true, Message: "m1"}); err != nil {
		t.Fatal(err)
	}
	// A run that stopped after moving .git out of dest.
	left := filepath.Join(filepath.Dir(dest), tempPrefix(dest)+"123")
	os.MkdirAll(left, 0o700)
	if err := os.Rename(filepath.Join(dest, ".git"), filepath.Join(left, ".git")); err != nil {
		t.Fatal(err)
	}
	res, err := Sync(dest, r, SyncOptions{Commit: true, Message: "m2"})
	if err != nil || res.Changed {
		t.Fatalf("after recovery: %+v %v", res, err)
	}
	if log, _ := Log(dest); len(log) != 1 {
		t.Fatalf("history not recovered: %v", log)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("leftover %s not removed", left)
	}

	// A run that stopped after the swap but before the commit: the tree is
	// in place, uncommitted; the next run commits it.
	os.WriteFile(filepath.Join(dest, ".gitignore"), []byte("changed\n"), 0o600)
	res, err = Sync(dest, r, SyncOptions{Commit: true, CheckMode: true})
	if err != nil || !res.Changed {
		t.Fatalf("check: %+v %v", res, err)
	}
	os.WriteFile(filepath.Join(dest, ".gitignore"), r.Files[".gitignore"], 0o600)
	os.WriteFile(filepath.Join(dest, "global_vars.yaml"), r.Files["global_vars.yaml"], 0o600)
	git(dest, "rm", "-q", "--cached", "global_vars.yaml")
	git(dest, "commit", "-q", "-m", "lost")
	res, err = Sync(dest, r, SyncOptions{Commit: true, Message: "m3"})
	if err != nil || !res.Changed || res.Commit == "" || res.Files.Empty() == false {
		t.Fatalf("uncommitted tree: %+v %v", res, err)
	}
}

func TestSyncWithoutCommit(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "overcloud")
	r := mustRender(t, syntheticStack("overcloud", 1, 1), Options{})
	res, err := Sync(dest, r, SyncOptions{})
	if err != nil || !res.Changed || res.Commit != "" {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(dest, ".git")); !os.IsNotExist(err) {
		t.Errorf("a repository was made without commit")
	}
	res, err = Sync(dest, r, SyncOptions{})
	if err != nil || res.Changed {
		t.Fatalf("%+v %v", res, err)
	}
}

// A dest that is not a config-download of ours (nor new, nor empty) is
// refused, in check mode too, and left exactly as it was: it would
// otherwise be swapped out and removed.
func TestSyncRefusesDestNotOurs(t *testing.T) {
	r := mustRender(t, syntheticStack("overcloud", 1, 1), Options{})
	tests := []struct {
		name  string
		setup func(t *testing.T, dest string)
		want  string // "" = accepted
	}{
		{"a directory with other files (/etc, a home)", func(t *testing.T, dest string) {
			os.Mkdir(dest, 0o755)
			os.WriteFile(filepath.Join(dest, "passwd"), []byte("root:x:0:0\n"), 0o644)
		}, "is not empty and is not a config_download this collection made"},
		{"a symlink to a directory", func(t *testing.T, dest string) {
			target := filepath.Join(filepath.Dir(dest), "target")
			os.Mkdir(target, 0o700)
			os.Symlink(target, dest)
		}, "is a symlink"},
		{"a file", func(t *testing.T, dest string) { os.WriteFile(dest, []byte("x"), 0o600) }, "not a directory"},
		{"a FIFO", func(t *testing.T, dest string) {
			if err := syscall.Mkfifo(dest, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "is a FIFO"},
		{"the heat_dir of a launch", func(t *testing.T, dest string) {
			os.Mkdir(dest, 0o700)
			os.WriteFile(filepath.Join(dest, pathguard.Marker), pathguard.MarkerContent(pathguard.KindHeatDir), 0o600)
			os.WriteFile(filepath.Join(dest, "heat.conf"), []byte("x"), 0o600)
		}, "is the heat_dir of another task"},
		{"empty", func(t *testing.T, dest string) { os.Mkdir(dest, 0o700) }, ""},
		{"a repository of ours from before the marker", func(t *testing.T, dest string) {
			if _, err := Sync(dest, r, SyncOptions{Commit: true, Message: "m"}); err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(dest, pathguard.Marker))
			os.WriteFile(filepath.Join(dest, "stale.yaml"), []byte("x"), 0o600)
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dest := filepath.Join(parent, "overcloud")
			tc.setup(t, dest)
			before := tree(t, parent)
			for _, check := range []bool{true, false} {
				_, err := Sync(dest, r, SyncOptions{Commit: true, CheckMode: check, Message: "m"})
				if tc.want == "" {
					if err != nil {
						t.Fatalf("check=%v: %v", check, err)
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), "dest "+dest) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("check=%v: %v, want a refusal naming dest with %q", check, err, tc.want)
				}
				if after := tree(t, parent); after != before {
					t.Fatalf("check=%v: the refused dest changed:\n%s\nbecame\n%s", check, before, after)
				}
			}
			if tc.want == "" {
				if kind, _ := pathguard.ReadMarker(dest); kind != pathguard.KindConfigDownload {
					t.Errorf("no marker after the sync: %q", kind)
				}
				if _, err := os.Stat(filepath.Join(dest, "stale.yaml")); !os.IsNotExist(err) {
					t.Errorf("a file of an earlier rendering survived")
				}
			}
		})
	}
}

// tree lists a directory tree's names, types, modes and sizes.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil {
			b.WriteString(p + " " + info.Mode().String() + " " + strconv.FormatInt(info.Size(), 10) + "\n")
		}
		return nil
	})
	return b.String()
}

// The files the playbook runs leave (ansible.cfg, ansible.log and its
// rotations, ansible-ssh/, the command) stay through a re-render, whether
// it changes the tree or not, count as no change and are never committed;
// an interrupted swap gives them back.
func TestSyncKeepsRunFiles(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "overcloud")
	d := syntheticStack("overcloud", 1, 1)
	r := mustRender(t, d, Options{})
	if _, err := Sync(dest, r, SyncOptions{Commit: true, Message: "m1"}); err != nil {
		t.Fatal(err)
	}
	run := map[string]string{AnsibleCfgFile: "[defaults]\n", AnsibleLogFile: "log\n",
		AnsibleLogFile + "-2024-01-02T03:04:05": "old log\n", AnsibleCommandFile: "#!/bin/sh\n",
		AnsibleSSHDir + "/cp": "socket stand-in\n"}
	for n, c := range run {
		os.MkdirAll(filepath.Dir(filepath.Join(dest, n)), 0o700)
		if err := os.WriteFile(filepath.Join(dest, n), []byte(c), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		for n, c := range run {
			if b, err := os.ReadFile(filepath.Join(dest, n)); err != nil || string(b) != c {
				t.Errorf("%s: %s = %q %v", when, n, b, err)
			}
		}
		files, _ := git(dest, "ls-files")
		for _, f := range strings.Split(files, "\n") {
			if IsRunFile(strings.SplitN(f, "/", 2)[0]) {
				t.Errorf("%s: run file %s committed", when, f)
			}
		}
	}
	for _, checkMode := range []bool{true, false} {
		res, err := Sync(dest, mustRender(t, d, Options{}), SyncOptions{Commit: true, CheckMode: checkMode, Message: "same"})
		if err != nil || res.Changed || !res.Files.Empty() {
			t.Fatalf("identical render (check %v) with run files: %+v %v", checkMode, res, err)
		}
	}
	check("identical render")

	tasks := asObject(asObject(d.Outputs.Value(OutRoleData)).Value("Compute")).Value("deploy_steps_tasks").([]any)
	asObject(tasks[0]).Set("name", "renamed")
	res, err := Sync(dest, mustRender(t, d, Options{}), SyncOptions{Commit: true, Message: "m2"})
	if err != nil || !res.Changed || len(res.Files.Removed) != 0 {
		t.Fatalf("changed render: %+v %v", res, err)
	}
	check("changed render")

	// A swap interrupted after the run files moved into the new tree.
	left := filepath.Join(filepath.Dir(dest), tempPrefix(dest)+"9")
	os.MkdirAll(left, 0o700)
	if err := os.Rename(filepath.Join(dest, AnsibleLogFile), filepath.Join(left, AnsibleLogFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := Sync(dest, mustRender(t, d, Options{}), SyncOptions{Commit: true, Message: "m3"}); err != nil {
		t.Fatal(err)
	}
	check("recovery")
}
