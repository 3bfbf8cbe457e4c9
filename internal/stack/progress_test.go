package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
)

// ev is an event of resource res (status st, physical resource phys) in
// stack name/id.
func ev(name, id, res, st, phys string) heatapi.Event {
	return heatapi.Event{ResourceName: res, Status: st, PhysicalID: phys,
		Links: []heatapi.Link{{Rel: "stack", Href: "http://127.0.0.1:1/v1/t/stacks/" + name + "/" + id}}}
}

// progressOn is the progress of stack life (top-id) on a fake Heat API
// that answers with handler, and what it prints.
func progressOn(t *testing.T, handler http.HandlerFunc) (*progress, *bytes.Buffer) {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	c, err := heatapi.NewNoAuth(srv.URL + "/v1/t")
	if err != nil {
		t.Fatal(err)
	}
	out := &bytes.Buffer{}
	r := &Request{o: Options{Progress: out}, masker: strings.NewReplacer()}
	return newProgress(r, c, heatapi.StackRef{Name: "life", ID: "top-id"}, "", time.Now()), out
}

// TestProgressEvents: the paths and the counts progress derives from the
// events alone (no resource list).
func TestProgressEvents(t *testing.T) {
	const top, nestName, nestID = "top-id", "life-nest-abcdefghijkl", "nest-id"
	cases := []struct {
		name      string
		action    string
		events    []heatapi.Event
		wantPaths []string // the path printed for each event
		wantCount string
	}{
		{"create through a nested stack, its events before its resource completes", "CREATE", []heatapi.Event{
			ev("life", top, "life", "CREATE_IN_PROGRESS", top),
			ev("life", top, "nest", "CREATE_IN_PROGRESS", nestName), // Heat names the stack first
			ev("life", top, "plain", "CREATE_IN_PROGRESS", "life-plain-mnopqrstuvwx"),
			ev(nestName, nestID, nestName, "CREATE_IN_PROGRESS", nestID),
			ev(nestName, nestID, "inner", "CREATE_IN_PROGRESS", ""),
			ev(nestName, nestID, "inner", "CREATE_COMPLETE", "inner-id"),
			ev("life", top, "plain", "CREATE_COMPLETE", "plain-id"),
		}, []string{"life", "life.nest", "life.plain", "life.nest", "life.nest.inner", "life.nest.inner", "life.plain"},
			"resources: 2 complete, 1 in progress, 0 failed"},
		{"a nested stack known by its id only (an update: the resource has it)", "UPDATE", []heatapi.Event{
			ev("life", top, "nest", "UPDATE_IN_PROGRESS", nestID),
			ev(nestName, nestID, "inner", "UPDATE_FAILED", "inner-id"),
			ev("life", top, "nest", "UPDATE_FAILED", nestID),
			ev("life", top, "old", "DELETE_COMPLETE", "old-id"),
		}, []string{"life.nest", "life.nest.inner", "life.nest", "life.old"},
			"resources: 0 complete, 0 in progress, 2 failed"},
		{"a stack no event of this operation named: its own name", "CREATE", []heatapi.Event{
			ev("other-x-abcdefghijkl", "other-id", "r", "CREATE_COMPLETE", "r-id"),
		}, []string{"other-x-abcdefghijkl.r"}, "resources: 1 complete, 0 in progress, 0 failed"},
		{"delete", "DELETE", []heatapi.Event{
			ev("life", top, "a", "DELETE_IN_PROGRESS", "a-id"),
			ev("life", top, "a", "DELETE_COMPLETE", "a-id"),
			ev("life", top, "b", "DELETE_IN_PROGRESS", "b-id"),
		}, []string{"life.a", "life.a", "life.b"}, "resources: 1 deleted, 1 in progress, 0 failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProgress(&Request{}, nil, heatapi.StackRef{Name: "life", ID: top}, "", time.Now())
			for i := range tc.events {
				if got := p.see(&tc.events[i]); got != tc.wantPaths[i] {
					t.Errorf("event %d (%s %s): path %q, want %q", i, tc.events[i].ResourceName, tc.events[i].Status, got, tc.wantPaths[i])
				}
			}
			if got := p.count(tc.action); got != tc.wantCount {
				t.Errorf("count %q, want %q", got, tc.wantCount)
			}
		})
	}
}

// TestProgressPacing: a poll reads the events at most as often as
// progressShare allows, except the final one; what it reads is printed.
func TestProgressPacing(t *testing.T) {
	var calls atomic.Int32
	const delay = 20 * time.Millisecond
	p, out := progressOn(t, func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/events") || r.URL.Query().Get("nested_depth") == "" {
			http.Error(w, "unexpected "+r.URL.String(), http.StatusBadRequest)
			return
		}
		n := calls.Add(1)
		time.Sleep(delay)
		var events []heatapi.Event
		if r.URL.Query().Get("marker") == "" {
			events = append(events, ev("life", "top-id", "a", "CREATE_IN_PROGRESS", "life-a-abcdefghijkl"))
		} else if n == 2 {
			events = append(events, ev("life", "top-id", "a", "CREATE_COMPLETE", "a-id"))
		}
		for i := range events {
			events[i].ID = "e" + string(rune('0'+n))
		}
		json.NewEncoder(w).Encode(map[string]any{"events": events})
	})
	ctx := context.Background()
	before := time.Now()
	p.poll(ctx, "CREATE", false)
	p.poll(ctx, "CREATE", false) // within (progressShare-1) times the first read: skipped
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d event reads after two polls in a row, want 1", n)
	}
	// The read took delay or more and the next waits progressShare-1 times
	// that after it: progressShare times delay from before it at least,
	// however long the machine took in between.
	if got := p.nextAt.Sub(before); got < delay*progressShare {
		t.Errorf("next read %v after the first began, want %v or more", got, delay*progressShare)
	}
	p.poll(ctx, "CREATE", true) // the operation ended: read now
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d event reads after the final poll, want 2", n)
	}
	for _, want := range []string{"life.a CREATE_IN_PROGRESS", "resources: 0 complete, 1 in progress, 0 failed",
		"life.a CREATE_COMPLETE", "resources: 1 complete, 0 in progress, 0 failed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, out.String())
		}
	}
}

// TestProgressPages: a poll reads eventPages pages at most and the final
// one reads to the end; a server that does not move past the marker ends
// the final read instead of looping.
func TestProgressPages(t *testing.T) {
	total := 2*eventPage*eventPages + 7 // the final poll has more than eventPages pages left
	cases := []struct {
		name      string
		stuck     bool // every answer is the first page
		wantFirst int  // events printed by a poll
		wantAll   int  // and after the final poll
	}{
		{"pages", false, eventPage * eventPages, total},
		{"a server stuck on one page", true, eventPage, eventPage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, out := progressOn(t, func(w http.ResponseWriter, r *http.Request) {
				from := 0
				if m := r.URL.Query().Get("marker"); m != "" && !tc.stuck {
					from, _ = strconv.Atoi(m)
				}
				limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
				var events []heatapi.Event
				for i := from + 1; i <= total && len(events) < limit; i++ {
					e := ev("life", "top-id", "r"+strconv.Itoa(i), "CREATE_COMPLETE", "id")
					e.ID = strconv.Itoa(i)
					events = append(events, e)
				}
				json.NewEncoder(w).Encode(map[string]any{"events": events})
			})
			printed := func() int { return strings.Count(out.String(), " CREATE_COMPLETE ") }
			p.poll(context.Background(), "CREATE", false)
			if got := printed(); got != tc.wantFirst {
				t.Errorf("a poll printed %d events, want %d", got, tc.wantFirst)
			}
			p.poll(context.Background(), "CREATE", true)
			if got := printed(); got != tc.wantAll {
				t.Errorf("after the final poll %d events, want %d", got, tc.wantAll)
			}
		})
	}
}
