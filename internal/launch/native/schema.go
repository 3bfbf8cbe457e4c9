package native

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/schemacache"
)

// cached is the schema cache entry of one fresh launch (nil: none, and
// db_sync runs as always).
type cached struct {
	cache          schemacache.Cache
	key, version   string
	heatPackage    string
	warn           func(string, ...any)
	notUsedBecause string
	replace        bool
}

// cacheFor finds the cache entry of this launch's Heat and heat.conf. A
// cache that cannot be used is said (a warning) and db_sync runs.
func (b *Backend) cacheFor(s *backend.Spec, conf string) *cached {
	warn := s.Warn
	if warn == nil {
		warn = func(string, ...any) {}
	}
	c := &cached{warn: warn}
	confData, err := os.ReadFile(conf)
	if err != nil {
		c.notUsedBecause = err.Error()
		return c
	}
	python := map[string][]byte{}
	for rel, data := range heatdir.PythonFiles() {
		python[filepath.ToSlash(rel)] = data
	}
	c.key, c.version, c.heatPackage, err = schemacache.Key(schemacache.Inputs{HeatManage: b.heatManage, HeatConf: confData,
		Python: python, PythonPath: os.Getenv("PYTHONPATH")})
	if err != nil {
		c.notUsedBecause = err.Error()
		return c
	}
	if c.cache, err = schemacache.Default(); err != nil {
		c.notUsedBecause = err.Error()
	}
	return c
}

// hit copies the cached schema to dbPath and writes the db_sync log that
// says so; false: db_sync must run.
func (c *cached) hit(dbPath, logPath string) bool {
	if c == nil || c.notUsedBecause != "" {
		return false
	}
	ok, err := c.cache.Get(c.key, dbPath, heatdir.FileMode)
	if errors.Is(err, schemacache.ErrMismatch) {
		c.warn("schema_cache: %v; running db_sync and keeping its result instead", err)
		c.replace = true
		return false
	}
	if err != nil {
		c.warn("schema_cache: %v; running db_sync", err)
		c.notUsedBecause = err.Error()
		return false
	}
	if !ok {
		return false
	}
	msg := fmt.Sprintf("db_sync not run: %s is a copy of db_sync's result for Heat %s (%s), cached in %s under %s (schema_cache)\n",
		dbPath, c.version, c.heatPackage, c.cache.Dir, c.key)
	if err := os.WriteFile(logPath, []byte(msg), heatdir.FileMode); err != nil {
		c.warn("writing %s: %v", logPath, err)
	}
	return true
}

// put stores what db_sync made at dbPath; a failure is only a warning.
func (c *cached) put(dbPath string) {
	if c == nil || c.notUsedBecause != "" {
		return
	}
	err := c.cache.Put(c.key, dbPath, schemacache.Record{HeatVersion: c.version, HeatPackage: c.heatPackage}, c.replace)
	if err != nil {
		c.warn("schema_cache: keeping db_sync's result: %v", err)
	}
}
