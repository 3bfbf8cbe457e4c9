package fsutil

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	tests := []struct {
		name string
		data string
		mode os.FileMode
	}{
		{"create", "one", 0o600},
		{"replace", "two", 0o600},
		{"mode change", "two", 0o644},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := WriteFileAtomic(p, []byte(tc.data), tc.mode); err != nil {
				t.Fatal(err)
			}
			if !SameContent(p, []byte(tc.data), tc.mode) {
				t.Fatalf("content or mode differ after write")
			}
		})
	}
}

func TestWriteAtomicFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := WriteFileAtomic(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := WriteAtomic(p, 0o600, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return errors.New("boom")
	})
	if err == nil {
		t.Fatal("expected error")
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("old content lost: %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("temporary file left behind: %v", ents)
	}
}

func TestEnsurePrivateDir(t *testing.T) {
	base := t.TempDir()
	d := filepath.Join(base, "a", "b")
	changed, err := EnsurePrivateDir(d)
	if err != nil || !changed {
		t.Fatalf("create: changed=%v err=%v", changed, err)
	}
	changed, err = EnsurePrivateDir(d)
	if err != nil || changed {
		t.Fatalf("second call: changed=%v err=%v", changed, err)
	}
	os.Chmod(d, 0o755)
	changed, err = EnsurePrivateDir(d)
	if err != nil || !changed {
		t.Fatalf("tighten: changed=%v err=%v", changed, err)
	}
	st, _ := os.Stat(d)
	if st.Mode().Perm() != 0o700 {
		t.Fatalf("mode %v", st.Mode().Perm())
	}
	f := filepath.Join(base, "file")
	os.WriteFile(f, nil, 0o600)
	if _, err := EnsurePrivateDir(f); err == nil {
		t.Fatal("expected error for a file")
	}
}

func TestWriteAtomicKilledLeavesNothing(t *testing.T) {
	if os.Getenv("FSUTIL_CHILD") != "" {
		// The child: write slowly until killed.
		WriteAtomic(os.Getenv("FSUTIL_CHILD"), 0o600, func(w io.Writer) error {
			for {
				w.Write(make([]byte, 4096))
				time.Sleep(time.Millisecond)
			}
		})
		return
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "dump")
	if err := WriteFileAtomic(p, []byte("previous"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=TestWriteAtomicKilledLeavesNothing")
	cmd.Env = append(os.Environ(), "FSUTIL_CHILD="+p)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Kill()
	cmd.Wait()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "dump" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("files after a killed write: %v", names)
	}
	if b, _ := os.ReadFile(p); string(b) != "previous" {
		t.Fatalf("previous content lost: %q", b)
	}
}
