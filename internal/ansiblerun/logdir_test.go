package ansiblerun

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// listing is every name in dir with its content, and which names share a
// file ("=" joins hard links).
func listing(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	byInode := map[uint64][]string{}
	content := map[uint64]string{}
	var out []string
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		st, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			out = append(out, e.Name()+" -> "+target)
			continue
		}
		ino := st.Sys().(*syscall.Stat_t).Ino
		byInode[ino] = append(byInode[ino], e.Name())
		b, _ := os.ReadFile(p)
		content[ino] = string(b)
	}
	for ino, names := range byInode {
		sort.Strings(names)
		out = append(out, strings.Join(names, "=")+": "+content[ino])
	}
	sort.Strings(out)
	return out
}

// TestStartLog: each run gets a log of its own, created new, and
// ansible.log becomes a link to it; what ansible.log was before is kept
// under a name of its own, never overwritten.
func TestStartLog(t *testing.T) {
	now := time.Date(2024, 5, 6, 7, 8, 9, 0, time.FixedZone("CEST", 2*3600))
	const utc = "ansible.log-2024-05-06T05:08:09"   // the run's own log: UTC
	const local = "ansible.log-2024-05-06T07:08:09" // tripleo-common's rename: local time
	for _, c := range []struct {
		name   string
		before func(dir string)
		want   []string // after, the run's log holding "new"
		log    string
	}{
		{name: "first run", log: utc,
			want: []string{"ansible.log=" + utc + ": new"}},
		{name: "a log of tripleo-common's (one link) is renamed as it renames it", log: utc,
			before: func(d string) { write(d, "ansible.log", "old") },
			want:   []string{"ansible.log=" + utc + ": new", local + ": old"}},
		{name: "an empty log of one link is dropped", log: utc,
			before: func(d string) { write(d, "ansible.log", "") },
			want:   []string{"ansible.log=" + utc + ": new"}},
		{name: "the link to an earlier run's log loses only that name", log: utc,
			before: func(d string) {
				write(d, "ansible.log-2024-05-06T04:00:00", "earlier")
				os.Link(filepath.Join(d, "ansible.log-2024-05-06T04:00:00"), filepath.Join(d, "ansible.log"))
			},
			want: []string{"ansible.log-2024-05-06T04:00:00: earlier", "ansible.log=" + utc + ": new"}},
		{name: "an empty earlier run's log keeps its name too", log: utc,
			before: func(d string) {
				write(d, "ansible.log-2024-05-06T04:00:00", "")
				os.Link(filepath.Join(d, "ansible.log-2024-05-06T04:00:00"), filepath.Join(d, "ansible.log"))
			},
			want: []string{"ansible.log-2024-05-06T04:00:00: ", "ansible.log=" + utc + ": new"}},
		{name: "a run in the same second gets .1, then .2", log: utc + ".2",
			before: func(d string) {
				write(d, utc, "first")
				write(d, utc+".1", "second")
				os.Link(filepath.Join(d, utc+".1"), filepath.Join(d, "ansible.log"))
			},
			want: []string{"ansible.log=" + utc + ".2: new", utc + ": first", utc + ".1: second"}},
		{name: "the rename of an old log never overwrites", log: utc,
			before: func(d string) {
				write(d, local, "kept")
				write(d, "ansible.log", "old")
			},
			want: []string{"ansible.log=" + utc + ": new", local + ": kept", local + ".1: old"}},
		{name: "a taken run name is never overwritten, even by a symlink", log: utc + ".1",
			before: func(d string) { os.Symlink("/nonexistent/target", filepath.Join(d, utc)) },
			want:   []string{"ansible.log=" + utc + ".1: new", utc + " -> /nonexistent/target"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.before != nil {
				c.before(dir)
			}
			got, err := startLog(dir, now)
			if err != nil {
				t.Fatal(err)
			}
			if got != filepath.Join(dir, c.log) {
				t.Errorf("log %s, want %s", got, c.log)
			}
			f, err := os.OpenFile(got, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("new")
			f.Close()
			if st, _ := os.Stat(got); st.Mode().Perm() != 0o600 {
				t.Errorf("mode %v", st.Mode().Perm())
			}
			sort.Strings(c.want)
			if l := listing(t, dir); strings.Join(l, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("after:\n%s\nwant:\n%s", strings.Join(l, "\n"), strings.Join(c.want, "\n"))
			}
			if _, err := os.Stat("/nonexistent/target"); err == nil {
				t.Error("a symlink's target was created")
			}
		})
	}
}

func write(dir, name, content string) {
	os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600)
}

// TestLogDirGuard: a log directory or run file that is not ours is
// refused by name, never chmodded, written through or replaced.
func TestLogDirGuard(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (chown to another user)")
	}
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, root string) string // the log dir
		file  string                                 // a run file to check, "" for the directory
		want  []string
	}{
		{name: "a symlink", want: []string{"log_dir", "is a symlink"}, setup: func(t *testing.T, root string) string {
			os.Mkdir(filepath.Join(root, "real"), 0o700)
			os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "link"))
			return filepath.Join(root, "link")
		}},
		{name: "another user's", want: []string{"log_dir", "owned by uid 65534"}, setup: func(t *testing.T, root string) string {
			d := filepath.Join(root, "theirs")
			os.Mkdir(d, 0o700)
			os.Chown(d, 65534, 65534)
			return d
		}},
		{name: "sticky and world-writable", want: []string{"log_dir", "mode 0777", "writable by other users"}, setup: func(t *testing.T, root string) string {
			d := filepath.Join(root, "shared")
			os.Mkdir(d, 0o700)
			os.Chmod(d, 0o777|os.ModeSticky)
			return d
		}},
		{name: "group-writable", want: []string{"log_dir", "mode 0770"}, setup: func(t *testing.T, root string) string {
			d := filepath.Join(root, "group")
			os.Mkdir(d, 0o700)
			os.Chmod(d, 0o770)
			return d
		}},
		{name: "a file", want: []string{"log_dir", "not a directory"}, setup: func(t *testing.T, root string) string {
			write(root, "file", "x")
			return filepath.Join(root, "file")
		}},
		{name: "inside a directory others may write to", want: []string{"log_dir", "without the sticky bit"}, setup: func(t *testing.T, root string) string {
			d := filepath.Join(root, "open")
			os.Mkdir(d, 0o700)
			os.Chmod(d, 0o777)
			return filepath.Join(d, "logs")
		}},
		{name: "a dangling ansible.log symlink", file: "ansible.log", want: []string{"log_dir", "ansible.log, a symlink (to ", "victim.log"},
			setup: func(t *testing.T, root string) string {
				d := filepath.Join(root, "logs")
				os.Mkdir(d, 0o700)
				os.Symlink(filepath.Join(root, "victim.log"), filepath.Join(d, "ansible.log"))
				return d
			}},
		{name: "ansible.cfg a directory", file: "ansible.cfg", want: []string{"log_dir", "ansible.cfg, which is a directory"},
			setup: func(t *testing.T, root string) string {
				d := filepath.Join(root, "logs")
				os.MkdirAll(filepath.Join(d, "ansible.cfg"), 0o700)
				return d
			}},
		{name: "ansible.log another user's", file: "ansible.log", want: []string{"log_dir", "ansible.log, owned by uid 65534"},
			setup: func(t *testing.T, root string) string {
				d := filepath.Join(root, "logs")
				os.Mkdir(d, 0o700)
				write(d, "ansible.log", "theirs")
				os.Chown(filepath.Join(d, "ansible.log"), 65534, 65534)
				return d
			}},
		{name: "ansible-playbook-command.sh a FIFO", file: "ansible-playbook-command.sh", want: []string{"log_dir", "a FIFO"},
			setup: func(t *testing.T, root string) string {
				d := filepath.Join(root, "logs")
				os.Mkdir(d, 0o700)
				syscall.Mkfifo(filepath.Join(d, "ansible-playbook-command.sh"), 0o600)
				return d
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			dir := c.setup(t, root)
			before := treeState(t, root)
			var err error
			if c.file == "" {
				_, err = prepareLogDir("log_dir", dir)
			} else if _, err = prepareLogDir("log_dir", dir); err == nil {
				err = checkRunFile("log_dir", dir, c.file)
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
			if after := treeState(t, root); after != before {
				t.Errorf("changed:\n%s\nwas:\n%s", after, before)
			}
		})
	}
}

// treeState is every path under root with its mode and owner.
func treeState(t *testing.T, root string) string {
	var lines []string
	filepath.Walk(root, func(p string, st os.FileInfo, err error) error {
		if err == nil {
			lines = append(lines, fmt.Sprintf("%s %v %d", p, st.Mode(), st.Sys().(*syscall.Stat_t).Uid))
		}
		return nil
	})
	return strings.Join(lines, "\n")
}

// TestPrepareLogDirCreates: a missing log dir and its parents are made
// 0700; an existing private one is used as it is (0755: not chmodded).
func TestPrepareLogDirCreates(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "a", "b")
	if created, err := prepareLogDir("log_dir", d); err != nil || !created {
		t.Fatalf("%v %v", created, err)
	}
	for _, p := range []string{filepath.Join(root, "a"), d} {
		if st, _ := os.Stat(p); st.Mode().Perm() != 0o700 {
			t.Errorf("%s mode %v", p, st.Mode().Perm())
		}
	}
	os.Chmod(d, 0o755)
	if created, err := prepareLogDir("log_dir", d); err != nil || created {
		t.Fatalf("%v %v", created, err)
	}
	if st, _ := os.Stat(d); st.Mode().Perm() != 0o755 {
		t.Errorf("chmodded to %v", st.Mode().Perm())
	}
}

// TestLockLogDir: a second run waits for the first, then is refused with
// a message saying what holds the directory.
func TestLockLogDir(t *testing.T) {
	d := t.TempDir()
	release, err := lockLogDir(d, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := lockLogDir(d, "", 300*time.Millisecond); err == nil || !strings.Contains(err.Error(), "another run (overcloud_playbook)") ||
		!strings.Contains(err.Error(), "lock_wait") || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("second lock: %v after %s", err, time.Since(start))
	}
	go func() { time.Sleep(200 * time.Millisecond); release() }()
	r2, err := lockLogDir(d, "", 5*time.Second)
	if err != nil {
		t.Fatalf("the lock was not handed over: %v", err)
	}
	r2()
}
