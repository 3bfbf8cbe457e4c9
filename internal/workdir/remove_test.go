package workdir

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
)

// removeFixture makes a deployed working dir of stack overcloud: what a
// deploy leaves, a symlink to a file outside, and the lock file.
func removeFixture(t *testing.T) (Layout, string) {
	t.Helper()
	base := t.TempDir()
	l, err := New(filepath.Join(base, "overcloud-deploy", "overcloud"), "overcloud")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Ensure(); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(base, "operator-notes.txt")
	files := map[string]string{
		l.Passwords():                           "parameter_defaults: {}\n",
		l.Status():                              "deployment_status: DEPLOY_SUCCESS\n",
		l.Output("KeystoneURL"):                 "http://192.0.2.1:5000\n",
		filepath.Join(l.ConfigDownload(), "a"):  "x\n",
		filepath.Join(l.HeatDir(), "heat.conf"): "[DEFAULT]\n",
		outside:                                 "keep me\n",
		l.LockPath():                            "",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(l.Dir, "notes")); err != nil {
		t.Fatal(err)
	}
	return l, outside
}

func TestRemove(t *testing.T) {
	ctx := context.Background()
	all := []string{"config-download", "heat-launcher", "notes", "outputs", "overcloud-deployment_status.yaml", "overcloud-passwords.yaml"}
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, l Layout)
		check   bool
		wantErr string // nothing is removed
		want    []string
		after   func(t *testing.T, l Layout)
	}{
		{name: "deployed working dir", want: all},
		{name: "check mode removes nothing", check: true, want: all},
		{name: "launch record", wantErr: "records a launch of Heat", setup: launchRecord},
		{name: "launch record in check mode", check: true, want: all, setup: launchRecord},
		{name: "heat_dir a symlink", want: all, setup: func(t *testing.T, l Layout) {
			// Its target holds a launch record: not ours to look at or remove.
			target := filepath.Join(filepath.Dir(filepath.Dir(l.Dir)), "elsewhere")
			if err := os.Rename(l.HeatDir(), target); err != nil {
				t.Fatal(err)
			}
			writeLaunchRecord(t, target)
			if err := os.Symlink(target, l.HeatDir()); err != nil {
				t.Fatal(err)
			}
		}, after: func(t *testing.T, l Layout) {
			if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(l.Dir)), "elsewhere", "launch.json")); err != nil {
				t.Errorf("the symlinked heat_dir's target: %v", err)
			}
		}},
		{name: "another stack's passwords", wantErr: "also holds the deployment of stack(s) central", setup: func(t *testing.T, l Layout) {
			os.WriteFile(filepath.Join(l.Dir, "central-passwords.yaml"), nil, 0o600)
		}},
		{name: "another stack's config-download", wantErr: "also holds the deployment of stack(s) dcn0", setup: func(t *testing.T, l Layout) {
			os.MkdirAll(filepath.Join(l.Dir, ConfigDownloadDir, "dcn0"), 0o700)
		}},
		{name: "standalone's passwords name", want: append(append([]string{}, all...), "tripleo-overcloud-passwords.yaml"), setup: func(t *testing.T, l Layout) {
			os.WriteFile(filepath.Join(l.Dir, "tripleo-overcloud-passwords.yaml"), nil, 0o600)
		}},
		{name: "another task's directory", wantErr: "is the heat_dir of another task", setup: func(t *testing.T, l Layout) {
			os.WriteFile(filepath.Join(l.Dir, pathguard.Marker), pathguard.MarkerContent(pathguard.KindHeatDir), 0o600)
		}},
		{name: "not ours", wantErr: "is not a work_dir this collection made", setup: func(t *testing.T, l Layout) {
			for _, p := range []string{pathguard.Marker, "heat-launcher", "overcloud-passwords.yaml", "overcloud-deployment_status.yaml", "outputs", "config-download"} {
				os.RemoveAll(filepath.Join(l.Dir, p))
			}
			os.WriteFile(filepath.Join(l.Dir, "thesis.tex"), nil, 0o600)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, outside := removeFixture(t)
			if tc.setup != nil {
				tc.setup(t, l)
			}
			before, _ := os.ReadDir(l.Dir)
			r, err := l.Remove(ctx, tc.check, time.Second)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Remove: %v, want an error with %q", err, tc.wantErr)
				}
				if after, _ := os.ReadDir(l.Dir); len(after) != len(before) {
					t.Errorf("a refused Remove removed something: %d entries before, %d after", len(before), len(after))
				}
				return
			}
			if err != nil {
				t.Fatalf("Remove: %v", err)
			}
			if (r.Heat != nil) != (tc.name == "launch record in check mode") {
				t.Errorf("Remove: Heat %v", r.Heat)
			}
			if !r.Existed || !reflect.DeepEqual(r.Entries, tc.want) {
				t.Errorf("Remove: existed %v, entries %v, want %v", r.Existed, r.Entries, tc.want)
			}
			if r.Files < 6 || r.Bytes == 0 {
				t.Errorf("Remove counted %d files, %d bytes", r.Files, r.Bytes)
			}
			_, statErr := os.Lstat(l.Dir)
			if tc.check != (statErr == nil) {
				t.Errorf("check mode %v: work_dir stat after Remove: %v", tc.check, statErr)
			}
			if b, err := os.ReadFile(outside); err != nil || string(b) != "keep me\n" {
				t.Errorf("the symlink's target outside the working dir: %q, %v", b, err)
			}
			if _, err := os.Stat(filepath.Dir(l.Dir)); err != nil {
				t.Errorf("the working dir's parent: %v", err)
			}
			if tc.after != nil {
				tc.after(t, l)
			}
			if tc.check {
				return
			}
			again, err := l.Remove(ctx, false, time.Second)
			if err != nil || again.Existed {
				t.Errorf("Remove again: existed %v, %v", again.Existed, err)
			}
		})
	}
}

// launchRecord records a launch of Heat in l's heat_dir.
func launchRecord(t *testing.T, l Layout) { writeLaunchRecord(t, l.HeatDir()) }

// writeLaunchRecord records a launch of Heat in heat_dir dir.
func writeLaunchRecord(t *testing.T, dir string) {
	d, _ := heatdir.At(dir)
	rec := &heatdir.Record{State: heatdir.Running, HeatType: "native", LaunchID: "x", Endpoint: "http://127.0.0.1:1/v1/admin"}
	if err := d.WriteRecord(rec); err != nil {
		t.Fatal(err)
	}
}

// A relative work_dir (the command line's) still has its launch record
// looked at: the heat_dir is made absolute, not skipped.
func TestRemoveRelativeWorkDir(t *testing.T) {
	l, _ := removeFixture(t)
	launchRecord(t, l)
	wd, _ := os.Getwd()
	if err := os.Chdir(filepath.Dir(l.Dir)); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	rel, err := New(filepath.Base(l.Dir), l.Stack)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rel.Remove(context.Background(), false, time.Second); err == nil || !strings.Contains(err.Error(), "records a launch of Heat") {
		t.Fatalf("Remove of a relative work_dir with a launch recorded: %v", err)
	}
	if _, err := os.Stat(l.Passwords()); err != nil {
		t.Errorf("the refused Remove removed the passwords: %v", err)
	}
}
