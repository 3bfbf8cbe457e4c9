package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// overcloud_export: check mode writes nothing; the first run writes, the
// second is unchanged; another export over it is refused (naming
// export_file) unless force_overwrite; the diff hides the passwords; its
// options do not apply to other actions.
func TestOvercloudExport(t *testing.T) {
	wd := filepath.Join(t.TempDir(), "overcloud-deploy", "overcloud")
	if r := call(t, map[string]any{"work_dir": wd, "action": "prepare"}); r["failed"] == true {
		t.Fatal(r["msg"])
	}
	file := filepath.Join(wd, "overcloud-export.yaml")
	for _, tc := range []struct {
		name    string
		args    map[string]any
		failed  bool
		changed bool
		msg     string
		exists  bool
		ceph    bool
	}{
		{name: "check and diff", args: map[string]any{"_ansible_check_mode": true, "_ansible_diff": true}, changed: true, msg: "would write"},
		{name: "first", changed: true, msg: "stack information exported to " + file, exists: true},
		{name: "second", changed: false, msg: "already holds this export", exists: true},
		{name: "without excludes, no force", args: map[string]any{"password_excludes": false}, failed: true,
			msg: "export_file " + file + " already exists", exists: true},
		{name: "without excludes, force", args: map[string]any{"password_excludes": false, "force_overwrite": true, "_ansible_diff": true},
			changed: true, exists: true, ceph: true},
		{name: "not for another action", args: map[string]any{"action": "export", "force_overwrite": true}, failed: true,
			msg: `parameter "force_overwrite" does not apply to action export`, exists: true, ceph: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"work_dir": wd, "action": "overcloud_export"}
			for k, v := range tc.args {
				args[k] = v
			}
			res := call(t, args)
			checkResult(t, res, tc.failed, tc.changed, tc.msg)
			b, err := os.ReadFile(file)
			if (err == nil) != tc.exists {
				t.Fatalf("%s exists: %v", file, err)
			}
			if got := strings.Contains(string(b), "CephClusterFSID"); tc.exists && got != tc.ceph {
				t.Errorf("CephClusterFSID exported: %v, want %v", got, tc.ceph)
			}
			if d, ok := res["diff"].(map[string]any); ok {
				pw, _ := os.ReadFile(filepath.Join(wd, "overcloud-passwords.yaml"))
				after, _ := d["after"].(string)
				if !strings.Contains(after, "AdminPassword: (secret, sha256 ") {
					t.Errorf("diff after:\n%s", after)
				}
				for _, line := range strings.Split(string(pw), "\n") {
					if v := strings.TrimSpace(line[strings.Index(line, ":")+1:]); strings.HasPrefix(line, "  AdminPassword:") && strings.Contains(after, v) {
						t.Errorf("the diff shows AdminPassword's value")
					}
				}
			} else if tc.args["_ansible_diff"] == true {
				t.Errorf("no diff: %v", res)
			}
		})
	}
}

// overcloud_export_ceph: a stack that deployed no Ceph is refused before
// anything is written; with cephadm's client file it writes the Ceph
// export, whose diff hides the cephx key; password_excludes does not apply.
func TestOvercloudExportCeph(t *testing.T) {
	wd := filepath.Join(t.TempDir(), "overcloud-deploy", "overcloud")
	file := filepath.Join(wd, "ceph-export-overcloud.yaml")
	res := call(t, map[string]any{"work_dir": wd, "action": "overcloud_export_ceph"})
	if msg, _ := res["msg"].(string); res["failed"] != true || !strings.Contains(msg, "deployed no Ceph") {
		t.Fatalf("no Ceph: %v", res)
	}
	if _, err := os.Stat(file); err == nil {
		t.Fatalf("a refused Ceph export wrote %s", file)
	}
	for p, s := range map[string]string{
		filepath.Join(wd, "config-download", "overcloud", "cephadm", "log"): "",
		filepath.Join(wd, "ceph_client.yml"): "tripleo_ceph_client_cluster: ceph\ntripleo_ceph_client_fsid: f\n" +
			"external_cluster_mon_ips: 172.16.1.11\nkeys: [{name: client.openstack, key: AQBsecret}]\n",
	} {
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	res = call(t, map[string]any{"work_dir": wd, "action": "overcloud_export_ceph", "_ansible_diff": true})
	if res["failed"] == true || res["changed"] != true {
		t.Fatalf("Ceph export: %v", res)
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), "CephExternalMultiConfig") || !strings.Contains(string(b), "AQBsecret") {
		t.Errorf("%s:\n%s", file, b)
	}
	if d, _ := res["diff"].(map[string]any); d == nil || strings.Contains(d["after"].(string), "AQBsecret") {
		t.Errorf("diff %v", res["diff"])
	}
	res = call(t, map[string]any{"work_dir": wd, "action": "overcloud_export_ceph", "password_excludes": false})
	if msg, _ := res["msg"].(string); res["failed"] != true || !strings.Contains(msg, `"password_excludes" does not apply`) {
		t.Errorf("password_excludes with the Ceph export: %v", res["msg"])
	}
}
