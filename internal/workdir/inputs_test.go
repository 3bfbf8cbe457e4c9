package workdir

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// ReadFingerprint answers the recorded fingerprint only while the last
// deploy the working dir recorded succeeded: a deploy that failed or was
// interrupted since may have written the working dir and the nodes.
func TestReadFingerprintNeedsTheLastDeployToSucceed(t *testing.T) {
	fp := strings.Repeat("b", 64)
	tests := []struct {
		name   string
		status string // the status file's content; "" = none
		want   string
	}{
		{name: "last deploy succeeded", status: "deployment_status: DEPLOY_SUCCESS\n", want: fp},
		{name: "with our phase and stage", status: "deployment_status: DEPLOY_SUCCESS\ndeployment_phase: done\ndeployment_stage: update_prepare\n", want: fp},
		{name: "a later deploy failed", status: "deployment_status: DEPLOY_FAILED\ndeployment_phase: deploy steps\n", want: ""},
		{name: "a later deploy was interrupted", status: "deployment_status: DEPLOYING\ndeployment_phase: stack\n", want: ""},
		{name: "no status file", want: ""},
		{name: "a status file that is not the YAML", status: "deployment_status: [\n", want: ""},
		{name: "an empty status file", status: "\n", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := New(filepath.Join(t.TempDir(), "overcloud-deploy", "oc"), "oc")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.WriteFingerprint(fp, false); err != nil {
				t.Fatal(err)
			}
			if tc.status != "" {
				if err := os.WriteFile(l.Status(), []byte(tc.status), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := l.ReadFingerprint()
			if err != nil || got != tc.want {
				t.Errorf("ReadFingerprint() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// A status file the working dir's guards refuse is an error, not a
// silent "no fingerprint".
func TestReadFingerprintRefusesAForeignStatusFile(t *testing.T) {
	l, err := New(filepath.Join(t.TempDir(), "overcloud-deploy", "oc"), "oc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.WriteFingerprint(strings.Repeat("c", 64), false); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "status.yaml")
	os.WriteFile(target, []byte("deployment_status: DEPLOY_SUCCESS\n"), 0o600)
	if err := os.Symlink(target, l.Status()); err != nil {
		t.Fatal(err)
	}
	if got, err := l.ReadFingerprint(); err == nil {
		t.Errorf("ReadFingerprint() through a symlinked status file = %q, no error", got)
	}
}

// PreviousStatus reports what a deploy finds before writing its own
// status: nothing, the recorded one, UNREADABLE for a file that is not the
// status YAML; a file the guards refuse is an error.
func TestPreviousStatus(t *testing.T) {
	tests := []struct {
		name, content string // "" = no file
		symlink       bool
		want          *Status
		wantErr       bool
	}{
		{name: "none"},
		{name: "interrupted", content: "deployment_status: DEPLOYING\ndeployment_phase: stack\n",
			want: &Status{Status: StatusDeploying, Phase: "stack"}},
		{name: "failed with a stage", content: "deployment_status: DEPLOY_FAILED\ndeployment_phase: config-download\ndeployment_stage: update_prepare\n",
			want: &Status{Status: StatusFailed, Phase: "config-download", Stage: "update_prepare"}},
		{name: "not YAML", content: "deployment_status: [\n", want: &Status{Status: StatusUnreadable}},
		{name: "a symlink", content: "deployment_status: DEPLOY_SUCCESS\n", symlink: true, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := New(filepath.Join(t.TempDir(), "overcloud-deploy", "oc"), "oc")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Ensure(); err != nil {
				t.Fatal(err)
			}
			if tc.content != "" {
				path := l.Status()
				if tc.symlink {
					path = filepath.Join(t.TempDir(), "elsewhere.yaml")
					if err := os.Symlink(path, l.Status()); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := l.PreviousStatus()
			if (err != nil) != tc.wantErr {
				t.Fatalf("PreviousStatus() error %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("PreviousStatus() = %+v, want %+v", got, tc.want)
			}
		})
	}
}
