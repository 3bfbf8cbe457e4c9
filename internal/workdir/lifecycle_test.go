package workdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/lifecycle"
)

// lifecycleFixture is a working dir after a deploy of stage (status
// status), with config-download's inventory and lifecycle playbooks.
func lifecycleFixture(t *testing.T, stage, status string, blacklisted string) Layout {
	t.Helper()
	l, _ := New(filepath.Join(t.TempDir(), "overcloud"), "overcloud")
	if _, err := l.Ensure(); err != nil {
		t.Fatal(err)
	}
	cd := l.ConfigDownload()
	os.MkdirAll(cd, 0o700)
	os.MkdirAll(l.path(OutputsDir), 0o700)
	os.WriteFile(l.Inventory(), []byte("Controller:\n  hosts:\n    overcloud-controller-0: {}\nCompute:\n  hosts:\n"+
		"    overcloud-novacompute-0: {}\n    overcloud-novacompute-1: {}\nallovercloud:\n  children:\n    Controller: {}\n    Compute: {}\n"+
		"excluded_overcloud:\n  hosts: {}\n"), 0o600)
	for _, b := range []string{"update_steps_playbook.yaml", "upgrade_steps_playbook.yaml", "deploy_steps_playbook.yaml",
		"post_upgrade_steps_playbook.yaml", "external_update_steps_playbook.yaml", "external_upgrade_steps_playbook.yaml"} {
		os.WriteFile(filepath.Join(cd, b), []byte("- hosts: all\n  tasks: []\n"), 0o600)
	}
	if blacklisted != "" {
		os.WriteFile(l.Output("BlacklistedHostnames"), []byte(blacklisted), 0o600)
	}
	if status != "" {
		if _, err := l.WriteStatus(Status{Status: status, Stage: stage}, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.WriteFingerprint(strings.Repeat("a", 64), false); err != nil {
		t.Fatal(err)
	}
	return l
}

// PlanRun's refusals, each naming the variable or the missing stage, and
// what it runs when every check passes.
func TestPlanRun(t *testing.T) {
	ok := StatusSuccess
	tests := []struct {
		name, run, stage, status, blacklist string
		limit, playbooks                    []string
		noConfigDownload                    bool
		want                                string // an error holding this; "" = success
		wantLimit                           string
		wantBooks                           []string
	}{
		{name: "update run after an update prepare", run: "update_run", stage: lifecycle.UpdatePrepare, status: ok,
			limit: []string{"overcloud-novacompute-0"}, wantLimit: "overcloud-novacompute-0", wantBooks: []string{"update_steps_playbook.yaml"}},
		{name: "limit as tripleoclient splits it, a group and an exclusion", run: "update_run", stage: lifecycle.UpdatePrepare, status: ok,
			limit: []string{"Compute, !overcloud-novacompute-1:overcloud-controller-0"}, wantLimit: "Compute:!overcloud-novacompute-1:overcloud-controller-0"},
		{name: "no limit", run: "update_run", stage: lifecycle.UpdatePrepare, status: ok,
			want: "limit is required for update_run"},
		{name: "an empty limit", run: "upgrade_run", stage: lifecycle.UpgradePrepare, status: ok, limit: []string{" , "},
			want: "limit is required for upgrade_run"},
		{name: "an unknown host", run: "update_run", stage: lifecycle.UpdatePrepare, status: ok, limit: []string{"overcloud-novacompute-7"},
			want: `limit: "overcloud-novacompute-7" is not a host or group of the config-download inventory`},
		{name: "a pattern is no host", run: "update_run", stage: lifecycle.UpdatePrepare, status: ok, limit: []string{"overcloud-*"},
			want: `limit: "overcloud-*" is not a host or group`},
		{name: "a host spelled otherwise", run: "update_run", stage: lifecycle.UpdatePrepare, status: ok, limit: []string{"Overcloud-Controller-0"},
			want: `"Overcloud-Controller-0" is not a host or group`},
		{name: "no prepare: a plain deploy", run: "upgrade_run", stage: lifecycle.Deploy, status: ok, limit: []string{"Compute"},
			want: "upgrade_run needs an upgrade prepare (ephemeral.heat.upgrade_prepare) of stack overcloud first: the last deploy was a plain deploy"},
		{name: "no prepare: a status from before stages", run: "update_run", stage: "", status: ok, limit: []string{"Compute"},
			want: "the last deploy was a plain deploy"},
		{name: "no deploy at all", run: "external_update_run", want: "needs an update prepare (ephemeral.heat.update_prepare) of stack overcloud first: the working dir has no deployment status"},
		{name: "the wrong prepare kind", run: "upgrade_run", stage: lifecycle.UpdatePrepare, status: ok, limit: []string{"Compute"},
			want: "the last deploy was an update prepare (ephemeral.heat.update_prepare)"},
		{name: "the wrong prepare kind, external", run: "external_update_run", stage: lifecycle.UpgradePrepare, status: ok,
			want: "external_update_run needs an update prepare"},
		{name: "a converge ends the upgrade", run: "external_upgrade_run", stage: lifecycle.UpgradeConverge, status: ok,
			want: "the last deploy was an upgrade converge"},
		{name: "a prepare that failed", run: "update_run", stage: lifecycle.UpdatePrepare, status: StatusFailed, limit: []string{"Compute"},
			want: "the last one is DEPLOY_FAILED"},
		{name: "no config-download", run: "update_run", stage: lifecycle.UpdatePrepare, status: ok, limit: []string{"Compute"}, noConfigDownload: true,
			want: "has no config-download for stack overcloud"},
		{name: "external runs take no limit", run: "external_upgrade_run", stage: lifecycle.UpgradePrepare, status: ok,
			wantLimit: "", wantBooks: []string{"external_upgrade_steps_playbook.yaml"}},
		{name: "upgrade run's three playbooks in order", run: "upgrade_run", stage: lifecycle.UpgradePrepare, status: ok, limit: []string{"overcloud-controller-0"},
			wantBooks: []string{"upgrade_steps_playbook.yaml", "deploy_steps_playbook.yaml", "post_upgrade_steps_playbook.yaml"}},
		{name: "playbooks given", run: "upgrade_run", stage: lifecycle.UpgradePrepare, status: ok, limit: []string{"Compute"},
			playbooks: []string{"upgrade_steps_playbook.yaml"}, wantBooks: []string{"upgrade_steps_playbook.yaml"}},
		{name: "a missing playbook", run: "upgrade_run", stage: lifecycle.UpgradePrepare, status: ok, limit: []string{"Compute"},
			playbooks: []string{"nope.yaml"}, want: "playbooks: playbook"},
		{name: "blacklisted hosts are excluded", run: "update_run", stage: lifecycle.UpdatePrepare, status: ok, limit: []string{"Compute"},
			blacklist: "- overcloud-novacompute-1\n- ''\n", wantLimit: "Compute:!excluded_overcloud"},
		{name: "a blacklisted host in limit", run: "update_run", stage: lifecycle.UpdatePrepare, status: ok, limit: []string{"overcloud-novacompute-1"},
			blacklist: "- overcloud-novacompute-1\n", want: "limit: overcloud-novacompute-1 is excluded by DeploymentServerBlacklist"},
		{name: "an empty blacklist adds nothing", run: "update_run", stage: lifecycle.UpdatePrepare, status: ok, limit: []string{"Compute"},
			blacklist: "- ''\n", wantLimit: "Compute"},
		{name: "upgrade run does not exclude (as tripleoclient)", run: "upgrade_run", stage: lifecycle.UpgradePrepare, status: ok, limit: []string{"Compute"},
			blacklist: "- overcloud-novacompute-1\n", wantLimit: "Compute"},
		{name: "an unknown run", run: "deploy_run", want: `no run command "deploy_run"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := lifecycleFixture(t, tc.stage, tc.status, tc.blacklist)
			if tc.noConfigDownload {
				os.RemoveAll(l.path(ConfigDownloadDir))
			}
			p, err := l.PlanRun(tc.run, tc.limit, tc.playbooks, nil, nil)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("PlanRun: %v, want an error with %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantLimit != "" || tc.limit == nil {
				if p.Limit != tc.wantLimit {
					t.Errorf("limit %q, want %q", p.Limit, tc.wantLimit)
				}
			}
			if tc.wantBooks != nil {
				var got []string
				for _, b := range p.Playbooks {
					got = append(got, filepath.Base(b))
				}
				if strings.Join(got, " ") != strings.Join(tc.wantBooks, " ") {
					t.Errorf("playbooks %v, want %v", got, tc.wantBooks)
				}
			}
		})
	}
}

// A run is recorded once it succeeded: the same run is done until the
// next prepare, also after the converge of its upgrade (where any other
// run is refused); another run, or the same after a new prepare, is not.
func TestRunRecords(t *testing.T) {
	l := lifecycleFixture(t, lifecycle.UpgradePrepare, StatusSuccess, "")
	p, err := l.PlanRun("upgrade_run", []string{"overcloud-novacompute-0"}, nil, []string{"b", "a"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	same, _ := l.PlanRun("upgrade_run", []string{"overcloud-novacompute-0"}, nil, []string{"a", "b"}, nil)
	other, _ := l.PlanRun("upgrade_run", []string{"overcloud-novacompute-0"}, nil, nil, nil)
	if p.Digest == "" || p.Digest != same.Digest || p.Digest == other.Digest || p.Done {
		t.Fatalf("digests %q %q %q, done %v", p.Digest, same.Digest, other.Digest, p.Done)
	}
	if changed, err := l.RecordRun(p.Digest, true); err != nil || !changed {
		t.Fatalf("check mode record: %v %v", changed, err)
	}
	if done, _ := l.RunDone(p.Digest); done {
		t.Fatal("check mode recorded it")
	}
	if changed, err := l.RecordRun(p.Digest, false); err != nil || !changed {
		t.Fatalf("record: %v %v", changed, err)
	}
	if changed, _ := l.RecordRun(p.Digest, false); changed {
		t.Error("recorded twice")
	}
	if again, _ := l.PlanRun("upgrade_run", []string{"overcloud-novacompute-0"}, nil, []string{"a", "b"}, nil); !again.Done {
		t.Error("not done after it was recorded")
	}
	if st, _ := os.Stat(l.Runs()); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}

	// The converge: the recorded run is done, any other refused.
	if _, err := l.RecordDeploy(strings.Repeat("c", 64), lifecycle.UpgradeConverge, false); err != nil {
		t.Fatal(err)
	}
	l.WriteStatus(Status{Status: StatusSuccess, Stage: lifecycle.UpgradeConverge}, false)
	if after, err := l.PlanRun("upgrade_run", []string{"overcloud-novacompute-0"}, nil, []string{"a", "b"}, nil); err != nil || !after.Done {
		t.Errorf("the upgrade's own run after its converge: %+v %v", after, err)
	}
	if _, err := l.PlanRun("upgrade_run", []string{"overcloud-novacompute-1"}, nil, nil, nil); err == nil ||
		!strings.Contains(err.Error(), "the last deploy was an upgrade converge") {
		t.Errorf("another upgrade run after the converge: %v", err)
	}
	if _, err := l.PlanRun("update_run", []string{"overcloud-novacompute-0"}, nil, nil, nil); err == nil {
		t.Error("an update run after the converge")
	}

	// A new prepare forgets them (check mode says so and keeps them).
	if changed, _ := l.RecordDeploy(strings.Repeat("d", 64), lifecycle.UpgradePrepare, true); !changed {
		t.Error("check mode: a new prepare would change nothing")
	}
	if done, _ := l.RunDone(p.Digest); !done {
		t.Error("check mode forgot the runs")
	}
	l.RecordDeploy(strings.Repeat("d", 64), lifecycle.UpgradePrepare, false)
	if done, _ := l.RunDone(p.Digest); done {
		t.Error("a new prepare kept the runs of the last one")
	}
	if _, err := l.RecordRun("../x", false); err == nil {
		t.Error("a bad digest was recorded")
	}
}

// The lifecycle environment comes from templates_dir, which must hold it.
func TestLifecycleEnvironment(t *testing.T) {
	tht := t.TempDir()
	os.MkdirAll(filepath.Join(tht, "environments", "lifecycle"), 0o755)
	os.WriteFile(filepath.Join(tht, "environments", "lifecycle", "update-prepare.yaml"), []byte("parameter_defaults: {}\n"), 0o644)
	for _, tc := range []struct{ stage, dir, want, err string }{
		{lifecycle.Deploy, "", "", ""},
		{"", tht, "", ""},
		{lifecycle.UpdatePrepare, tht, filepath.Join(tht, "environments/lifecycle/update-prepare.yaml"), ""},
		{lifecycle.UpgradePrepare, tht, "", "templates_dir " + tht},
		{lifecycle.UpdatePrepare, "", "", "templates_dir is required for an update prepare"},
		{"upgrade-everything", tht, "", `stage "upgrade-everything" is not one of`},
	} {
		got, err := LifecycleEnvironment(tc.stage, tc.dir)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) || got != tc.want {
			t.Errorf("LifecycleEnvironment(%q, %q) = %q, %v; want %q, %q", tc.stage, tc.dir, got, err, tc.want, tc.err)
		}
	}
}

// The lifecycle environment goes where tripleoclient puts it: after the
// resource registry it adds itself, first among the -e files.
func TestPlaceLifecycle(t *testing.T) {
	const life = "/tht/environments/lifecycle/update-prepare.yaml"
	for _, tc := range []struct {
		envs, want []string
		life       string
	}{
		{[]string{"/tht/overcloud-resource-registry-puppet.yaml", "/e/a.yaml"}, []string{"/tht/overcloud-resource-registry-puppet.yaml", life, "/e/a.yaml"}, life},
		{[]string{"/s/overcloud-resource-registry.yaml"}, []string{"/s/overcloud-resource-registry.yaml", life}, life},
		{[]string{"/e/a.yaml", "/tht/overcloud-resource-registry-puppet.yaml"}, []string{life, "/e/a.yaml", "/tht/overcloud-resource-registry-puppet.yaml"}, life},
		{nil, []string{life}, life},
		{[]string{"/e/a.yaml"}, []string{"/e/a.yaml"}, ""},
	} {
		if got := PlaceLifecycle(tc.envs, tc.life); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("PlaceLifecycle(%v) = %v, want %v", tc.envs, got, tc.want)
		}
	}
}
