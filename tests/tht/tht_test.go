package tht

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/passwords"
)

// reference returns the THT and tripleo-common sources the tests use
// ($EPHEMERAL_HEAT_THT / $EPHEMERAL_HEAT_TRIPLEO_COMMON or the tarballs in
// ../shared/reference), failing when they are missing.
func reference(t *testing.T) (thtSrc, commonSrc string) {
	t.Helper()
	var err error
	if thtSrc, err = DefaultTHT(); err != nil {
		t.Fatal(err)
	}
	if commonSrc, err = DefaultTripleoCommon(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{thtSrc, commonSrc} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("reference tree missing: %v. The tests need the stable/wallaby tarballs in ../shared/reference "+
				"(see its README.md), or %s / %s pointing at a tripleo-heat-templates and a tripleo-common tree", err, EnvTHT, EnvTripleoCommon)
		}
	}
	return thtSrc, commonSrc
}

var (
	sharedOnce sync.Once
	sharedW    *Workload
	sharedErr  error
	sharedDir  string
)

// shared is the default workload (Controller×1 + Compute×2), generated once
// for the tests that only read it.
func shared(t *testing.T) *Workload {
	t.Helper()
	reference(t)
	sharedOnce.Do(func() {
		sharedDir, sharedErr = os.MkdirTemp("", "tht-test-")
		if sharedErr == nil {
			sharedW, sharedErr = Generate(Options{WorkDir: filepath.Join(sharedDir, "work")})
		}
	})
	if sharedErr != nil {
		t.Fatalf("generating the default workload: %v", sharedErr)
	}
	return sharedW
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

// readSourceFile reads the file of a source (directory or tarball) whose
// path ends with suffix.
func readSourceFile(t *testing.T, src, suffix string) []byte {
	t.Helper()
	if st, err := os.Stat(src); err == nil && st.IsDir() {
		var found []byte
		filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, "/"+suffix) && found == nil {
				found, _ = os.ReadFile(p)
			}
			return nil
		})
		if found == nil {
			t.Fatalf("%s: no %s", src, suffix)
		}
		return found
	}
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s: no %s", src, suffix)
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(h.Name, "/"+suffix) {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

func parameterDefaults(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		PD map[string]any `yaml:"parameter_defaults"`
		RR map[string]any `yaml:"resource_registry"`
	}
	if err := yaml.Unmarshal(b, &env); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return env.PD
}

func registryOf(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		RR map[string]any `yaml:"resource_registry"`
	}
	if err := yaml.Unmarshal(b, &env); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return env.RR
}

// passwordNamesFromSource parses tripleo_common/constants.py's
// PASSWORD_PARAMETER_NAMES tuple as text (the package reads it with
// Python's ast).
func passwordNamesFromSource(t *testing.T, commonSrc string) []string {
	t.Helper()
	src := readSourceFile(t, commonSrc, "tripleo_common/constants.py")
	m := regexp.MustCompile(`(?s)\nPASSWORD_PARAMETER_NAMES = \((.*?)\n\)`).FindSubmatch(src)
	if m == nil {
		t.Fatalf("%s: PASSWORD_PARAMETER_NAMES not found in tripleo_common/constants.py", commonSrc)
	}
	var names []string
	for _, q := range regexp.MustCompile(`'([^']+)'`).FindAllSubmatch(m[1], -1) {
		names = append(names, string(q[1]))
	}
	return names
}

func TestPasswordNamesAreTripleoCommons(t *testing.T) {
	_, commonSrc := reference(t)
	w := shared(t)
	want := passwordNamesFromSource(t, commonSrc)
	if len(want) < 50 {
		t.Fatalf("only %d names parsed from tripleo-common: %v", len(want), want)
	}
	saved := parameterDefaults(t, w.PasswordsFile)
	if got := sortedKeys(saved); !reflect.DeepEqual(got, sorted(want)) {
		t.Errorf("passwords file names:\n got %v\nwant %v", got, sorted(want))
	}
	params := parameterDefaults(t, filepath.Join(w.TemplateDir, UserEnvDir, ParametersEnv))
	for _, n := range want {
		if !reflect.DeepEqual(params[n], saved[n]) || params[n] == nil {
			t.Errorf("%s: parameters env has %.20v, passwords file %.20v", n, params[n], saved[n])
		}
	}
	for _, f := range []string{w.PasswordsFile, filepath.Join(w.TemplateDir, UserEnvDir, ParametersEnv)} {
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (%v), want 0600", f, st.Mode().Perm(), err)
		}
	}
	if st, err := os.Stat(w.WorkDir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("work dir %s: mode %v, want 0700", w.WorkDir, st.Mode().Perm())
	}
}

// TestProductPasswordNamesAreWallabys: the product's own list
// (internal/passwords.Names, used by the deploy playbook through
// overcloud_workdir) is the reference stable/wallaby tripleo-common's
// PASSWORD_PARAMETER_NAMES, in its order.
func TestProductPasswordNamesAreWallabys(t *testing.T) {
	ref, err := ReferenceDir()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(ref, TripleoCommonTarball)
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("the stable/wallaby tripleo-common tarball is needed (see ../shared/reference/README.md): %v", err)
	}
	if got, want := passwords.Names, passwordNamesFromSource(t, src); !reflect.DeepEqual(got, want) {
		t.Errorf("internal/passwords.Names:\n got %v\nwant %v (tripleo_common/constants.py of %s)", got, want, src)
	}
}

// TestPasswordKinds checks each kind tripleo_common/utils/passwords.py
// generates.
func TestPasswordKinds(t *testing.T) {
	pw := parameterDefaults(t, shared(t).PasswordsFile)
	ascii62 := func(n int) func(any) bool {
		re := regexp.MustCompile(`^[0-9A-Za-z]+$`)
		return func(v any) bool { s, _ := v.(string); return len(s) == n && re.MatchString(s) }
	}
	b64 := func(enc *base64.Encoding, n int) func(any) bool {
		return func(v any) bool {
			s, _ := v.(string)
			b, err := enc.DecodeString(s)
			return err == nil && len(b) == n
		}
	}
	for _, c := range []struct {
		name string
		ok   func(any) bool
	}{
		{"AdminPassword", ascii62(25)},
		{"MysqlRootPassword", ascii62(10)},
		{"RabbitCookie", ascii62(20)},
		{"PcsdPassword", ascii62(16)},
		{"HorizonSecret", ascii62(10)},
		{"HeatAuthEncryptionKey", ascii62(32)},
		{"OctaviaServerCertsKeyPassphrase", ascii62(32)},
		{"PacemakerRemoteAuthkey", ascii62(4096)},
		{"SnmpdReadonlyUserPassword", ascii62(24)},
		{"KeystoneCredential0", b64(base64.URLEncoding, 32)},
		{"KeystoneFernetKey1", b64(base64.URLEncoding, 32)},
		{"BarbicanSimpleCryptoKek", b64(base64.URLEncoding, 32)},
		{"DesignateRndcKey", b64(base64.StdEncoding, 32)},
		{"CephClientKey", func(v any) bool {
			s, _ := v.(string)
			b, err := base64.StdEncoding.DecodeString(s)
			return err == nil && len(b) == 28 && b[0] == 1 && b[1] == 0 && b[10] == 16
		}},
		{"CephClusterFSID", func(v any) bool {
			s, _ := v.(string)
			return regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(s)
		}},
		{"KeystoneFernetKeys", func(v any) bool {
			m, _ := v.(map[string]any)
			k0, _ := m["/etc/keystone/fernet-keys/0"].(map[string]any)
			k1, _ := m["/etc/keystone/fernet-keys/1"].(map[string]any)
			return len(m) == 2 && b64(base64.URLEncoding, 32)(k0["content"]) && b64(base64.URLEncoding, 32)(k1["content"])
		}},
		{"MigrationSshKey", func(v any) bool {
			m, _ := v.(map[string]any)
			priv, _ := m["private_key"].(string)
			pub, _ := m["public_key"].(string)
			return strings.HasPrefix(priv, "-----BEGIN RSA PRIVATE KEY-----\n") &&
				regexp.MustCompile(`^ssh-rsa AAAAB3NzaC1yc2E[A-Za-z0-9+/=]+ Generated by TripleO$`).MatchString(pub)
		}},
	} {
		if !c.ok(pw[c.name]) {
			t.Errorf("%s = %.60v: not what tripleo-common generates", c.name, pw[c.name])
		}
	}
	seen := map[string]string{}
	for n, v := range pw {
		if s, ok := v.(string); ok {
			if o, dup := seen[s]; dup {
				t.Errorf("%s and %s have the same value", n, o)
			}
			seen[s] = n
		}
	}
}

// TestPasswordsKeptAcrossRuns: a second Generate in the same work directory
// reuses the passwords (tripleoclient keeps <stack>-passwords.yaml), and
// generates a missing one.
func TestPasswordsKeptAcrossRuns(t *testing.T) {
	reference(t)
	dir := filepath.Join(t.TempDir(), "work")
	w1, err := Generate(Options{WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	before := parameterDefaults(t, w1.PasswordsFile)
	// Drop one password from the file, as a newer tripleo-common adding a
	// name would find it.
	reduced := map[string]any{}
	for k, v := range before {
		if k != "AdminPassword" {
			reduced[k] = v
		}
	}
	b, _ := yaml.Marshal(map[string]any{"parameter_defaults": reduced})
	if err := os.WriteFile(w1.PasswordsFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	w2, err := Generate(Options{WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	after := parameterDefaults(t, w2.PasswordsFile)
	for k, v := range before {
		if k == "AdminPassword" {
			if after[k] == nil || after[k] == v {
				t.Errorf("AdminPassword was not generated anew: %v", after[k])
			}
			continue
		}
		if !reflect.DeepEqual(after[k], v) {
			t.Errorf("%s changed between runs", k)
		}
	}
	if w2.Timings.Copy != 0 || !w2.Timings.RenderCached {
		t.Errorf("second run in the same work dir re-rendered or re-copied: %+v", w2.Timings)
	}
}

// TestImageParamsAreTheJ2s renders tripleo-common's
// container-images/tripleo_containers.yaml.j2 here, with the `set` of
// container_image_prepare_defaults.yaml, and compares every Container*Image
// parameter; each image must also be one tripleo-common lists in its
// rendered container-images/tripleo_containers.yaml.
func TestImageParamsAreTheJ2s(t *testing.T) {
	_, commonSrc := reference(t)
	w := shared(t)
	dir := t.TempDir()
	if st, _ := os.Stat(commonSrc); st.IsDir() {
		dir = commonSrc
	} else if out, err := exec.Command("tar", "-xzf", commonSrc, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v %s", err, out)
	}
	root, err := findRoot(dir, commonMarker)
	if err != nil {
		t.Fatal(err)
	}
	var defaults struct {
		PD struct {
			CIP []struct {
				Set map[string]any `yaml:"set"`
			} `yaml:"ContainerImagePrepare"`
		} `yaml:"parameter_defaults"`
	}
	b, err := os.ReadFile(filepath.Join(root, "container-images", "container_image_prepare_defaults.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &defaults); err != nil || len(defaults.PD.CIP) == 0 {
		t.Fatalf("container_image_prepare_defaults.yaml: %v", err)
	}
	var defaultsEnv, prepareEnv any
	yaml.Unmarshal(b, &defaultsEnv)
	yaml.Unmarshal([]byte(readString(t, w.EnvironmentFiles[5])), &prepareEnv)
	if !reflect.DeepEqual(prepareEnv, defaultsEnv) {
		t.Errorf("%s holds %v, want container_image_prepare_defaults.yaml's %v", w.EnvironmentFiles[5], prepareEnv, defaultsEnv)
	}
	set, _ := json.Marshal(defaults.PD.CIP[0].Set)
	// name_prefix "openstack-" already ends with '-', as kolla_builder
	// container_images_template_inputs would make it.
	script := `import sys, json, jinja2, yaml
d = sys.argv[1]
m = json.loads(sys.argv[2])
t = jinja2.Environment(loader=jinja2.FileSystemLoader(d)).get_template('tripleo_containers.yaml.j2')
out = {}
for e in yaml.safe_load(t.render(**m))['container_images_template']:
    for p in e.get('params', []):
        out[p] = e['imagename']
print(json.dumps(out))`
	out, err := exec.Command("python3", "-c", script, filepath.Join(root, "container-images"), string(set)).Output()
	if err != nil {
		t.Fatalf("rendering tripleo_containers.yaml.j2: %v", err)
	}
	var want map[string]any
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) < 100 {
		t.Fatalf("only %d image parameters rendered", len(want))
	}
	params := parameterDefaults(t, filepath.Join(w.TemplateDir, UserEnvDir, ParametersEnv))
	got := map[string]any{}
	for k, v := range params {
		if strings.HasSuffix(k, "Image") {
			got[k] = v
		}
	}
	if !reflect.DeepEqual(got, want) {
		for k := range want {
			if got[k] != want[k] {
				t.Errorf("%s = %v, want %v", k, got[k], want[k])
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("%s = %v is not rendered by the j2", k, got[k])
			}
		}
	}
	var listed struct {
		Images []struct {
			Name string `yaml:"imagename"`
		} `yaml:"container_images"`
	}
	b, err = os.ReadFile(filepath.Join(root, "container-images", "tripleo_containers.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &listed); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, i := range listed.Images {
		names[i.Name] = true
	}
	for k, v := range got {
		if !names[v.(string)] {
			t.Errorf("%s = %s is not in tripleo-common's tripleo_containers.yaml", k, v)
		}
	}
}

// TestEnvironmentOrder: tripleoclient's order for a deployed-server
// overcloud, each file where tripleoclient writes it.
func TestEnvironmentOrder(t *testing.T) {
	w := shared(t)
	tree := w.TemplateDir
	if tree != filepath.Join(w.WorkDir, "tripleo-heat-templates") || w.Template != filepath.Join(tree, "overcloud.yaml") {
		t.Errorf("tree %s, template %s", tree, w.Template)
	}
	want := []string{
		filepath.Join(tree, "overcloud-resource-registry-puppet.yaml"),
		filepath.Join(tree, "user-environments", "tripleoclient-parameters.yaml"),
		filepath.Join(tree, "environments", "deployed-server-environment.yaml"),
		filepath.Join(tree, "user-environments", "virtual-ips-deployed.yaml"),
		filepath.Join(tree, "user-environments", "baremetal-deployed.yaml"),
		filepath.Join(tree, "user-environments", "containers-prepare-parameter.yaml"),
	}
	if !reflect.DeepEqual(w.EnvironmentFiles, want) {
		t.Fatalf("environment files:\n got %v\nwant %v", w.EnvironmentFiles, want)
	}
	for _, f := range append([]string{w.Template}, w.EnvironmentFiles...) {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
	if rr := registryOf(t, w.EnvironmentFiles[3]); rr["OS::TripleO::Network::Ports::ControlPlaneVipPort"] != filepath.Join(tree, "network/ports/deployed_vip_ctlplane.yaml") {
		t.Errorf("VIP environment registry: %v", rr)
	}
	if rr := registryOf(t, w.EnvironmentFiles[4]); rr["OS::TripleO::DeployedServer::ControlPlanePort"] != filepath.Join(tree, "deployed-server/deployed-neutron-port.yaml") {
		t.Errorf("node environment registry: %v", rr)
	}
	if rr := registryOf(t, w.EnvironmentFiles[2]); rr["OS::TripleO::Server"] == nil {
		t.Errorf("deployed-server environment registry: %v", rr)
	}
	vip := parameterDefaults(t, w.EnvironmentFiles[3])["ControlPlaneVipData"].(map[string]any)
	if tags := vip["network"].(map[string]any)["tags"]; !reflect.DeepEqual(tags, []any{"192.168.24.0/24"}) {
		t.Errorf("ControlPlaneVipData.network.tags = %v, want the ctlplane CIDR", tags)
	}
	params := parameterDefaults(t, w.EnvironmentFiles[1])
	for k, v := range map[string]any{"RootStackName": "overcloud", "DeployIdentifier": int(DefaultDeployIdentifier),
		"UndercloudHostsEntries": []any{"192.168.24.1 undercloud.ctlplane.localdomain undercloud.ctlplane"}} {
		if !reflect.DeepEqual(params[k], v) {
			t.Errorf("%s = %v, want %v", k, params[k], v)
		}
	}
	if cidr := path(params, "CtlplaneNetworkAttributes", "subnets", "ctlplane-subnet", "cidr"); cidr != "192.168.24.0/24" {
		t.Errorf("CtlplaneNetworkAttributes: %v", params["CtlplaneNetworkAttributes"])
	}
}

// TestRoleServices: <Role>Services is the role's services (the rendered
// registry's parameter_defaults list them as roles_data's ServicesDefault)
// minus what the registry maps to OS::Heat::None for deployed roles, [] for
// the others.
func TestRoleServices(t *testing.T) {
	w := shared(t)
	roles, err := readRoles(filepath.Join(w.TemplateDir, "roles_data.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rr := registryOf(t, w.EnvironmentFiles[0])
	params := parameterDefaults(t, w.EnvironmentFiles[1])
	for _, r := range roles {
		got := params[r.Name+"Services"]
		want := []any{}
		if r.Name == "Controller" || r.Name == "Compute" {
			for _, s := range r.ServicesDefault {
				if rr[s] != "OS::Heat::None" {
					want = append(want, s)
				}
			}
			if len(want) == len(r.ServicesDefault) || len(want) < 20 {
				t.Errorf("%s: %d of %d services kept: the registry should disable some", r.Name, len(want), len(r.ServicesDefault))
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%sServices = %v, want %v", r.Name, got, want)
		}
	}
}

// TestCounts: the node environment and hosts for various counts and
// removed indices.
func TestCounts(t *testing.T) {
	reference(t)
	for _, c := range []struct {
		name                 string
		controllers, compute int
		removed              map[string][]int
		wantCompute          []string // host names
		wantPolicy           any
		wantCIDR             string // "": the default 192.168.24.0/24
		wantErr              string
	}{
		{name: "default", wantCompute: []string{"overcloud-novacompute-0", "overcloud-novacompute-1"}},
		{name: "one", compute: 1, wantCompute: []string{"overcloud-novacompute-0"}},
		{name: "hundred", controllers: 3, compute: 100},
		{name: "removed", compute: 2, removed: map[string][]int{"Compute": {1}},
			wantCompute: []string{"overcloud-novacompute-0", "overcloud-novacompute-2"},
			wantPolicy:  []any{map[string]any{"resource_list": []any{1}}}},
		// More nodes than the default /24 holds: the ctlplane widens to a /21.
		{name: "wide", compute: 300, wantCIDR: "192.168.24.0/21"},
		{name: "too many", compute: 1901, wantErr: "indices 0-1899 only"},
		{name: "removed out of range", compute: 2, removed: map[string][]int{"Compute": {7}}, wantErr: "removed Compute index 7"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := Generate(Options{WorkDir: filepath.Join(t.TempDir(), "w"), ControllerCount: c.controllers, ComputeCount: c.compute, Removed: c.removed})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one with %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantCtl, wantCmp := max(c.controllers, 1), c.compute
			if wantCmp == 0 {
				wantCmp = 2
			}
			nodes := parameterDefaults(t, w.EnvironmentFiles[4])
			if nodes["ControllerCount"] != wantCtl || nodes["ComputeCount"] != wantCmp {
				t.Errorf("counts %v/%v, want %d/%d", nodes["ControllerCount"], nodes["ComputeCount"], wantCtl, wantCmp)
			}
			if nodes["ComputeHostnameFormat"] != "%stackname%-novacompute-%index%" || nodes["ControllerHostnameFormat"] != "%stackname%-controller-%index%" {
				t.Errorf("hostname formats: %v %v", nodes["ControllerHostnameFormat"], nodes["ComputeHostnameFormat"])
			}
			if !reflect.DeepEqual(nodes["ComputeRemovalPolicies"], c.wantPolicy) {
				t.Errorf("ComputeRemovalPolicies = %v, want %v", nodes["ComputeRemovalPolicies"], c.wantPolicy)
			}
			if len(w.HostsOf("Controller")) != wantCtl || len(w.HostsOf("Compute")) != wantCmp || len(w.Hosts) != wantCtl+wantCmp {
				t.Errorf("hosts: %v", w.Hosts)
			}
			var cmp []string
			for _, h := range w.HostsOf("Compute") {
				cmp = append(cmp, h.Name)
			}
			if c.wantCompute != nil && !reflect.DeepEqual(cmp, c.wantCompute) {
				t.Errorf("compute hosts %v, want %v", cmp, c.wantCompute)
			}
			wantCIDR := c.wantCIDR
			if wantCIDR == "" {
				wantCIDR = "192.168.24.0/24"
			}
			_, ctlplane, _ := net.ParseCIDR(wantCIDR)
			broadcast := make(net.IP, 4)
			for i := range broadcast {
				broadcast[i] = ctlplane.IP.To4()[i] | ^ctlplane.Mask[i]
			}
			ports := nodes["DeployedServerPortMap"].(map[string]any)
			hmap := nodes["HostnameMap"].(map[string]any)
			ips := map[string]bool{}
			for _, h := range w.Hosts {
				ip := path(ports, h.Name+"-ctlplane", "fixed_ips")
				if !reflect.DeepEqual(ip, []any{map[string]any{"ip_address": h.CtlplaneIP}}) {
					t.Errorf("%s: DeployedServerPortMap %v, want %s", h.Name, ip, h.CtlplaneIP)
				}
				if hmap[h.Name] != h.Name {
					t.Errorf("HostnameMap[%s] = %v", h.Name, hmap[h.Name])
				}
				ip4 := net.ParseIP(h.CtlplaneIP).To4()
				if ips[h.CtlplaneIP] || ip4 == nil || !ctlplane.Contains(ip4) || ip4.Equal(ctlplane.IP) || ip4.Equal(broadcast) {
					t.Errorf("%s: address %s duplicate or not a host of the ctlplane %s", h.Name, h.CtlplaneIP, wantCIDR)
				}
				ones, _ := ctlplane.Mask.Size()
				if got := path(nodes["NodePortMap"].(map[string]any), h.Name, "ctlplane", "ip_subnet"); got != fmt.Sprintf("%s/%d", h.CtlplaneIP, ones) {
					t.Errorf("%s: NodePortMap ip_subnet %v, want %s/%d", h.Name, got, h.CtlplaneIP, ones)
				}
				ips[h.CtlplaneIP] = true
			}
			if len(ports) != len(w.Hosts) {
				t.Errorf("%d ports for %d hosts", len(ports), len(w.Hosts))
			}
			params := parameterDefaults(t, w.EnvironmentFiles[1])
			if got := path(params, "CtlplaneNetworkAttributes", "subnets", "ctlplane-subnet", "cidr"); got != wantCIDR {
				t.Errorf("CtlplaneNetworkAttributes subnet %v, want %s", got, wantCIDR)
			}
			if l, _ := params["ComputeServices"].([]any); len(l) == 0 {
				t.Errorf("ComputeServices empty with %d computes", wantCmp)
			}
		})
	}
}

// TestDirectorySource: an extracted tree (as an undercloud's
// /usr/share/openstack-tripleo-heat-templates) gives the same rendered
// tree and environments as the tarballs.
func TestDirectorySource(t *testing.T) {
	thtSrc, commonSrc := reference(t)
	w1 := shared(t)
	dirs := t.TempDir()
	var srcs []string
	for i, src := range []string{thtSrc, commonSrc} {
		if st, _ := os.Stat(src); st.IsDir() {
			srcs = append(srcs, src)
			continue
		}
		d := filepath.Join(dirs, []string{"tht", "common"}[i])
		os.MkdirAll(d, 0o755)
		if out, err := exec.Command("tar", "-xzf", src, "-C", d).CombinedOutput(); err != nil {
			t.Fatalf("tar: %v %s", err, out)
		}
		srcs = append(srcs, d)
	}
	w2, err := Generate(Options{WorkDir: filepath.Join(dirs, "work"), THT: srcs[0], TripleoCommon: srcs[1]})
	if err != nil {
		t.Fatal(err)
	}
	h1, h2 := treeHash(t, w1.TemplateDir), treeHash(t, w2.TemplateDir)
	if h1 != h2 {
		t.Errorf("rendered trees differ: %s (tarball) vs %s (directory)", w1.TemplateDir, w2.TemplateDir)
	}
	if len(w1.EnvironmentFiles) != len(w2.EnvironmentFiles) {
		t.Fatalf("%d vs %d environment files", len(w1.EnvironmentFiles), len(w2.EnvironmentFiles))
	}
	for i := range w1.EnvironmentFiles {
		a := strings.ReplaceAll(readString(t, w1.EnvironmentFiles[i]), w1.WorkDir, "WORK")
		b := strings.ReplaceAll(readString(t, w2.EnvironmentFiles[i]), w2.WorkDir, "WORK")
		if i == 1 { // the passwords differ: compare the rest
			pa, pb := parameterDefaults(t, w1.EnvironmentFiles[i]), parameterDefaults(t, w2.EnvironmentFiles[i])
			for _, n := range sortedKeys(parameterDefaults(t, w1.PasswordsFile)) {
				delete(pa, n)
				delete(pb, n)
			}
			if !reflect.DeepEqual(pa, pb) {
				t.Errorf("parameters differ between tarball and directory sources")
			}
			continue
		}
		if a != b {
			t.Errorf("%s differs from %s", w2.EnvironmentFiles[i], w1.EnvironmentFiles[i])
		}
	}
	if !reflect.DeepEqual(w1.Hosts, w2.Hosts) {
		t.Errorf("hosts differ: %v vs %v", w1.Hosts, w2.Hosts)
	}
}

// TestIdenticalRerun: Generate again on the same work directory rewrites
// nothing (same bytes, same modification times).
func TestIdenticalRerun(t *testing.T) {
	w := shared(t)
	stat := func() map[string]int64 {
		m := map[string]int64{}
		for _, f := range append(w.EnvironmentFiles, w.PasswordsFile) {
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			m[f] = st.ModTime().UnixNano()
		}
		return m
	}
	before := stat()
	w2, err := Generate(Options{WorkDir: w.WorkDir})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(w2.EnvironmentFiles, w.EnvironmentFiles) || !reflect.DeepEqual(stat(), before) {
		t.Errorf("a second Generate rewrote files")
	}
}

// TestBadSources: missing or wrong sources are clear errors naming the
// variable to set.
func TestBadSources(t *testing.T) {
	_, commonSrc := reference(t)
	empty := t.TempDir()
	for _, c := range []struct {
		name, thtSrc, want string
	}{
		{"missing", filepath.Join(empty, "nope.tar.gz"), "is missing"},
		{"not a tree", empty, "tools/process-templates.py"},
		{"not a tarball", filepath.Join(empty, "x.zip"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "not a tarball" {
				os.WriteFile(c.thtSrc, []byte("x"), 0o644)
				c.want = "neither a directory nor a .tar.gz"
			}
			_, err := Generate(Options{WorkDir: filepath.Join(t.TempDir(), "w"), THT: c.thtSrc, TripleoCommon: commonSrc})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), EnvTHT) {
				t.Fatalf("error %v, want one with %q and %s", err, c.want, EnvTHT)
			}
		})
	}
}

// treeHash hashes a rendered tree without user-environments/ (the
// generated environments hold paths and passwords).
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && rel == UserEnvDir {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s %x\n", rel, sha256.Sum256(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func readString(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sorted(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

func path(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// TestExtraEnvironment: the user's environment comes last, and its
// registry counts for <Role>Services as in tripleoclient (a service it maps
// to OS::Heat::None is dropped).
func TestExtraEnvironment(t *testing.T) {
	reference(t)
	dir := t.TempDir()
	extra := filepath.Join(dir, "no-snmp.yaml")
	if err := os.WriteFile(extra, []byte("resource_registry:\n  OS::TripleO::Services::Snmp: OS::Heat::None\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Generate(Options{WorkDir: filepath.Join(dir, "w"), ExtraEnvironments: []string{extra}})
	if err != nil {
		t.Fatal(err)
	}
	if last := w.EnvironmentFiles[len(w.EnvironmentFiles)-1]; last != extra {
		t.Errorf("last environment %s, want %s", last, extra)
	}
	base := parameterDefaults(t, shared(t).EnvironmentFiles[1])
	params := parameterDefaults(t, w.EnvironmentFiles[1])
	for _, role := range []string{"Controller", "Compute"} {
		had, has := base[role+"Services"].([]any), params[role+"Services"].([]any)
		if !contains(had, "OS::TripleO::Services::Snmp") || contains(has, "OS::TripleO::Services::Snmp") || len(has) != len(had)-1 {
			t.Errorf("%sServices: Snmp not dropped (%d services before, %d after)", role, len(had), len(has))
		}
	}
}

func contains(l []any, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// THTEnvironments are the tree's own environments, by path from its root,
// as the user's -e files after the generated ones and before
// ExtraEnvironments; they take part in <Role>Services as any user
// environment; a path that leaves the tree or names no file is an error.
func TestTHTEnvironments(t *testing.T) {
	reference(t)
	dir := t.TempDir()
	extra := filepath.Join(dir, "site.yaml")
	if err := os.WriteFile(extra, []byte("parameter_defaults:\n  CloudName: site.example\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Generate(Options{WorkDir: filepath.Join(dir, "w"), THTEnvironments: []string{"environments/services/octavia.yaml"},
		ExtraEnvironments: []string{extra}})
	if err != nil {
		t.Fatal(err)
	}
	n := len(w.EnvironmentFiles)
	if got, want := w.EnvironmentFiles[n-2:], []string{filepath.Join(w.TemplateDir, "environments", "services", "octavia.yaml"), extra}; !reflect.DeepEqual(got, want) {
		t.Errorf("last environments %v, want %v", got, want)
	}
	if got, want := w.EnvironmentFiles[:n-2], shared(t).EnvironmentFiles; len(got) != len(want) {
		t.Errorf("generated environments %v, want as many as %v", got, want)
	}
	// octavia.yaml maps the Octavia services, which the default registry
	// leaves OS::Heat::None.
	base := parameterDefaults(t, shared(t).EnvironmentFiles[1])
	params := parameterDefaults(t, w.EnvironmentFiles[1])
	const api = "OS::TripleO::Services::OctaviaApi"
	if had, has := base["ControllerServices"].([]any), params["ControllerServices"].([]any); contains(had, api) || !contains(has, api) {
		t.Errorf("ControllerServices: OctaviaApi before %v, with octavia.yaml %v", contains(had, api), contains(has, api))
	}

	for _, tc := range []struct{ env, want string }{
		{"../overcloud.yaml", "relative to the tree's root"},
		{"/etc/passwd", "relative to the tree's root"},
		{"environments/../environments/services/octavia.yaml", "relative to the tree's root"},
		{"environments/no-such.yaml", "no such file in the tree"},
		{"environments", "no such file in the tree"},
	} {
		t.Run(tc.env, func(t *testing.T) {
			_, err := Generate(Options{WorkDir: filepath.Join(t.TempDir(), "w"), THTEnvironments: []string{tc.env}})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.env) {
				t.Errorf("error %v, want one naming %s and saying %q", err, tc.env, tc.want)
			}
		})
	}
}

// NetworkIsolation writes what wallaby's network v2 commands leave: the
// networks environment before the VIP one, a VIP per network with vip: true,
// each host's ports on its role's networks (roles_data) at its ctlplane
// offset, and the deployed port templates in the registry; a node beyond
// a subnet is an error naming it.
func TestNetworkIsolation(t *testing.T) {
	reference(t)
	w, err := Generate(Options{WorkDir: filepath.Join(t.TempDir(), "w"), ControllerCount: 1, ComputeCount: 2, NetworkIsolation: true})
	if err != nil {
		t.Fatal(err)
	}
	ue := filepath.Join(w.TemplateDir, UserEnvDir)
	want := append(append([]string{}, shared(t).EnvironmentFiles[:3]...), filepath.Join(ue, NetworksEnv), filepath.Join(ue, VIPEnv),
		filepath.Join(ue, NodeEnv), filepath.Join(ue, PrepareEnv))
	for i := range want[:3] {
		want[i] = strings.Replace(want[i], shared(t).TemplateDir, w.TemplateDir, 1)
	}
	if !reflect.DeepEqual(w.EnvironmentFiles, want) {
		t.Fatalf("environment files:\n got %v\nwant %v", w.EnvironmentFiles, want)
	}

	netEnv := filepath.Join(ue, NetworksEnv)
	if rr := registryOf(t, netEnv); rr["OS::TripleO::Network"] != filepath.Join(w.TemplateDir, "network", "deployed_networks.yaml") {
		t.Errorf("networks registry: %v", rr)
	}
	dne, _ := parameterDefaults(t, netEnv)["DeployedNetworkEnvironment"].(map[string]any)
	if got := path(dne, "net_cidr_map", "internal_api"); !reflect.DeepEqual(got, []any{"172.16.2.0/24"}) {
		t.Errorf("net_cidr_map.internal_api = %v", got)
	}
	if got := path(dne, "net_attributes_map", "external", "subnets", "external_subnet", "gateway_ip"); got != "10.0.0.1" {
		t.Errorf("external gateway %v", got)
	}
	if got := path(dne, "net_attributes_map", "internal_api", "network", "tags"); !reflect.DeepEqual(got, []any{"tripleo_network_name=InternalApi", "tripleo_net_idx=2", "tripleo_vip=true"}) {
		t.Errorf("internal_api tags %v", got)
	}
	if attrs, _ := dne["net_attributes_map"].(map[string]any); len(attrs) != 6 {
		t.Errorf("%d networks provisioned, want the 6 network_data.yaml enables: %v", len(attrs), sortedKeys(attrs))
	}

	vipEnv := filepath.Join(ue, VIPEnv)
	vips, _ := parameterDefaults(t, vipEnv)["VipPortMap"].(map[string]any)
	if len(vips) != 4 || !reflect.DeepEqual(vips["internal_api"], map[string]any{"ip_address": "172.16.2.5", "ip_address_uri": "172.16.2.5", "ip_subnet": "172.16.2.5/24"}) {
		t.Errorf("VipPortMap %v", vips)
	}
	if rr := registryOf(t, vipEnv); rr["OS::TripleO::Network::Ports::StorageMgmtVipPort"] != filepath.Join(w.TemplateDir, "network", "ports", "deployed_vip_storage_mgmt.yaml") || rr["OS::TripleO::Network::Ports::TenantVipPort"] != nil {
		t.Errorf("VIP registry %v", rr)
	}

	nodeEnv := filepath.Join(ue, NodeEnv)
	rr := registryOf(t, nodeEnv)
	for key, tmpl := range map[string]string{"OS::TripleO::Controller::Ports::ExternalPort": "deployed_external.yaml",
		"OS::TripleO::Compute::Ports::TenantPort": "deployed_tenant.yaml"} {
		if rr[key] != filepath.Join(w.TemplateDir, "network", "ports", tmpl) {
			t.Errorf("%s = %v", key, rr[key])
		}
	}
	if rr["OS::TripleO::Compute::Ports::ExternalPort"] != nil {
		t.Errorf("Compute has no External network, registry maps its port to %v", rr["OS::TripleO::Compute::Ports::ExternalPort"])
	}
	npm, _ := parameterDefaults(t, nodeEnv)["NodePortMap"].(map[string]any)
	if got := path(npm, "overcloud-novacompute-1", "storage"); !reflect.DeepEqual(got, map[string]any{"ip_address": "172.16.1.31", "ip_address_uri": "172.16.1.31", "ip_subnet": "172.16.1.31/24"}) {
		t.Errorf("overcloud-novacompute-1 storage port %v", got)
	}
	for _, h := range w.Hosts {
		nets := 3
		if h.Role == "Controller" {
			nets = 5
		}
		if len(h.IPs) != nets || len(path(npm, h.Name).(map[string]any)) != nets+1 {
			t.Errorf("host %s: addresses %v, ports %v", h.Name, h.IPs, path(npm, h.Name))
		}
	}

	// Each role's isolated addresses are a block of the /24 subnets.
	_, err = Generate(Options{WorkDir: filepath.Join(t.TempDir(), "w"), ComputeCount: 151, NetworkIsolation: true})
	if err == nil || !strings.Contains(err.Error(), "151 Compute nodes: with network isolation this workload gives isolated addresses to Compute indices 0-149 only") {
		t.Errorf("151 Computes on /24 networks: %v", err)
	}
}

// CephStorageCount adds the CephStorage role: its nodes, named as
// tripleo-ansible names them, at the top of the wide ctlplane and in their
// own block of each isolated subnet (Storage and StorageMgmt, its
// roles_data networks); without it the node environment has no CephStorage
// entry at all, as before the option.
func TestCephStorage(t *testing.T) {
	reference(t)
	w, err := Generate(Options{WorkDir: filepath.Join(t.TempDir(), "w"), ComputeCount: 1, CephStorageCount: 2, NetworkIsolation: true})
	if err != nil {
		t.Fatal(err)
	}
	var ceph []Host
	for _, h := range w.Hosts {
		if h.Role == "CephStorage" {
			ceph = append(ceph, h)
		}
	}
	want := []Host{
		{Name: "overcloud-cephstorage-0", Role: "CephStorage", Index: 0, CtlplaneIP: "192.168.31.238",
			IPs: map[string]string{"storage": "172.16.1.220", "storage_mgmt": "172.16.3.220"}},
		{Name: "overcloud-cephstorage-1", Role: "CephStorage", Index: 1, CtlplaneIP: "192.168.31.239",
			IPs: map[string]string{"storage": "172.16.1.221", "storage_mgmt": "172.16.3.221"}},
	}
	if !reflect.DeepEqual(ceph, want) {
		t.Errorf("CephStorage hosts %+v, want %+v", ceph, want)
	}
	nodes := parameterDefaults(t, w.EnvironmentFiles[len(w.EnvironmentFiles)-2])
	if nodes["CephStorageCount"] != 2 || nodes["CephStorageHostnameFormat"] != "%stackname%-cephstorage-%index%" {
		t.Errorf("CephStorage count %v, format %v", nodes["CephStorageCount"], nodes["CephStorageHostnameFormat"])
	}
	if cidr := path(parameterDefaults(t, w.EnvironmentFiles[1]), "CtlplaneNetworkAttributes", "subnets", "ctlplane-subnet", "cidr"); cidr != "192.168.24.0/21" {
		t.Errorf("ctlplane %v, want the /21 that holds the CephStorage block", cidr)
	}
	if rr := registryOf(t, w.EnvironmentFiles[len(w.EnvironmentFiles)-2]); rr["OS::TripleO::CephStorage::Ports::StorageMgmtPort"] == nil || rr["OS::TripleO::CephStorage::Ports::InternalApiPort"] != nil {
		t.Errorf("CephStorage port registry: %v", rr)
	}
	if svc, _ := parameterDefaults(t, w.EnvironmentFiles[1])["CephStorageServices"].([]any); len(svc) == 0 {
		t.Errorf("CephStorageServices empty: the role's services are those of a role with nodes")
	}

	for _, n := range shared(t).EnvironmentFiles {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(n) == NodeEnv && strings.Contains(string(b), "CephStorage") {
			t.Errorf("%s names CephStorage without CephStorage nodes", n)
		}
	}
	if _, err := Generate(Options{WorkDir: filepath.Join(t.TempDir(), "w"), CephStorageCount: 17}); err == nil || !strings.Contains(err.Error(), "CephStorage indices 0-15 only") {
		t.Errorf("17 CephStorage nodes: %v", err)
	}
}

// A work dir generated with network isolation, then without, keeps no
// networks environment: only the files Generate lists are there to pass.
func TestNetworkIsolationOff(t *testing.T) {
	reference(t)
	dir := filepath.Join(t.TempDir(), "w")
	w, err := Generate(Options{WorkDir: dir, NetworkIsolation: true})
	if err != nil {
		t.Fatal(err)
	}
	netEnv := filepath.Join(w.TemplateDir, UserEnvDir, NetworksEnv)
	if _, err := os.Stat(netEnv); err != nil {
		t.Fatal(err)
	}
	if w, err = Generate(Options{WorkDir: dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(netEnv); !os.IsNotExist(err) {
		t.Errorf("%s after a generation without isolation: %v", netEnv, err)
	}
	for _, e := range w.EnvironmentFiles {
		if filepath.Base(e) == NetworksEnv {
			t.Errorf("environment files %v list %s", w.EnvironmentFiles, NetworksEnv)
		}
	}
	if rr := registryOf(t, w.EnvironmentFiles[3]); len(rr) != 1 {
		t.Errorf("VIP registry after isolation off: %v", rr)
	}
}

// IPv6 gives the isolated networks their ipv6_subnet: addresses in the
// same per-role blocks, URIs in brackets (tripleo-ansible's wrap_ipv6),
// version 6 and the IPv6 gateway; the ctlplane stays IPv4. It needs
// NetworkIsolation.
func TestNetworkIsolationIPv6(t *testing.T) {
	reference(t)
	w, err := Generate(Options{WorkDir: filepath.Join(t.TempDir(), "w"), ComputeCount: 1, NetworkIsolation: true, IPv6: true})
	if err != nil {
		t.Fatal(err)
	}
	ue := filepath.Join(w.TemplateDir, UserEnvDir)
	dne, _ := parameterDefaults(t, filepath.Join(ue, NetworksEnv))["DeployedNetworkEnvironment"].(map[string]any)
	if v, c := path(dne, "net_ip_version_map", "internal_api"), path(dne, "net_cidr_map", "internal_api"); v != 6 || !reflect.DeepEqual(c, []any{"fd00:fd00:fd00:2000::/64"}) {
		t.Errorf("internal_api: version %v, cidrs %v", v, c)
	}
	if gw := path(dne, "net_attributes_map", "external", "subnets", "external_subnet", "gateway_ip"); gw != "2001:db8:fd00:1000::1" {
		t.Errorf("external gateway %v", gw)
	}
	vips, _ := parameterDefaults(t, filepath.Join(ue, VIPEnv))["VipPortMap"].(map[string]any)
	if got := vips["storage"]; !reflect.DeepEqual(got, map[string]any{"ip_address": "fd00:fd00:fd00:3000::5", "ip_address_uri": "[fd00:fd00:fd00:3000::5]", "ip_subnet": "fd00:fd00:fd00:3000::5/64"}) {
		t.Errorf("storage VIP %v", got)
	}
	npm, _ := parameterDefaults(t, filepath.Join(ue, NodeEnv))["NodePortMap"].(map[string]any)
	if got := path(npm, "overcloud-novacompute-0", "tenant"); !reflect.DeepEqual(got, map[string]any{"ip_address": "fd00:fd00:fd00:5000::1e", "ip_address_uri": "[fd00:fd00:fd00:5000::1e]", "ip_subnet": "fd00:fd00:fd00:5000::1e/64"}) {
		t.Errorf("compute-0 tenant port %v", got)
	}
	if got := path(npm, "overcloud-novacompute-0", "ctlplane", "ip_address"); got != "192.168.24.30" {
		t.Errorf("compute-0 ctlplane %v", got)
	}
	if _, err := Generate(Options{WorkDir: filepath.Join(t.TempDir(), "w"), IPv6: true}); err == nil || !strings.Contains(err.Error(), "set NetworkIsolation too") {
		t.Errorf("IPv6 without isolation: %v", err)
	}
}
