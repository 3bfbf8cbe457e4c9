package templates

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// The processing cache. Process is a function of the paths it is given and
// of the content of every file it reads (which files it reads follows from
// their content), so a result can be reused as long as every file it read
// still has the content it had: a warm Process reads and hashes those files
// and decodes its last result instead of parsing YAML (most of the time of
// a cold run on a tripleo-heat-templates tree). Results hold the files'
// contents (passwords among them): directory 0700, files 0600, written
// whole (temp file and rename); a cache file that does not read back
// exactly is ignored. The cache keeps CacheEntries results, the least
// recently used go first.
const (
	// CacheEnv names the cache directory; "off" turns the cache off.
	// Default: <user cache dir>/ephemeral-heat/templates.
	CacheEnv = "EPHEMERAL_HEAT_TEMPLATE_CACHE"
	// CacheEntries is how many results the cache keeps.
	CacheEntries = 8
	// cacheFormat changes whenever this package's output or this file's
	// format changes: older results are then not used.
	cacheFormat = "ephemeral-heat templates cache 1\n"
)

// cacheDir returns the cache directory, "" when the cache is off.
func cacheDir() string {
	switch v := os.Getenv(CacheEnv); v {
	case "off":
		return ""
	case "":
		d, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(d, "ephemeral-heat", "templates")
	default:
		return v
	}
}

// cacheKey names the result for a template and its environments.
func cacheKey(lim Limits, templatePath string, envPaths []string) (string, error) {
	h := sha256.New()
	h.Write([]byte(cacheFormat))
	fmt.Fprintf(h, "limits %d %d\n", lim.Template, lim.Body)
	abs, err := filepath.Abs(templatePath)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%q\n", abs)
	for _, e := range envPaths {
		if abs, err = filepath.Abs(e); err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%q\n", abs)
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// cached is a result and the files it was made from.
type cached struct {
	inputs map[string][32]byte // path -> sha256 of its content
	b      *Bundle
}

// cacheHits counts the results cacheLoad returned (for tests).
var cacheHits atomic.Int64

// cacheLoad returns the cached result for key when every file it was made
// from still has the same content, else nil.
func cacheLoad(dir, key string, lim Limits) *Bundle {
	path := filepath.Join(dir, key)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	c, err := decodeCached(data)
	if err != nil {
		return nil
	}
	// Read and hash the inputs on every core.
	paths := make(chan string)
	var changed atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range paths {
				if changed.Load() {
					continue
				}
				content, err := fsutil.ReadInput(p, fsutil.Limit{Bytes: max(lim.Template, lim.Body)}, "file")
				if err != nil || sha256.Sum256(content) != c.inputs[p] {
					changed.Store(true)
				}
			}
		}()
	}
	for p := range c.inputs {
		paths <- p
	}
	close(paths)
	wg.Wait()
	if changed.Load() {
		return nil
	}
	now := time.Now()
	os.Chtimes(path, now, now) // most recently used
	cacheHits.Add(1)
	return c.b
}

// cacheStore saves b, made from inputs, and keeps CacheEntries results.
// Failures are ignored: the cache only saves time.
func cacheStore(dir, key string, inputs map[string][32]byte, b *Bundle) {
	data, err := encodeCached(cached{inputs: inputs, b: b})
	if err != nil {
		return
	}
	if _, err := fsutil.EnsurePrivateDir(dir); err != nil {
		return
	}
	if err := fsutil.WriteFileAtomic(filepath.Join(dir, key), data, fsutil.SecretFileMode); err != nil {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type entry struct {
		name string
		mod  time.Time
	}
	var results []entry
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() && len(e.Name()) == 64 {
			results = append(results, entry{e.Name(), info.ModTime()})
		}
	}
	sort.Slice(results, func(i, j int) bool { return results[i].mod.After(results[j].mod) })
	for _, e := range results[min(len(results), CacheEntries):] {
		os.Remove(filepath.Join(dir, e.name))
	}
}

// encodeCached writes c: the format line, then length-prefixed fields, then
// the sha256 of all that.
func encodeCached(c cached) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(cacheFormat)
	str := func(s string) {
		buf.Write(binary.AppendUvarint(nil, uint64(len(s))))
		buf.WriteString(s)
	}
	num := func(n int) { buf.Write(binary.AppendUvarint(nil, uint64(n))) }
	paths := make([]string, 0, len(c.inputs))
	for p := range c.inputs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	num(len(paths))
	for _, p := range paths {
		str(p)
		sum := c.inputs[p]
		buf.Write(sum[:])
	}
	tpl, err := appendJSON(nil, c.b.Template)
	if err != nil {
		return nil, err
	}
	env, err := appendJSON(nil, c.b.Environment)
	if err != nil {
		return nil, err
	}
	str(string(tpl))
	str(c.b.TemplateURL)
	str(string(env))
	num(len(c.b.EnvironmentFiles))
	for _, u := range c.b.EnvironmentFiles {
		str(u)
	}
	hidden := make([]string, 0, len(c.b.Hidden))
	for h := range c.b.Hidden {
		hidden = append(hidden, h)
	}
	sort.Strings(hidden)
	num(len(hidden))
	for _, h := range hidden {
		str(h)
	}
	num(len(c.b.Files))
	for _, u := range sortedStringKeys(c.b.Files) {
		str(u)
		str(c.b.Files[u])
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	return buf.Bytes(), nil
}

var errBadCache = errors.New("not a readable cache entry")

func decodeCached(data []byte) (cached, error) {
	var c cached
	if len(data) < len(cacheFormat)+32 || !strings.HasPrefix(string(data), cacheFormat) {
		return c, errBadCache
	}
	body, sum := data[:len(data)-32], data[len(data)-32:]
	if s := sha256.Sum256(body); !bytes.Equal(s[:], sum) {
		return c, errBadCache
	}
	rest := body[len(cacheFormat):]
	bad := false
	num := func() int {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n > uint64(len(body)) {
			bad = true
			return 0
		}
		rest = rest[k:]
		return int(n)
	}
	str := func() string {
		n := num()
		if bad || n > len(rest) {
			bad = true
			return ""
		}
		s := string(rest[:n])
		rest = rest[n:]
		return s
	}
	c.inputs = map[string][32]byte{}
	for i, n := 0, num(); i < n && !bad; i++ {
		p := str()
		if len(rest) < 32 {
			return c, errBadCache
		}
		c.inputs[p] = [32]byte(rest[:32])
		rest = rest[32:]
	}
	b := &Bundle{Files: map[string]string{}, Hidden: map[string]bool{}}
	tpl := str()
	b.TemplateURL = str()
	env := str()
	for i, n := 0, num(); i < n && !bad; i++ {
		b.EnvironmentFiles = append(b.EnvironmentFiles, str())
	}
	for i, n := 0, num(); i < n && !bad; i++ {
		b.Hidden[str()] = true
	}
	for i, n := 0, num(); i < n && !bad; i++ {
		u := str()
		b.Files[u] = str()
	}
	if bad || len(rest) != 0 {
		return c, errBadCache
	}
	if b.EnvironmentFiles == nil {
		b.EnvironmentFiles = []string{}
	}
	var err error
	if b.Template, err = decodeMap(tpl); err != nil {
		return c, errBadCache
	}
	if b.Environment, err = decodeMap(env); err != nil {
		return c, errBadCache
	}
	c.b = b
	return c, nil
}

// decodeMap decodes JSON this package wrote back into its values (numbers
// as json.Number, written as they were).
func decodeMap(s string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

func sortedStringKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
