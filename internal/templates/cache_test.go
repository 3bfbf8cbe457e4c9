package templates

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Tests run without the cache unless they turn it on (t.Setenv).
func TestMain(m *testing.M) {
	os.Setenv(CacheEnv, "off")
	os.Exit(m.Run())
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func sameBundle(t *testing.T, what string, got, want *Bundle) {
	t.Helper()
	gb, err := got.RequestBody(map[string]any{"stack_name": "s"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	wb, err := want.RequestBody(map[string]any{"stack_name": "s"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gb, wb) || !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: the bundle differs from processing without the cache", what)
	}
}

// A result comes back from the cache exactly as processing makes it, only
// while every file it was made from is unchanged; a damaged cache entry is
// ignored; the cache keeps CacheEntries results, private.
func TestProcessCache(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	t.Setenv(CacheEnv, cache)
	tree := filepath.Join(t.TempDir(), "tree")
	copyDir(t, "testdata/tree", tree)
	top := filepath.Join(tree, "overcloud.yaml")
	envs := []string{filepath.Join(tree, "environments", "base.yaml"), filepath.Join(tree, "environments", "override.yaml")}
	fresh := func() *Bundle {
		b, _, err := processUncached(DefaultLimits(), top, envs)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	hits := cacheHits.Load()
	cold, err := Process(top, envs)
	if err != nil {
		t.Fatal(err)
	}
	sameBundle(t, "cold", cold, fresh())
	warm, err := Process(top, envs)
	if err != nil {
		t.Fatal(err)
	}
	if cacheHits.Load() != hits+1 {
		t.Fatalf("the second run did not use the cache")
	}
	sameBundle(t, "warm", warm, fresh())
	entries, _ := os.ReadDir(cache)
	if st, err := os.Stat(cache); err != nil || st.Mode().Perm() != 0o700 || len(entries) != 1 {
		t.Fatalf("cache directory %v %v, %d entries", st, err, len(entries))
	}
	if info, _ := entries[0].Info(); info.Mode().Perm() != 0o600 {
		t.Errorf("cache entry mode %v, want 0600 (it holds the files' contents)", info.Mode().Perm())
	}

	// Every file that went in counts, however deep: edit one that only a
	// nested template names.
	var deep string
	for u := range warm.Files {
		if p, ok := URLToPath(u); ok && strings.Contains(p, string(filepath.Separator)+"network"+string(filepath.Separator)) {
			deep = p
		}
	}
	if deep == "" {
		t.Fatal("no nested file in the test tree")
	}
	old, _ := os.ReadFile(deep)
	if err := os.WriteFile(deep, append(old, []byte("\n# edited\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	hits = cacheHits.Load()
	edited, err := Process(top, envs)
	if err != nil {
		t.Fatal(err)
	}
	if cacheHits.Load() != hits {
		t.Fatalf("an edited file was served from the cache")
	}
	sameBundle(t, "after an edit", edited, fresh())

	// A damaged entry is ignored.
	entries, _ = os.ReadDir(cache)
	p := filepath.Join(cache, entries[0].Name())
	data, _ := os.ReadFile(p)
	if err := os.WriteFile(p, data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	damaged, err := Process(top, envs)
	if err != nil {
		t.Fatal(err)
	}
	sameBundle(t, "damaged entry", damaged, fresh())

	// At most CacheEntries results (other environment lists: other keys).
	for i := 0; i < CacheEntries+3; i++ {
		if _, err := Process(top, envs[:i%2+1:i%2+1]); err != nil {
			t.Fatal(err)
		}
		extra := filepath.Join(tree, "environments", "empty.yaml")
		list := []string{envs[0]}
		for j := 0; j <= i; j++ {
			list = append(list, extra)
		}
		if _, err := Process(top, list); err != nil {
			t.Fatal(err)
		}
	}
	if entries, _ = os.ReadDir(cache); len(entries) != CacheEntries {
		t.Errorf("%d cache entries, want %d", len(entries), CacheEntries)
	}
}
