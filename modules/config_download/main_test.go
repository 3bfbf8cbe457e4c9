package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stack"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/moduletest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/tlsproxy"
)

func TestDocumentationMatchesSpec(t *testing.T) {
	if err := module.CheckSidecar(spec, "../../collection/plugins/modules/config_download.yml"); err != nil {
		t.Fatal(err)
	}
}

// Every option is validated before anything runs: each bad value the spec
// implies (types, ranges, choices, empty or missing required values) is
// refused naming the option and what it allows.
func TestBoundaries(t *testing.T) {
	moduletest.Boundaries(t, spec, `{"stack": "overcloud", "dest": "/tmp/cd", "heat_dir": "/tmp/hd"}`)
}

// The TLS cloud: config_download reads a stack from a Heat behind a TLS
// proxy through a clouds.yaml cloud with cacert; with a CA that did not
// sign the proxy's certificate it fails naming that ca_cert.
func TestTLSCloud(t *testing.T) {
	h := heattest.Start(t, nil)
	c, err := heatapi.NewNoAuth(h.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	tpl := filepath.Join(t.TempDir(), "plain.yaml")
	os.WriteFile(tpl, []byte("heat_template_version: wallaby\nresources:\n  v: {type: OS::Heat::Value, properties: {value: 1}}\n"+
		"outputs:\n  answer: {value: {get_attr: [v, value]}}\n"), 0o644)
	req, err := stack.Prepare(stack.Options{Name: "plain", Template: tpl, Timeout: 5, Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := req.Run(context.Background(), c); err != nil || out.Failed {
		t.Fatalf("%v %+v", err, out)
	}
	px := tlsproxy.Start(t, h.Port)
	ep := px.URL("/v1/admin")
	for _, k := range []string{"OS_CLOUD", "OS_REGION_NAME", "OS_INTERFACE", "OS_CACERT", "OS_CERT", "OS_KEY"} {
		t.Setenv(k, "")
	}
	cy := filepath.Join(t.TempDir(), "clouds.yaml")
	os.WriteFile(cy, []byte(fmt.Sprintf("clouds:\n  tls: {auth_type: none, auth: {endpoint: %q}, cacert: %q}\n", ep, px.CA)), 0o600)
	t.Setenv("OS_CLIENT_CONFIG_FILE", cy)
	dest := filepath.Join(t.TempDir(), "config-download")

	res := moduletest.Call(t, spec, run, map[string]any{"stack": "plain", "dest": dest, "cloud": "tls", "ca_cert": px.OtherCA})
	if msg, _ := res["msg"].(string); res["failed"] != true || !strings.Contains(msg, "checked against ca_cert "+px.OtherCA) {
		t.Errorf("the wrong CA: %v", res)
	}
	res = moduletest.Call(t, spec, run, map[string]any{"stack": "plain", "dest": dest, "cloud": "tls"})
	if res["failed"] == true || res["changed"] != true || res["endpoint"] != ep || res["commit"] == "" {
		t.Fatalf("through the TLS cloud: %v", res)
	}
	if _, err := os.Stat(filepath.Join(dest, configdownload.InventoryFile)); err != nil {
		t.Error(err)
	}
}
