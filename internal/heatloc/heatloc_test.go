package heatloc

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
)

var testSpec = &module.Spec{Name: "t", Params: Params("")}

func params(t *testing.T, args map[string]any) module.Params {
	t.Helper()
	p, err := testSpec.Validate(args)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The rule: at most one kind; TLS options with an endpoint or a cloud;
// OS_CLOUD when nothing is given; cloud options need a cloud.
func TestFromParams(t *testing.T) {
	env := func(cloud string) Getenv {
		return func(k string) string {
			if k == "OS_CLOUD" {
				return cloud
			}
			return ""
		}
	}
	auth := map[string]any{"auth_url": "http://127.0.0.1:5000/v3"}
	cases := []struct {
		name     string
		args     map[string]any
		osCloud  string
		optional bool
		want     Location
		found    bool
		err      string
	}{
		{name: "heat_dir", args: map[string]any{"heat_dir": "/hd"}, want: Location{Kind: HeatDir, HeatDir: "/hd"}, found: true},
		{name: "endpoint with TLS", args: map[string]any{"endpoint": "https://h/v1/admin", "ca_cert": "/ca.pem", "validate_certs": true},
			want: Location{Kind: Endpoint, Endpoint: "https://h/v1/admin"}, found: true},
		{name: "cloud", args: map[string]any{"cloud": "uc", "region_name": "R2", "interface": "internal", "auth_type": "password"},
			want: Location{Kind: Cloud, Cloud: cloudOpts("uc", nil, "password", "R2", "internal")}, found: true},
		{name: "auth alone", args: map[string]any{"auth": auth}, want: Location{Kind: Cloud, Cloud: cloudOpts("", auth, "", "", "")}, found: true},
		{name: "OS_CLOUD", osCloud: "env-cloud", want: Location{Kind: Cloud, Cloud: cloudOpts("env-cloud", nil, "", "", ""), FromEnv: true}, found: true},
		{name: "OS_CLOUD with region_name", args: map[string]any{"region_name": "R2"}, osCloud: "env-cloud",
			want: Location{Kind: Cloud, Cloud: cloudOpts("env-cloud", nil, "", "R2", ""), FromEnv: true}, found: true},
		{name: "cloud beats OS_CLOUD", args: map[string]any{"cloud": "uc"}, osCloud: "env-cloud", want: Location{Kind: Cloud, Cloud: cloudOpts("uc", nil, "", "", "")}, found: true},
		{name: "none", err: "exactly one of heat_dir, endpoint, cloud is required; none was given and OS_CLOUD is not set"},
		{name: "none, optional", optional: true},
		{name: "two kinds", args: map[string]any{"heat_dir": "/hd", "cloud": "uc"}, err: "got heat_dir and cloud"},
		{name: "three kinds", args: map[string]any{"heat_dir": "/hd", "endpoint": "http://h/v1/a", "auth": auth}, err: "got heat_dir and endpoint and auth"},
		{name: "two kinds, optional", args: map[string]any{"endpoint": "http://h/v1/a", "region_name": "R"}, optional: true, err: "got endpoint and region_name"},
		{name: "TLS with heat_dir", args: map[string]any{"heat_dir": "/hd", "ca_cert": "/ca.pem"}, err: "ca_cert: only with endpoint or cloud"},
		{name: "region without a cloud", args: map[string]any{"region_name": "R"}, err: "region_name: no cloud to apply it to"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			loc, found, err := FromParams(params(t, tc.args), env(tc.osCloud), tc.optional)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("%v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || found != tc.found {
				t.Fatalf("found %v, %v", found, err)
			}
			if tc.args["ca_cert"] != nil {
				tc.want.Cloud.TLS.CACert = tc.args["ca_cert"].(string)
			}
			if v, ok := tc.args["validate_certs"].(bool); ok {
				tc.want.Cloud.TLS.Verify = &v
			}
			if !reflect.DeepEqual(loc, tc.want) {
				t.Errorf("got  %+v\nwant %+v", loc, tc.want)
			}
		})
	}
}

func cloudOpts(name string, auth map[string]any, authType, region, iface string) heatapi.CloudOptions {
	return heatapi.CloudOptions{Name: name, Auth: auth, AuthType: authType, Region: region, Interface: iface}
}

// pluginFile is the action plugins' shared code.
var pluginFile = filepath.Join("..", "..", "collection", "plugins", "plugin_utils", "heat_location.py")

// python runs code with Debian's Python, which has ansible-core, after
// loading the plugin's module as m; it returns what the code prints.
func python(t *testing.T, code string, input any) []byte {
	t.Helper()
	in, _ := json.Marshal(input)
	prog := "import importlib.util, json, sys\n" +
		"spec = importlib.util.spec_from_file_location('heat_location', sys.argv[1])\n" +
		"m = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(m)\n" +
		"data = json.loads(sys.argv[2])\n" + code
	cmd := exec.Command("/usr/bin/python3", "-c", prog, pluginFile, string(in))
	// No __pycache__ in the collection's tree.
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 (Debian's, with ansible-core: make deps): %v\n%s", err, out)
	}
	return out
}

// The action plugins' copy of the option group is this package's.
func TestActionPluginMirrorsTheGroup(t *testing.T) {
	out := python(t, "print(json.dumps({'kinds': m.KINDS, 'tls': m.TLS_OPTIONS, 'tls_kinds': m.TLS_KINDS}))", nil)
	var got struct {
		Kinds    [][]any  `json:"kinds"`
		TLS      []string `json:"tls"`
		TLSKinds []string `json:"tls_kinds"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var kinds [][]any
	for _, k := range Kinds {
		opts := []any{}
		for _, o := range k.Options {
			opts = append(opts, o)
		}
		kinds = append(kinds, []any{string(k.Kind), opts})
	}
	var tlsKinds []string
	for _, k := range TLSKinds {
		tlsKinds = append(tlsKinds, string(k))
	}
	if !reflect.DeepEqual(got.Kinds, kinds) || !reflect.DeepEqual(got.TLS, TLSOptions) || !reflect.DeepEqual(got.TLSKinds, tlsKinds) {
		t.Errorf("heat_location.py has %+v\nheatloc has kinds %v, TLS options %v with %v", got, kinds, TLSOptions, tlsKinds)
	}
}

// What the action plugins give the module, from the task's own options
// and module_defaults' for the module and for its group.
func TestActionPluginChooses(t *testing.T) {
	type src = map[string]any
	all := []string{"heat_dir", "endpoint", "cloud"}
	cases := []struct {
		name                  string
		task, specific, group src
		accepted              []string
		want                  []string // the location options the module gets
		leftOut               []string
	}{
		{name: "task cloud over group heat_dir", task: src{"cloud": "Y"}, group: src{"heat_dir": "X"},
			want: []string{"cloud"}, leftOut: []string{"heat_dir"}},
		{name: "task heat_dir over group cloud and its options", task: src{"heat_dir": "X"}, group: src{"cloud": "Y", "region_name": "R", "ca_cert": "C"},
			want: []string{"heat_dir"}, leftOut: []string{"ca_cert", "cloud", "region_name"}},
		{name: "same kind merges", task: src{"cloud": "Y"}, group: src{"cloud": "Z", "region_name": "R", "validate_certs": false},
			want: []string{"cloud", "region_name", "validate_certs"}},
		{name: "module defaults over group", specific: src{"endpoint": "E"}, group: src{"heat_dir": "X", "ca_cert": "C"},
			want: []string{"endpoint"}, leftOut: []string{"ca_cert", "heat_dir"}},
		{name: "group TLS alone goes with the task's cloud", task: src{"auth": src{"auth_url": "u"}}, group: src{"ca_cert": "C"},
			want: []string{"auth", "ca_cert"}},
		{name: "group TLS of an endpoint does not go with the task's cloud", task: src{"cloud": "Y"}, group: src{"endpoint": "E", "ca_cert": "C"},
			want: []string{"cloud"}, leftOut: []string{"ca_cert", "endpoint"}},
		{name: "group only", group: src{"heat_dir": "X"}, want: []string{"heat_dir"}},
		{name: "two kinds in the task: the module refuses", task: src{"heat_dir": "X", "cloud": "Y"}, group: src{"endpoint": "E"},
			want: []string{"cloud", "endpoint", "heat_dir"}},
		{name: "two kinds in the defaults: the module refuses", group: src{"heat_dir": "X", "cloud": "Y"}, want: []string{"cloud", "heat_dir"}},
		{name: "heat_dir only: a group cloud is not given", task: src{"state": "absent"}, group: src{"heat_dir": "X", "cloud": "Y", "ca_cert": "C"},
			accepted: []string{"heat_dir"}, want: []string{"heat_dir"}, leftOut: []string{"ca_cert", "cloud"}},
		{name: "no kinds: no defaults, the task's own kept", task: src{"heat_dir": "X"}, group: src{"cloud": "Y"},
			accepted: []string{}, want: []string{"heat_dir"}, leftOut: []string{"cloud"}},
	}
	var input []any
	for _, tc := range cases {
		args := src{"name": "s"}
		for _, s := range []src{tc.group, tc.specific, tc.task} {
			for k, v := range s {
				args[k] = v
			}
		}
		acc := tc.accepted
		if acc == nil {
			acc = all
		}
		input = append(input, src{"args": args, "sources": []src{orEmpty(tc.task), orEmpty(tc.specific), orEmpty(tc.group)}, "accepted": acc})
	}
	out := python(t, "res = []\nfor c in data:\n    args, left = m.choose(c['args'], c['sources'], c['accepted'])\n"+
		"    res.append([sorted(o for o in args if m.is_location(o)), left, 'name' in args])\nprint(json.dumps(res))", input)
	var got [][]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for i, tc := range cases {
		want := []any{strs(tc.want), strs(tc.leftOut), true}
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("%s: got %v, want %v", tc.name, got[i], want)
		}
	}
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func strs(s []string) []any {
	out := []any{}
	for _, x := range s {
		out = append(out, x)
	}
	return out
}
