package workdir

import (
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// The deployment statuses python-tripleoclient writes (v1/overcloud_deploy.py
// and workflows/deployment.py set_deployment_status): DEPLOYING when a
// deploy starts, DEPLOY_SUCCESS or DEPLOY_FAILED when it ends.
const (
	StatusDeploying = "DEPLOYING"
	StatusSuccess   = "DEPLOY_SUCCESS"
	StatusFailed    = "DEPLOY_FAILED"
)

// Statuses lists them (the module's choices).
var Statuses = []string{StatusDeploying, StatusSuccess, StatusFailed}

// Status is the content of <stack>-deployment_status.yaml. tripleoclient
// writes {deployment_status: STATUS} (utils.update_deployment_status) and
// reads only that key (get_deployment_status); Phase is ours: the phase
// the deploy is in, or was in when it failed.
type Status struct {
	Status string `yaml:"deployment_status"`
	Phase  string `yaml:"deployment_phase,omitempty"`
	// Stage is ours: the lifecycle stage of the deploy (lifecycle.Stages;
	// empty in files from before, a plain deploy), which the update and
	// upgrade runs check.
	Stage string `yaml:"deployment_stage,omitempty"`
}

// ErrStatusFormat is in ReadStatus's error when the status file is not the
// status YAML (the next deploy rewrites it).
var ErrStatusFormat = errors.New("not a deployment status file")

// ReadStatus reads the status file; nil when there is none.
func (l Layout) ReadStatus() (*Status, error) {
	b, err := readFile(l.Status(), "deployment status")
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s Status
	if err := yaml.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("deployment status %s: %w: %v", l.Status(), ErrStatusFormat, err)
	}
	return &s, nil
}

// StatusUnreadable is what PreviousStatus says of a status file that is
// not the status YAML.
const StatusUnreadable = "UNREADABLE"

// PreviousStatus is the recorded status as a deploy reports it before it
// writes its own: nil when there is none, Status StatusUnreadable when the
// file is not the status YAML (the deploy rewrites it). A file the working
// dir's guards refuse is an error.
func (l Layout) PreviousStatus() (*Status, error) {
	s, err := l.ReadStatus()
	if errors.Is(err, ErrStatusFormat) {
		return &Status{Status: StatusUnreadable}, nil
	}
	return s, err
}

// WriteStatus writes the status file (mode 0600, atomically) and reports
// whether it changed. In check mode nothing is written.
func (l Layout) WriteStatus(s Status, check bool) (bool, error) {
	ok := false
	for _, v := range Statuses {
		ok = ok || v == s.Status
	}
	if !ok {
		return false, fmt.Errorf("deployment status %q is not one of %v", s.Status, Statuses)
	}
	b, err := yaml.Marshal(s)
	if err != nil {
		return false, err
	}
	if fsutil.SameContent(l.Status(), b, fsutil.SecretFileMode) {
		return false, nil
	}
	if check {
		return true, nil
	}
	if _, err := l.Ensure(); err != nil {
		return false, err
	}
	if err := fsutil.WriteFileAtomic(l.Status(), b, fsutil.SecretFileMode); err != nil {
		return false, fmt.Errorf("writing the deployment status: %w", err)
	}
	return true, nil
}
