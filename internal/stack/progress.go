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

// progressShare bounds the part of the time progress asks Heat for events:
// after a read of the events that took d, the next waits 1/progressShare of
// the time since, so (progressShare-1)·d (heartbeat at most). Heat serves
// the API in the engine's process (heat-all): its time is the deploy's.
const progressShare = 20

// eventPage is the events asked per request, eventPages the requests per
// poll at most (the rest comes at the next poll; the final poll reads all).
const (
	eventPage  = 500
	eventPages = 20
)

// progress shows, in command-line mode and in the progress log, the events
// since the operation started, nested stacks included, and how many
// resources the operation has reached and completed, all from Heat's event
// list. It never lists the stack's resources through its nested stacks:
// Heat loads every nested stack (templates, environments) for that list,
// in the process that runs the deploy, and at every poll that grew with the
// deploy (a 5-node create took half again as long while it was followed).
type progress struct {
	r      *Request
	c      *heatapi.Client
	ref    heatapi.StackRef
	marker string
	start  time.Time
	last   string // last resource count line
	lastAt time.Time
	// nextAt is when the events may be read again (progressShare).
	nextAt time.Time
	// paths maps a stack's id or name to its resource path ("overcloud",
	// "overcloud.Compute.0"): a resource's event names its physical
	// resource, which for a nested stack is the stack's name (Heat names
	// it before creating it) and then its id.
	paths map[string]string
	// status is the latest status of each resource an event named.
	status map[resourceKey]string
}

// resourceKey is a resource of one stack of the tree.
type resourceKey struct{ stack, name string }

func newProgress(r *Request, c *heatapi.Client, ref heatapi.StackRef, marker string, start time.Time) *progress {
	return &progress{r: r, c: c, ref: ref, marker: marker, start: start,
		paths: map[string]string{ref.ID: ref.Name}, status: map[resourceKey]string{}}
}

func (p *progress) elapsed() string {
	d := time.Since(p.start).Round(time.Second)
	return fmt.Sprintf("[%5s]", d)
}

// poll prints the new events and the resource count, at most as often as
// progressShare allows unless final (the operation has ended: what is left
// is printed). Errors are ignored: progress is best effort.
func (p *progress) poll(ctx context.Context, action string, final bool) {
	if p.r.o.Progress == nil || (!final && time.Now().Before(p.nextAt)) {
		return
	}
	began := time.Now()
	var events []heatapi.Event
	for page := 0; final || page < eventPages; page++ {
		ev, err := p.c.ListEvents(ctx, p.ref, heatapi.EventListOpts{NestedDepth: NestedDepth, Marker: p.marker, SortDir: "asc", Limit: eventPage})
		if err != nil || len(ev) == 0 || ev[len(ev)-1].ID == p.marker {
			break // the end, or a server that does not move on
		}
		events = append(events, ev...)
		p.marker = ev[len(ev)-1].ID
		if len(ev) < eventPage {
			break
		}
	}
	took := time.Since(began)
	wait := took * (progressShare - 1)
	if wait > heartbeat {
		wait = heartbeat
	}
	p.nextAt = time.Now().Add(wait)
	for i := range events {
		p.r.progressf("%s %s %s %s", p.elapsed(), p.see(&events[i]), events[i].Status, events[i].StatusReason)
	}
	line := p.count(action)
	// Repeated at least every heartbeat, so a long wait still shows life.
	if line != p.last || time.Since(p.lastAt) >= heartbeat {
		p.last, p.lastAt = line, time.Now()
		p.r.progressf("%s %s", p.elapsed(), line)
	}
}

// see records what the event tells (its resource's status, the path of
// the nested stack it names) and returns its path.
func (p *progress) see(e *heatapi.Event) string {
	s, ok := e.Stack()
	if !ok {
		return e.ResourceName
	}
	base, known := p.paths[s.ID]
	if !known {
		if base, known = p.paths[s.Name]; known {
			p.paths[s.ID] = base
		} else {
			base = s.Name // a stack whose resource's events were not read
		}
	}
	if e.ResourceName == s.Name || e.PhysicalID == s.ID {
		return base // the stack's own event
	}
	path := base + "." + e.ResourceName
	if e.PhysicalID != "" {
		p.paths[e.PhysicalID] = path
	}
	p.status[resourceKey{s.ID, e.ResourceName}] = e.Status
	return path
}

// count is the resource count line: the resources the operation's events
// named so far, by where they are. A create or update names a resource
// when it starts on it, so the count grows while the operation runs.
func (p *progress) count(action string) string {
	var done, running, failed, deleted int
	for _, st := range p.status {
		switch {
		case strings.HasSuffix(st, "_IN_PROGRESS"):
			running++
		case strings.HasSuffix(st, "_FAILED"):
			failed++
		case st == "DELETE_COMPLETE":
			deleted++
		case strings.HasSuffix(st, "_COMPLETE"):
			done++
		}
	}
	if action == "DELETE" {
		return fmt.Sprintf("resources: %d deleted, %d in progress, %d failed", deleted, running, failed)
	}
	return fmt.Sprintf("resources: %d complete, %d in progress, %d failed", done, running, failed)
}

func (p *progress) done(st *heatapi.Stack) {
	if p.r.o.Progress == nil {
		return
	}
	p.r.progressf("%s stack %s %s: %s", p.elapsed(), st.Name, st.Status, st.StatusReason)
}
