package pathguard

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestDir(t *testing.T) {
	legacy := func(dir string) bool { _, err := os.Stat(filepath.Join(dir, "ours.legacy")); return err == nil }
	tests := []struct {
		name   string
		setup  func(t *testing.T, p string)
		exists bool
		want   string // "" = accepted
	}{
		{"missing", func(t *testing.T, p string) {}, false, ""},
		{"empty", func(t *testing.T, p string) { os.Mkdir(p, 0o700) }, true, ""},
		{"marked ours", func(t *testing.T, p string) {
			os.Mkdir(p, 0o700)
			os.WriteFile(filepath.Join(p, "x"), nil, 0o600)
			WriteMarker(p, "thing")
		}, true, ""},
		{"legacy ours", func(t *testing.T, p string) {
			os.Mkdir(p, 0o700)
			os.WriteFile(filepath.Join(p, "ours.legacy"), nil, 0o600)
		}, true, ""},
		{"someone else's content", func(t *testing.T, p string) {
			os.Mkdir(p, 0o700)
			os.WriteFile(filepath.Join(p, "x"), nil, 0o600)
		}, true, "is not empty and is not a thing this collection made"},
		{"marked as another kind", func(t *testing.T, p string) {
			os.Mkdir(p, 0o700)
			WriteMarker(p, "other")
		}, true, "of another task"},
		{"a marker that is a FIFO", func(t *testing.T, p string) {
			os.Mkdir(p, 0o700)
			syscall.Mkfifo(filepath.Join(p, Marker), 0o600)
		}, true, "is a FIFO"},
		{"a marker with foreign content", func(t *testing.T, p string) {
			os.Mkdir(p, 0o700)
			os.WriteFile(filepath.Join(p, Marker), []byte("hello\n"), 0o600)
		}, true, "not \"ephemeral.heat \""},
		{"symlink", func(t *testing.T, p string) { os.Symlink(t.TempDir(), p) }, true, "is a symlink"},
		{"file", func(t *testing.T, p string) { os.WriteFile(p, nil, 0o600) }, true, "not a directory"},
		{"group-writable", func(t *testing.T, p string) { os.Mkdir(p, 0o700); os.Chmod(p, 0o770) }, true, "writable by other users"},
		{"foreign-owned", func(t *testing.T, p string) { os.Mkdir(p, 0o700); os.Chown(p, 65534, 65534) }, true, "is owned by uid 65534"},
		{"parent world-writable", func(t *testing.T, p string) { os.Chmod(filepath.Dir(p), 0o777) }, false, "without the sticky bit"},
		{"parent sticky world-writable", func(t *testing.T, p string) { os.Chmod(filepath.Dir(p), 0o777|os.ModeSticky) }, false, ""},
		{"parent foreign", func(t *testing.T, p string) { os.Chown(filepath.Dir(p), 65534, 65534) }, false, "owned by uid 65534"},
	}
	if os.Geteuid() != 0 {
		t.Fatal("these tests need root (to give directories to another user)")
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "d")
			tc.setup(t, p)
			exists, err := Dir("dest", p, "thing", legacy)
			if tc.want == "" {
				if err != nil || exists != tc.exists {
					t.Fatalf("Dir: %v %v", exists, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "dest ") {
				t.Fatalf("Dir: %v, want a refusal naming dest with %q", err, tc.want)
			}
		})
	}
}

func TestMkdirAllKeepsExisting(t *testing.T) {
	top := t.TempDir()
	os.Chmod(top, 0o755)
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	created, err := MkdirAll("dest", filepath.Join(top, "a", "b"))
	if err != nil || len(created) != 2 {
		t.Fatalf("MkdirAll: %v %v", created, err)
	}
	for p, want := range map[string]os.FileMode{top: 0o755, filepath.Join(top, "a"): 0o700, filepath.Join(top, "a", "b"): 0o700} {
		if st, _ := os.Stat(p); st.Mode().Perm() != want {
			t.Errorf("%s: %v, want %o", p, st.Mode().Perm(), want)
		}
	}
	if created, err := MkdirAll("dest", filepath.Join(top, "a", "b")); err != nil || len(created) != 0 {
		t.Errorf("again: %v %v", created, err)
	}
	// Through a symlinked component: refused by Parent's checks of what it
	// points to only when that is not ours; here it is ours, so allowed,
	// but a planted symlink at the leaf is never followed.
	os.Symlink(t.TempDir(), filepath.Join(top, "leaf"))
	if _, err := Dir("dest", filepath.Join(top, "leaf"), "thing", nil); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("a symlinked leaf: %v", err)
	}
}

func TestFile(t *testing.T) {
	ours := func(p string) bool { b, _ := os.ReadFile(p); return string(b) == "ours" }
	tests := []struct {
		name  string
		setup func(t *testing.T, p string)
		want  string
	}{
		{"missing", func(t *testing.T, p string) {}, ""},
		{"ours", func(t *testing.T, p string) { os.WriteFile(p, []byte("ours"), 0o600) }, ""},
		{"not ours", func(t *testing.T, p string) { os.WriteFile(p, []byte("theirs"), 0o600) }, "is not a thing"},
		{"foreign owner", func(t *testing.T, p string) { os.WriteFile(p, []byte("ours"), 0o600); os.Chown(p, 65534, 65534) }, "owned by uid 65534"},
		{"symlink to ours", func(t *testing.T, p string) {
			q := p + ".real"
			os.WriteFile(q, []byte("ours"), 0o600)
			os.Symlink(q, p)
		}, "is a symlink"},
		{"FIFO", func(t *testing.T, p string) { syscall.Mkfifo(p, 0o600) }, "is a FIFO"},
		{"socket-like device", func(t *testing.T, p string) { syscall.Mknod(p, syscall.S_IFCHR|0o600, 1<<8|3) }, "is a character device"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f")
			tc.setup(t, p)
			_, err := File("progress_file", p, "a thing", ours)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "progress_file ") {
				t.Fatalf("File: %v, want a refusal naming progress_file with %q", err, tc.want)
			}
		})
	}
}

// A directory holding only the marker another process is writing (its
// temporary name) counts as empty; anything else does not.
func TestIsEmptyIgnoresMarkerInFlight(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  bool
	}{
		{nil, true},
		{[]string{"." + Marker + ".tmp-123-456"}, true},
		{[]string{"." + Marker + ".tmp-123-456", "passwd"}, false},
		{[]string{"heat.conf"}, false},
	} {
		dir := t.TempDir()
		for _, n := range tc.names {
			if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := isEmpty(dir); err != nil || got != tc.want {
			t.Errorf("%v: empty=%v (%v), want %v", tc.names, got, err, tc.want)
		}
	}
}
