package realtht

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stack"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tht"
)

// servicesEnvironments are the tree's own environments an operator commonly
// adds to a wallaby overcloud, each bringing what the default workload does
// not have: HA, public TLS with a trust anchor, cephadm (external deploy
// tasks), Octavia (external post-deploy tasks that write an inventory),
// Barbican, Designate, Manila, Ironic in the overcloud, OVN with DVR, swap.
var servicesEnvironments = []string{
	"environments/docker-ha.yaml",
	"environments/ssl/enable-tls.yaml",
	"environments/ssl/inject-trust-anchor.yaml",
	"environments/ssl/tls-endpoints-public-ip.yaml",
	"environments/cephadm/cephadm.yaml",
	"environments/services/octavia.yaml",
	"environments/services/barbican.yaml",
	"environments/services/designate.yaml",
	"environments/services/manila.yaml",
	"environments/services/ironic-overcloud.yaml",
	"environments/services/neutron-ovn-dvr-ha.yaml",
	"environments/enable-swap.yaml",
}

// TestRealTHTServices is the second real-THT stack of a run: the wallaby
// overcloud with three Controllers (a bootstrap node and two others) and
// servicesEnvironments, created through heat_stack on its own Heat, then
// the export (stepExport: ours against tripleoclient's export_overcloud)
// and config_download's differential test against tripleo-common's own code
// on it, as TestRealTHT's steps do on the default services. The services
// must show in the rendering, so that the environments are known to have
// reached the stack.
func TestRealTHTServices(t *testing.T) {
	heattest.RequireHeat(t)
	s := &Suite{Opts: tht.Options{WorkDir: filepath.Join(t.TempDir(), "overcloud-deploy"), ControllerCount: 3, ComputeCount: 1,
		THTEnvironments: servicesEnvironments}}
	var err error
	if s.Workload, err = tht.Generate(s.Opts); err != nil {
		t.Fatalf("generating the real-THT workload with %v: %v", servicesEnvironments, err)
	}
	s.Heat = heattest.Start(t, nil)
	if s.Client, err = heatapi.NewNoAuth(s.Heat.Endpoint); err != nil {
		t.Fatal(err)
	}
	out, d := s.Run(t, s.StackOptions(t))
	if out.Action != stack.ActionCreate || out.Stack == nil || out.Stack.Status != "CREATE_COMPLETE" {
		t.Fatalf("create: action %s stack %+v: %s", out.Action, out.Stack, out.Msg)
	}
	if len(out.OutputErrors) > 0 {
		t.Errorf("output errors: %v", out.OutputErrors)
	}
	t.Logf("create with %d environments of the tree: %s", len(servicesEnvironments), d.Round(time.Second))
	s.Stack, s.Outcome = heatapi.StackRef{Name: out.Stack.Name, ID: out.Stack.ID}, out

	// Public TLS: the endpoints the overcloud's clients use are https.
	if u, _ := out.Outputs["KeystoneURL"].(string); !strings.HasPrefix(u, "https://") {
		t.Errorf("KeystoneURL %q: tls-endpoints-public-ip.yaml did not reach the stack", u)
	}

	// The export against tripleoclient's own, on this stack's working dir.
	t.Run("export", func(t *testing.T) { stepExport(t, s) })

	p := configDownloadParity(t, s)
	for file, want := range map[string]string{
		"external_post_deploy_steps_tasks.yaml":                 "octavia",
		"external_deploy_steps_tasks.yaml":                      "tripleo_cephadm",
		"group_vars/Controller":                                 "enable-chassis-as-gw",
		"Controller/config_settings.yaml":                       "ironic::api",
		"Compute/overcloud-novacompute-0/ComputeSwapDeployment": "swap_size_megabytes",
	} {
		b, err := os.ReadFile(filepath.Join(p.Ours, file))
		if err != nil {
			t.Errorf("%v", err)
		} else if !strings.Contains(string(b), want) {
			t.Errorf("%s does not name %s: the services' environments did not reach the rendering", file, want)
		}
	}
}
