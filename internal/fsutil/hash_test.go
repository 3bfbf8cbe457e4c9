package fsutil

import (
	"os"
	"path/filepath"
	"testing"
)

func TestHash(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, []byte("abc"), 0o600)
	link := filepath.Join(dir, "l")
	os.Symlink(file, link)
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	for _, tc := range []struct {
		name string
		hash func(string, string) (string, int64, error)
		path string
		ok   bool
	}{
		{"input file", HashInput, file, true},
		{"input through a symlink", HashInput, link, true},
		{"own file", HashOwn, file, true},
		{"own through a symlink", HashOwn, link, false},
		{"input directory", HashInput, dir, false},
		{"missing", HashInput, filepath.Join(dir, "none"), false},
	} {
		sum, n, err := tc.hash(tc.path, "a test file")
		if tc.ok != (err == nil) || tc.ok && (sum != abc || n != 3) {
			t.Errorf("%s: %q %d %v", tc.name, sum, n, err)
		}
	}
}
