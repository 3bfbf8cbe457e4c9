package workdir

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// fingerprintRE is what DeployInputs holds: a sha256, hex.
var fingerprintRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ReadFingerprint returns the fingerprint of the inputs of the last
// successful deploy, while that deploy is also the last one the working
// dir recorded: "" when there is none, when the file holds something else,
// or when the deployment status is not DEPLOY_SUCCESS (a deploy started
// since failed, was interrupted or is recorded DEPLOYING, or the status
// file is missing or unreadable as YAML). Such a deploy may have written
// the working dir (outputs, config-download) and the nodes, so the inputs
// that succeeded before it no longer describe them: the next deploy runs
// and rewrites both.
//
// The fingerprint file is read first, through the working dir's guards,
// so that one replaced by a symlink or a FIFO is refused whatever the
// status says; the status file, read the same way, when it holds one.
func (l Layout) ReadFingerprint() (string, error) {
	b, err := readFile(l.DeployInputs(), "deploy inputs fingerprint")
	if isNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if !fingerprintRE.MatchString(s) {
		return "", nil
	}
	if ok, err := l.lastDeploySucceeded(); !ok || err != nil {
		return "", err
	}
	return s, nil
}

// WriteFingerprint records the fingerprint of a successful deploy's
// inputs (atomically, mode 0600) and reports whether it changed. In check
// mode nothing is written.
func (l Layout) WriteFingerprint(fp string, check bool) (bool, error) {
	if !fingerprintRE.MatchString(fp) {
		return false, fmt.Errorf("fingerprint %q is not a sha256 in hex (64 characters 0-9a-f)", fp)
	}
	b := []byte(fp + "\n")
	if fsutil.SameContent(l.DeployInputs(), b, fsutil.SecretFileMode) {
		return false, nil
	}
	if check {
		return true, nil
	}
	if _, err := l.Ensure(); err != nil {
		return false, err
	}
	if err := fsutil.WriteFileAtomic(l.DeployInputs(), b, fsutil.SecretFileMode); err != nil {
		return false, fmt.Errorf("recording the deploy's inputs: %w", err)
	}
	return true, nil
}

// lastDeploySucceeded tells whether the deployment status file says
// DEPLOY_SUCCESS. A missing file, or one that is not the status YAML, is
// not a success (and no error: the next deploy rewrites it); a file the
// working dir's guards refuse (a symlink, another owner's) is an error.
func (l Layout) lastDeploySucceeded() (bool, error) {
	s, err := l.PreviousStatus()
	if err != nil || s == nil {
		return false, err
	}
	return s.Status == StatusSuccess, nil
}
