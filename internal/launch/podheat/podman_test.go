package podheat_test

// Acceptance tests against a real podman (run as root here): they need
// podman, runc and the image `make heat-image` builds. The image is built on
// demand when missing (about 2.5 minutes on 2 cores); a missing podman FAILS
// the tests with the command that installs it. The tests start their own
// `podman system service` on a temporary unix socket and stop it (by its
// pid) at the end, unless EPHEMERAL_HEAT_PODMAN_SOCKET names one to use: a
// service that answers on the default socket may be another's that ends
// while they run (a molecule scenario beside them in make test stops the
// one it started). CONTAINERS_CONF
// points at scripts/containers.conf (runc, ulimits within the hard limits).
// With -short (make unit) they are skipped.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/containers/podman/v4/pkg/bindings/containers"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/pod"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/podheat"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

var (
	setupOnce sync.Once
	setupErr  error
	testSock  string
	service   *exec.Cmd
	// serviceDir holds our podman service's socket and log (removed at the end).
	serviceDir string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if service != nil && service.Process != nil {
		// Our own podman service, by its pid.
		_ = syscall.Kill(service.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { service.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(service.Process.Pid, syscall.SIGKILL)
		}
	}
	if serviceDir != "" {
		if code != 0 {
			if b, err := os.ReadFile(filepath.Join(serviceDir, "service.log")); err == nil {
				fmt.Fprintf(os.Stderr, "podheat tests: our podman service's log:\n%s\n", b)
			}
		}
		os.RemoveAll(serviceDir)
	}
	os.Exit(code)
}

func repoRoot() string {
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", "..", ".."))
}

func setup() error {
	if os.Getenv("CONTAINERS_CONF") == "" {
		os.Setenv("CONTAINERS_CONF", filepath.Join(repoRoot(), "scripts", "containers.conf"))
	}
	for _, c := range []string{"podman", "runc"} {
		if _, err := exec.LookPath(c); err != nil {
			return fmt.Errorf("%s is not installed: run 'make deps' (apt-get install -y podman runc debootstrap)", c)
		}
	}
	ctx := context.Background()
	sock := os.Getenv("EPHEMERAL_HEAT_PODMAN_SOCKET")
	if sock == "" {
		dir, err := os.MkdirTemp("", "podheat-test-")
		if err != nil {
			return err
		}
		serviceDir = dir
		sock = "unix://" + filepath.Join(dir, "podman.sock")
		log, err := os.Create(filepath.Join(dir, "service.log"))
		if err != nil {
			return err
		}
		service = exec.Command("podman", "system", "service", "--time=0", sock)
		service.Stdout, service.Stderr = log, log
		service.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := service.Start(); err != nil {
			return fmt.Errorf("starting podman system service: %w", err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			if _, err := podheat.Connect(ctx, sock); err == nil {
				break
			}
			if time.Now().After(deadline) {
				b, _ := os.ReadFile(log.Name())
				return fmt.Errorf("podman system service on %s did not answer within 20s: %s", sock, b)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	testSock = sock
	if err := exec.Command("podman", "image", "exists", podheat.DefaultImage).Run(); err != nil {
		if os.Geteuid() != 0 {
			return fmt.Errorf("the image %s is missing: build it with 'sudo make heat-image'", podheat.DefaultImage)
		}
		start := time.Now()
		fmt.Fprintf(os.Stderr, "podheat tests: building %s with scripts/build-heat-image.sh (about 2.5 minutes)\n", podheat.DefaultImage)
		out, err := exec.Command(filepath.Join(repoRoot(), "scripts", "build-heat-image.sh")).CombinedOutput()
		if err != nil {
			return fmt.Errorf("the image %s is missing and building it failed (%v):\n%s", podheat.DefaultImage, err, out)
		}
		fmt.Fprintf(os.Stderr, "podheat tests: image built in %s\n", time.Since(start).Round(time.Second))
	}
	return nil
}

func requirePodman(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("podman acceptance test (run without -short)")
	}
	setupOnce.Do(func() { setupErr = setup() })
	if setupErr != nil {
		t.Fatal(setupErr)
	}
}

type warnings struct {
	mu sync.Mutex
	w  []string
}

func (w *warnings) add(f string, a ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.w = append(w.w, fmt.Sprintf(f, a...))
}

func (w *warnings) has(s string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, x := range w.w {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

func newOpts(t *testing.T, heatType string, w *warnings) launch.Options {
	t.Helper()
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "overcloud", "heat-launcher")
	o := launch.Options{State: launch.Started, HeatType: heatType, HeatDir: dir, APIPort: port, Backend: backend.Values{podheat.Socket.Name: testSock},
		Timeout: 240 * time.Second, Warn: w.add}
	t.Cleanup(func() {
		c := o
		c.State = launch.Absent
		c.Warn = func(string, ...any) {}
		if _, err := launch.Run(context.Background(), c); err != nil {
			t.Logf("cleanup: %v", err)
		}
	})
	return o
}

func run(t *testing.T, o launch.Options, state string) launch.Outcome {
	t.Helper()
	o.State = state
	start := time.Now()
	out, err := launch.Run(context.Background(), o)
	if err != nil {
		t.Fatalf("%s: %v", state, err)
	}
	t.Logf("%s %s: changed=%v in %s: %s", o.HeatType, state, out.Changed, time.Since(start).Round(time.Millisecond), out.Msg)
	return out
}

// podmanCLI lists our objects with the podman command (the same storage the
// service uses).
func podmanCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("podman", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func requireNothingLeft(t *testing.T, dir string) {
	t.Helper()
	f := "label=" + podheat.LabelDir + "=" + podheat.DirHash(dir)
	if s := podmanCLI(t, "ps", "-a", "--filter", f, "--format", "{{.Names}}"); s != "" {
		t.Errorf("containers left (podman ps -a): %s", s)
	}
	if s := podmanCLI(t, "pod", "ps", "--filter", f, "--format", "{{.Name}}"); s != "" {
		t.Errorf("pods left (podman pod ps): %s", s)
	}
	if s := podmanCLI(t, "ps", "-a", "--filter", "name="+podheat.Name(dir), "--format", "{{.Names}}"); s != "" {
		t.Errorf("containers named after heat_dir left: %s", s)
	}
}

// requireLoopbackOnly checks, without sending traffic anywhere, that what
// listens on port in this network namespace is bound to loopback only.
func requireLoopbackOnly(t *testing.T, port int) {
	t.Helper()
	ls := proc.PortOwners(port)
	if len(ls) == 0 {
		t.Fatalf("nothing listens on port %d", port)
	}
	for _, l := range ls {
		host, _, _ := net.SplitHostPort(l.Address)
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			t.Errorf("port %d is bound to a non-loopback address: %s", port, l)
		}
	}
	out, err := exec.Command("ss", "-Hltn", fmt.Sprintf("sport = :%d", port)).CombinedOutput()
	if err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			fs := strings.Fields(line)
			if len(fs) >= 4 && !strings.HasPrefix(fs[3], "127.") && !strings.HasPrefix(fs[3], "[::1]") {
				t.Errorf("ss -ltn shows port %d on %s", port, fs[3])
			}
		}
	}
}

const memberTemplate = `heat_template_version: 2016-10-14
parameters:
  index: {type: string, default: "0"}
resources:
  none: {type: OS::Heat::None}
  rand:
    type: OS::Heat::RandomString
    properties: {length: 8}
  value:
    type: OS::Heat::Value
    properties:
      value: {list_join: ["-", [{get_param: index}, {get_attr: [rand, value]}]]}
outputs:
  value: {value: {get_attr: [value, value]}}
`

// createGroup creates a stack of an n-member OS::Heat::ResourceGroup
// (members OS::Heat::None, or a 3-resource provider template) and waits
// until CREATE_COMPLETE.
func createGroup(t *testing.T, endpoint, name string, n int, provider bool, timeout time.Duration) time.Duration {
	t.Helper()
	member := map[string]any{"type": "OS::Heat::None"}
	files := map[string]string{}
	if provider {
		member = map[string]any{"type": "file:///templates/member.yaml", "properties": map[string]any{"index": "%index%"}}
		files["file:///templates/member.yaml"] = memberTemplate
	}
	body, _ := json.Marshal(map[string]any{
		"stack_name": name, "files": files, "timeout_mins": 30,
		"template": map[string]any{
			"heat_template_version": "2016-10-14",
			"resources": map[string]any{"group": map[string]any{
				"type":       "OS::Heat::ResourceGroup",
				"properties": map[string]any{"count": n, "resource_def": member},
			}},
		},
	})
	start := time.Now()
	resp, err := http.Post(endpoint+"/stacks", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create stack %s: %d %s", name, resp.StatusCode, b)
	}
	deadline := time.Now().Add(timeout)
	for {
		status, reason := stackStatus(t, endpoint, name)
		switch {
		case status == "CREATE_COMPLETE":
			d := time.Since(start)
			t.Logf("stack %s (%d members, provider=%v): CREATE_COMPLETE in %s", name, n, provider, d.Round(time.Millisecond))
			return d
		case strings.HasSuffix(status, "FAILED"):
			t.Fatalf("stack %s: %s: %s", name, status, reason)
		case time.Now().After(deadline):
			t.Fatalf("stack %s still %s after %s", name, status, timeout)
		}
		time.Sleep(time.Second)
	}
}

func stackStatus(t *testing.T, endpoint, name string) (string, string) {
	t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(endpoint + "/stacks/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET stack %s: %d %s", name, resp.StatusCode, b)
	}
	var s struct {
		Stack struct {
			Status string `json:"stack_status"`
			Reason string `json:"stack_status_reason"`
		} `json:"stack"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s.Stack.Status, s.Stack.Reason
}

func requireMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != want {
		t.Errorf("%s has mode %o, want %o", path, st.Mode().Perm(), want)
	}
}

func TestContainerLifecycle(t *testing.T) {
	requirePodman(t)
	var w warnings
	o := newOpts(t, launch.Container, &w)
	out := run(t, o, launch.Started)
	if !out.Changed || out.ObjectName != podheat.Name(o.HeatDir) || out.Database != "sqlite" {
		t.Fatalf("start: %+v", out)
	}
	requireLoopbackOnly(t, o.APIPort)
	for _, f := range []string{heatdir.HeatConf, heatdir.TokenFile, heatdir.RecordFile, heatdir.SQLiteFile} {
		requireMode(t, filepath.Join(o.HeatDir, f), 0o600)
	}
	createGroup(t, out.Endpoint, "rg3", 3, false, 3*time.Minute)

	again := run(t, o, launch.Started)
	if again.Changed {
		t.Errorf("relaunch of a healthy container changed: %+v", again)
	}

	// The config is read-only inside the container.
	c, err := podheat.Connect(context.Background(), testSock)
	if err != nil {
		t.Fatal(err)
	}
	data, err := containers.Inspect(c, podheat.Name(o.HeatDir), nil)
	if err != nil {
		t.Fatal(err)
	}
	ro := map[string]bool{}
	for _, m := range data.Mounts {
		ro[m.Destination] = !m.RW
	}
	if !ro[filepath.Join(o.HeatDir, heatdir.HeatConf)] || ro[o.HeatDir] {
		t.Errorf("mounts: %+v", data.Mounts)
	}

	st := run(t, o, launch.Stopped)
	if !st.Changed {
		t.Errorf("stop did not change")
	}
	requireNothingLeft(t, o.HeatDir)
	if !proc.PortFree("127.0.0.1", o.APIPort) {
		t.Errorf("api_port still in use after stop")
	}
	if _, err := os.Stat(filepath.Join(o.HeatDir, heatdir.SQLiteFile)); err != nil {
		t.Errorf("stopped removed the database: %v", err)
	}
	// Data survives a stop.
	out = run(t, o, launch.Started)
	if s, _ := stackStatus(t, out.Endpoint, "rg3"); s != "CREATE_COMPLETE" {
		t.Errorf("after restart stack rg3 is %q", s)
	}
	ab := run(t, o, launch.Absent)
	if len(ab.Removed) == 0 {
		t.Errorf("absent removed nothing: %+v", ab)
	}
	requireNothingLeft(t, o.HeatDir)
	if _, err := os.Stat(filepath.Join(o.HeatDir, heatdir.SQLiteFile)); !os.IsNotExist(err) {
		t.Errorf("absent kept the database")
	}
	if out := run(t, o, launch.Absent); out.Changed {
		t.Errorf("second absent changed")
	}
}

func TestPodLifecycle(t *testing.T) {
	requirePodman(t)
	var w warnings
	o := newOpts(t, launch.Pod, &w)
	o.Backend[pod.EngineWorkers.Name] = 1
	out := run(t, o, launch.Started)
	if !out.Changed || out.Database != "mysql" {
		t.Fatalf("start: %+v", out)
	}
	requireLoopbackOnly(t, o.APIPort)
	for _, f := range []string{heatdir.HeatConf, heatdir.PodYAML, heatdir.MariaDBInit, heatdir.RabbitConf, heatdir.RecordFile} {
		requireMode(t, filepath.Join(o.HeatDir, f), 0o600)
	}
	y, _ := os.ReadFile(filepath.Join(o.HeatDir, heatdir.PodYAML))
	conf, _ := os.ReadFile(filepath.Join(o.HeatDir, heatdir.HeatConf))
	if !strings.Contains(string(conf), "rabbit://heat:") || !strings.Contains(string(conf), "mysql+pymysql://heat:") {
		t.Errorf("heat.conf lacks the pod's own services:\n%s", conf)
	}
	if strings.Contains(string(y), "password") || strings.Contains(string(y), "pymysql://") {
		t.Errorf("heat-pod.yaml holds credentials")
	}
	createGroup(t, out.Endpoint, "rg3", 3, false, 3*time.Minute)
	for _, f := range []string{"heat-api.log", "heat-engine.log", "mariadb.log", "rabbitmq.log",
		"heat-api.stdout.log", "heat-engine.stdout.log", "mariadb.stdout.log", "rabbitmq.stdout.log"} {
		if st, err := os.Stat(filepath.Join(o.HeatDir, heatdir.LogDir, f)); err != nil || st.Size() == 0 {
			t.Errorf("log %s missing or empty: %v", f, err)
		}
	}

	again := run(t, o, launch.Started)
	if again.Changed {
		t.Errorf("relaunch of a healthy pod changed: %+v", again)
	}

	// The record is gone (removed by hand): the pod, labelled for this
	// heat_dir, is replaced, with a warning; the data stays.
	if err := os.Remove(filepath.Join(o.HeatDir, heatdir.RecordFile)); err != nil {
		t.Fatal(err)
	}
	replaced := run(t, o, launch.Started)
	if !replaced.Changed || !w.has("without a launch record") {
		t.Errorf("unrecorded pod not replaced: %+v, warnings %v", replaced, w.w)
	}
	if _, err := os.Stat(filepath.Join(o.HeatDir, heatdir.RecordFile)); err != nil {
		t.Errorf("record not rewritten: %v", err)
	}
	if s, _ := stackStatus(t, replaced.Endpoint, "rg3"); s != "CREATE_COMPLETE" {
		t.Errorf("stack rg3 is %q in the new pod", s)
	}

	// A recorded pod that is no longer healthy: replaced, with a warning.
	podmanCLI(t, "kill", pod.ContainerName(o.HeatDir, pod.CHeatEngine))
	replaced = run(t, o, launch.Started)
	if !replaced.Changed || !w.has("stale launch record") {
		t.Errorf("broken pod not replaced: %+v, warnings %v", replaced, w.w)
	}
	if s, _ := stackStatus(t, replaced.Endpoint, "rg3"); s != "CREATE_COMPLETE" {
		t.Errorf("stack rg3 is %q after the pod was replaced (its MariaDB datadir is kept)", s)
	}

	run(t, o, launch.Stopped)
	requireNothingLeft(t, o.HeatDir)
	if _, err := os.Stat(filepath.Join(o.HeatDir, heatdir.MariaDBDir, "mysql")); err != nil {
		t.Errorf("stopped removed the MariaDB datadir: %v", err)
	}
	// absent dumps first: a stopped pod's MariaDB cannot be read, so
	// nothing is removed until told dump: false.
	c := o
	c.State = launch.Absent
	if _, err := launch.Run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "dump: false") {
		t.Errorf("absent of a stopped pod dumped nothing and did not refuse: %v", err)
	}
	if _, err := os.Stat(filepath.Join(o.HeatDir, heatdir.MariaDBDir, "mysql")); err != nil {
		t.Errorf("a refused absent removed the MariaDB datadir: %v", err)
	}
	o.NoDump = true
	ab := run(t, o, launch.Absent)
	if len(ab.Removed) != 1 || ab.Removed[0] != filepath.Join(o.HeatDir, heatdir.MariaDBDir) {
		t.Errorf("absent removed %v", ab.Removed)
	}
	if _, err := os.Stat(filepath.Join(o.HeatDir, heatdir.MariaDBDir)); !os.IsNotExist(err) {
		t.Errorf("absent kept the MariaDB datadir")
	}
	requireNothingLeft(t, o.HeatDir)
}

// TestPodFiftyMembers is the longer test (about 2 minutes here): heat-api and
// two engines over RabbitMQ and MariaDB create a 50-member ResourceGroup of a
// 3-resource provider template.
func TestPodFiftyMembers(t *testing.T) {
	requirePodman(t)
	var w warnings
	o := newOpts(t, launch.Pod, &w)
	o.Backend[pod.EngineWorkers.Name] = 2
	out := run(t, o, launch.Started)
	createGroup(t, out.Endpoint, "rg50", 50, true, 10*time.Minute)
	run(t, o, launch.Absent)
	requireNothingLeft(t, o.HeatDir)
}

func TestPodmanErrors(t *testing.T) {
	requirePodman(t)
	t.Run("socket unreachable", func(t *testing.T) {
		var w warnings
		o := newOpts(t, launch.Container, &w)
		o.Backend[podheat.Socket.Name] = "unix://" + filepath.Join(t.TempDir(), "none.sock")
		_, err := launch.Run(context.Background(), o)
		for _, s := range []string{"not reachable", "systemctl start podman.socket", "podman system service --time=0"} {
			if err == nil || !strings.Contains(err.Error(), s) {
				t.Errorf("error lacks %q: %v", s, err)
			}
		}
	})
	t.Run("image missing", func(t *testing.T) {
		var w warnings
		o := newOpts(t, launch.Pod, &w)
		o.Backend[pod.EngineImage.Name] = "localhost/ephemeral-heat:no-such-tag"
		_, err := launch.Run(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), "make heat-image") || !strings.Contains(err.Error(), "no-such-tag") {
			t.Errorf("error: %v", err)
		}
		requireNothingLeft(t, o.HeatDir)
	})
	t.Run("container exits during start-up", func(t *testing.T) {
		var w warnings
		o := newOpts(t, launch.Container, &w)
		o.ExtraConf = map[string]map[string]string{"database": {"connection": "bogusdb:///nowhere"}}
		_, err := launch.Run(context.Background(), o)
		for _, s := range []string{"exited during start-up", "last lines of", "bogusdb"} {
			if err == nil || !strings.Contains(err.Error(), s) {
				t.Errorf("error lacks %q: %v", s, err)
			}
		}
		requireNothingLeft(t, o.HeatDir)
		if _, err := os.Stat(filepath.Join(o.HeatDir, heatdir.RecordFile)); !os.IsNotExist(err) {
			t.Errorf("launch record left after a failed start")
		}
	})
	t.Run("port in use", func(t *testing.T) {
		var w warnings
		o := newOpts(t, launch.Container, &w)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", o.APIPort))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		_, err = launch.Run(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), "already in use") {
			t.Errorf("error: %v", err)
		}
	})
}
