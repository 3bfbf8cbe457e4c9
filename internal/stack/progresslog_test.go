package stack

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// progress_file: a new file or an earlier progress log is written; anything
// else at that path is refused and left as it was, without blocking.
func TestOpenProgressLog(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, p string)
		want  string // "" = accepted
	}{
		{"new", func(t *testing.T, p string) {}, ""},
		{"empty file", func(t *testing.T, p string) { os.WriteFile(p, nil, 0o600) }, ""},
		{"earlier log", func(t *testing.T, p string) {
			os.WriteFile(p, []byte(progressStarted+"2026-01-01T00:00:00Z\nheat_stack finished: ok\n"), 0o600)
		}, ""},
		{"another file", func(t *testing.T, p string) { os.WriteFile(p, []byte("precious\n"), 0o644) }, "is not a progress log"},
		{"symlink", func(t *testing.T, p string) { os.Symlink(filepath.Join(filepath.Dir(p), "target"), p) }, "is a symlink"},
		{"FIFO", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "is a FIFO"},
		{"directory", func(t *testing.T, p string) { os.Mkdir(p, 0o700) }, "is a directory"},
		{"missing directory", func(t *testing.T, p string) { os.Remove(filepath.Dir(p)) }, "does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "progress.log")
			tc.setup(t, p)
			before, _ := os.Lstat(p)
			var beforeData []byte
			if before != nil && before.Mode().IsRegular() {
				beforeData, _ = os.ReadFile(p)
			}
			l, err := OpenProgressLog(p)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				l.Finish(map[string]any{"msg": "done"}, nil, nil)
				l.Close()
				b, _ := os.ReadFile(p)
				if st, _ := os.Lstat(p); !strings.HasPrefix(string(b), progressStarted) || st.Mode().Perm() != 0o600 {
					t.Errorf("progress log: %q mode %v", b, st.Mode())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "progress_file") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want a refusal naming progress_file with %q", err, tc.want)
			}
			after, aerr := os.Lstat(p)
			if (before == nil) != errors.Is(aerr, os.ErrNotExist) || (before != nil && (after.Mode() != before.Mode() || after.Size() != before.Size())) {
				t.Errorf("the refused path changed: %v -> %v", before, after)
			}
			if beforeData != nil {
				if b, _ := os.ReadFile(p); string(b) != string(beforeData) {
					t.Errorf("content changed")
				}
			}
		})
	}
}
