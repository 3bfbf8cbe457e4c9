package heatapi

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/fakekeystone"
)

// writeFile writes content to dir/name (0600) and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// noEnv clears the environment clouds.Parse reads.
func noEnv(t *testing.T) {
	for _, k := range []string{"OS_CLOUD", "OS_CLIENT_CONFIG_FILE", "OS_REGION_NAME", "OS_INTERFACE", "OS_CACERT", "OS_CERT", "OS_KEY"} {
		t.Setenv(k, "")
	}
}

// A clouds.yaml whose password sits where a section belongs is refused
// without quoting it: yaml.v3 quotes the start of the offending value.
func TestCloudErrorQuotesNoValue(t *testing.T) {
	noEnv(t)
	const secret = "s3cr3t-Pa55word-19"
	p := writeFile(t, t.TempDir(), "clouds.yaml", "clouds:\n  heat:\n    auth: "+secret+"\n")
	_, err := NewFromCloud(context.Background(), CloudOptions{Name: "heat", Paths: []string{p}}, nil)
	if err == nil || strings.Contains(err.Error(), secret[:4]) || !strings.Contains(err.Error(), `cloud "heat" (`+p+`) is not a valid clouds.yaml cloud`) ||
		!strings.Contains(err.Error(), "cannot unmarshal !!str (a value) into") {
		t.Errorf("NewFromCloud: %v", err)
	}
}

// Application credentials (by id, or by name with the user): the token
// request carries the application_credential method and no scope nor
// password, and the Heat used is the catalog's orchestration endpoint of
// the cloud's region and interface, called with the token. The secret is
// handed over for masking.
func TestApplicationCredential(t *testing.T) {
	noEnv(t)
	ks := fakekeystone.Start(t)
	dir := t.TempDir()
	p := writeFile(t, dir, "clouds.yaml", fmt.Sprintf(`clouds:
  byid:
    auth_type: v3applicationcredential
    region_name: RegionTwo
    interface: internal
    auth:
      auth_url: %[1]s/v3
      application_credential_id: 21dced0fd20347869b93710d2b98aae0
      application_credential_secret: appcred-s3cret-1
      project_name: ignored-with-app-creds
  byname:
    auth_type: v3applicationcredential
    auth:
      auth_url: %[1]s/v3
      application_credential_name: deployer
      username: admin
      user_domain_name: Default
`, ks.URL))
	writeFile(t, dir, "secure.yaml", "clouds:\n  byname:\n    auth:\n      application_credential_secret: appcred-s3cret-2\n")
	for _, tc := range []struct {
		cloud, secret, endpoint string
		cred                    map[string]any
	}{
		{"byid", "appcred-s3cret-1", ks.HeatEndpoint("RegionTwo", "internal"),
			map[string]any{"id": "21dced0fd20347869b93710d2b98aae0", "secret": "appcred-s3cret-1"}},
		{"byname", "appcred-s3cret-2", ks.HeatEndpoint("RegionOne", "public"),
			map[string]any{"name": "deployer", "secret": "appcred-s3cret-2", "user": map[string]any{"name": "admin", "domain": map[string]any{"name": "Default"}}}},
	} {
		t.Run(tc.cloud, func(t *testing.T) {
			var secrets []string
			c, err := NewFromCloud(context.Background(), CloudOptions{Name: tc.cloud, Paths: []string{p}}, func(s string) { secrets = append(secrets, s) })
			if err != nil {
				t.Fatal(err)
			}
			if c.Endpoint() != tc.endpoint {
				t.Errorf("endpoint %s, want %s", c.Endpoint(), tc.endpoint)
			}
			if len(secrets) != 1 || secrets[0] != tc.secret {
				t.Errorf("secrets for masking: %q", secrets)
			}
			auths := ks.Auths()
			last, _ := json.Marshal(auths[len(auths)-1])
			want, _ := json.Marshal(map[string]any{"auth": map[string]any{"identity": map[string]any{
				"methods": []string{"application_credential"}, "application_credential": tc.cred}}})
			if string(last) != string(want) {
				t.Errorf("token request\n%s\nwant\n%s", last, want)
			}
			if _, err := c.FindStack(context.Background(), "overcloud"); !IsNotFound(err) {
				t.Fatalf("FindStack: %v", err)
			}
			reqs := ks.HeatRequests()
			u := strings.TrimPrefix(tc.endpoint, ks.URL)
			if got := reqs[len(reqs)-1]; got != "GET "+u+"/stacks/overcloud "+fakekeystone.Token {
				t.Errorf("Heat request %q", got)
			}
		})
	}
}

// What the module gives wins: auth keys over secure.yaml's and
// clouds.yaml's, region_name over OS_REGION_NAME over the cloud's.
func TestCloudOverrides(t *testing.T) {
	noEnv(t)
	ks := fakekeystone.Start(t)
	dir := t.TempDir()
	p := writeFile(t, dir, "clouds.yaml", fmt.Sprintf(`clouds:
  uc:
    region_name: RegionOne
    auth:
      auth_url: %s/v3
      username: admin
      password: from-clouds-yaml
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
`, ks.URL))
	writeFile(t, dir, "secure.yaml", "clouds:\n  uc:\n    auth:\n      password: from-secure-yaml\n")
	password := func() string {
		a := ks.Auths()
		b, _ := json.Marshal(a[len(a)-1])
		var body struct {
			Auth struct {
				Identity struct {
					Password struct {
						User struct{ Password string } `json:"user"`
					} `json:"password"`
				} `json:"identity"`
			} `json:"auth"`
		}
		json.Unmarshal(b, &body)
		return body.Auth.Identity.Password.User.Password
	}
	c, err := NewFromCloud(context.Background(), CloudOptions{Name: "uc", Paths: []string{p}}, nil)
	if err != nil || password() != "from-secure-yaml" || c.Endpoint() != ks.HeatEndpoint("RegionOne", "public") {
		t.Fatalf("secure.yaml: %v %q", err, password())
	}
	t.Setenv("OS_REGION_NAME", "RegionTwo")
	c, err = NewFromCloud(context.Background(), CloudOptions{Name: "uc", Paths: []string{p}, Auth: map[string]any{"password": "from-task"}}, nil)
	if err != nil || password() != "from-task" || c.Endpoint() != ks.HeatEndpoint("RegionTwo", "public") {
		t.Fatalf("auth and OS_REGION_NAME: %v %q %s", err, password(), c.Endpoint())
	}
	c, err = NewFromCloud(context.Background(), CloudOptions{Name: "uc", Paths: []string{p}, Region: "RegionOne", Interface: "admin"}, nil)
	if err != nil || c.Endpoint() != ks.HeatEndpoint("RegionOne", "admin") {
		t.Fatalf("region_name and interface: %v", err)
	}
	// auth alone, no clouds.yaml.
	t.Setenv("OS_REGION_NAME", "")
	c, err = NewFromCloud(context.Background(), CloudOptions{Auth: map[string]any{"auth_url": ks.URL + "/v3", "username": "admin",
		"password": "pw", "project_id": "p1", "user_domain_id": "default"}}, nil)
	if err != nil || password() != "pw" || c.Endpoint() != ks.HeatEndpoint("RegionOne", "public") {
		t.Fatalf("auth alone: %v %q %s", err, password(), c.Endpoint())
	}
}

// Each bad cloud is refused before anything is sent, saying what is
// missing or wrong and where.
func TestCloudErrors(t *testing.T) {
	noEnv(t)
	dir := t.TempDir()
	notPEM := writeFile(t, dir, "notpem.crt", "hello\n")
	p := writeFile(t, dir, "clouds.yaml", `clouds:
  nopw: {auth: {auth_url: "http://127.0.0.1:1/v3", username: u}}
  nourl: {auth: {username: u, password: p}}
  weird: {auth_type: oidcpassword, auth: {auth_url: "http://127.0.0.1:1/v3"}}
  nosecret: {auth_type: v3applicationcredential, auth: {auth_url: "http://127.0.0.1:1/v3", application_credential_id: x}}
  none: {auth_type: none}
  badca: {auth_type: none, auth: {endpoint: "https://127.0.0.1:1/v1/admin"}, cacert: `+filepath.Join(dir, "missing.pem")+`}
  profile: {profile: nowhere, auth: {auth_url: "http://127.0.0.1:1/v3"}}
`)
	cases := []struct {
		o    CloudOptions
		want []string
	}{
		{CloudOptions{Name: "nope"}, []string{`has no cloud "nope" (it has: badca, none, nopw, nosecret, nourl, profile, weird)`}},
		{CloudOptions{Name: "nopw"}, []string{`cloud "nopw"`, "needs auth.password"}},
		{CloudOptions{Name: "nourl"}, []string{`cloud "nourl"`, "no auth.auth_url"}},
		{CloudOptions{Name: "weird"}, []string{`auth_type "oidcpassword"`, "supported: none"}},
		{CloudOptions{Name: "nosecret"}, []string{"v3applicationcredential needs auth.application_credential_secret"}},
		{CloudOptions{Name: "none"}, []string{"auth_type none but neither auth.endpoint nor orchestration_endpoint_override"}},
		{CloudOptions{Name: "badca"}, []string{`cloud "badca"`, "cacert " + filepath.Join(dir, "missing.pem"), "no such file"}},
		{CloudOptions{Name: "none", Auth: map[string]any{"endpoint": "https://127.0.0.1:1/v1/admin"}, TLS: TLSOptions{CACert: notPEM}},
			[]string{"ca_cert " + notPEM + " holds no PEM certificate"}},
		{CloudOptions{Name: "profile"}, []string{"names a profile, but no clouds-public.yaml was found"}},
		{CloudOptions{Name: "x", Paths: []string{filepath.Join(dir, "none.yaml")}}, []string{`cloud "x": no clouds.yaml found (looked at ` + filepath.Join(dir, "none.yaml")}},
	}
	for _, tc := range cases {
		if tc.o.Paths == nil {
			tc.o.Paths = []string{p}
		}
		_, err := NewFromCloud(context.Background(), tc.o, nil)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want %q", tc.o.Name, err, w)
			}
		}
	}
}

// An https no-auth Heat: its certificate is checked against ca_cert (or a
// cloud's cacert); an untrusted one fails saying against what it was
// checked and which options change that; validate_certs false skips the
// check.
func TestTLS(t *testing.T) {
	noEnv(t)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
		w.Write([]byte(`{"code": 404, "title": "Not Found"}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	ca := writeFile(t, dir, "ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))
	ep := srv.URL + "/v1/admin"
	p := writeFile(t, dir, "clouds.yaml", fmt.Sprintf("clouds:\n  tls: {auth_type: none, auth: {endpoint: %q}, cacert: %q}\n  plain: {auth_type: none, auth: {endpoint: %q}}\n", ep, ca, ep))
	no := false
	find := func(c *Client, err error) error {
		if err != nil {
			return err
		}
		_, err = c.FindStack(context.Background(), "s")
		if IsNotFound(err) {
			return nil
		}
		return err
	}
	for _, tc := range []struct {
		name string
		err  error
		want []string // in the error; none: success
	}{
		{"endpoint with ca_cert", find(NewNoAuthTLS(ep, TLSOptions{CACert: ca})), nil},
		{"endpoint without", find(NewNoAuthTLS(ep, TLSOptions{})), []string{"certificate", "checked against the system's CA certificates", "give ca_cert", "validate_certs: false"}},
		{"endpoint unchecked", find(NewNoAuthTLS(ep, TLSOptions{Verify: &no})), nil},
		{"cloud's cacert", find(NewFromCloud(context.Background(), CloudOptions{Name: "tls", Paths: []string{p}}, nil)), nil},
		{"cloud without", find(NewFromCloud(context.Background(), CloudOptions{Name: "plain", Paths: []string{p}}, nil)), []string{"give ca_cert"}},
		{"cloud with ca_cert", find(NewFromCloud(context.Background(), CloudOptions{Name: "plain", Paths: []string{p}, TLS: TLSOptions{CACert: ca}}, nil)), nil},
		{"cloud unchecked", find(NewFromCloud(context.Background(), CloudOptions{Name: "plain", Paths: []string{p}, TLS: TLSOptions{Verify: &no}}, nil)), nil},
	} {
		t.Logf("%s: %v", tc.name, tc.err)
		if len(tc.want) == 0 && tc.err != nil {
			t.Errorf("%s: %v", tc.name, tc.err)
		}
		for _, w := range tc.want {
			if tc.err == nil || !strings.Contains(tc.err.Error(), w) {
				t.Errorf("%s: %v, want %q", tc.name, tc.err, w)
			}
		}
	}
	// A plain-HTTP server at an https URL.
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	err := find(NewNoAuthTLS(strings.Replace(plain.URL, "http:", "https:", 1)+"/v1/admin", TLSOptions{}))
	if err == nil || !strings.Contains(err.Error(), "does not speak TLS") {
		t.Errorf("plain HTTP: %v", err)
	}
}
