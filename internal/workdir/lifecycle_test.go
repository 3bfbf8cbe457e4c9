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
			p, err := l.PlanRun(tc.run, tc.limit, tc.playbooks)
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

// A run is recorded once it succeeded; the same run after the same deploy
// is done, another run or the same after another deploy is not.
func TestRunRecords(t *testing.T) {
	l := lifecycleFixture(t, lifecycle.UpdatePrepare, StatusSuccess, "")
	p, err := l.PlanRun("update_run", []string{"overcloud-novacompute-0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := l.RunDigest(p, []string{"b", "a"}, nil)
	d1same, _ := l.RunDigest(p, []string{"a", "b"}, nil)
	d2, _ := l.RunDigest(p, nil, nil)
	if d1 == "" || d1 != d1same || d1 == d2 {
		t.Fatalf("digests %q %q %q", d1, d1same, d2)
	}
	if done, _ := l.RunDone(d1); done {
		t.Fatal("done before it ran")
	}
	if changed, err := l.RecordRun(d1, true); err != nil || !changed {
		t.Fatalf("check mode record: %v %v", changed, err)
	}
	if done, _ := l.RunDone(d1); done {
		t.Fatal("check mode recorded it")
	}
	if changed, err := l.RecordRun(d1, false); err != nil || !changed {
		t.Fatalf("record: %v %v", changed, err)
	}
	if changed, _ := l.RecordRun(d1, false); changed {
		t.Error("recorded twice")
	}
	if done, _ := l.RunDone(d1); !done {
		t.Error("not done after it was recorded")
	}
	if done, _ := l.RunDone(d2); done {
		t.Error("another run counts as done")
	}
	if st, _ := os.Stat(l.Runs()); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	// A new prepare: the run's digest changes, earlier records are dropped.
	l.WriteFingerprint(strings.Repeat("b", 64), false)
	d3, _ := l.RunDigest(p, []string{"a", "b"}, nil)
	if d3 == d1 {
		t.Error("the digest ignores the deploy it runs after")
	}
	if done, _ := l.RunDone(d1); done {
		t.Error("a record of an earlier deploy counts")
	}
	l.RecordRun(d3, false)
	if b, _ := os.ReadFile(l.Runs()); strings.Count(string(b), "\n") != 1 {
		t.Errorf("earlier records kept:\n%s", b)
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
