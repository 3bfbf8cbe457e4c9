package robustness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/backup"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
)

// The bad inputs of backup and restore (issue 30): each refused before
// anything is written, naming the variable.

// deployedWorkDir is workDir with what a deploy writes: the passwords
// and the status.
func deployedWorkDir(s *sandbox) string {
	return workDir(s, wdNodes, map[string]string{
		"overcloud-passwords.yaml":         "parameter_defaults:\n  AdminPassword: s3cr3t\n",
		"overcloud-deployment_status.yaml": "deployment_status: DEPLOY_SUCCESS\n",
	})
}

// anArchive backs a deployed working dir of stack up into the sandbox
// (as the backup action does) and returns the archive's path.
func anArchive(s *sandbox, stack string) string {
	s.t.Helper()
	wd := deployedWorkDir(s)
	if stack != "overcloud" {
		for _, n := range []string{"passwords.yaml", "deployment_status.yaml"} {
			os.Rename(filepath.Join(wd, "overcloud-"+n), filepath.Join(wd, stack+"-"+n))
		}
	}
	l, err := workdir.New(wd, stack)
	if err != nil {
		s.t.Fatal(err)
	}
	res, err := backup.Backup(context.Background(), backup.Options{Layout: l, Dir: s.dir("backups", 0o700), Now: time.Now()})
	if err != nil {
		s.t.Fatal(err)
	}
	return res.File
}

func backupCases() []badCase {
	return []badCase{
		{name: "backup of a working dir that is not ours", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			s.file("notours/notes.txt", "mine\n", 0o600)
			os.Chmod(s.path("notours"), 0o700)
			return a{"work_dir": s.path("notours"), "action": "backup", "backup_dir": s.path("backups")}, ""
		}, want: []string{"work_dir", "notours", "not a work_dir this collection made"}},
		{name: "backup of a working dir without a deployment", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			return a{"work_dir": workDir(s, wdNodes, nil), "action": "backup", "backup_dir": s.path("backups")}, ""
		}, want: []string{"work_dir", "no deployment of stack overcloud", "stack_name"}},
		{name: "backup with a dump that does not match its checksum", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			wd := deployedWorkDir(s)
			s.file("wd/heat-launcher/heat-db-20261127T000000.000000Z.sql", "-- changed\n", 0o600)
			s.file("wd/heat-launcher/heat-db-20261127T000000.000000Z.sql.sha256", strings.Repeat("0", 64)+"  x\n", 0o600)
			os.Chmod(s.path("wd/heat-launcher"), 0o700)
			return a{"work_dir": wd, "action": "backup", "backup_dir": s.path("backups")}, ""
		}, want: []string{"work_dir", "heat-db-20261127T000000.000000Z.sql cannot be verified", "refusing"}},
		{name: "restore of an archive of another stack", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			return a{"work_dir": s.path("new", "dcn0"), "stack": "dcn0", "action": "restore", "backup_file": anArchive(s, "central")}, ""
		}, want: []string{"stack_name dcn0", "backup of stack central"}},
		{name: "restore over an existing deployment", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			f := anArchive(s, "overcloud")
			return a{"work_dir": s.path("wd"), "action": "restore", "backup_file": f}, ""
		}, want: []string{"work_dir", "not empty", "never over an existing deployment"}},
		{name: "restore of a truncated archive", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			f := anArchive(s, "overcloud")
			b, _ := os.ReadFile(f)
			os.WriteFile(f, b[:len(b)/2], 0o600)
			return a{"work_dir": s.path("new", "overcloud"), "action": "restore", "backup_file": f}, ""
		}, want: []string{"backup_file", "truncated or was changed", "nothing was written"}},
		{name: "restore of a truncated archive with a checksum made for it", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			f := anArchive(s, "overcloud")
			b, _ := os.ReadFile(f)
			b = b[:len(b)-30]
			os.WriteFile(f, b, 0o600)
			sum := sha256.Sum256(b)
			os.WriteFile(f+backup.SumSuffix, []byte(hex.EncodeToString(sum[:])+"  x\n"), 0o600)
			return a{"work_dir": s.path("new", "overcloud"), "action": "restore", "backup_file": f}, ""
		}, want: []string{"backup_file", "truncated"}},
		{name: "restore of an archive without its checksum", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			f := anArchive(s, "overcloud")
			os.Remove(f + backup.SumSuffix)
			return a{"work_dir": s.path("new", "overcloud"), "action": "restore", "backup_file": f}, ""
		}, want: []string{"backup_file", "has no checksum"}},
		{name: "restore of a FIFO", module: "overcloud_workdir", setup: func(s *sandbox) (a, string) {
			f := s.fifo("backups/x.tar.gz")
			s.file("backups/x.tar.gz.sha256", strings.Repeat("0", 64)+"  x\n", 0o600)
			return a{"work_dir": s.path("new", "overcloud"), "action": "restore", "backup_file": f}, ""
		}, want: []string{"backup_file", "is a FIFO"}},
	}
}

// TestHandCasesBackup runs backupCases with the hand cases (the suite's
// -run TestHandCases selects it).
func TestHandCasesBackup(t *testing.T) {
	for _, c := range backupCases() {
		t.Run(c.name, func(t *testing.T) {
			counted.hand.Add(1)
			r := c.check(t)
			if strings.Contains(r.stdout+r.stderr, "s3cr3t") {
				t.Errorf("a password value in the output: %s", truncate(r.stdout, 600))
			}
			t.Logf("%s in %s: %s", c.module, r.elapsed.Round(time.Millisecond), truncate(r.msg(), 300))
		})
	}
}
