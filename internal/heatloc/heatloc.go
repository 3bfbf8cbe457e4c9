// Package heatloc is "where Heat is": the option group every module that
// talks to Heat takes, and the one rule that reads it.
//
// Three kinds of location, exactly one per task:
//
//	heat_dir   an ephemeral Heat launched there (its clouds.yaml)
//	endpoint   a no-auth Heat URL (with validate_certs, ca_cert for https)
//	cloud      a clouds.yaml cloud and/or an auth dict, with auth_type,
//	           region_name, interface (openstack.cloud's names and
//	           meanings), validate_certs and ca_cert; with none of the
//	           three given, $OS_CLOUD names the cloud
//
// The modules' action plugins (collection/plugins/plugin_utils/
// heat_location.py) keep a copy of Kinds, TLSOptions and TLSKinds to let a task's own
// location win over a module_defaults one of another kind; this package's
// test holds the copy equal.
package heatloc

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
)

// The options.
const (
	HeatDir       = "heat_dir"
	Endpoint      = "endpoint"
	Cloud         = "cloud"
	Auth          = "auth"
	AuthType      = "auth_type"
	RegionName    = "region_name"
	Interface     = "interface"
	ValidateCerts = "validate_certs"
	CACert        = "ca_cert"
)

// Kind is a kind of location: HeatDir, Endpoint or Cloud.
type Kind string

// Kinds are the kinds of location and their options, in order.
var Kinds = []struct {
	Kind    Kind
	Options []string
}{
	{HeatDir, []string{HeatDir}},
	{Endpoint, []string{Endpoint}},
	{Cloud, []string{Cloud, Auth, AuthType, RegionName, Interface}},
}

// TLSOptions go with the TLSKinds.
var (
	TLSOptions = []string{ValidateCerts, CACert}
	TLSKinds   = []Kind{Endpoint, Cloud}
)

// Params returns the options for a module's spec. scope, when not "",
// starts their help ("save: "): the part of the module that uses them.
func Params(scope string) []module.Param {
	ps := []module.Param{
		{Name: HeatDir, Type: module.Path, Help: "use the ephemeral Heat launched in this directory"},
		{Name: Endpoint, Help: "no-auth Heat endpoint, e.g. http://127.0.0.1:8006/v1/admin"},
		{Name: Cloud, Help: "clouds.yaml cloud of the Heat ($OS_CLOUD when no location is given)"},
		{Name: Auth, Type: module.Dict, SecretKeys: heatapi.SecretAuthKeys(),
			Help: "the cloud's auth section, or its overrides (auth_url, username, password, application_credential_id ...)"},
		{Name: AuthType, Choices: heatapi.AuthTypes(), Help: "the cloud's auth_type"},
		{Name: RegionName, Help: "the region of the catalog's orchestration endpoint"},
		{Name: Interface, Choices: heatapi.Interfaces, Help: "the catalog interface of the orchestration endpoint"},
		{Name: ValidateCerts, Type: module.Bool, Help: "check the TLS certificate of an https endpoint or cloud (default: the cloud's verify, else true)"},
		{Name: CACert, Type: module.Path, Help: "PEM file of the CA certificates to trust for an https endpoint or cloud"},
	}
	if scope != "" {
		for i := range ps {
			ps[i].Help = scope + ps[i].Help
		}
	}
	return ps
}

// Names lists the options, kinds first, then TLSOptions.
func Names() []string {
	var out []string
	for _, k := range Kinds {
		out = append(out, k.Options...)
	}
	return append(out, TLSOptions...)
}

// Is reports whether name is an option of the group.
func Is(name string) bool {
	for _, n := range Names() {
		if n == name {
			return true
		}
	}
	return false
}

// Location is where Heat is.
type Location struct {
	Kind     Kind
	HeatDir  string
	Endpoint string
	Cloud    heatapi.CloudOptions // Kind Cloud; its TLS holds TLS for Endpoint too
	// FromEnv is set when $OS_CLOUD named the cloud.
	FromEnv bool
}

// Getenv reads the environment (os.Getenv; tests replace it).
type Getenv func(string) string

// FromParams applies the rule to a module's options: the options of at
// most one kind are given; validate_certs and ca_cert only with an
// endpoint or a cloud; cloud's other options need a cloud, an auth, or
// $OS_CLOUD. With no location given, $OS_CLOUD names the cloud; without it
// there is no location: found is false when optional, an error otherwise.
func FromParams(p module.Params, getenv Getenv, optional bool) (loc Location, found bool, err error) {
	var given []Kind
	var names []string
	for _, k := range Kinds {
		for _, o := range k.Options {
			if p.Given(o) {
				given = append(given, k.Kind)
				names = append(names, o)
				break
			}
		}
	}
	var tls []string
	for _, o := range TLSOptions {
		if p.Given(o) {
			tls = append(tls, o)
		}
	}
	if len(given) > 1 {
		return loc, false, fmt.Errorf("exactly one of heat_dir, endpoint, cloud is required (auth, auth_type, region_name and interface "+
			"go with cloud); got %s: give one (a task's own choice replaces a module_defaults one of another kind)", strings.Join(names, " and "))
	}
	kind := Kind("")
	if len(given) == 1 {
		kind = given[0]
	}
	if kind == "" {
		name := ""
		if getenv != nil {
			name = getenv("OS_CLOUD")
		}
		if name == "" {
			if optional {
				return loc, false, nil
			}
			return loc, false, fmt.Errorf("exactly one of heat_dir, endpoint, cloud is required; none was given and OS_CLOUD is not set")
		}
		kind, loc.FromEnv = Cloud, true
		loc.Cloud.Name = name
	}
	loc.Kind = kind
	if !slices.Contains(TLSKinds, kind) && len(tls) > 0 {
		return loc, false, fmt.Errorf("%s: only with endpoint or cloud; the ephemeral Heat of heat_dir answers plain HTTP on its host", strings.Join(tls, " and "))
	}
	if v := p.Raw(ValidateCerts); p.Given(ValidateCerts) {
		b, _ := v.(bool)
		loc.Cloud.TLS.Verify = &b
	}
	loc.Cloud.TLS.CACert = p.Str(CACert)
	switch kind {
	case HeatDir:
		loc.HeatDir = p.Str(HeatDir)
	case Endpoint:
		loc.Endpoint = p.Str(Endpoint)
	case Cloud:
		if !loc.FromEnv {
			loc.Cloud.Name = p.Str(Cloud)
			if loc.Cloud.Name == "" && getenv != nil {
				loc.Cloud.Name, loc.FromEnv = getenv("OS_CLOUD"), getenv("OS_CLOUD") != ""
			}
		}
		loc.Cloud.Auth = p.Dict(Auth)
		if loc.Cloud.Name == "" && loc.Cloud.Auth == nil {
			return loc, false, fmt.Errorf("%s: no cloud to apply it to: give cloud or auth (or set OS_CLOUD)", strings.Join(names, " and "))
		}
		loc.Cloud.AuthType = p.Str(AuthType)
		loc.Cloud.Region = p.Str(RegionName)
		loc.Cloud.Interface = p.Str(Interface)
	}
	return loc, true, nil
}

// Connect returns a client of the Heat at loc. The cloud's secrets are
// handed to secret (for masking), even when it fails.
func (loc Location) Connect(ctx context.Context, secret func(string)) (*heatapi.Client, error) {
	switch loc.Kind {
	case HeatDir:
		return heatapi.NewFromHeatDir(loc.HeatDir)
	case Endpoint:
		return heatapi.NewNoAuthTLS(loc.Endpoint, loc.Cloud.TLS)
	case Cloud:
		c, err := heatapi.NewFromCloud(ctx, loc.Cloud, secret)
		if err != nil && loc.FromEnv {
			return nil, fmt.Errorf("cloud %q (from OS_CLOUD): %w", loc.Cloud.Name, err)
		}
		return c, err
	}
	return nil, fmt.Errorf("no Heat given: set heat_dir, endpoint or cloud")
}

// Connect connects to the Heat a module's options say, as FromParams
// reads them (not optional).
func Connect(bg context.Context, ctx *module.Context) (*heatapi.Client, error) {
	loc, _, err := FromParams(ctx.Params, os.Getenv, false)
	if err != nil {
		return nil, err
	}
	return loc.Connect(bg, ctx.AddSecret)
}
