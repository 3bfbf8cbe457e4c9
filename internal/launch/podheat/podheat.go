// Package podheat is what the launch backends that run Heat in podman
// (packages container and pod) share, through the podman REST API
// (github.com/containers/podman/v4/pkg/bindings): their common options
// (image, podman_socket), their identity in the launch record, the names
// and labels of their objects, the shell scripts their containers run,
// and Base, which finds, checks, stops and removes those objects.
//
// Pods and containers are named after a hash of heat_dir and labelled with
// it and with the launch id, and the launch record holds their id: a
// relaunch recognises its own object by id, and removes only objects
// labelled for this heat_dir (which only these backends label).
package podheat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/containers/podman/v4/pkg/bindings/containers"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/tuning"
)

// The options of container and pod.
var (
	Image = &backend.Option{Param: module.Param{Name: "image", Default: DefaultImage,
		Help: "container/pod: the Heat image (make heat-image builds it)"}}
	Socket = &backend.Option{Param: module.Param{Name: "podman_socket",
		Help: "container/pod: the podman service (default unix:///run/podman/podman.sock, or $XDG_RUNTIME_DIR/podman/podman.sock)"},
		NoRestart: true}
)

// IdentityKey is the launch record's key of a container or pod (Identity).
const IdentityKey = "podman"

// Identity is what the launch record holds of a container or pod: its
// name, its id (a new object of the same name has another), and the
// service that runs it.
type Identity struct {
	Name   string `json:"name"`
	ID     string `json:"id"`
	Socket string `json:"socket"`
}

// identityOf reads the container or pod rec names (nil when none).
func identityOf(rec *heatdir.Record) *Identity {
	if rec == nil || rec.Object == nil || rec.Object.Key != IdentityKey {
		return nil
	}
	var id Identity
	if rec.Object.Decode(&id) != nil {
		return nil
	}
	return &id
}

// Base is what a container or pod backend shares, for one launch.
type Base struct {
	// Kind is the heat type: labels and messages.
	Kind string
	// S is the launch's spec (Check).
	S *backend.Spec
	// pctx carries the connection to the podman service (Connect).
	pctx   context.Context
	socket string
}

// Check keeps the spec, checks bind_host and fills in podman_socket.
func (b *Base) Check(s *backend.Spec) error {
	b.S = s
	if ip := net.ParseIP(strings.Trim(s.BindHost, "[]")); ip == nil {
		return fmt.Errorf("bind_host must be an IP address with heat_type %s (podman publishes the port on it), got %q", b.Kind, s.BindHost)
	}
	if s.Options.Str(Socket.Name) == "" {
		s.Options[Socket.Name] = DefaultSocket()
	}
	return nil
}

// Podman is the context that carries the connection to the podman service.
func (b *Base) Podman() context.Context { return b.pctx }

// Connect opens the podman service: rec's when the launch recorded one and
// none was asked for, else the spec's.
func (b *Base) Connect(ctx context.Context, s *backend.Spec, rec *heatdir.Record) error {
	b.S = s
	socket := s.Options.Str(Socket.Name)
	if id := identityOf(rec); id != nil && id.Socket != "" && socket == "" {
		socket = id.Socket
	}
	if socket == "" {
		socket = DefaultSocket()
	}
	if b.pctx != nil && b.socket == socket {
		return nil
	}
	pctx, err := Connect(ctx, socket)
	if err != nil {
		return err
	}
	b.pctx, b.socket = pctx, socket
	return nil
}

// Dir is the heat_dir; Path a file in it, LogPath a file in its log/.
func (b *Base) Dir() string                { return b.S.Dir.Path() }
func (b *Base) Path(name string) string    { return b.S.Dir.File(name) }
func (b *Base) LogPath(name string) string { return b.S.Dir.Log(name) }

// Name is the container's or pod's name.
func (b *Base) Name() string { return Name(b.Dir()) }

// Image is the Heat image.
func (b *Base) Image() string { return b.S.Options.Str(Image.Name) }

// Labels are those of every object of this launch.
func (b *Base) Labels() map[string]string {
	return map[string]string{LabelManaged: "true", LabelDir: DirHash(b.Dir()), LabelType: b.Kind, LabelLaunch: b.S.LaunchID}
}

// HostNetwork: an external service on this host's loopback (database_url,
// or one of urls) is unreachable from a bridge network, so Heat shares the
// host's network.
func (b *Base) HostNetwork(urls ...string) bool {
	var hosts []string
	if b.S.AdminDB != nil && b.S.AdminDB.Net == "tcp" {
		h, _, _ := net.SplitHostPort(b.S.AdminDB.Addr)
		hosts = append(hosts, h)
	}
	for _, s := range urls {
		if u, err := url.Parse(s); err == nil && s != "" {
			hosts = append(hosts, u.Hostname())
		}
	}
	for _, h := range hosts {
		if h == "localhost" {
			return true
		}
		if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
			return true
		}
	}
	return false
}

// NewSecret is a per-launch password, registered as a secret (masked in
// the output).
func (b *Base) NewSecret() (string, error) {
	buf := make([]byte, 18)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("generating a password: %w", err)
	}
	pw := hex.EncodeToString(buf)
	b.S.Secret(pw)
	return pw, nil
}

// Prepare connects, checks the images, makes heat_dir's log and run
// directories, and sets the heat.conf settings a container needs (under
// our tuning and the caller's settings, the spec's Extra).
func (b *Base) Prepare(ctx context.Context, s *backend.Spec, cfg *heatdir.Config, hostNetwork bool, images ...string) error {
	if err := b.Connect(ctx, s, nil); err != nil {
		return err
	}
	if err := CheckImages(b.pctx, images...); err != nil {
		return err
	}
	for _, sub := range []string{heatdir.LogDir, heatdir.RunDir} {
		if err := s.Dir.EnsureSub(sub); err != nil {
			return err
		}
	}
	// Containers are stopped by podman; never wait for oslo.service's 60 s.
	extra := map[string]map[string]string{"DEFAULT": {"graceful_shutdown_timeout": "3"}}
	if !hostNetwork {
		// Inside the container's own network namespace; podman publishes
		// the port on bind_host only.
		extra["heat_api"] = map[string]string{"bind_host": "0.0.0.0"}
	}
	cfg.Extra = tuning.Merge(extra, s.Extra)
	return nil
}

// Start connects and runs start; a failed start leaves no restore marker.
func (b *Base) Start(ctx context.Context, s *backend.Spec, start func() error) error {
	if err := b.Connect(ctx, s, nil); err != nil {
		return err
	}
	err := start()
	if err != nil {
		os.Remove(s.Dir.Run(heatdir.RestorePending))
	}
	return err
}

// Record records in rec the object this launch created, by its id.
func (b *Base) Record(rec *heatdir.Record, id string) error {
	o, err := heatdir.NewObject(IdentityKey, Identity{Name: b.Name(), ID: id, Socket: b.socket})
	if err != nil {
		return err
	}
	rec.Object = o
	return nil
}

// Service is one of Heat's containers: its podman name and the names of
// its log files in heat_dir/log.
type Service struct {
	Container string
	Logs      []string
}

// ServiceLogs are the log files of service; one that runs db_sync also
// writes heat-manage.log.
func ServiceLogs(service string, dbSync bool) []string {
	if dbSync {
		return []string{heatdir.StdoutLog(service), "heat-manage.log", heatdir.ServiceLog(service)}
	}
	return []string{heatdir.StdoutLog(service), heatdir.ServiceLog(service)}
}

// Ready: no service container has exited, and the API answers with
// engines engines up.
func (b *Base) Ready(ctx context.Context, s *backend.Spec, rec *heatdir.Record, svcs []Service, engines int) error {
	if err := b.Connect(ctx, s, rec); err != nil {
		return err
	}
	for _, svc := range svcs {
		if err := b.Exited(svc, "during start-up"); err != nil {
			return err
		}
	}
	return backend.EnginesUp(ctx, rec.Endpoint, engines)
}

// Exited returns an error naming svc and its logs when its container has
// exited (when: "during start-up").
func (b *Base) Exited(svc Service, when string) error {
	data, err := containers.Inspect(b.pctx, svc.Container, nil)
	if err != nil {
		return fmt.Errorf("inspecting container %s: %w", svc.Container, err)
	}
	if data.State != nil && !data.State.Running {
		return fmt.Errorf("container %s exited %s (%s, exit code %d)%s", svc.Container, when, data.State.Status,
			data.State.ExitCode, b.LogTails(svc))
	}
	return nil
}

// Logs returns the last lines of the services' output and logs.
func (b *Base) Logs(ctx context.Context, s *backend.Spec, rec *heatdir.Record, svcs []Service) string {
	if err := b.Connect(ctx, s, rec); err != nil {
		return err.Error()
	}
	return b.LogTails(svcs...)
}

// LogTails returns the last lines of the services' output and of their
// log files in heat_dir/log, for error messages.
func (b *Base) LogTails(svcs ...Service) string {
	var parts []string
	for _, svc := range svcs {
		if s := containerLogs(b.pctx, svc.Container, 15); s != "" {
			parts = append(parts, fmt.Sprintf("last lines of 'podman logs %s':\n%s", svc.Container, s))
		}
	}
	for _, svc := range svcs {
		for _, f := range svc.Logs {
			p := b.LogPath(f)
			data, err := os.ReadFile(p)
			if err != nil || len(strings.TrimSpace(string(data))) == 0 {
				continue
			}
			parts = append(parts, fmt.Sprintf("last lines of %s:\n%s", p, proc.TailLines(data, 15)))
		}
	}
	if len(parts) == 0 {
		return "; its logs in " + b.Path(heatdir.LogDir) + " are empty"
	}
	return "; " + strings.Join(parts, "\n")
}

// Alive checks the recorded object: it exists with the recorded id,
// carries this heat_dir's and this launch's labels, and runs. inspect
// returns the labels of the object of that id, or why it does not run.
func (b *Base) Alive(ctx context.Context, s *backend.Spec, rec *heatdir.Record,
	inspect func(id *Identity) (labels map[string]string, why string)) (bool, string) {
	id := identityOf(rec)
	if id == nil {
		return false, "no container or pod was recorded (a launch interrupted before Heat started)"
	}
	if id.ID == "" {
		return false, fmt.Sprintf("%s was recorded without its id (by an older release)", id.Name)
	}
	if err := b.Connect(ctx, s, rec); err != nil {
		return false, err.Error()
	}
	labels, why := inspect(id)
	if why != "" {
		return false, why
	}
	if labels[LabelDir] != DirHash(b.Dir()) || labels[LabelLaunch] != rec.LaunchID {
		return false, fmt.Sprintf("%s does not carry this launch's labels", id.Name)
	}
	return true, ""
}

// Find lists the pods and containers labelled for this heat_dir.
func (b *Base) Find(ctx context.Context, s *backend.Spec, rec *heatdir.Record) ([]string, error) {
	if err := b.Connect(ctx, s, rec); err != nil {
		return nil, err
	}
	x, err := find(b.pctx, b.Dir())
	if err != nil {
		return nil, err
	}
	return x.list(), nil
}

// StopContainers stops the named containers (Heat's services), leaving
// the rest running.
func (b *Base) StopContainers(ctx context.Context, s *backend.Spec, rec *heatdir.Record, names ...string) error {
	if err := b.Connect(ctx, s, rec); err != nil {
		return err
	}
	for _, n := range names {
		opts := new(containers.StopOptions).WithTimeout(uint(b.grace() / time.Second)).WithIgnore(true)
		if err := containers.Stop(b.pctx, n, opts); err != nil && !isNotFound(err) {
			return fmt.Errorf("stopping container %s: %w", n, err)
		}
	}
	return nil
}

// Remove stops and removes the pods and containers labelled for this heat_dir.
func (b *Base) Remove(ctx context.Context, s *backend.Spec, rec *heatdir.Record) error {
	if err := b.Connect(ctx, s, rec); err != nil {
		return err
	}
	x, err := find(b.pctx, b.Dir())
	if err != nil {
		return err
	}
	grace := int(b.grace() / time.Second)
	for _, p := range x.pods {
		if err := removePod(b.pctx, p, grace); err != nil {
			return err
		}
	}
	for _, c := range x.ctrs {
		if err := removeContainer(b.pctx, c, uint(grace)); err != nil {
			return err
		}
	}
	return nil
}

func (b *Base) grace() time.Duration {
	if b.S.StopGrace > 0 {
		return b.S.StopGrace
	}
	return 10 * time.Second
}

// objects is what exists in podman for this heat_dir.
type objects struct {
	pods, ctrs []string
}

func (x objects) list() []string {
	var parts []string
	for _, p := range x.pods {
		parts = append(parts, "pod "+p)
	}
	for _, c := range x.ctrs {
		parts = append(parts, "container "+c)
	}
	return parts
}

func find(ctx context.Context, heatDir string) (objects, error) {
	ps, cs, err := ours(ctx, heatDir)
	if err != nil {
		return objects{}, err
	}
	return objects{pods: ps, ctrs: cs}, nil
}
