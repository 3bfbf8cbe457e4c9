package heatapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// A Heat that does not answer, or answers 500, gets an error that says
// what to do: where the logs of the heat_dir's Heat are, how to start it.
func TestErrorsSayWhatToDo(t *testing.T) {
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c, err := NewNoAuth(fmt.Sprintf("http://127.0.0.1:%d/v1/admin", port))
	if err != nil {
		t.Fatal(err)
	}
	c.HeatDir = dir
	_, err = c.FindStack(context.Background(), "overcloud")
	for _, want := range []string{"connection refused", "is not running", dir + "/log", "state: started"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("dead Heat: %v, want %q", err, want)
		}
	}
	c.HeatDir = ""
	if _, err = c.FindStack(context.Background(), "overcloud"); err == nil || !strings.Contains(err.Error(), "is Heat running there?") {
		t.Errorf("dead Heat at an endpoint: %v", err)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		w.Write([]byte(`{"code": 500, "title": "Internal Server Error", "explanation": "boom"}`))
	}))
	defer srv.Close()
	c, _ = NewNoAuth(srv.URL + "/v1/admin")
	c.HeatDir = dir
	if _, err = c.FindStack(context.Background(), "overcloud"); err == nil || !strings.Contains(err.Error(), "Heat's logs are in "+dir+"/log") {
		t.Errorf("500 of a heat_dir's Heat: %v", err)
	}
}
