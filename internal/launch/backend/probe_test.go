package backend

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// liveChild starts `sleep 300` carrying the launch tag id, as a launch's
// heat-all would, and returns its process record; it is killed when the
// test ends (and by kill).
func liveChild(t *testing.T, id string) (rec proc.Record, kill func()) {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	cmd.Env = append(os.Environ(), proc.Tag(id))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	kill = func() {
		cmd.Process.Kill()
		<-done
	}
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			kill()
		}
	})
	pid := cmd.Process.Pid
	deadline := time.Now().Add(5 * time.Second)
	for {
		info, err := proc.Inspect(pid)
		if err == nil && len(info.Cmdline) > 0 && info.Cmdline[0] == "sleep" {
			return proc.Record{PID: pid, PGID: info.PGID, StartTicks: info.StartTicks, BootID: proc.BootID(),
				Cmdline: info.Cmdline, Tag: proc.Tag(id)}, kill
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d did not exec sleep: %v %v", pid, err, info.Cmdline)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// deadEndpoint is an endpoint where nothing answers.
func deadEndpoint(t *testing.T) string {
	t.Helper()
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return "http://127.0.0.1:" + strconv.Itoa(port) + "/v1/admin"
}

func TestRunningAndNotRunning(t *testing.T) {
	ctx := context.Background()
	// A Heat API that lists stacks, on 127.0.0.1.
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/stacks") {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"stacks": []}`))
			return
		}
		http.NotFound(w, r)
	}))
	defer api.Close()

	tests := []struct {
		name string
		// record returns the launch record to write (nil: none), or
		// corrupt writes a broken one.
		record  func(t *testing.T) *heatdir.Record
		corrupt bool
		// want: substrings of the refusal; none means no Heat runs.
		want []string
	}{
		{name: "no launch record", record: func(*testing.T) *heatdir.Record { return nil }},
		{name: "a live recorded process", record: func(t *testing.T) *heatdir.Record {
			p, _ := liveChild(t, "launch-live")
			return &heatdir.Record{State: heatdir.Running, LaunchID: "launch-live", HeatType: "native",
				Endpoint: deadEndpoint(t), Process: &p}
		}, want: []string{"state: restored refused", "heat_dir", "pid ", "(sleep 300)", "ephemeral_heat_launch state: stopped", "kill_heat"}},
		{name: "a recorded process that has exited", record: func(t *testing.T) *heatdir.Record {
			p, kill := liveChild(t, "launch-gone")
			kill()
			return &heatdir.Record{State: heatdir.Running, LaunchID: "launch-gone", HeatType: "native",
				Endpoint: deadEndpoint(t), Process: &p}
		}},
		{name: "a live process without our launch tag", record: func(t *testing.T) *heatdir.Record {
			p, _ := liveChild(t, "launch-a")
			p.Tag = proc.Tag("launch-b")
			return &heatdir.Record{State: heatdir.Running, LaunchID: "launch-b", HeatType: "native",
				Endpoint: deadEndpoint(t), Process: &p}
		}},
		{name: "a pod whose API answers", record: func(t *testing.T) *heatdir.Record {
			return &heatdir.Record{State: heatdir.Running, LaunchID: "launch-pod", HeatType: "pod",
				Endpoint: api.URL + "/v1/admin", Object: podObject(t)}
		}, want: []string{"the Heat API of pod heat-pod-x", api.URL + "/v1/admin"}},
		{name: "a pod whose API does not answer", record: func(t *testing.T) *heatdir.Record {
			return &heatdir.Record{State: heatdir.Running, LaunchID: "launch-pod", HeatType: "pod",
				Endpoint: deadEndpoint(t), Object: podObject(t)}
		}},
		{name: "a corrupt record", corrupt: true, want: []string{"cannot", "launch.json", "is corrupt"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := heatdir.At(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if tc.corrupt {
				if err := os.WriteFile(d.File(heatdir.RecordFile), []byte("{not json"), 0o600); err != nil {
					t.Fatal(err)
				}
			} else if rec := tc.record(t); rec != nil {
				if err := d.WriteRecord(rec); err != nil {
					t.Fatal(err)
				}
			}
			live, rerr := Running(ctx, d)
			err = NotRunning(ctx, d, "state: restored")
			if len(tc.want) == 0 {
				if live != nil || rerr != nil || err != nil {
					t.Fatalf("want no running Heat, got %v, %v; NotRunning: %v", live, rerr, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("NotRunning let it through (Running: %v, %v)", live, rerr)
			}
			if !tc.corrupt && (live == nil || rerr != nil) {
				t.Errorf("Running: %v, %v", live, rerr)
			}
			for _, w := range append(tc.want, d.Path()) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the refusal does not say %q: %v", w, err)
				}
			}
		})
	}
}

// podObject is what a pod backend records of its pod.
func podObject(t *testing.T) *heatdir.Object {
	t.Helper()
	o, err := heatdir.NewObject("podman", map[string]string{"name": "heat-pod-x", "id": "abc"})
	if err != nil {
		t.Fatal(err)
	}
	return o
}
