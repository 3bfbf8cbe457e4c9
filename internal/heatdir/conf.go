package heatdir

// The configuration of an ephemeral, no-auth Heat: heat.conf, api-paste.ini,
// the fake Keystone token, clouds.yaml and heatrc, and reading a heat.conf
// back.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
)

const (
	// Project is the project of every request to a no-auth Heat.
	Project = "admin"
	// CloudName is the cloud clouds.yaml defines.
	CloudName = "heat"
)

// Config is what varies between launches.
type Config struct {
	Dir      string // heat_dir, absolute
	BindHost string
	APIPort  int
	// Database is Heat's database as Heat reaches it ([database] connection).
	Database heatdb.DB
	// HostDatabase, when Heat reaches its database by an address the host
	// cannot use (the pod's own MariaDB), is how the host reaches it: the
	// port the pod publishes on the host's loopback ([database]
	// host_connection, which Heat ignores).
	HostDatabase *heatdb.DB
	// TransportURL is the message bus; fake:// runs RPC inside one heat-all.
	TransportURL string
	// EngineWorkers is num_engine_workers.
	EngineWorkers int
	// Now is the launch time, for the token's expiry.
	Now time.Time
	// Extra holds additional settings per section, applied last
	// (tuning and tests); a key here overrides the default one.
	Extra map[string]map[string]string
	// PythonPath, when set, is the PYTHONPATH Heat's commands need (the
	// directory of PythonFiles): heat.conf says so and heatrc exports it.
	PythonPath string
}

// HostPort joins a host and port, bracketing IPv6 literals.
func HostPort(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

// ClientHost is the address a client on this host uses to reach an API bound
// to bindHost (a wildcard bind is reached through loopback).
func ClientHost(bindHost string) string {
	switch bindHost {
	case "", "0.0.0.0":
		return "127.0.0.1"
	case "::", "[::]":
		return "::1"
	}
	return strings.Trim(bindHost, "[]")
}

// Endpoint is the orchestration endpoint clients use, ending in /v1/admin.
func (c Config) Endpoint() string {
	return "http://" + HostPort(ClientHost(c.BindHost), c.APIPort) + "/v1/" + Project
}

// Sections returns heat.conf as ordered sections of key/value pairs.
func (c Config) Sections() []Section {
	workers := c.EngineWorkers
	if workers < 1 {
		workers = 1
	}
	transport := c.TransportURL
	if transport == "" {
		transport = "fake://"
	}
	base := "http://" + HostPort(ClientHost(c.BindHost), c.APIPort) + "/"
	secs := []Section{
		{"DEFAULT", []KV{
			{"transport_url", transport},
			// tripleoclient's stock values: a nested stack's RPC calls
			// (its outputs, through every member of a role group of
			// hundreds of nodes) outlast oslo.messaging's 60 s default.
			{"rpc_poll_timeout", "60"},
			{"rpc_response_timeout", "600"},
			{"deferred_auth_method", "password"},
			{"num_engine_workers", strconv.Itoa(workers)},
			{"convergence_engine", "true"},
			{"max_json_body_size", "8388608"},
			{"heat_metadata_server_url", base},
			{"default_deployment_signal_transport", "HEAT_SIGNAL"},
			{"max_nested_stack_depth", "10"},
			{"keystone_backend", "heat.engine.clients.os.keystone.fake_keystoneclient.FakeKeystoneClient"},
			{"log_dir", filepath.Join(c.Dir, LogDir)},
			{"use_stderr", "false"},
			{"debug", "false"},
		}},
		{"noauth", []KV{{"token_response", filepath.Join(c.Dir, TokenFile)}}},
		{"heat_all", []KV{{"enabled_services", "api,engine"}}},
		{"heat_api", []KV{
			{"bind_host", strings.Trim(c.BindHost, "[]")},
			{"bind_port", strconv.Itoa(c.APIPort)},
			{"workers", "1"},
		}},
		{"database", c.databaseKVs()},
		{"paste_deploy", []KV{
			{"flavor", "noauth"},
			{"api_paste_config", filepath.Join(c.Dir, APIPaste)},
		}},
		{"oslo_messaging_notifications", []KV{{"driver", "noop"}}},
		{"yaql", []KV{{"memory_quota", "900000"}, {"limit_iterators", "10000"}}},
	}
	return applyExtra(secs, c.Extra)
}

func (c Config) databaseKVs() []KV {
	kvs := []KV{{"connection", c.Database.URL()}}
	if c.HostDatabase != nil {
		kvs = append(kvs, KV{hostConnection, c.HostDatabase.URL()})
	}
	return kvs
}

// Section is one INI section.
type Section struct {
	Name string
	KVs  []KV
}

// KV is one setting.
type KV struct{ Key, Value string }

func applyExtra(secs []Section, extra map[string]map[string]string) []Section {
	names := make([]string, 0, len(extra))
	for n := range extra {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		idx := -1
		for i := range secs {
			if secs[i].Name == n {
				idx = i
			}
		}
		if idx < 0 {
			secs = append(secs, Section{Name: n})
			idx = len(secs) - 1
		}
		keys := make([]string, 0, len(extra[n]))
		for k := range extra[n] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	next:
		for _, k := range keys {
			for j := range secs[idx].KVs {
				if secs[idx].KVs[j].Key == k {
					secs[idx].KVs[j].Value = extra[n][k]
					continue next
				}
			}
			secs[idx].KVs = append(secs[idx].KVs, KV{k, extra[n][k]})
		}
	}
	return secs
}

// RenderHeatConf renders heat.conf.
func (c Config) RenderHeatConf() []byte {
	var b bytes.Buffer
	b.WriteString("# Written by ephemeral.heat for an ephemeral, no-auth Heat. Regenerated at each launch.\n")
	if c.PythonPath != "" {
		fmt.Fprintf(&b, "# heat-all and heat-manage run with PYTHONPATH=%s (SQLAlchemy plugins named in\n"+
			"# [database] connection_parameters); `. %s` sets it for commands run by hand.\n",
			c.PythonPath, filepath.Join(c.Dir, HeatRC))
	}
	for _, s := range c.Sections() {
		fmt.Fprintf(&b, "\n[%s]\n", s.Name)
		for _, kv := range s.KVs {
			fmt.Fprintf(&b, "%s = %s\n", kv.Key, kv.Value)
		}
	}
	return b.Bytes()
}

// RenderAPIPaste renders api-paste.ini with the noauth pipeline.
func RenderAPIPaste() []byte {
	return []byte(`# Written by ephemeral.heat: the Heat API without Keystone.
[pipeline:heat-api-noauth]
pipeline = faultwrap noauth context versionnegotiation apiv1app

[app:apiv1app]
paste.app_factory = heat.common.wsgi:app_factory
heat.app_factory = heat.api.openstack.v1:API

[filter:versionnegotiation]
paste.filter_factory = heat.common.wsgi:filter_factory
heat.filter_factory = heat.api.openstack:version_negotiation_filter

[filter:faultwrap]
paste.filter_factory = heat.common.wsgi:filter_factory
heat.filter_factory = heat.api.openstack:faultwrap_filter

[filter:context]
paste.filter_factory = heat.common.context:ContextMiddleware_filter_factory

[filter:noauth]
paste.filter_factory = heat.common.noauth:filter_factory
`)
}

// TokenValidity is how long the fake token stays valid after a launch.
const TokenValidity = 7 * 24 * time.Hour

// RenderToken renders the fake Keystone v3 token the noauth middleware hands
// to Heat: project and user admin, role admin, and a catalog whose
// orchestration endpoint is this Heat.
func (c Config) RenderToken() []byte {
	now := c.Now
	if now.IsZero() {
		now = time.Now()
	}
	ep := c.Endpoint()
	endpoints := []map[string]any{}
	for _, iface := range []string{"public", "internal", "admin"} {
		endpoints = append(endpoints, map[string]any{
			"id": "ephemeral-heat-" + iface, "interface": iface, "region": "regionOne", "region_id": "regionOne", "url": ep,
		})
	}
	tok := map[string]any{"token": map[string]any{
		"methods":    []string{"token"},
		"issued_at":  now.UTC().Format("2006-01-02T15:04:05.000000Z"),
		"expires_at": now.Add(TokenValidity).UTC().Format("2006-01-02T15:04:05.000000Z"),
		"is_domain":  false,
		"project": map[string]any{"id": Project, "name": Project,
			"domain": map[string]any{"id": "default", "name": "Default"}},
		"user": map[string]any{"id": Project, "name": Project,
			"domain": map[string]any{"id": "default", "name": "Default"}},
		"roles": []map[string]any{{"id": Project, "name": Project}},
		"catalog": []map[string]any{{
			"id": "ephemeral-heat", "name": "heat", "type": "orchestration", "endpoints": endpoints,
		}},
	}}
	b, _ := json.MarshalIndent(tok, "", "  ")
	return append(b, '\n')
}

// RenderCloudsYAML renders a clouds.yaml with cloud "heat" and no auth, so
// that `openstack --os-cloud heat stack list` talks to this Heat.
func (c Config) RenderCloudsYAML() []byte {
	return []byte(fmt.Sprintf(`# Written by ephemeral.heat: the ephemeral Heat in %s.
clouds:
  %s:
    auth_type: none
    auth:
      endpoint: %s
    orchestration_endpoint_override: %s
`, c.Dir, CloudName, c.Endpoint(), c.Endpoint()))
}

// RenderHeatRC renders a shell file that points the openstack client at this Heat.
func (c Config) RenderHeatRC() []byte {
	s := fmt.Sprintf(`# Written by ephemeral.heat. Source it: . %s
export OS_CLIENT_CONFIG_FILE=%s
export OS_CLOUD=%s
unset OS_AUTH_URL OS_USERNAME OS_PASSWORD OS_PROJECT_NAME OS_TOKEN
`, shellQuote(filepath.Join(c.Dir, HeatRC)), shellQuote(filepath.Join(c.Dir, CloudsYAML)), CloudName)
	if c.PythonPath != "" {
		// For heat-manage run by hand on this heat.conf.
		s += "export PYTHONPATH=" + shellQuote(c.PythonPath) + "${PYTHONPATH:+:$PYTHONPATH}\n"
	}
	return []byte(s)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// WriteConfig writes every configuration file of a launch into the heat_dir
// (each atomically, mode 0600), and PythonFiles.
func (d Dir) WriteConfig(c Config) error {
	if err := d.WritePythonFiles(); err != nil {
		return err
	}
	for name, data := range c.Files() {
		if err := fsutil.WriteFileAtomic(d.File(name), data, FileMode); err != nil {
			return err
		}
	}
	return nil
}

// Files returns every configuration file of a launch, by name.
func (c Config) Files() map[string][]byte {
	return map[string][]byte{
		HeatConf:   c.RenderHeatConf(),
		APIPaste:   RenderAPIPaste(),
		TokenFile:  c.RenderToken(),
		CloudsYAML: c.RenderCloudsYAML(),
		HeatRC:     c.RenderHeatRC(),
	}
}

// INI is a parsed INI file: section -> key -> value.
type INI map[string]map[string]string

// Get returns a setting ("" when absent).
func (i INI) Get(section, key string) string { return i[section][key] }

// ReadINI reads an oslo.config style INI file.
func ReadINI(path string) (INI, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	out := INI{}
	sec := "DEFAULT"
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' || s[0] == ';' {
			continue
		}
		if s[0] == '[' {
			if !strings.HasSuffix(s, "]") {
				return nil, fmt.Errorf("%s line %d: malformed section header %q", path, line, s)
			}
			sec = strings.TrimSpace(s[1 : len(s)-1])
			continue
		}
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return nil, fmt.Errorf("%s line %d: expected key = value, got %q", path, line, s)
		}
		if out[sec] == nil {
			out[sec] = map[string]string{}
		}
		out[sec][strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return out, nil
}
