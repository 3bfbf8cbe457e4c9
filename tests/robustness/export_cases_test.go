package robustness

import (
	"testing"
	"time"
)

// exportCases are bad inputs of overcloud_workdir's overcloud_export and
// overcloud_export_ceph (issue 30): an export_file that is a FIFO, a
// directory or a symlink, in a directory others may write to, or one
// holding another export without force_overwrite; a passwords file, a
// group_vars/overcloud.json or a ceph_client.yml that is a FIFO. Each
// fails naming what is wrong, and nothing is written.
func exportCases() []badCase {
	export := func(extra a) func(s *sandbox) a {
		return func(s *sandbox) a {
			args := a{"work_dir": workDir(s, "", nil), "action": "overcloud_export"}
			for k, v := range extra {
				args[k] = v
			}
			return args
		}
	}
	return []badCase{
		{name: "export_file is a FIFO", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			return export(a{"export_file": s.fifo("out/x.yaml"), "force_overwrite": true})(s), ""
		}, want: []string{`export_file`, "refusing to touch it"}},
		{name: "export_file is a directory", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			return export(a{"export_file": s.dir("out/x.yaml", 0o700), "force_overwrite": true})(s), ""
		}, want: []string{`export_file`, "refusing to touch it"}},
		{name: "export_file is a symlink to the passwords", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			args := export(a{"force_overwrite": true})(s)
			pw := s.file("wd/overcloud-passwords.yaml", "parameter_defaults:\n  AdminPassword: x\n", 0o600)
			args["export_file"] = s.symlink("out/x.yaml", pw)
			return args, ""
		}, want: []string{`export_file`, "is a symlink"}},
		{name: "export_file in a directory others may write to", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			s.dir("shared", 0o777)
			return export(a{"export_file": s.path("shared", "x.yaml")})(s), ""
		}, want: []string{`export_file`, "other users may write to"}},
		{name: "export_file holds another export, no force_overwrite", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			return export(a{"export_file": s.file("out/x.yaml", "parameter_defaults: {AdminPassword: old}\n", 0o600)})(s), ""
		}, want: []string{`export_file`, "already exists", "force_overwrite"}},
		{name: "passwords file is a FIFO", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			args := export(nil)(s)
			s.fifo("wd/overcloud-passwords.yaml")
			return args, ""
		}, want: []string{"overcloud-passwords.yaml", "FIFO"}},
		{name: "group_vars/overcloud.json is a FIFO", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			args := export(nil)(s)
			s.fifo("wd/config-download/overcloud/group_vars/overcloud.json")
			return args, ""
		}, want: []string{"overcloud.json", "FIFO"}},
		{name: "ceph_client.yml is a FIFO", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			args := export(nil)(s)
			args["action"] = "overcloud_export_ceph"
			s.dir("wd/config-download/overcloud/cephadm", 0o700)
			s.fifo("wd/ceph_client.yml")
			return args, ""
		}, want: []string{"ceph_client.yml", "FIFO"}},
	}
}

func TestHandCasesExport(t *testing.T) {
	for _, c := range exportCases() {
		t.Run(c.name, func(t *testing.T) {
			counted.hand.Add(1)
			r := c.check(t)
			t.Logf("%s in %s, %d MiB: %s", c.module, r.elapsed.Round(time.Millisecond), r.rss>>20, truncate(r.msg(), 300))
		})
	}
}
