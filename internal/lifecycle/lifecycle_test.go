package lifecycle

import (
	"strings"
	"testing"
)

// The facts are python-tripleoclient stable/wallaby's constants.py and its
// v1/overcloud_update.py, overcloud_upgrade.py, overcloud_external_*.py.
func TestRuns(t *testing.T) {
	for _, tc := range []struct {
		name      string
		books     string
		after     string
		limit     bool
		blacklist bool
	}{
		{"update_run", "update_steps_playbook.yaml", UpdatePrepare, true, true},
		{"external_update_run", "external_update_steps_playbook.yaml", UpdatePrepare, false, false},
		{"upgrade_run", "upgrade_steps_playbook.yaml deploy_steps_playbook.yaml post_upgrade_steps_playbook.yaml", UpgradePrepare, true, false},
		{"external_upgrade_run", "external_upgrade_steps_playbook.yaml", UpgradePrepare, false, false},
	} {
		r, err := FindRun(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(r.Playbooks, " ") != tc.books || r.After != tc.after || r.LimitRequired != tc.limit || r.ExcludeBlacklisted != tc.blacklist {
			t.Errorf("%s: %+v", tc.name, r)
		}
	}
	if _, err := FindRun("update"); err == nil || !strings.Contains(err.Error(), "external_update_run, external_upgrade_run, update_run, upgrade_run") {
		t.Errorf("an unknown run: %v", err)
	}
}

func TestEnvironments(t *testing.T) {
	for stage, want := range map[string]string{
		Deploy:          "",
		UpdatePrepare:   "environments/lifecycle/update-prepare.yaml",
		UpgradePrepare:  "environments/lifecycle/upgrade-prepare.yaml",
		UpgradeConverge: "environments/lifecycle/upgrade-converge.yaml",
	} {
		if got := Environment(stage); got != want {
			t.Errorf("Environment(%s) = %q, want %q", stage, got, want)
		}
	}
	if len(Forbidden(UpgradeConverge)) != 7 || len(Forbidden(UpgradePrepare)) != 0 {
		t.Errorf("forbidden: %v %v", Forbidden(UpgradeConverge), Forbidden(UpgradePrepare))
	}
	f := Forbidden(UpgradeConverge)
	f[0] = "changed"
	if Forbidden(UpgradeConverge)[0] == "changed" {
		t.Error("Forbidden hands out its own slice")
	}
}
