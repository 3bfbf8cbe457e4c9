package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ReadInput reads regular files within a limit and refuses everything else
// by its type, without ever blocking.
func TestReadInput(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	os.WriteFile(small, []byte("heat_template_version: 2021-04-16\n"), 0o644)
	big := filepath.Join(dir, "big.yaml")
	os.WriteFile(big, make([]byte, 2000), 0o644)
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	os.Symlink(small, link)
	lim := Limit{Bytes: 1000, Option: "max_template_size"}
	tests := []struct {
		name, path string
		want       string // "" = read
	}{
		{"a small file", small, ""},
		{"a symlink to one", link, ""},
		{"over the limit", big, "is 2000 bytes, over max_template_size (1000 bytes)"},
		{"a FIFO", fifo, "is a FIFO (named pipe), not a regular file"},
		{"a directory", dir, "is a directory"},
		{"a character device", "/dev/zero", "is a character device"},
		{"missing", filepath.Join(dir, "none"), "no such file"},
		{"a proc file larger than it says", "/proc/self/maps", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan struct{})
			var err error
			go func() {
				defer close(done)
				_, err = ReadInput(tc.path, lim, "template")
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("ReadInput blocked")
			}
			if tc.name == "a proc file larger than it says" {
				var tl *TooLargeError
				if !errors.As(err, &tl) || !strings.Contains(err.Error(), "more than 1000 bytes") {
					t.Fatalf("/proc/self/maps (more than 1000 bytes, reported as 0): %v", err)
				}
				return
			}
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
				t.Fatalf("%v, want an error naming %s with %q", err, tc.path, tc.want)
			}
		})
	}
}
