package podheat

import "testing"

// RequirePodmanForTest is requirePodman for package podheat_test (tests that
// drive podheat through package launch): it fails the test when podman or
// the image is missing and returns the podman socket to use.
func RequirePodmanForTest(t *testing.T) string {
	t.Helper()
	requirePodman(t)
	return testSock
}
