package heatdir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
)

func TestEndpointAndClientHost(t *testing.T) {
	tests := []struct {
		bind string
		want string
	}{
		{"127.0.0.1", "http://127.0.0.1:8006/v1/admin"},
		{"0.0.0.0", "http://127.0.0.1:8006/v1/admin"},
		{"::1", "http://[::1]:8006/v1/admin"},
		{"::", "http://[::1]:8006/v1/admin"},
		{"[::1]", "http://[::1]:8006/v1/admin"},
	}
	for _, tc := range tests {
		c := Config{BindHost: tc.bind, APIPort: 8006}
		if got := c.Endpoint(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.bind, got, tc.want)
		}
	}
}

func TestRenderRoundTrip(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	c := Config{Dir: dir, BindHost: "127.0.0.1", APIPort: 18006, Database: heatdb.DB{Kind: heatdb.SQLite, Path: dir + "/heat.sqlite"}, Now: now,
		Extra: map[string]map[string]string{"DEFAULT": {"debug": "true"}, "new": {"k": "v"}}}
	for name, data := range c.Files() {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ini, err := ReadINI(filepath.Join(dir, HeatConf))
	if err != nil {
		t.Fatal(err)
	}
	checks := map[[2]string]string{
		{"database", "connection"}:   "sqlite:///" + dir + "/heat.sqlite",
		{"heat_api", "bind_port"}:    "18006",
		{"heat_api", "bind_host"}:    "127.0.0.1",
		{"DEFAULT", "transport_url"}: "fake://",
		{"DEFAULT", "debug"}:         "true", // Extra overrides
		{"new", "k"}:                 "v",
		{"noauth", "token_response"}: filepath.Join(dir, TokenFile),
	}
	for k, want := range checks {
		if got := ini.Get(k[0], k[1]); got != want {
			t.Errorf("[%s] %s = %q, want %q", k[0], k[1], got, want)
		}
	}
	if strings.Count(string(c.RenderHeatConf()), "debug =") != 1 {
		t.Errorf("override duplicated the key")
	}
	var tok struct {
		Token struct {
			ExpiresAt string `json:"expires_at"`
			Catalog   []struct {
				Type      string
				Endpoints []struct{ URL string }
			}
		}
	}
	if err := json.Unmarshal(c.RenderToken(), &tok); err != nil {
		t.Fatal(err)
	}
	exp, err := time.Parse("2006-01-02T15:04:05.000000Z", tok.Token.ExpiresAt)
	if err != nil || !exp.After(now) {
		t.Errorf("token expiry %q not after launch", tok.Token.ExpiresAt)
	}
	if tok.Token.Catalog[0].Type != "orchestration" || tok.Token.Catalog[0].Endpoints[0].URL != c.Endpoint() {
		t.Errorf("catalog wrong: %+v", tok.Token.Catalog)
	}
	if !strings.Contains(string(c.RenderCloudsYAML()), "endpoint: http://127.0.0.1:18006/v1/admin") {
		t.Errorf("clouds.yaml lacks endpoint")
	}
}

func TestReadINIErrors(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"hdr": "[broken\n", "kv": "[a]\nnovalue\n"} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		if _, err := ReadINI(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: err %v does not name the file", name, err)
		}
	}
	if _, err := ReadINI(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file accepted")
	}
}
