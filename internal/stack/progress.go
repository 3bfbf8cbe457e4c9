package stack

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
)

// heartbeat is the longest a progress report stays silent.
const heartbeat = 30 * time.Second

// progress shows, in command-line mode, how many resources are done and the
// events since the operation started, nested stacks included.
type progress struct {
	r      *Request
	c      *heatapi.Client
	ref    heatapi.StackRef
	marker string
	start  time.Time
	last   string // last resource count line
	lastAt time.Time
	paths  map[string]string
}

func newProgress(r *Request, c *heatapi.Client, ref heatapi.StackRef, marker string, start time.Time) *progress {
	return &progress{r: r, c: c, ref: ref, marker: marker, start: start,
		paths: map[string]string{ref.ID: ref.Name}}
}

func (p *progress) elapsed() string {
	d := time.Since(p.start).Round(time.Second)
	return fmt.Sprintf("[%5s]", d)
}

// poll prints the new events and the resource count. Errors are ignored:
// progress is best effort. Events are read before the resources, so that
// every stack an event names is already in the resource list (its path is
// known).
func (p *progress) poll(ctx context.Context, action string) {
	if p.r.o.Progress == nil {
		return
	}
	var events []heatapi.Event
	for page := 0; page < 10; page++ {
		ev, err := p.c.ListEvents(ctx, p.ref, heatapi.EventListOpts{NestedDepth: NestedDepth, Marker: p.marker, SortDir: "asc", Limit: 100})
		if err != nil || len(ev) == 0 {
			break
		}
		events = append(events, ev...)
		p.marker = ev[len(ev)-1].ID
		if len(ev) < 100 {
			break
		}
	}
	res, err := p.c.ListResources(ctx, p.ref, heatapi.ResourceListOpts{NestedDepth: NestedDepth})
	if err == nil {
		p.learn(res)
	}
	for _, e := range events {
		p.r.progressf("%s %s %s %s", p.elapsed(), p.eventPath(e), e.Status, e.StatusReason)
	}
	if err != nil {
		return
	}
	done := 0
	for _, x := range res {
		switch {
		case action == "DELETE":
		case strings.HasSuffix(x.Status, "_COMPLETE") && !strings.HasPrefix(x.Status, "DELETE") && !strings.HasPrefix(x.Status, "INIT"):
			done++
		}
	}
	line := fmt.Sprintf("resources %d/%d complete", done, len(res))
	if action == "DELETE" {
		line = fmt.Sprintf("resources remaining: %d", len(res))
	}
	// Repeated at least every heartbeat, so a long wait still shows life.
	if line != p.last || time.Since(p.lastAt) >= heartbeat {
		p.last, p.lastAt = line, time.Now()
		p.r.progressf("%s %s", p.elapsed(), line)
	}
}

// learn maps nested stack ids to resource paths.
func (p *progress) learn(res []heatapi.Resource) {
	for pass := 0; pass < NestedDepth+1; pass++ {
		added := false
		for _, x := range res {
			n, ok := x.NestedStack()
			if !ok {
				continue
			}
			if _, known := p.paths[n.ID]; known {
				continue
			}
			s, ok := x.Stack()
			if !ok {
				continue
			}
			if parent, known := p.paths[s.ID]; known {
				p.paths[n.ID] = parent + "." + x.Name
				added = true
			}
		}
		if !added {
			return
		}
	}
}

func (p *progress) eventPath(e heatapi.Event) string {
	s, ok := e.Stack()
	if !ok {
		return e.ResourceName
	}
	base, known := p.paths[s.ID]
	if !known {
		base = s.Name
	}
	if e.ResourceName == s.Name || e.PhysicalID == s.ID {
		return base
	}
	return base + "." + e.ResourceName
}

func (p *progress) done(st *heatapi.Stack) {
	if p.r.o.Progress == nil {
		return
	}
	p.r.progressf("%s stack %s %s: %s", p.elapsed(), st.Name, st.Status, st.StatusReason)
}
