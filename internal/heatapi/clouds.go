package heatapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
)

// CloudOptions name a Heat through a clouds.yaml cloud, and what of the
// cloud to override, as openstack.cloud's module options do.
type CloudOptions struct {
	// Name is the clouds.yaml cloud ("" for none: Auth alone says it all).
	Name string
	// Auth is merged over the cloud's auth section, key by key
	// (auth_url, username, password, project_name,
	// application_credential_id, endpoint ...).
	Auth map[string]any
	// AuthType, Region and Interface replace the cloud's auth_type,
	// region_name and interface (and OS_REGION_NAME, OS_INTERFACE).
	AuthType  string
	Region    string
	Interface string
	TLS       TLSOptions
	// Paths are where clouds.yaml is looked for, the first that exists
	// is read (CloudsYAMLPaths when empty).
	Paths []string
}

// TLSOptions are TLS settings given with the module: they win over a
// cloud's cacert and verify and over OS_CACERT.
type TLSOptions struct {
	// CACert is a PEM file of the CA certificates to trust ("": the
	// cloud's cacert, OS_CACERT, or the system's).
	CACert string
	// Verify, when set, says whether to check the server's certificate.
	Verify *bool
}

// Auth types, as clouds.yaml names them, by how they authenticate.
var (
	noAuthTypes   = []string{"none", "noauth"}
	passwordTypes = []string{"password", "v3password", "v2password"}
	appCredTypes  = []string{"v3applicationcredential"}
	tokenTypes    = []string{"token", "v3token", "v2token"}
)

// AuthTypes lists the auth types a cloud may have.
func AuthTypes() []string {
	var out []string
	for _, l := range [][]string{noAuthTypes, passwordTypes, appCredTypes, tokenTypes} {
		out = append(out, l...)
	}
	return out
}

// Interfaces are the catalog interfaces a cloud may use.
var Interfaces = []string{"public", "internal", "admin"}

// secretAuthKeys are the keys of an auth section whose values are secrets.
var secretAuthKeys = []string{"password", "application_credential_secret", "token", "passcode"}

// SecretAuthKeys lists them, for masking an auth option.
func SecretAuthKeys() []string { return append([]string(nil), secretAuthKeys...) }

// CloudsYAMLPaths are where a clouds.yaml is looked for, like
// openstackclient and gophercloud's clouds.Parse: $OS_CLIENT_CONFIG_FILE
// alone when set, else ./clouds.yaml, ~/.config/openstack/clouds.yaml,
// /etc/openstack/clouds.yaml. A secure.yaml (and a clouds-public.yaml)
// is looked for in the directory of the clouds.yaml found.
func CloudsYAMLPaths() []string {
	if p := os.Getenv("OS_CLIENT_CONFIG_FILE"); p != "" {
		return []string{p}
	}
	paths := []string{"clouds.yaml"}
	cfg := os.Getenv("XDG_CONFIG_HOME")
	if cfg == "" {
		if home, err := os.UserHomeDir(); err == nil {
			cfg = filepath.Join(home, ".config")
		}
	}
	if cfg != "" {
		paths = append(paths, filepath.Join(cfg, "openstack", "clouds.yaml"))
	}
	return append(paths, "/etc/openstack/clouds.yaml")
}

// cloudsLimit bounds a clouds.yaml, secure.yaml or clouds-public.yaml
// read; certLimit a CA, certificate or key file.
var (
	cloudsLimit = fsutil.Limit{Bytes: 4 << 20}
	certLimit   = fsutil.Limit{Bytes: 4 << 20}
)

// cloud is a cloud resolved: its clouds.yaml entry with secure.yaml and
// the module's options merged in, and what gophercloud's clouds.Parse made
// of it.
type cloud struct {
	name  string // the cloud's name in messages
	where string // "cloud NAME (FILE)", or "auth" without a clouds.yaml
	entry map[string]any
	// authType is entry's auth_type, lower case ("" for password).
	authType string
	ao       gophercloud.AuthOptions
	eo       gophercloud.EndpointOpts
	tls      *tlsConf
	secrets  []string
}

// loadCloud reads the cloud o names (every file through the bounded
// reader) and has gophercloud's clouds.Parse build the auth options,
// endpoint options and TLS configuration from it.
func loadCloud(o CloudOptions) (*cloud, error) {
	c := &cloud{name: o.Name, where: "auth", entry: map[string]any{}}
	var dir string
	if o.Name != "" {
		paths := o.Paths
		if len(paths) == 0 {
			paths = CloudsYAMLPaths()
		}
		entry, file, err := readCloudEntry(o.Name, paths)
		if err != nil {
			return nil, err
		}
		c.entry, c.where, dir = entry, fmt.Sprintf("cloud %q (%s)", o.Name, file), filepath.Dir(file)
	}
	if o.Auth != nil {
		auth, _ := c.entry["auth"].(map[string]any)
		c.entry["auth"] = mergeMaps(o.Auth, auth)
	}
	if o.AuthType != "" {
		c.entry["auth_type"] = o.AuthType
	}
	if c.entry["auth"] == nil {
		// clouds.Parse reads the auth section unchecked.
		c.entry["auth"] = map[string]any{}
	}
	if auth, ok := c.entry["auth"].(map[string]any); ok {
		for _, k := range secretAuthKeys {
			if s, ok := auth[k].(string); ok && s != "" {
				c.secrets = append(c.secrets, s)
			}
		}
	}
	// gophercloud needs a name; "" is the module's auth alone.
	name := o.Name
	if name == "" {
		name = "auth"
	}
	doc, err := yaml.Marshal(map[string]any{"clouds": map[string]any{name: c.entry}})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.where, err)
	}
	// The shape is checked here, where errors quote no value (a
	// clouds.yaml holds passwords).
	var typed clouds.Clouds
	if err := yaml.Unmarshal(doc, &typed); err != nil {
		return nil, fmt.Errorf("%s is not a valid clouds.yaml cloud: %s", c.where, unquoted(err))
	}
	entry := typed.Clouds[name]
	c.authType = strings.ToLower(string(entry.AuthType))
	if c.authType != "" && !contains(AuthTypes(), c.authType) {
		return nil, fmt.Errorf("%s has auth_type %q; supported: %s", c.where, entry.AuthType, strings.Join(AuthTypes(), ", "))
	}
	tc, err := loadTLS(o.TLS, entry, c.where)
	if err != nil {
		return nil, err
	}
	c.tls = tc
	opts := []clouds.ParseOption{clouds.WithCloudName(name), clouds.WithCloudsYAML(bytes.NewReader(doc))}
	if entry.Profile != "" || entry.Cloud != "" {
		pub, err := readPublicClouds(dir, c.where)
		if err != nil {
			return nil, err
		}
		opts = append(opts, clouds.WithCloudsPublicYAML(bytes.NewReader(pub)))
	}
	if o.Region != "" {
		opts = append(opts, clouds.WithRegion(o.Region))
	}
	if o.Interface != "" {
		opts = append(opts, clouds.WithEndpointType(o.Interface))
	}
	if tc.caPath != "" {
		opts = append(opts, clouds.WithCACertPath(tc.caPath))
	}
	if o.TLS.Verify != nil {
		opts = append(opts, clouds.WithInsecure(!*o.TLS.Verify))
	}
	ao, eo, tlsConfig, err := clouds.Parse(opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", c.where, unquoted(err))
	}
	c.ao, c.eo, c.tls.config = ao, eo, tlsConfig
	return c, nil
}

// readCloudEntry reads cloud name from the first clouds.yaml of paths that
// exists, with the values of the secure.yaml beside it merged in (they win).
func readCloudEntry(name string, paths []string) (map[string]any, string, error) {
	for _, p := range paths {
		data, err := fsutil.ReadInput(p, cloudsLimit, "clouds.yaml")
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, p, err
		}
		all, err := parseClouds(data, p, "clouds")
		if err != nil {
			return nil, p, err
		}
		entry, ok := all[name]
		if !ok {
			names := make([]string, 0, len(all))
			for n := range all {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, p, fmt.Errorf("%s has no cloud %q (it has: %s)", p, name, strings.Join(names, ", "))
		}
		if entry == nil {
			entry = map[string]any{}
		}
		sp := filepath.Join(filepath.Dir(p), "secure.yaml")
		sdata, err := fsutil.ReadInput(sp, cloudsLimit, "secure.yaml")
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, p, err
		default:
			sec, err := parseClouds(sdata, sp, "clouds")
			if err != nil {
				return nil, p, err
			}
			if s, ok := sec[name]; ok && s != nil {
				entry = mergeMaps(s, entry)
			}
		}
		return entry, p, nil
	}
	return nil, "", fmt.Errorf("cloud %q: no clouds.yaml found (looked at %s)", name, strings.Join(paths, ", "))
}

// parseClouds reads the clouds of a clouds.yaml (key "clouds") or a
// clouds-public.yaml (key "public-clouds").
func parseClouds(data []byte, path, key string) (map[string]map[string]any, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s is not a valid %s: %s", path, filepath.Base(path), unquoted(err))
	}
	raw, ok := doc[key]
	if !ok || raw == nil {
		return map[string]map[string]any{}, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: %s is not a mapping of clouds", path, key)
	}
	out := make(map[string]map[string]any, len(m))
	for n, v := range m {
		switch e := v.(type) {
		case map[string]any:
			out[n] = e
		case nil:
			out[n] = nil
		default:
			return nil, fmt.Errorf("%s: cloud %q is not a mapping", path, n)
		}
	}
	return out, nil
}

// readPublicClouds reads the clouds-public.yaml a cloud's profile names,
// from the directory of its clouds.yaml or the usual places.
func readPublicClouds(dir, where string) ([]byte, error) {
	var paths []string
	if dir != "" {
		paths = append(paths, filepath.Join(dir, "clouds-public.yaml"))
	}
	for _, p := range CloudsYAMLPaths() {
		paths = append(paths, filepath.Join(filepath.Dir(p), "clouds-public.yaml"))
	}
	for _, p := range paths {
		data, err := fsutil.ReadInput(p, cloudsLimit, "clouds-public.yaml")
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if _, err := parseClouds(data, p, "public-clouds"); err != nil {
			return nil, err
		}
		return data, nil
	}
	return nil, fmt.Errorf("%s names a profile, but no clouds-public.yaml was found (looked at %s)", where, strings.Join(paths, ", "))
}

// mergeMaps returns over merged onto under: over's values win, maps
// are merged key by key.
func mergeMaps(over, under map[string]any) map[string]any {
	out := make(map[string]any, len(over)+len(under))
	for k, v := range under {
		out[k] = v
	}
	for k, v := range over {
		if om, ok := v.(map[string]any); ok {
			if um, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(om, um)
				continue
			}
		}
		out[k] = v
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// quotedScalar is the start of a value yaml.v3 quotes in a type error
// ("cannot unmarshal !!str `s3cr3t-...` into ...").
var quotedScalar = regexp.MustCompile("`[^`]*`")

// unquoted is a YAML error without the values it quotes: a clouds.yaml
// holds passwords.
func unquoted(err error) string {
	return quotedScalar.ReplaceAllString(err.Error(), "(a value)")
}

// heatDirCloud is what NewFromHeatDir reads of the clouds.yaml the
// launcher wrote (heatdir.Config.RenderCloudsYAML).
type heatDirCloud struct {
	Auth struct {
		Endpoint string `yaml:"endpoint"`
	} `yaml:"auth"`
	OrchestrationEndpointOverride string `yaml:"orchestration_endpoint_override"`
}

// NewFromHeatDir returns a client of the ephemeral Heat launched in dir,
// from the clouds.yaml the launcher wrote there.
func NewFromHeatDir(dir string) (*Client, error) {
	p := filepath.Join(dir, heatdir.CloudsYAML)
	data, err := fsutil.ReadOwn(p, cloudsLimit, "clouds.yaml")
	if err != nil {
		return nil, fmt.Errorf("heat_dir %s has no usable %s: launch an ephemeral Heat there first (ephemeral.heat.ephemeral_heat_launch): %w", dir, heatdir.CloudsYAML, err)
	}
	var doc struct {
		Clouds map[string]heatDirCloud `yaml:"clouds"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s is not a valid clouds.yaml: %s", p, unquoted(err))
	}
	c, ok := doc.Clouds[heatdir.CloudName]
	if !ok {
		return nil, fmt.Errorf("%s has no cloud %q: launch the ephemeral Heat again (ephemeral.heat.ephemeral_heat_launch)", p, heatdir.CloudName)
	}
	ep := c.OrchestrationEndpointOverride
	if ep == "" {
		ep = c.Auth.Endpoint
	}
	if ep == "" {
		return nil, fmt.Errorf("%s: cloud %q has neither auth.endpoint nor orchestration_endpoint_override", p, heatdir.CloudName)
	}
	cl, err := NewNoAuth(ep)
	if err != nil {
		return nil, err
	}
	cl.HeatDir = dir
	return cl, nil
}

// NewFromCloud returns a client of the Heat of a cloud: with auth_type
// none its endpoint (orchestration_endpoint_override, else auth.endpoint)
// directly; otherwise Keystone authentication (password, application
// credential or token) and the catalog's orchestration endpoint of the
// cloud's region and interface (or orchestration_endpoint_override). The
// secrets of the cloud (password, application credential secret, token)
// are handed to secret, for masking, even when it fails.
func NewFromCloud(ctx context.Context, o CloudOptions, secret func(string)) (*Client, error) {
	c, err := loadCloud(o)
	if c != nil && secret != nil {
		for _, s := range c.secrets {
			secret(s)
		}
	}
	if err != nil {
		return nil, err
	}
	override, _ := c.entry["orchestration_endpoint_override"].(string)
	if contains(noAuthTypes, c.authType) {
		ep := override
		if ep == "" {
			auth, _ := c.entry["auth"].(map[string]any)
			ep, _ = auth["endpoint"].(string)
		}
		if ep == "" {
			return nil, fmt.Errorf("%s has auth_type %s but neither auth.endpoint nor orchestration_endpoint_override", c.where, c.authType)
		}
		return newNoAuth(ep, c.tls)
	}
	ao, err := c.authOptions()
	if err != nil {
		return nil, err
	}
	pc, err := openstack.NewClient(ao.IdentityEndpoint)
	if err != nil {
		return nil, fmt.Errorf("%s: auth_url %q: %w", c.where, ao.IdentityEndpoint, err)
	}
	pc.HTTPClient = httpClient(c.tls.config)
	pc.UserAgent.Prepend("ephemeral-heat")
	if err := openstack.Authenticate(ctx, pc, ao); err != nil {
		return nil, fmt.Errorf("%s: Keystone authentication at %s failed: %w", c.where, ao.IdentityEndpoint, explainTLS(err, c.tls.hint))
	}
	sc, err := openstack.NewOrchestrationV1(pc, c.eo)
	if err != nil {
		return nil, fmt.Errorf("%s: no orchestration endpoint in Keystone's catalog for region %q, interface %s: %w",
			c.where, c.eo.Region, strings.TrimSuffix(string(c.eo.Availability), "URL"), err)
	}
	if override != "" {
		ep, err := normalizeEndpoint(override)
		if err != nil {
			return nil, fmt.Errorf("%s: orchestration_endpoint_override: %w", c.where, err)
		}
		sc.Endpoint = ep
	}
	if !strings.HasSuffix(sc.Endpoint, "/") {
		sc.Endpoint += "/"
	}
	return &Client{SC: sc, tlsHint: c.tls.hint}, nil
}

// authOptions are the cloud's auth options for its auth type: only the
// credentials of that type are sent, each type's required ones checked.
// Password and application-credential clients re-authenticate when their
// token expires (a stack create outlasts a token).
func (c *cloud) authOptions() (gophercloud.AuthOptions, error) {
	ao := c.ao
	if ao.IdentityEndpoint == "" {
		return ao, fmt.Errorf("%s has no auth.auth_url (Keystone's URL); for a Heat without Keystone give auth_type: none and auth.endpoint", c.where)
	}
	missing := func(what string) error {
		t := c.authType
		if t == "" {
			t = "password (the default)"
		}
		return fmt.Errorf("%s: auth_type %s needs %s", c.where, t, what)
	}
	switch {
	case contains(appCredTypes, c.authType):
		ao.Password, ao.Passcode, ao.TokenID, ao.Scope = "", "", "", nil
		ao.TenantID, ao.TenantName = "", ""
		if ao.ApplicationCredentialSecret == "" {
			return ao, missing("auth.application_credential_secret")
		}
		if ao.ApplicationCredentialID == "" && ao.ApplicationCredentialName == "" {
			return ao, missing("auth.application_credential_id (or application_credential_name with the user)")
		}
		ao.AllowReauth = true
	case contains(tokenTypes, c.authType):
		ao.Password, ao.Passcode, ao.ApplicationCredentialID, ao.ApplicationCredentialName, ao.ApplicationCredentialSecret = "", "", "", "", ""
		ao.Username, ao.UserID, ao.DomainID, ao.DomainName = "", "", "", ""
		if ao.TokenID == "" {
			return ao, missing("auth.token")
		}
	default:
		ao.ApplicationCredentialID, ao.ApplicationCredentialName, ao.ApplicationCredentialSecret, ao.TokenID = "", "", "", ""
		if ao.Password == "" {
			return ao, missing("auth.password (in clouds.yaml, the secure.yaml beside it, or the auth option)")
		}
		if ao.Username == "" && ao.UserID == "" {
			return ao, missing("auth.username or auth.user_id")
		}
		ao.AllowReauth = true
	}
	return ao, nil
}
