package heatapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeHeat answers like Heat for a few paths and records every request.
type fakeHeat struct {
	mu   sync.Mutex
	reqs []string
}

func (f *fakeHeat) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.reqs = append(f.reqs, r.Method+" "+r.URL.RequestURI()+" "+string(body))
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == "GET" && r.URL.Path == "/v1/admin/stacks/missing":
		w.WriteHeader(404)
		io.WriteString(w, `{"code": 404, "title": "Not Found", "explanation": "The resource could not be found.", "error": {"type": "EntityNotFound", "traceback": null, "message": "The Stack (missing) could not be found."}}`)
	case r.Method == "GET" && r.URL.Path == "/v1/admin/stacks/web":
		w.Header().Set("Location", "http://heat.example:8004/v1/admin/stacks/web/0a1b-2c3d")
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(302)
		io.WriteString(w, "<html>302 Found</html>")
	case r.Method == "PUT" && r.URL.Path == "/v1/admin/stacks/web/0a1b-2c3d":
		w.WriteHeader(400)
		io.WriteString(w, `{"code": 400, "title": "Bad Request", "explanation": "The server could not comply with the request since it is either malformed or otherwise incorrect.", "error": {"type": "StackValidationFailed", "traceback": null, "message": "Property error: resources.server.properties.flavor: Error validating value 'm1.huge'"}}`)
	case r.Method == "PATCH" && r.URL.Path == "/v1/admin/stacks/web/0a1b-2c3d":
		w.WriteHeader(202)
	case r.Method == "GET" && r.URL.Path == "/v1/admin/stacks/web/0a1b-2c3d":
		io.WriteString(w, `{"stack": {"id": "0a1b-2c3d", "stack_name": "web", "stack_status": "CREATE_COMPLETE", "outputs": [{"output_key": "a", "output_value": [1, 2]}, {"output_key": "b", "output_value": null, "output_error": "The Referenced Attribute (x y) is incorrect."}]}}`)
	case r.Method == "GET" && r.URL.Path == "/v1/admin/stacks/proxied":
		io.WriteString(w, `{"stack": {"id": "9f9f", "stack_name": "proxied", "stack_status": "CREATE_COMPLETE"}}`)
	case r.Method == "GET" && r.URL.Path == "/v1/admin/stacks" && r.URL.Query().Get("id") == "0a1b-2c3d":
		io.WriteString(w, `{"stacks": [{"id": "0a1b-2c3d", "stack_name": "web", "stack_status": "UPDATE_IN_PROGRESS", "updated_time": "2026-11-24T10:00:00Z"}]}`)
	case r.Method == "GET" && r.URL.Path == "/v1/admin/stacks":
		io.WriteString(w, `{"stacks": []}`)
	case r.URL.Path == "/v1/admin/stacks/broken":
		w.WriteHeader(500)
		io.WriteString(w, "Internal Server Error: not JSON")
	default:
		w.WriteHeader(599)
	}
}

func newFake(t *testing.T) (*fakeHeat, *Client) {
	t.Helper()
	f := &fakeHeat{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := NewNoAuth(srv.URL + "/v1/admin")
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func TestFindStackNotFound(t *testing.T) {
	_, c := newFake(t)
	_, err := c.FindStack(context.Background(), "missing")
	if !IsNotFound(err) {
		t.Fatalf("want a not-found error, got %v", err)
	}
	if !strings.Contains(err.Error(), "The Stack (missing) could not be found.") {
		t.Errorf("error lacks Heat's message: %v", err)
	}
}

func TestFindStackReadsRedirectWithoutFollowing(t *testing.T) {
	f, c := newFake(t)
	ref, err := c.FindStack(context.Background(), "web")
	if err != nil {
		t.Fatal(err)
	}
	if ref != (StackRef{Name: "web", ID: "0a1b-2c3d"}) {
		t.Fatalf("ref = %+v", ref)
	}
	// The redirect points at another host: it must not have been followed.
	if len(f.reqs) != 1 {
		t.Fatalf("requests: %q", f.reqs)
	}
	// A proxy that follows the redirect itself answers 200 with the stack.
	ref, err = c.FindStack(context.Background(), "proxied")
	if err != nil || ref.ID != "9f9f" || ref.Name != "proxied" {
		t.Fatalf("proxied: %+v %v", ref, err)
	}
}

func TestHeatErrorExplained(t *testing.T) {
	f, c := newFake(t)
	ref := StackRef{Name: "web", ID: "0a1b-2c3d"}
	err := c.UpdateStack(context.Background(), ref, []byte(`{"parameters": {}}`), false)
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{"400", "Bad Request", "PUT", "/stacks/web/0a1b-2c3d", "StackValidationFailed", "Error validating value 'm1.huge'"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// The body was sent as is to /stacks/{name}/{id}.
	if got := f.reqs[len(f.reqs)-1]; got != `PUT /v1/admin/stacks/web/0a1b-2c3d {"parameters": {}}` {
		t.Errorf("request = %q", got)
	}
	if err := c.UpdateStack(context.Background(), ref, []byte(`{}`), true); err != nil {
		t.Fatalf("PATCH: %v", err)
	}
	_, err = c.FindStack(context.Background(), "broken")
	if err == nil || !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "not JSON") {
		t.Fatalf("non-JSON error: %v", err)
	}
}

// StackStatus reads the stack's list entry (GET /stacks?id=), and a stack
// the list does not have is not found.
func TestStackStatus(t *testing.T) {
	f, c := newFake(t)
	st, err := c.StackStatus(context.Background(), StackRef{Name: "web", ID: "0a1b-2c3d"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != "UPDATE_IN_PROGRESS" || st.UpdatedTime != "2026-11-24T10:00:00Z" || st.Ref() != (StackRef{Name: "web", ID: "0a1b-2c3d"}) {
		t.Errorf("stack = %+v", st)
	}
	if got := f.reqs[len(f.reqs)-1]; got != "GET /v1/admin/stacks?id=0a1b-2c3d&show_deleted=True " {
		t.Errorf("request = %q", got)
	}
	_, err = c.StackStatus(context.Background(), StackRef{Name: "gone", ID: "ffff"})
	if !IsNotFound(err) {
		t.Fatalf("want a not-found error, got %v", err)
	}
}

func TestOutputs(t *testing.T) {
	_, c := newFake(t)
	s, err := c.GetStack(context.Background(), StackRef{Name: "web", ID: "0a1b-2c3d"}, true)
	if err != nil {
		t.Fatal(err)
	}
	vals, errs := s.OutputMap()
	if len(vals) != 1 || len(vals["a"].([]any)) != 2 {
		t.Errorf("values = %v", vals)
	}
	if errs["b"] != "The Referenced Attribute (x y) is incorrect." {
		t.Errorf("errors = %v", errs)
	}
}

func TestEndpointsAndRefs(t *testing.T) {
	for _, bad := range []string{"", "127.0.0.1:8006/v1/admin", "ftp://x/v1/admin", "http://127.0.0.1:8006/", "http://127.0.0.1:8006/v1"} {
		if _, err := NewNoAuth(bad); err == nil {
			t.Errorf("NewNoAuth(%q) accepted", bad)
		}
	}
	c, err := NewNoAuth("http://127.0.0.1:8006/v1/admin/")
	if err != nil || c.Endpoint() != "http://127.0.0.1:8006/v1/admin" || c.SC.Endpoint != "http://127.0.0.1:8006/v1/admin/" {
		t.Fatalf("%v %v", c, err)
	}
	ref, ok := RefFromURL("http://h/v1/admin/stacks/oc-Compute-x7/1234/resources/0")
	if !ok || ref.Name != "oc-Compute-x7" || ref.ID != "1234" {
		t.Errorf("RefFromURL = %+v %v", ref, ok)
	}
	if _, ok := RefFromURL("http://h/v1/admin/stacks/web"); ok {
		t.Error("a bare name is not a ref")
	}
}
