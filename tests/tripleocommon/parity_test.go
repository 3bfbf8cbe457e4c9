package tripleocommon

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
)

// references extracts tripleo-common and tripleo-ansible, failing with how
// to get them when they are missing.
func references(t *testing.T) (Tree, *Tree) {
	t.Helper()
	if err := RequirePython(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tc, err := ExtractTripleoCommon(filepath.Join(dir, "tripleo-common"))
	if err != nil {
		t.Fatal(err)
	}
	ta, err := ExtractTripleoAnsible(filepath.Join(dir, "tripleo-ansible"))
	if err != nil {
		t.Fatal(err)
	}
	return tc, &ta
}

// TestSampleOvercloudParity renders two stacks of the sample overcloud
// with ours and with tripleo-common's own code (stable/wallaby) and
// compares them: the full sample (Controller + 2 Computes, isolated
// networks, Ceph, an excluded host name) named overcloud, and the one-node
// standalone variant under another plan name. The sample has every kind of
// deployment config-download handles: hiera structured configs
// (pre_deployments), a script in a software deployment group whose members
// are named by index (post_deployments, the grandparent lookup), network
// configs as a mapping and as a software config.
func TestSampleOvercloudParity(t *testing.T) {
	heattest.RequireHeat(t)
	tc, ta := references(t)
	sampleParity(t, tc, ta)
}

// TestZedSampleOvercloudParity is TestSampleOvercloudParity with
// tripleo-common stable/zed's own code against ours rendered with
// tripleo_release zed, on the same two stacks. The zed tree comes from
// EPHEMERAL_HEAT_TRIPLEO_COMMON_ZED, else ../shared/reference, else a git
// mirror (ExtractTripleoCommonZed). No stubbed imports: zed's
// tripleo_common.utils.config and inventory import with Debian's packages
// (harness.py only passes zed's new cloud_name=None). The playbooks are
// checked with the same tripleo-ansible tree as wallaby's (the sample's
// playbooks call no role or plugin that differs).
func TestZedSampleOvercloudParity(t *testing.T) {
	heattest.RequireHeat(t)
	if err := RequirePython(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tc, from, err := ExtractTripleoCommonZed(context.Background(), filepath.Join(dir, "tripleo-common-zed"))
	if errors.Is(err, ErrNoZedTree) && !RequireZed() {
		// The one allowed skip of the differential test: no package
		// registry serves zed's tripleo-common and the project must not
		// vendor it, so a machine may have none of the three sources.
		// make parity-zed sets EPHEMERAL_HEAT_REQUIRE_ZED=1 and fails here.
		t.Skipf("%v (%s=1 makes this a failure)", err, EnvRequireZed)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tripleo-common stable/zed from %s", from)
	ta, err := ExtractTripleoAnsible(filepath.Join(dir, "tripleo-ansible"))
	if err != nil {
		t.Fatal(err)
	}
	sampleParity(t, tc, &ta)
}

// sampleParity deploys both stacks of the sample and runs the
// differential test on each with tc's release.
func sampleParity(t *testing.T, tc Tree, ta *Tree) {
	h := heattest.Start(t, nil)
	c, err := heatapi.NewNoAuth(h.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		stack  string
		envs   []string
		params map[string]any
	}{
		{"overcloud", []string{"environments/network-isolation.yaml", "environments/ceph.yaml"},
			map[string]any{"ComputeCount": 2, "DeploymentServerBlacklist": []string{"overcloud-novacompute-9"}}},
		{"standalone", []string{"environments/standalone.yaml"}, map[string]any{"SampleMarkerDir": "/nonexistent/markers"}},
	}
	for _, tc2 := range cases {
		if err := DeploySample(context.Background(), c, tc2.stack, tc2.envs, tc2.params, t.Logf); err != nil {
			t.Fatal(err)
		}
	}
	work := t.TempDir()
	for _, cs := range cases {
		t.Run(cs.stack, func(t *testing.T) {
			p, warnings, err := RunParity(context.Background(), c, cs.stack, filepath.Join(work, cs.stack), tc, ta)
			for _, w := range warnings {
				t.Logf("warning: %s", w)
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("ours %s, tripleo-common's %s (python3 process %s); playbooks checked: %v",
				p.OursTime.Round(time.Millisecond), p.TheirsTime.Round(time.Millisecond), p.TheirsWall.Round(time.Millisecond), p.Playbooks)
			for _, pr := range p.Problems {
				t.Errorf("%s", pr)
			}
			// The sample's deployments are there, under tripleo-common's names.
			for _, f := range []string{"Controller/" + cs.stack + "-controller-0/ControllerDeployment",
				"Controller/" + cs.stack + "-controller-0/ControllerExtraConfigPost"} {
				if cs.stack == "standalone" {
					f = strings.Replace(f, cs.stack+"-controller-0", "standalone", 1)
				}
				if _, err := os.Stat(filepath.Join(p.Ours, f)); err != nil {
					t.Errorf("%v", err)
				}
			}
			if len(p.Playbooks) == 0 {
				t.Errorf("no playbook was checked")
			}
			// Found from the deployments' stacks, not by listing every
			// nested stack: the parity above holds for that way.
			if p.Lookup != configdownload.LookupStacks {
				t.Errorf("the deployments were found by %q, want %q", p.Lookup, configdownload.LookupStacks)
			}
			// Each side ran its release's code: zed's ansible-runner
			// directories, wallaby's NetworkConfig and merged group vars.
			want, notWant := "artifacts", "Controller/NetworkConfig"
			if tc.release() == configdownload.Wallaby {
				want, notWant = notWant, want
			}
			for _, root := range []string{p.Ours, p.Theirs} {
				if _, err := os.Stat(filepath.Join(root, want)); err != nil {
					t.Errorf("%s: %v", tc.release(), err)
				}
				if _, err := os.Stat(filepath.Join(root, notWant)); err == nil {
					t.Errorf("%s: %s has %s", tc.release(), root, notWant)
				}
			}
		})
	}
}

// TestMultiStackInventoryParity deploys two stacks of the sample overcloud,
// central (isolated networks, Ceph) and dcn0 (two Computes, its own
// hosts), renders each with our config_download into its own working dir,
// merges the inventories with overcloud_workdir's merge_inventory code, and
// compares the result with tripleo-common's TripleoInventories of the same
// two stacks: 0 differences beyond MergedAllowed.
func TestMultiStackInventoryParity(t *testing.T) {
	heattest.RequireHeat(t)
	tc, _ := references(t)
	h := heattest.Start(t, nil)
	c, err := heatapi.NewNoAuth(h.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		stack  string
		envs   []string
		params map[string]any
	}{
		{"central", []string{"environments/network-isolation.yaml", "environments/ceph.yaml"}, map[string]any{"ComputeCount": 1}},
		{"dcn0", nil, map[string]any{"ComputeCount": 2}},
	} {
		if err := DeploySample(context.Background(), c, s.stack, s.envs, s.params, t.Logf); err != nil {
			t.Fatal(err)
		}
	}
	p, warnings, err := RunMergedParity(context.Background(), c, []string{"central", "dcn0"}, t.TempDir(), tc)
	for _, w := range warnings {
		t.Logf("warning: %s", w)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range p.Problems {
		t.Errorf("%s", pr)
	}
	b, err := os.ReadFile(p.Ours)
	if err != nil {
		t.Fatal(err)
	}
	// The merge has both stacks' hosts and both plans.
	for _, want := range []string{"dcn0_Compute:", "central_Compute:", "dcn0-novacompute-1", "central-controller-0", "- central\n      - dcn0\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("our merged inventory lacks %q", want)
		}
	}
}
