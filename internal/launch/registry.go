package launch

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/container"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/native"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/pod"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
)

// The launch backends: one line each. A backend is a package that declares
// itself (backend.Declaration: heat_type, options and their defaults,
// identity in the launch record) and implements backend.Backend (its
// database lifecycle included); the module's options, the refusals of an
// option given with a heat_type that does not use it, the defaults, and
// the fingerprint follow from the declarations. README "Layout" says what
// else a new backend takes (its documentation, which tests check).
var builtin = []backend.Declaration{
	native.Declaration,
	container.Declaration,
	pod.Declaration,
}

// Heat types of the built-in backends.
const (
	Native    = native.HeatType
	Container = container.HeatType
	Pod       = pod.HeatType
)

var (
	regMu    sync.RWMutex
	registry = builtin
)

// Register adds a backend to the registry, for tests (a backend of the
// collection is a line of builtin): it returns the function that removes
// it again. A declaration that conflicts with the registered ones (its
// heat_type taken, an option declared anew under a registered name) is
// refused.
func Register(d backend.Declaration) (unregister func(), err error) {
	regMu.Lock()
	defer regMu.Unlock()
	next := append(append([]backend.Declaration(nil), registry...), d)
	if err := backend.Check(next); err != nil {
		return nil, err
	}
	prev := registry
	registry = next
	return func() {
		regMu.Lock()
		defer regMu.Unlock()
		registry = prev
	}, nil
}

// declarations returns the registered backends, in registry order.
func declarations() []backend.Declaration {
	regMu.RLock()
	defer regMu.RUnlock()
	return append([]backend.Declaration(nil), registry...)
}

// declaration returns the backend of heatType.
func declaration(heatType string) (backend.Declaration, bool) {
	for _, d := range declarations() {
		if d.HeatType == heatType {
			return d, true
		}
	}
	return backend.Declaration{}, false
}

// HeatTypes lists the registered heat types, sorted.
func HeatTypes() []string {
	var out []string
	for _, d := range declarations() {
		out = append(out, d.HeatType)
	}
	sort.Strings(out)
	return out
}

// backendOptions lists the options of every registered backend, once each,
// in the order they are declared, and which heat types use each.
func backendOptions() ([]*backend.Option, map[string][]string) {
	var opts []*backend.Option
	users := map[string][]string{}
	for _, d := range declarations() {
		for _, o := range d.Options {
			if users[o.Name] == nil {
				opts = append(opts, o)
			}
			users[o.Name] = append(users[o.Name], d.HeatType)
		}
	}
	return opts, users
}

// BackendParams are the module options of the registered backends (the
// module's spec adds them to those every backend takes).
func BackendParams() []module.Param {
	opts, _ := backendOptions()
	out := make([]module.Param, 0, len(opts))
	for _, o := range opts {
		out = append(out, o.Param)
	}
	return out
}

// backendValues checks the backend options given (opts) against the
// declaration d, when strict (a launch): one that another backend uses is
// refused, saying which; otherwise (a stop) it is left out. It returns
// them with the declared defaults of d's others. A zero value ("" or 0)
// counts as not given.
func backendValues(d backend.Declaration, opts backend.Values, strict bool) (backend.Values, error) {
	all, users := backendOptions()
	out := backend.Values{}
	var refused []string
	for _, o := range all {
		v, given := opts[o.Name]
		if given && isZero(v) {
			given = false
		}
		switch {
		case given && !d.Has(o.Name):
			msg := fmt.Sprintf("%s is only used with heat_type: %s", o.Name, orList(users[o.Name]))
			if o.Why != "" {
				msg += " " + o.Why
			}
			refused = append(refused, msg)
		case given:
			out[o.Name] = v
		case d.Has(o.Name) && o.Default != nil:
			out[o.Name] = o.Default
		}
	}
	for name := range opts {
		if users[name] == nil {
			refused = append(refused, fmt.Sprintf("%s is not an option of any heat_type", name))
		}
	}
	if len(refused) > 0 && strict {
		sort.Strings(refused)
		return nil, errors.New(strings.Join(refused, "; "))
	}
	return out, nil
}

func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case int:
		return x == 0
	}
	return false
}

// orList is "a", "a or b", "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
