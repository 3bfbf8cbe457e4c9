package podheat

import (
	"strings"
	"testing"
)

func TestNamesDifferPerHeatDir(t *testing.T) {
	a, b := Name("/srv/a/heat-launcher"), Name("/srv/b/heat-launcher")
	if a == b || !strings.HasPrefix(a, "ephemeral-heat-") {
		t.Errorf("names %q %q", a, b)
	}
	if Name("/srv/a/heat-launcher/") != a {
		t.Errorf("a trailing slash changes the name")
	}
}
