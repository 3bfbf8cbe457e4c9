package configdownload

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
)

// File and directory modes of a rendering.
const (
	DirMode  os.FileMode = 0o700
	FileMode os.FileMode = 0o600
)

// The files the runs of the rendered playbooks leave in the config-download
// directory (tripleo-common's utils/ansible.py write_default_ansible_cfg
// writes ansible.cfg there, with log_path ansible.log, an earlier log
// renamed ansible.log-<%Y-%m-%dT%H:%M:%S>, and ssh's control_path_dir
// ansible-ssh; tripleoclient's run_ansible_playbook writes the command it
// ran as ansible-playbook-command.sh). They are not part of the rendering:
// a sync keeps them where they are, does not count them as changes and
// does not commit them.
const (
	AnsibleCfgFile     = "ansible.cfg"
	AnsibleLogFile     = "ansible.log"
	AnsibleSSHDir      = "ansible-ssh"
	AnsibleCommandFile = "ansible-playbook-command.sh"
)

// IsRunFile reports whether a top-level name of the config-download
// directory is one of the run files (see AnsibleCfgFile).
func IsRunFile(name string) bool {
	switch name {
	case AnsibleCfgFile, AnsibleLogFile, AnsibleSSHDir, AnsibleCommandFile:
		return true
	}
	return strings.HasPrefix(name, AnsibleLogFile+"-")
}

// runFilePathspecs exclude the run files from git add and git status.
var runFilePathspecs = []string{".", ":(exclude,top)" + AnsibleCfgFile, ":(exclude,top)" + AnsibleLogFile,
	":(exclude,top)" + AnsibleLogFile + "-*", ":(exclude,top)" + AnsibleSSHDir, ":(exclude,top)" + AnsibleCommandFile}

// tempPrefix names the working directories beside dest.
func tempPrefix(dest string) string { return "." + filepath.Base(dest) + ".config-download-" }

// SyncOptions say how a rendering is put in place.
type SyncOptions struct {
	// Commit makes dest a git repository and commits each change.
	Commit bool
	// CheckMode compares only: nothing is written.
	CheckMode bool
	// Message is the commit message.
	Message string
	// Now is the clock (for tests).
	Now func() time.Time
}

// Changes lists the files a sync adds, modifies and removes.
type Changes struct {
	Added    []string `json:"added"`
	Modified []string `json:"modified"`
	Removed  []string `json:"removed"`
}

// Empty reports whether nothing changes.
func (c Changes) Empty() bool { return len(c.Added)+len(c.Modified)+len(c.Removed) == 0 }

// SyncResult is the outcome of Sync.
type SyncResult struct {
	Changed bool
	Files   Changes
	// Commit is the new commit's sha ("" when none was made).
	Commit string
	// Uncommitted is true when the tree was already in place but not
	// committed (a previous run stopped in between): it is committed now.
	Uncommitted bool
}

// Sync puts the rendering in dest: it writes the whole tree into a
// directory beside dest, moves dest's .git into it and swaps the two
// directories in one rename(2) (RENAME_EXCHANGE), so that dest always holds
// a complete rendering, then commits. An identical rendering changes
// nothing. In check mode only the comparison is made.
func Sync(dest string, r *Rendering, o SyncOptions) (SyncResult, error) {
	var res SyncResult
	if o.Now == nil {
		o.Now = time.Now
	}
	dest = filepath.Clean(dest)
	if err := CheckDest(dest); err != nil {
		return res, err
	}
	if !o.CheckMode {
		if err := recoverLeftovers(dest); err != nil {
			return res, err
		}
	}
	cur, err := readTree(dest)
	if err != nil {
		return res, err
	}
	res.Files = compare(cur, r.Files)
	if o.CheckMode {
		res.Changed = !res.Files.Empty()
		if !res.Changed && o.Commit {
			dirty, err := gitDirty(dest)
			if err != nil {
				return res, err
			}
			res.Changed = dirty
		}
		return res, nil
	}

	if !res.Files.Empty() {
		if err := swapIn(dest, r.Files); err != nil {
			return res, err
		}
		res.Changed = true
	} else if err := os.Chmod(dest, DirMode); err != nil {
		return res, err
	} else if err := pathguard.WriteMarker(dest, pathguard.KindConfigDownload); err != nil {
		return res, err
	}
	if !o.Commit {
		return res, nil
	}
	sha, err := commit(dest, o.Message)
	if err != nil {
		return res, err
	}
	if sha != "" {
		res.Commit = sha
		if !res.Changed {
			res.Uncommitted = true
			res.Changed = true
		}
	}
	return res, nil
}

// CheckDest refuses a dest this module must not write (pathguard's
// policy): a symlink, anything but a directory, another user's or one
// others may write to, or a directory that is neither empty nor a
// config-download of ours (our marker, or, from before the marker, a git
// repository with our identity). Its parent must not be writable by other
// users. A dest that does not exist passes (Sync creates it).
func CheckDest(dest string) error {
	_, err := pathguard.Dir("dest", filepath.Clean(dest), pathguard.KindConfigDownload, legacyDest)
	return err
}

// legacyDest tells a config-download this module committed before it wrote
// the marker: its git repository has our identity.
func legacyDest(dest string) bool {
	b, err := fsutil.ReadInput(filepath.Join(dest, ".git", "config"), fsutil.Limit{Bytes: 1 << 20}, "git config")
	return err == nil && bytes.Contains(b, []byte("name = "+gitIdentity[0][1]))
}

// readTree reads dest's files (not .git) and directories ("DIR/"); a
// missing dest is empty. What the rendering would not have written as it
// is (another mode, a symlink, ...) reads as content that never matches.
func readTree(dest string) (map[string][]byte, error) {
	files := map[string][]byte{}
	st, err := os.Stat(dest)
	if errors.Is(err, fs.ErrNotExist) {
		return files, nil
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("dest %s exists and is not a directory", dest)
	}
	mismatch := []byte{0xff, 0xfe, 0x00}
	err = filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dest, p)
		if rel == ".git" {
			return filepath.SkipDir
		}
		if rel == pathguard.Marker {
			return nil // ours, not part of the rendering
		}
		if rel != "." && !strings.ContainsRune(rel, filepath.Separator) && IsRunFile(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel != "." {
				var c []byte
				if info.Mode().Perm() != DirMode {
					c = mismatch
				}
				files[filepath.ToSlash(rel)+"/"] = c
			}
			return nil
		}
		if !info.Mode().IsRegular() || info.Mode().Perm() != FileMode {
			files[filepath.ToSlash(rel)] = mismatch
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	return files, err
}

func compare(cur, want map[string][]byte) Changes {
	c := Changes{Added: []string{}, Modified: []string{}, Removed: []string{}}
	for p, b := range want {
		old, ok := cur[p]
		switch {
		case !ok:
			c.Added = append(c.Added, p)
		case !bytes.Equal(old, b):
			c.Modified = append(c.Modified, p)
		}
	}
	for p := range cur {
		if _, ok := want[p]; !ok {
			c.Removed = append(c.Removed, p)
		}
	}
	sort.Strings(c.Added)
	sort.Strings(c.Modified)
	sort.Strings(c.Removed)
	return c
}

// swapIn writes files into a new directory beside dest and swaps it in,
// keeping dest's .git.
func swapIn(dest string, files map[string][]byte) error {
	parent := filepath.Dir(dest)
	if _, err := pathguard.MkdirAll("dest", parent); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, tempPrefix(dest))
	if err != nil {
		return err
	}
	cleanup := true
	defer func() {
		if cleanup {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, DirMode); err != nil {
		return err
	}
	if err := writeTree(tmp, files); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, pathguard.Marker), pathguard.MarkerContent(pathguard.KindConfigDownload), FileMode); err != nil {
		return err
	}
	if _, err := os.Stat(dest); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(tmp, dest); err != nil {
			return err
		}
		cleanup = false
		return syncDir(parent)
	}
	// dest's history moves into the new tree first: if we stop right
	// after, dest still holds the previous rendering and the next run
	// moves .git back (recoverLeftovers).
	// The run files (logs, ansible.cfg) move along with it.
	moved, err := carried(dest)
	if err != nil {
		return err
	}
	var done []string
	undo := func() {
		for _, n := range done {
			os.Rename(filepath.Join(tmp, n), filepath.Join(dest, n))
		}
	}
	for _, n := range moved {
		if err := os.Rename(filepath.Join(dest, n), filepath.Join(tmp, n)); err != nil {
			undo()
			return err
		}
		done = append(done, n)
	}
	if err := exchange(tmp, dest); err != nil {
		undo()
		return err
	}
	// tmp now holds the previous rendering.
	if err := syncDir(parent); err != nil {
		return err
	}
	return nil
}

// carried lists what a swap moves from dest into the new tree: .git first,
// then the run files.
func carried(dest string) ([]string, error) {
	ents, err := os.ReadDir(dest)
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, e := range ents {
		if e.Name() == ".git" {
			names = append([]string{".git"}, names...)
		} else if IsRunFile(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// exchange swaps two directories atomically; where the file system cannot,
// it falls back to two renames.
func exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EOPNOTSUPP) {
		return fmt.Errorf("swapping %s into %s: %w", a, b, err)
	}
	old := a + ".old"
	if err := os.Rename(b, old); err != nil {
		return err
	}
	if err := os.Rename(a, b); err != nil {
		os.Rename(old, b)
		return err
	}
	return os.Rename(old, a)
}

func writeTree(root string, files map[string][]byte) error {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	made := map[string]bool{}
	for _, p := range paths {
		full := filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(p, "/")))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, DirMode); err != nil {
				return err
			}
			made[full] = true
			continue
		}
		dir := filepath.Dir(full)
		if !made[dir] {
			if err := os.MkdirAll(dir, DirMode); err != nil {
				return err
			}
			made[dir] = true
		}
		f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FileMode)
		if err != nil {
			return err
		}
		if _, err := f.Write(files[p]); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}

	// MkdirAll's modes go through the umask: set them.
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, DirMode)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// One syncfs(2) puts the whole tree on disk before the swap: ten times
	// faster than an fsync per file for a few hundred files.
	return syncFS(root)
}

// syncFS flushes the file system holding dir.
func syncFS(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// recoverLeftovers undoes what a run that stopped half-way left beside
// dest: .git moved out of dest is moved back, working directories removed.
func recoverLeftovers(dest string) error {
	parent := filepath.Dir(dest)
	entries, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	prefix := tempPrefix(dest)
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if info, err := e.Info(); err != nil || pathguard.Owner(info) != os.Geteuid() {
			continue // only this user's (the parent may be shared)
		}
		left := filepath.Join(parent, e.Name())
		back, err := carried(left)
		if err != nil {
			return err
		}
		for _, n := range back {
			if _, err := os.Lstat(filepath.Join(dest, n)); errors.Is(err, fs.ErrNotExist) {
				if _, err := os.Stat(dest); err == nil {
					if err := os.Rename(filepath.Join(left, n), filepath.Join(dest, n)); err != nil {
						return fmt.Errorf("moving %s back from %s: %w", n, left, err)
					}
				}
			}
		}
		if err := os.RemoveAll(left); err != nil {
			return err
		}
	}
	return nil
}

// git runs git in dir.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("git is not installed (apt-get install git): %w", err)
		}
		return "", fmt.Errorf("git %s in %s: %v: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// gitIdentity is who commits the downloads.
var gitIdentity = [][2]string{{"user.name", "ephemeral.heat config_download"},
	{"user.email", "config-download@localhost"}, {"commit.gpgsign", "false"}}

// ensureRepo makes dest a git repository; a new one gets our identity in
// its local config (for whoever commits there by hand).
func ensureRepo(dest string) error {
	if _, err := os.Stat(filepath.Join(dest, ".git")); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// No template: git's sample hooks and info/exclude are a dozen files
	// for nothing (commits run --no-verify).
	if _, err := git(dest, "init", "-q", "--template="); err != nil {
		return err
	}
	// The history holds the same secrets as the files.
	if err := os.Chmod(filepath.Join(dest, ".git"), DirMode); err != nil {
		return err
	}
	for _, kv := range gitIdentity {
		if _, err := git(dest, "config", "--local", kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

// gitDirty reports whether dest has changes not committed (false when dest
// or its repository does not exist).
func gitDirty(dest string) (bool, error) {
	if _, err := os.Stat(filepath.Join(dest, ".git")); err != nil {
		_, err2 := os.Stat(dest)
		return err2 == nil, nil
	}
	out, err := git(dest, append([]string{"status", "--porcelain", "--untracked-files=all", "--"}, runFilePathspecs...)...)
	return out != "", err
}

// commit commits everything in dest; it returns "" when nothing changed.
func commit(dest, msg string) (string, error) {
	if err := ensureRepo(dest); err != nil {
		return "", err
	}
	// Every file goes into one pack (git's bulk check-in, for files above
	// core.bigFileThreshold) instead of a loose object each: a few hundred
	// files and their fan-out directories cost 0.4 s of metadata writes on
	// a VM disk, the pack 0.09 s. Set for this command only: the
	// repository's own config (and later repacks) keep git's defaults.
	if _, err := git(dest, append([]string{"-c", "core.bigFileThreshold=1", "add", "-A", "--"}, runFilePathspecs...)...); err != nil {
		return "", err
	}
	if out, err := git(dest, append([]string{"status", "--porcelain", "--"}, runFilePathspecs...)...); err != nil || out == "" {
		return "", err
	}
	args := []string{}
	for _, kv := range gitIdentity {
		args = append(args, "-c", kv[0]+"="+kv[1])
	}
	if _, err := git(dest, append(args, "commit", "-q", "--no-verify", "-m", msg)...); err != nil {
		return "", err
	}
	return git(dest, "rev-parse", "HEAD")
}

// Log returns the one-line history of dest (for tests and diagnostics).
func Log(dest string) ([]string, error) {
	out, err := git(dest, "log", "--format=%H %s")
	if err != nil || out == "" {
		return nil, err
	}
	return strings.Split(out, "\n"), nil
}
