// Package fakekeystone is a Keystone v3 and a stackless Heat on 127.0.0.1
// for tests of authentication: POST /v3/auth/tokens answers a token and a
// catalog with an orchestration endpoint per region and interface, each
// under its own path of the same server, where a Heat that holds no stack
// answers 404 to a stack lookup. The auth requests and the Heat requests
// (path and token) are kept for the test to check.
package fakekeystone

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Token is the token the fake issues.
const Token = "gAAAAAB-fake-token-9c1d"

// Project is the project of the catalog's endpoints.
const Project = "5e7f0a2b"

// Regions and interfaces the catalog has an orchestration endpoint for.
var (
	Regions    = []string{"RegionOne", "RegionTwo"}
	Interfaces = []string{"public", "internal", "admin"}
)

// Keystone is a running fake.
type Keystone struct {
	// URL is the server's base (http://127.0.0.1:PORT); auth_url is
	// URL + "/v3".
	URL string
	mu  sync.Mutex
	// auths are the bodies of the token requests; heat the Heat
	// requests as "METHOD PATH TOKEN".
	auths []map[string]any
	heat  []string
}

// Start serves until the test ends.
func Start(t testing.TB) *Keystone {
	t.Helper()
	k := &Keystone{}
	srv := httptest.NewServer(http.HandlerFunc(k.serve))
	t.Cleanup(srv.Close)
	k.URL = srv.URL
	return k
}

// HeatEndpoint is the catalog's orchestration endpoint of region and
// interface.
func (k *Keystone) HeatEndpoint(region, iface string) string {
	return k.URL + "/heat/" + region + "/" + iface + "/v1/" + Project
}

// Auths returns the token requests' bodies so far.
func (k *Keystone) Auths() []map[string]any {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]map[string]any(nil), k.auths...)
}

// HeatRequests returns the Heat requests so far, "METHOD PATH TOKEN".
func (k *Keystone) HeatRequests() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.heat...)
}

func (k *Keystone) serve(w http.ResponseWriter, r *http.Request) {
	reply := func(code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	switch {
	case r.Method == "POST" && r.URL.Path == "/v3/auth/tokens":
		var body map[string]any
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err := json.Unmarshal(b, &body); err != nil {
			reply(400, map[string]any{"error": map[string]any{"code": 400, "message": "not JSON"}})
			return
		}
		k.mu.Lock()
		k.auths = append(k.auths, body)
		k.mu.Unlock()
		var eps []any
		for _, reg := range Regions {
			for _, iface := range Interfaces {
				eps = append(eps, map[string]any{"id": reg + iface, "region": reg, "region_id": reg, "interface": iface, "url": k.HeatEndpoint(reg, iface)})
			}
		}
		w.Header().Set("X-Subject-Token", Token)
		reply(201, map[string]any{"token": map[string]any{
			"methods":    []string{"application_credential"},
			"expires_at": "2099-01-01T00:00:00.000000Z",
			"project":    map[string]any{"id": Project, "name": "admin", "domain": map[string]any{"id": "default", "name": "Default"}},
			"user":       map[string]any{"id": "u1", "name": "admin", "domain": map[string]any{"id": "default", "name": "Default"}},
			"catalog": []any{
				map[string]any{"type": "orchestration", "name": "heat", "id": "h1", "endpoints": eps},
				map[string]any{"type": "identity", "name": "keystone", "id": "k1", "endpoints": []any{
					map[string]any{"id": "k1p", "region": "RegionOne", "region_id": "RegionOne", "interface": "public", "url": k.URL + "/v3"}}},
			},
		}})
	case strings.HasPrefix(r.URL.Path, "/heat/"):
		k.mu.Lock()
		k.heat = append(k.heat, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Auth-Token"))
		k.mu.Unlock()
		if r.Header.Get("X-Auth-Token") != Token {
			reply(401, map[string]any{"code": 401, "title": "Unauthorized", "explanation": "no valid token"})
			return
		}
		reply(404, map[string]any{"code": 404, "title": "Not Found", "error": map[string]any{"type": "EntityNotFound", "message": "The Stack could not be found."}})
	default:
		reply(404, map[string]any{"error": map[string]any{"code": 404, "message": "no such path " + r.URL.Path}})
	}
}
