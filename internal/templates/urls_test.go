package templates

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The expectations are Python 3.11's urllib.parse.urljoin results.
func TestJoinURL(t *testing.T) {
	tests := []struct{ base, ref, want string }{
		{"file:///a/b/", "x.yaml", "file:///a/b/x.yaml"},
		{"file:///a/b/", "../c/./d.yaml", "file:///a/c/d.yaml"},
		{"file:///a/b/", "/x/../y", "file:///y"},
		{"file:///a/b/", "x//y", "file:///a/b/x/y"},
		{"file:///a/b/", "../../../../z", "file:///z"},
		{"file:///a/b/", "OS:Heat:None", "OS:Heat:None"},
		{"file:///a/b/", "file:///q/../r", "file:///r"},
		{"file:///a/b/", "http://h/x.yaml", "http://h/x.yaml"},
		{"file:///a/b/", "sub dir/x y.sh", "file:///a/b/sub dir/x y.sh"},
		{"file:///a%20b/", "c.yaml", "file:///a%20b/c.yaml"},
		{"file:///a/b/", "..", "file:///a/"},
		{"file:///a/b/", ".", "file:///a/b/"},
		{"file:///a/b/", "./", "file:///a/b/"},
		{"file:///a/b/c.yaml", "d.yaml", "file:///a/b/d.yaml"},
		{"file:///a/b/", "file:rel.yaml", "file:///a/b/rel.yaml"},
		{"file:///a/b/", "//host/x/../y", "file://host/x/../y"},
	}
	for _, tt := range tests {
		if got := joinURL(tt.base, tt.ref); got != tt.want {
			t.Errorf("joinURL(%q, %q) = %q, want %q", tt.base, tt.ref, got, tt.want)
		}
	}
}

func TestPathToURLAndBack(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ rel, wantSuffix string }{
		{"plain.yaml", "/plain.yaml"},
		{"a b/c%d.yaml", "/a%20b/c%25d.yaml"},
		{"x/../café.yaml", "/caf%C3%A9.yaml"},
	}
	for _, tt := range tests {
		u, err := pathToURL(filepath.Join(dir, tt.rel))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(u, "file:///") || !strings.HasSuffix(u, tt.wantSuffix) {
			t.Errorf("pathToURL(%q) = %q, want file:///...%s", tt.rel, u, tt.wantSuffix)
		}
		back, err := urlToPath(u)
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Clean(filepath.Join(dir, tt.rel)); back != want {
			t.Errorf("urlToPath(%q) = %q, want %q", u, back, want)
		}
	}
	// Relative paths are made absolute against the working directory.
	u, err := pathToURL("testdata")
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if want, _ := pathToURL(filepath.Join(wd, "testdata")); u != want {
		t.Errorf("pathToURL(testdata) = %q, want %q", u, want)
	}
}

func TestURLToPathRefusesRemote(t *testing.T) {
	for _, u := range []string{"http://example.com/x.yaml", "file://otherhost/x", "OS:Heat:None"} {
		if _, err := urlToPath(u); err == nil {
			t.Errorf("urlToPath(%q): no error", u)
		}
	}
	if p, err := urlToPath("file://localhost/tmp/a%2"); err != nil || p != "/tmp/a%2" {
		t.Errorf("urlToPath with a bad escape = %q, %v; want it kept", p, err)
	}
}
