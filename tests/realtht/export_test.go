package realtht

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
	"github.com/ephemeral-heat/ephemeral-heat/internal/passwords"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tripleoclient"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tripleocommon"
)

// stepExport is issue 30's export on the real THT stack, against
// python-tripleoclient wallaby's own export_overcloud (tests/
// tripleoclient) on the same working dir:
//  1. the working dir gets what a deploy leaves from the shared stack: the
//     passwords (kept when there), the saved stack (Save) and
//     config-download (ours); then THT's common_deploy_steps_playbooks.yaml
//     runs its always-tagged plays (the global vars, and tripleo-ansible's
//     tripleo_all_nodes_data, which writes group_vars/overcloud.json, the
//     source of AllNodesExtraMapData) with every host local;
//  2. ours writes the deploy's export and cell export (WriteExport) and an
//     `overcloud export --no-password-excludes` elsewhere (ExportTo);
//  3. tripleoclient's export_overcloud on the working dir returns the same
//     data, key by key, for each (no allowed difference: the passwords
//     file is complete).
//
// Leaves: the shared stack as it was; the working dir saved from it anew.
func stepExport(t *testing.T, s *Suite) {
	ctx := context.Background()
	l, err := workdir.New(s.Workload.WorkDir, s.Workload.StackName)
	if err != nil {
		t.Fatal(err)
	}
	if err := tripleocommon.RequirePython(); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	trees, err := tripleoclient.Extract(filepath.Join(tmp, "reference"))
	if err != nil {
		t.Fatal(err)
	}

	// 1. What a deploy leaves.
	if _, err := l.Ensure(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(l.Passwords()); os.IsNotExist(err) {
		if _, err := passwords.Ensure(l.Passwords(), passwords.Names); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Save(ctx, s.Client, false); err != nil {
		t.Fatalf("saving the stack: %v", err)
	}
	if _, err := configdownload.Run(ctx, s.Client, configdownload.RunOptions{Stack: s.Workload.StackName, Dest: l.ConfigDownload()}); err != nil {
		t.Fatalf("config-download: %v", err)
	}
	allNodes := filepath.Join(l.ConfigDownload(), "group_vars", "overcloud.json")
	os.Remove(allNodes)
	cmd := exec.Command("ansible-playbook", "-i", l.Inventory(), "common_deploy_steps_playbooks.yaml", "--tags", "always",
		"-e", "deploy_source_host=Undercloud", "-e", "deploy_target_host="+l.Stack,
		"-e", "ansible_connection=local", "-e", "ansible_python_interpreter=/usr/bin/python3")
	cmd.Env, cmd.Dir = tripleoAnsibleEnv(t, tripleocommon.RepoRoot(), tmp), l.ConfigDownload()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("THT's common deploy steps plays (tripleo_all_nodes_data): %v\n%s", err, tail(string(out), 40))
	}
	if _, err := os.Stat(allNodes); err != nil {
		t.Errorf("tripleo_all_nodes_data wrote no %s (%v): AllNodesExtraMapData is compared absent on both sides", allNodes, err)
	}

	// 2. Ours.
	if _, err := l.WriteExport(false); err != nil {
		t.Fatal(err)
	}
	all := filepath.Join(tmp, "export", "all.yaml")
	if _, err := l.ExportTo(workdir.ExportOptions{File: all, NoPasswordExcludes: true}); err != nil {
		t.Fatal(err)
	}

	// 3. Theirs, key by key.
	for _, e := range tripleoclient.CheckExports(t, ctx, trees, l, all) {
		for _, k := range []string{"EndpointMapOverride", "ExtraHostFileEntries", "AdminPassword"} {
			if e.Defaults[k] == nil {
				t.Errorf("%s: tripleoclient exported no %s from the real THT stack", filepath.Base(e.File), k)
			}
		}
		var present []string
		for _, k := range []string{"GlobalConfigExtraMapData", "AllNodesExtraMapData", "AuthCloudName"} {
			if e.Defaults[k] != nil {
				present = append(present, k)
			}
		}
		t.Logf("%s: %d keys equal, of them %v (stubs %v)", filepath.Base(e.File), len(e.Defaults), present, e.Stubs)
	}
}
