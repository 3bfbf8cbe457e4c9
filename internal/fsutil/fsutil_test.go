package fsutil

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
		// The child: say when the first bytes are written, then write
		// slowly until killed.
		WriteAtomic(os.Getenv("FSUTIL_CHILD"), 0o600, func(w io.Writer) error {
			for i := 0; ; i++ {
				w.Write(make([]byte, 4096))
				if i == 0 {
					os.Stdout.WriteString("writing\n")
				}
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
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteAtomicKilledLeavesNothing$")
	cmd.Env = append(os.Environ(), "FSUTIL_CHILD="+p)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once it is writing, not after a guessed delay.
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, "writing") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child did not start writing: %q %v", line, err)
	}
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

func TestPendingPublish(t *testing.T) {
	dir := t.TempDir()
	p, err := NewPending(dir, "x", SecretFileMode)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Discard()
	p.File().WriteString("content")
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a pending file is visible before Publish: %v", ents)
	}
	target := filepath.Join(dir, "final")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.Publish(target); !errors.Is(err, os.ErrExist) {
		t.Fatalf("Publish replaced an existing file (or failed otherwise): %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "old" {
		t.Fatalf("existing file changed: %q", b)
	}
	os.Remove(target)
	if err := p.Publish(target); err != nil {
		t.Fatal(err)
	}
	if !SameContent(target, []byte("content"), SecretFileMode) {
		t.Fatal("published content or mode differ")
	}
	if err := p.Publish(filepath.Join(dir, "again")); err == nil {
		t.Fatal("a second Publish succeeded")
	}
}

func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadPID := dead.Process.Pid
	tests := []struct {
		name    string
		removed bool
	}{
		{fmt.Sprintf(".heat-db-x.sql.gz.tmp-%d-123", deadPID), true},      // writer gone
		{fmt.Sprintf(".heat-db-x.sql.gz.tmp-%d-123", os.Getpid()), false}, // ourselves
		{".heat-db-x.sql.gz.tmp-1-123", false},                            // a live pid (init)
		{fmt.Sprintf(".other.tmp-%d-1", deadPID), false},                  // not our prefix
		{"heat-db-x.sql.gz", false},                                       // a dump
		{".heat-db-x.tmp-notapid-1", false},                               // not our naming
	}
	for _, tc := range tests {
		os.WriteFile(filepath.Join(dir, tc.name), nil, 0o600)
	}
	removed, err := RemoveStaleTemps(dir, "heat-db-")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		_, err := os.Stat(filepath.Join(dir, tc.name))
		if gone := os.IsNotExist(err); gone != tc.removed {
			t.Errorf("%s: removed=%v, want %v", tc.name, gone, tc.removed)
		}
	}
	if len(removed) != 1 {
		t.Errorf("reported %v", removed)
	}
}

func TestLockDirExcludes(t *testing.T) {
	dir := t.TempDir()
	unlock, err := LockDir(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockDir(dir, 100*time.Millisecond); err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("a second lock was granted: %v", err)
	}
	unlock()
	again, err := LockDir(dir, time.Second)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	again()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("locking created files: %v", ents)
	}
}

// TempNameExtra covers the longest temporary name WriteAtomic can give: a
// base name of MaxNameLen - TempNameExtra, the largest PID and 19 digits of
// nanoseconds make exactly MaxNameLen.
func TestTempNameExtra(t *testing.T) {
	base := strings.Repeat("a", MaxNameLen-TempNameExtra)
	prefix := strings.Replace(tempPrefix(base), "-"+strconv.Itoa(os.Getpid())+"-", "-4194304-", 1)
	name := strings.TrimSuffix(prefix, "*") + strconv.FormatInt(math.MaxInt64, 10)
	if len(name) != MaxNameLen {
		t.Errorf("the longest temporary name of a %d-byte name is %d bytes (%s), want %d", len(base), len(name), name, MaxNameLen)
	}
}

func TestPendingPublishFirstFree(t *testing.T) {
	dir := t.TempDir()
	name := func(i int) string { return filepath.Join(dir, fmt.Sprintf("f-%d", i)) }
	os.WriteFile(name(0), []byte("earlier"), 0o600)
	os.WriteFile(name(1), []byte("earlier"), 0o600)
	p, err := NewPending(dir, "f", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	p.File().Write([]byte("new"))
	got, err := p.PublishFirstFree(name, 5)
	if err != nil || got != name(2) {
		t.Fatalf("published as %q: %v", got, err)
	}
	for i, want := range []string{"earlier", "earlier", "new"} {
		if b, _ := os.ReadFile(name(i)); string(b) != want {
			t.Errorf("%s holds %q", name(i), b)
		}
	}
	// No free name among the tries: the error says the last one exists.
	q, _ := NewPending(dir, "f", 0o600)
	defer q.Discard()
	if _, err := q.PublishFirstFree(name, 3); !errors.Is(err, os.ErrExist) {
		t.Errorf("three names taken, three tries: %v", err)
	}
}
