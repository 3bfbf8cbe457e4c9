package stack

import (
	"context"
	"sort"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
)

// maxFailureDepth bounds the walk through nested stacks.
const maxFailureDepth = 20

// Failures lists the deepest failed resources of a stack through its nested
// stacks, like "openstack stack failures list": a failed resource whose
// nested stack has failed resources is replaced by those. A failed stack
// with no failed resource (a timeout, a validation error) is reported as the
// stack itself.
func Failures(ctx context.Context, c *heatapi.Client, s *heatapi.Stack) ([]Failure, error) {
	out, err := failures(ctx, c, s.Ref(), s.Name, 0)
	if len(out) == 0 && isFailed(s.Status) {
		out = append(out, Failure{Path: s.Name, Type: "stack", Status: s.Status, Reason: s.StatusReason, PhysicalID: s.ID})
	}
	return out, err
}

func failures(ctx context.Context, c *heatapi.Client, ref heatapi.StackRef, path string, depth int) ([]Failure, error) {
	res, err := c.ListResources(ctx, ref, heatapi.ResourceListOpts{})
	if err != nil {
		return nil, err
	}
	sort.Slice(res, func(i, j int) bool { return res[i].Name < res[j].Name })
	var out []Failure
	var firstErr error
	for _, r := range res {
		if !strings.HasSuffix(r.Status, "_FAILED") {
			continue
		}
		p := path + "." + r.Name
		if nested, ok := r.NestedStack(); ok && depth < maxFailureDepth {
			sub, err := failures(ctx, c, nested, p, depth+1)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			if len(sub) > 0 {
				out = append(out, sub...)
				continue
			}
		}
		out = append(out, Failure{Path: p, Type: r.Type, Status: r.Status, Reason: r.StatusReason, PhysicalID: r.PhysicalID})
	}
	return out, firstErr
}
