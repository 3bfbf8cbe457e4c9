// Package fakeheat is a minimal Heat API on 127.0.0.1 for tests that need a
// stack to exist but no engine: one stack, found by name (Heat's 302),
// read (parameters as Heat shows them, its template and files), previewed
// for an update (nothing changes), updated (the update is taken and the
// stack stays as it is) and listed without resources. Every
// request body it gets is kept, so a test can check what was sent.
package fakeheat

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Stack is the one stack the fake Heat holds.
type Stack struct {
	Name, ID string
	// Parameters as Heat shows them: a hidden parameter's value is "******".
	Parameters map[string]string
	Template   map[string]any
	Files      map[string]string
	// RefusePreview, when set, is the message of a 400 answer to an
	// update preview (Heat refusing the update).
	RefusePreview string
}

// Heat is a running fake Heat.
type Heat struct {
	// Endpoint is its no-auth endpoint (http://127.0.0.1:PORT/v1/admin).
	Endpoint string
	stack    Stack
	mu       sync.Mutex
	bodies   []string
}

// Start serves st until the test ends.
func Start(t testing.TB, st Stack) *Heat {
	t.Helper()
	h := &Heat{stack: st}
	srv := httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(srv.Close)
	h.Endpoint = srv.URL + "/v1/admin"
	return h
}

// Bodies returns the request bodies received so far.
func (h *Heat) Bodies() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.bodies...)
}

func (h *Heat) serve(w http.ResponseWriter, r *http.Request) {
	if b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20)); len(b) > 0 {
		h.mu.Lock()
		h.bodies = append(h.bodies, string(b))
		h.mu.Unlock()
	}
	st := h.stack
	path := strings.TrimPrefix(r.URL.Path, "/v1/admin")
	self := "/stacks/" + st.Name + "/" + st.ID
	reply := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	switch {
	case r.Method == "GET" && path == "/stacks":
		reply(map[string]any{"stacks": []any{map[string]any{"id": st.ID, "stack_name": st.Name, "stack_status": "CREATE_COMPLETE"}}})
	case r.Method == "GET" && (path == "/stacks/"+st.Name || path == "/stacks/"+st.ID):
		w.Header().Set("Location", "http://"+r.Host+"/v1/admin"+self)
		w.WriteHeader(http.StatusFound)
	case r.Method == "GET" && path == self:
		reply(map[string]any{"stack": map[string]any{"id": st.ID, "stack_name": st.Name, "stack_status": "CREATE_COMPLETE",
			"parameters": st.Parameters, "outputs": []any{}, "links": []any{map[string]any{"href": "http://" + r.Host + "/v1/admin" + self, "rel": "self"}}}})
	case r.Method == "GET" && path == self+"/template":
		reply(st.Template)
	case r.Method == "GET" && path == self+"/files":
		files := st.Files
		if files == nil {
			files = map[string]string{}
		}
		reply(files)
	case r.Method == "GET" && path == self+"/resources":
		reply(map[string]any{"resources": []any{}})
	case (r.Method == "PATCH" || r.Method == "PUT") && path == self:
		w.WriteHeader(http.StatusAccepted) // taken; the stack stays as it is
	case (r.Method == "PATCH" || r.Method == "PUT") && path == self+"/preview" && st.RefusePreview != "":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"code": 400, "title": "Bad Request", "explanation": "The server could not comply with the request since it is either malformed or otherwise incorrect.",
			"error": map[string]any{"type": "StackValidationFailed", "message": st.RefusePreview, "traceback": nil}})
	case (r.Method == "PATCH" || r.Method == "PUT") && path == self+"/preview":
		reply(map[string]any{"resource_changes": map[string]any{"added": []any{}, "deleted": []any{}, "replaced": []any{},
			"updated": []any{}, "unchanged": []any{}}})
	default:
		http.Error(w, `{"error": {"message": "not in this fake Heat"}}`, http.StatusNotFound)
	}
}
