package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tripleoclient"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tripleocommon"
)

// TestSampleExportAgainstTripleoclient: a deploy of the sample overcloud
// (network isolation, Ceph; stack "central") through the deploy playbook
// writes its export and cell export; ephemeral.heat.export writes one
// without password excludes elsewhere (--check first: nothing written;
// then again: changed=0; another export over it refused unless
// force_overwrite). tripleoclient's own export_overcloud on the same
// working dir (tests/tripleoclient) returns the same data, key by key,
// for each.
func TestSampleExportAgainstTripleoclient(t *testing.T) {
	heattest.RequireHeat(t)
	if err := tripleocommon.RequirePython(); err != nil {
		t.Fatal(err)
	}
	trees, err := tripleoclient.Extract(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := ansibleEnv(t)
	root := repoRoot(t)
	samples := tripleocommon.SampleDir()
	work := filepath.Join(t.TempDir(), "overcloud-deploy", "central")
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	deployVars := jsonVars(t, map[string]any{
		"stack_name": "central", "work_dir": work, "heat_api_port": port, "run_deploy": false,
		"template": filepath.Join(samples, "overcloud.yaml"),
		"environment_files": []string{filepath.Join(samples, "overcloud-resource-registry.yaml"),
			filepath.Join(samples, "environments", "network-isolation.yaml"), filepath.Join(samples, "environments", "ceph.yaml")},
	})
	if _, failed, out := playbook(t, env, filepath.Join(root, "playbooks", "deploy-overcloud.yml"), deployVars...); failed != 0 {
		t.Fatalf("deploy of the sample:\n%s", out)
	}
	l, err := workdir.New(work, "central")
	if err != nil {
		t.Fatal(err)
	}

	book := filepath.Join(root, "playbooks", "export.yml")
	all := filepath.Join(t.TempDir(), "dcn", "central-export.yaml")
	exportVars := func(extra map[string]any) []string {
		v := map[string]any{"stack_name": "central", "work_dir": work, "export_file": all, "password_excludes": false}
		for k, x := range extra {
			v[k] = x
		}
		return jsonVars(t, v)
	}
	if changed, failed, out := playbook(t, env, book, append(exportVars(nil), "--check", "--diff")...); failed != 0 || changed != 1 {
		t.Fatalf("export --check: changed=%d failed=%d\n%s", changed, failed, out)
	} else if _, err := os.Stat(all); err == nil {
		t.Fatalf("export --check wrote %s", all)
	}
	if changed, failed, out := playbook(t, env, book, exportVars(nil)...); failed != 0 || changed != 1 {
		t.Fatalf("export: changed=%d failed=%d\n%s", changed, failed, out)
	}
	if changed, failed, out := playbook(t, env, book, exportVars(nil)...); failed != 0 || changed != 0 {
		t.Errorf("export again: changed=%d failed=%d\n%s", changed, failed, out)
	}
	before, _ := os.ReadFile(all)
	if _, failed, out := playbook(t, env, book, exportVars(map[string]any{"password_excludes": true})...); failed == 0 ||
		!strings.Contains(out, "already exists") || !strings.Contains(out, "force_overwrite") {
		t.Errorf("another export over it was not refused naming force_overwrite:\n%s", out)
	}
	if after, _ := os.ReadFile(all); string(after) != string(before) {
		t.Errorf("the refused export changed %s", all)
	}

	for _, e := range tripleoclient.CheckExports(t, context.Background(), trees, l, all) {
		if e.Defaults["EndpointMapOverride"] == nil || e.Defaults["AdminPassword"] == nil {
			t.Errorf("%s: tripleoclient exported no EndpointMapOverride or AdminPassword: the comparison proves little", filepath.Base(e.File))
		}
		t.Logf("%s: %d keys equal (stubs %v)", filepath.Base(e.File), len(e.Defaults), e.Stubs)
	}
}
