package launch

import (
	"sort"

	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/native"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/podheat"
)

// Heat types: the launch backends. Adding one is a package implementing
// backend.Backend and a line here.
const (
	Native    = "native"
	Container = "container"
	Pod       = "pod"
)

var backends = map[string]func() backend.Backend{
	Native:    native.New,
	Container: podheat.NewContainer,
	Pod:       podheat.NewPod,
}

// HeatTypes lists the registered heat types.
func HeatTypes() []string {
	out := make([]string, 0, len(backends))
	for t := range backends {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
