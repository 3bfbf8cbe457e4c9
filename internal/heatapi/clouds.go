package heatapi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
)

// Cloud is the part of one clouds.yaml cloud this client uses.
type Cloud struct {
	AuthType  string `yaml:"auth_type"`
	Auth      Auth   `yaml:"auth"`
	Region    string `yaml:"region_name"`
	Interface string `yaml:"interface"`
	// OrchestrationEndpointOverride replaces the catalog's endpoint.
	OrchestrationEndpointOverride string `yaml:"orchestration_endpoint_override"`
}

// Auth is a cloud's auth section (password or none).
type Auth struct {
	AuthURL           string `yaml:"auth_url"`
	Endpoint          string `yaml:"endpoint"`
	Username          string `yaml:"username"`
	UserID            string `yaml:"user_id"`
	Password          string `yaml:"password"`
	ProjectName       string `yaml:"project_name"`
	ProjectID         string `yaml:"project_id"`
	UserDomainName    string `yaml:"user_domain_name"`
	UserDomainID      string `yaml:"user_domain_id"`
	ProjectDomainName string `yaml:"project_domain_name"`
	ProjectDomainID   string `yaml:"project_domain_id"`
	DomainName        string `yaml:"domain_name"`
	DomainID          string `yaml:"domain_id"`
}

// CloudsYAMLPaths are where a clouds.yaml is looked for, like
// openstackclient: $OS_CLIENT_CONFIG_FILE alone when set, else ./clouds.yaml,
// ~/.config/openstack/clouds.yaml, /etc/openstack/clouds.yaml.
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

// cloudsLimit bounds a clouds.yaml or secure.yaml read.
var cloudsLimit = fsutil.Limit{Bytes: 4 << 20}

// LoadCloud reads cloud name from the first clouds.yaml of paths that
// exists (CloudsYAMLPaths when paths is empty). A secure.yaml beside it
// supplies values (such as the password) missing from clouds.yaml.
func LoadCloud(name string, paths ...string) (*Cloud, string, error) {
	if len(paths) == 0 {
		paths = CloudsYAMLPaths()
	}
	for _, p := range paths {
		data, err := fsutil.ReadInput(p, cloudsLimit, "clouds.yaml")
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, p, err
		}
		var doc struct {
			Clouds map[string]Cloud `yaml:"clouds"`
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, p, fmt.Errorf("%s is not a valid clouds.yaml: %s", p, unquoted(err))
		}
		c, ok := doc.Clouds[name]
		if !ok {
			names := make([]string, 0, len(doc.Clouds))
			for n := range doc.Clouds {
				names = append(names, n)
			}
			return nil, p, fmt.Errorf("%s has no cloud %q (it has: %s)", p, name, strings.Join(names, ", "))
		}
		if sdata, err := fsutil.ReadInput(filepath.Join(filepath.Dir(p), "secure.yaml"), cloudsLimit, "secure.yaml"); err == nil {
			var sec struct {
				Clouds map[string]Cloud `yaml:"clouds"`
			}
			if yaml.Unmarshal(sdata, &sec) == nil {
				if s, ok := sec.Clouds[name]; ok && c.Auth.Password == "" {
					c.Auth.Password = s.Auth.Password
				}
			}
		}
		return &c, p, nil
	}
	return nil, "", fmt.Errorf("no clouds.yaml found (looked at %s)", strings.Join(paths, ", "))
}

// quotedScalar is the start of a value yaml.v3 quotes in a type error
// ("cannot unmarshal !!str `s3cr3t-...` into ...").
var quotedScalar = regexp.MustCompile("`[^`]*`")

// unquoted is a YAML error without the values it quotes: a clouds.yaml
// holds passwords.
func unquoted(err error) string {
	return quotedScalar.ReplaceAllString(err.Error(), "(a value)")
}

// NewFromHeatDir returns a client of the ephemeral Heat launched in dir,
// from the clouds.yaml the launcher wrote there.
func NewFromHeatDir(dir string) (*Client, error) {
	p := filepath.Join(dir, heatdir.CloudsYAML)
	if _, err := os.Stat(p); err != nil {
		return nil, fmt.Errorf("heat_dir %s has no %s: launch an ephemeral Heat there first (ephemeral.heat.ephemeral_heat_launch): %v", dir, heatdir.CloudsYAML, err)
	}
	c, _, err := LoadCloud(heatdir.CloudName, p)
	if err != nil {
		return nil, err
	}
	ep := c.OrchestrationEndpointOverride
	if ep == "" {
		ep = c.Auth.Endpoint
	}
	if ep == "" {
		return nil, fmt.Errorf("%s: cloud %q has neither auth.endpoint nor orchestration_endpoint_override", p, heatdir.CloudName)
	}
	c2, err := NewNoAuth(ep)
	if err != nil {
		return nil, err
	}
	c2.HeatDir = dir
	return c2, nil
}

// NewFromCloud returns a client of the Heat of a clouds.yaml cloud: with
// auth_type none (or admin_token-less no-auth clouds) its endpoint directly;
// otherwise Keystone password authentication and the catalog's
// orchestration endpoint (or orchestration_endpoint_override).
func NewFromCloud(ctx context.Context, name string, paths ...string) (*Client, string, error) {
	c, p, err := LoadCloud(name, paths...)
	if err != nil {
		return nil, "", err
	}
	if c.AuthType == "none" || c.AuthType == "noauth" {
		ep := c.OrchestrationEndpointOverride
		if ep == "" {
			ep = c.Auth.Endpoint
		}
		cl, err := NewNoAuth(ep)
		return cl, c.Auth.Password, err
	}
	if c.AuthType != "" && c.AuthType != "password" && c.AuthType != "v3password" && c.AuthType != "v2password" {
		return nil, "", fmt.Errorf("%s: cloud %q has auth_type %q; only password and none are supported", p, name, c.AuthType)
	}
	a := c.Auth
	if a.AuthURL == "" {
		return nil, "", fmt.Errorf("%s: cloud %q has no auth.auth_url", p, name)
	}
	ao := gophercloud.AuthOptions{
		IdentityEndpoint: a.AuthURL,
		Username:         a.Username,
		UserID:           a.UserID,
		Password:         a.Password,
		DomainName:       firstNonEmpty(a.UserDomainName, a.DomainName),
		DomainID:         firstNonEmpty(a.UserDomainID, a.DomainID),
		TenantName:       a.ProjectName,
		TenantID:         a.ProjectID,
	}
	if a.ProjectName != "" || a.ProjectID != "" {
		ao.Scope = &gophercloud.AuthScope{ProjectName: a.ProjectName, ProjectID: a.ProjectID,
			DomainName: firstNonEmpty(a.ProjectDomainName, a.DomainName), DomainID: firstNonEmpty(a.ProjectDomainID, a.DomainID)}
		if ao.Scope.ProjectID != "" {
			ao.Scope.DomainName, ao.Scope.DomainID = "", ""
		}
	}
	pc, err := openstack.NewClient(a.AuthURL)
	if err != nil {
		return nil, a.Password, fmt.Errorf("cloud %q: auth_url %q: %w", name, a.AuthURL, err)
	}
	pc.HTTPClient = httpClient()
	pc.UserAgent.Prepend("ephemeral-heat")
	if err := openstack.Authenticate(ctx, pc, ao); err != nil {
		return nil, a.Password, fmt.Errorf("cloud %q: Keystone authentication at %s failed: %w", name, a.AuthURL, err)
	}
	eo := gophercloud.EndpointOpts{Region: c.Region}
	switch strings.TrimSuffix(c.Interface, "URL") {
	case "internal":
		eo.Availability = gophercloud.AvailabilityInternal
	case "admin":
		eo.Availability = gophercloud.AvailabilityAdmin
	default:
		eo.Availability = gophercloud.AvailabilityPublic
	}
	sc, err := openstack.NewOrchestrationV1(pc, eo)
	if err != nil {
		return nil, a.Password, fmt.Errorf("cloud %q: no orchestration endpoint in the catalog: %w", name, err)
	}
	if c.OrchestrationEndpointOverride != "" {
		ep, err := normalizeEndpoint(c.OrchestrationEndpointOverride)
		if err != nil {
			return nil, a.Password, err
		}
		sc.Endpoint = ep
	}
	if !strings.HasSuffix(sc.Endpoint, "/") {
		sc.Endpoint += "/"
	}
	return &Client{SC: sc}, a.Password, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Connect builds the client for whichever of heatDir (an ephemeral Heat
// launched there), endpoint (a no-auth URL) or cloud (a clouds.yaml cloud) is
// set, in that order. The cloud's password is handed to secret, for masking.
func Connect(ctx context.Context, heatDir, endpoint, cloud string, secret func(string)) (*Client, error) {
	switch {
	case heatDir != "":
		return NewFromHeatDir(heatDir)
	case endpoint != "":
		return NewNoAuth(endpoint)
	case cloud != "":
		c, pw, err := NewFromCloud(ctx, cloud)
		if secret != nil {
			secret(pw)
		}
		if err != nil {
			return nil, fmt.Errorf("connecting to cloud %q: %w", cloud, err)
		}
		return c, nil
	}
	return nil, fmt.Errorf("no Heat given: set heat_dir, endpoint or cloud")
}
