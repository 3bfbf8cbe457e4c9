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
// successful deploy ("" when there is none, or when the file holds
// something else: the next deploy then runs and rewrites it).
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
