package tht

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// cacheRoot is where rendered trees and tripleo-common inputs are kept:
// dir, else $EPHEMERAL_HEAT_THT_CACHE, else <user cache dir>/ephemeral-heat/tht.
// Entries are named by a hash of their inputs, so a stale entry is never
// used; removing the directory is always safe.
func cacheRoot(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv(EnvCache)
	}
	if dir == "" {
		uc, err := os.UserCacheDir()
		if err != nil {
			uc = filepath.Join(os.TempDir(), fmt.Sprintf("ephemeral-heat-cache-%d", os.Getuid()))
		}
		dir = filepath.Join(uc, "ephemeral-heat", "tht")
	}
	if _, err := fsutil.EnsurePrivateDir(dir); err != nil {
		return "", fmt.Errorf("cache directory (set %s to choose another): %w", EnvCache, err)
	}
	return dir, nil
}

// memo makes goroutines of one process build an entry once.
var memo sync.Map // entry path -> *sync.Mutex

// cachedDir returns root/name, first building it when absent: build fills a
// fresh temporary directory that is then renamed to root/name, so the entry
// appears complete or not at all (a concurrent process building the same
// entry loses the rename and uses the winner's). It reports whether the entry
// was already there.
func cachedDir(root, name string, build func(dir string) error) (string, bool, error) {
	final := filepath.Join(root, name)
	mu, _ := memo.LoadOrStore(final, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	if st, err := os.Stat(final); err == nil && st.IsDir() {
		return final, true, nil
	}
	removeStaleTemps(root)
	tmp, err := os.MkdirTemp(root, name+".tmp-")
	if err != nil {
		return "", false, fmt.Errorf("cache: %w", err)
	}
	if err := build(tmp); err != nil {
		os.RemoveAll(tmp)
		return "", false, err
	}
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp)
		if st, serr := os.Stat(final); serr == nil && st.IsDir() {
			return final, true, nil
		}
		return "", false, fmt.Errorf("cache: publishing %s: %w", final, err)
	}
	return final, false, nil
}

// removeStaleTemps removes temporary entries left by killed builders (older
// than an hour: a build takes seconds).
func removeStaleTemps(root string) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !strings.Contains(e.Name(), ".tmp-") {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
			os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
}

// shortHash names a cache entry after its inputs.
func shortHash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}
