// Package podheat holds the launch backends that run the ephemeral Heat of
// one heat_dir in podman, through the podman REST API
// (github.com/containers/podman/v4/pkg/bindings):
//
//   - container (container.go): one heat-all container (sqlite in heat_dir,
//     or an existing MySQL), its API published on bind_host:api_port only;
//   - pod (pod.go): heat_dir/heat-pod.yaml, a Kubernetes Pod started with
//     play kube: heat-api, heat-engine with engine_workers and, unless
//     external URLs are given, its own MariaDB (datadir in heat_dir) and
//     RabbitMQ, all on the pod's loopback; per-launch random credentials
//     live only in heat_dir (0600).
//
// Pods and containers are named after a hash of heat_dir and labelled with
// it and with the launch id, and the launch record holds their id: a
// relaunch recognises its own object by id, and removes only objects
// labelled for this heat_dir (which only this package labels).
package podheat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/containers/podman/v4/pkg/bindings/containers"
	"github.com/containers/podman/v4/pkg/bindings/pods"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/tuning"
)

// Heat types this package runs.
const (
	Container = "container"
	Pod       = "pod"
)

// Backend runs Heat in a container or a pod, for one launch.
type Backend struct {
	kind string
	s    *backend.Spec
	// pctx carries the connection to the podman service (connect).
	pctx   context.Context
	socket string
	// The pod's own services: their ports and per-launch credentials
	// (Configure), for Start.
	ports ports
	sec   secrets
}

// NewContainer returns the container backend for one launch.
func NewContainer() backend.Backend { return &Backend{kind: Container} }

// NewPod returns the pod backend for one launch.
func NewPod() backend.Backend { return &Backend{kind: Pod} }

// DefaultEngineWorkers is half the CPUs, at least 1.
func DefaultEngineWorkers() int {
	n := runtime.NumCPU() / 2
	if n < 1 {
		n = 1
	}
	return n
}

// Check validates the options only container and pod use and fills their
// defaults.
func (b *Backend) Check(s *backend.Spec) error {
	b.s = s
	if s.TransportURL != "" {
		if b.kind != Pod {
			return errors.New("transport_url is only used with heat_type: pod (heat-all runs its RPC in-process)")
		}
		u, err := url.Parse(s.TransportURL)
		if err != nil || !strings.HasPrefix(u.Scheme, "rabbit") || u.Host == "" {
			return errors.New("transport_url must be the URL of an existing RabbitMQ, rabbit://USER:PASSWORD@HOST:PORT/")
		}
		if pw, ok := u.User.Password(); ok {
			s.Secret(pw)
		}
	}
	if s.EngineWorkers < 0 {
		return fmt.Errorf("engine_workers must be at least 1, got %d", s.EngineWorkers)
	}
	if ip := net.ParseIP(strings.Trim(s.BindHost, "[]")); ip == nil {
		return fmt.Errorf("bind_host must be an IP address with heat_type %s (podman publishes the port on it), got %q", b.kind, s.BindHost)
	}
	if s.Image == "" {
		s.Image = DefaultImage
	}
	if s.EngineWorkers < 1 {
		s.EngineWorkers = DefaultEngineWorkers()
	}
	if b.kind == Container {
		s.EngineWorkers = 1
	}
	if s.Socket == "" {
		s.Socket = DefaultSocket()
	}
	return nil
}

func (b *Backend) externalDB() bool { return b.s.AdminDB != nil }

// hostNetwork: an external service on this host's loopback is unreachable
// from a bridge-networked pod, so such a pod shares the host's network.
func (b *Backend) hostNetwork() bool {
	var hosts []string
	if b.s.AdminDB != nil && b.s.AdminDB.Net == "tcp" {
		h, _, _ := net.SplitHostPort(b.s.AdminDB.Addr)
		hosts = append(hosts, h)
	}
	if b.s.TransportURL != "" {
		if u, err := url.Parse(b.s.TransportURL); err == nil {
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

// connect opens the podman service: rec's when the launch recorded one and
// none was asked for, else the spec's.
func (b *Backend) connect(ctx context.Context, s *backend.Spec, rec *heatdir.Record) error {
	b.s = s
	socket := s.Socket
	if rec != nil && rec.Podman != nil && rec.Podman.Socket != "" && socket == "" {
		socket = rec.Podman.Socket
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

func (b *Backend) labels() map[string]string {
	return map[string]string{LabelManaged: "true", LabelDir: DirHash(b.dir()), LabelType: b.kind, LabelLaunch: b.s.LaunchID}
}

func (b *Backend) endpoint() string {
	return heatdir.Config{BindHost: b.s.BindHost, APIPort: b.s.APIPort}.Endpoint()
}

func randomSecret() (string, error) {
	buf := make([]byte, 18)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("generating a password: %w", err)
	}
	return hex.EncodeToString(buf), nil
}

// Configure checks the images, and sets heat.conf's database (the sqlite
// file of a container, the pod's own MariaDB), message bus and the settings
// a container needs.
func (b *Backend) Configure(ctx context.Context, s *backend.Spec, cfg *heatdir.Config, rec *heatdir.Record) error {
	if err := b.connect(ctx, s, nil); err != nil {
		return err
	}
	if err := checkImages(b.pctx, s.Image, b.apiImage(), b.engineImage()); err != nil {
		return err
	}
	for _, sub := range []string{heatdir.LogDir, heatdir.RunDir} {
		if err := s.Dir.EnsureSub(sub); err != nil {
			return err
		}
	}
	cfg.EngineWorkers = s.EngineWorkers
	cfg.Extra = b.extra()
	b.ports = standardPorts()
	var err error
	if b.hostNetwork() && b.kind == Pod {
		// Own services share the host's loopback: take free ports.
		for _, p := range []*int{&b.ports.MySQL, &b.ports.AMQP, &b.ports.EPMD, &b.ports.Dist} {
			if *p, err = proc.FreePort(); err != nil {
				return err
			}
		}
	}
	switch {
	case b.externalDB():
		// Provisioned by the launcher.
	case b.kind == Container:
		if err := b.sqlite(cfg, rec); err != nil {
			return err
		}
	default:
		if err := b.ownMariaDB(cfg, rec); err != nil {
			return err
		}
	}
	if b.kind == Pod {
		if s.TransportURL != "" {
			cfg.TransportURL = s.TransportURL
		} else {
			if b.sec.RabbitPassword, err = randomSecret(); err != nil {
				return err
			}
			s.Secret(b.sec.RabbitPassword)
			cfg.TransportURL = fmt.Sprintf("rabbit://heat:%s@127.0.0.1:%d/", b.sec.RabbitPassword, b.ports.AMQP)
		}
	}
	return nil
}

// extra is the settings a container needs, under our tuning and the
// caller's settings (the spec's Extra).
func (b *Backend) extra() map[string]map[string]string {
	// Containers are stopped by podman; never wait for oslo.service's 60 s.
	out := map[string]map[string]string{"DEFAULT": {"graceful_shutdown_timeout": "3"}}
	if !b.hostNetwork() {
		// Inside the container's own network namespace; podman publishes
		// the port on bind_host only.
		out["heat_api"] = map[string]string{"bind_host": "0.0.0.0"}
	}
	return tuning.Merge(out, b.s.Extra)
}

// Start creates and starts the container or pod, restoring the dump at the
// right moment, and records the object's id.
func (b *Backend) Start(ctx context.Context, s *backend.Spec, rec *heatdir.Record, restore func(context.Context) error) error {
	if err := b.connect(ctx, s, nil); err != nil {
		return err
	}
	var err error
	if b.kind == Container {
		err = b.startContainer(ctx, rec, restore)
	} else {
		err = b.startPod(ctx, rec, restore)
	}
	if err != nil {
		os.Remove(s.Dir.Run(heatdir.RestorePending))
	}
	return err
}

// recordObject records the id of the object this launch created.
func (b *Backend) recordObject(rec *heatdir.Record) error {
	name := Name(b.dir())
	var id string
	if b.kind == Pod {
		rep, err := pods.Inspect(b.pctx, name, nil)
		if err != nil {
			return fmt.Errorf("inspecting pod %s: %w", name, err)
		}
		id = rep.ID
	} else {
		c, err := containers.Inspect(b.pctx, name, nil)
		if err != nil {
			return fmt.Errorf("inspecting container %s: %w", name, err)
		}
		id = c.ID
	}
	rec.Podman = &heatdir.Podman{Name: name, ID: id, Socket: b.socket}
	return nil
}

// serviceNames are the (podman) container names of a heat_dir's Heat and the
// names their logs have in heat_dir/log.
func (b *Backend) serviceNames() (ctrs, logs []string) {
	name := Name(b.dir())
	if b.kind == Container {
		return []string{name}, []string{CHeatAll}
	}
	for _, c := range []string{CMariaDB, CRabbitMQ, CHeatEngine, CHeatAPI} {
		if c == CMariaDB && b.externalDB() || c == CRabbitMQ && b.s.TransportURL != "" {
			continue
		}
		ctrs = append(ctrs, PodContainerName(b.dir(), c))
		logs = append(logs, c)
	}
	return ctrs, logs
}

// Ready: no service container has exited, and the API answers with the
// engines up.
func (b *Backend) Ready(ctx context.Context, s *backend.Spec, rec *heatdir.Record) error {
	if err := b.connect(ctx, s, rec); err != nil {
		return err
	}
	ctrs, logs := b.serviceNames()
	for i, c := range ctrs {
		data, err := containers.Inspect(b.pctx, c, nil)
		if err != nil {
			return fmt.Errorf("inspecting container %s: %w", c, err)
		}
		if data.State != nil && !data.State.Running {
			return fmt.Errorf("container %s exited during start-up (%s, exit code %d)%s", c, data.State.Status,
				data.State.ExitCode, b.logTails(ctrs[i:i+1], logs[i]))
		}
	}
	return backend.EnginesUp(ctx, rec.Endpoint, s.EngineWorkers)
}

// Logs returns the last lines of the service containers' output and logs.
func (b *Backend) Logs(ctx context.Context, s *backend.Spec, rec *heatdir.Record) string {
	if err := b.connect(ctx, s, rec); err != nil {
		return err.Error()
	}
	ctrs, logs := b.serviceNames()
	return b.logTails(ctrs, logs...)
}

// logTails returns the last lines of the containers' output and of their log
// files in heat_dir/log, for error messages.
func (b *Backend) logTails(ctrs []string, logNames ...string) string {
	var parts []string
	for _, c := range ctrs {
		if s := containerLogs(b.pctx, c, 15); s != "" {
			parts = append(parts, fmt.Sprintf("last lines of 'podman logs %s':\n%s", c, s))
		}
	}
	for _, n := range logNames {
		for _, f := range logFiles(n) {
			p := b.logPath(f)
			data, err := os.ReadFile(p)
			if err != nil || len(strings.TrimSpace(string(data))) == 0 {
				continue
			}
			parts = append(parts, fmt.Sprintf("last lines of %s:\n%s", p, proc.TailLines(data, 15)))
		}
	}
	if len(parts) == 0 {
		return "; its logs in " + b.path(heatdir.LogDir) + " are empty"
	}
	return "; " + strings.Join(parts, "\n")
}

func logFiles(service string) []string {
	switch service {
	case CHeatAll, CHeatEngine:
		return []string{heatdir.StdoutLog(service), "heat-manage.log", heatdir.ServiceLog(service)}
	}
	return []string{heatdir.StdoutLog(service), heatdir.ServiceLog(service)}
}

// Alive checks the recorded object: it exists with the recorded id, carries
// this heat_dir's and this launch's labels, and runs (every container of a
// pod).
func (b *Backend) Alive(ctx context.Context, s *backend.Spec, rec *heatdir.Record) (bool, string) {
	if rec == nil || rec.Podman == nil {
		return false, "no container or pod was recorded (a launch interrupted before Heat started)"
	}
	if rec.Podman.ID == "" {
		return false, fmt.Sprintf("%s was recorded without its id (by an older release)", rec.Podman.Name)
	}
	if err := b.connect(ctx, s, rec); err != nil {
		return false, err.Error()
	}
	var labels map[string]string
	if b.kind == Pod {
		rep, err := pods.Inspect(b.pctx, rec.Podman.ID, nil)
		if err != nil {
			return false, fmt.Sprintf("pod %s (%.12s) is gone", rec.Podman.Name, rec.Podman.ID)
		}
		labels = rep.Labels
		for _, c := range rep.Containers {
			if c.ID != rep.InfraContainerID && c.State != "running" {
				return false, fmt.Sprintf("its container %s is %s", c.Name, c.State)
			}
		}
	} else {
		c, err := containers.Inspect(b.pctx, rec.Podman.ID, nil)
		if err != nil {
			return false, fmt.Sprintf("container %s (%.12s) is gone", rec.Podman.Name, rec.Podman.ID)
		}
		labels = c.Config.Labels
		if c.State == nil || !c.State.Running {
			return false, fmt.Sprintf("container %s is not running", rec.Podman.Name)
		}
	}
	if labels[LabelDir] != DirHash(b.dir()) || labels[LabelLaunch] != rec.LaunchID {
		return false, fmt.Sprintf("%s does not carry this launch's labels", rec.Podman.Name)
	}
	return true, ""
}

// Find lists the pods and containers labelled for this heat_dir.
func (b *Backend) Find(ctx context.Context, s *backend.Spec, rec *heatdir.Record) ([]string, error) {
	if err := b.connect(ctx, s, rec); err != nil {
		return nil, err
	}
	x, err := find(b.pctx, b.dir())
	if err != nil {
		return nil, err
	}
	return x.list(), nil
}

// StopHeat stops the Heat services (heat-all, or heat-api and heat-engine)
// and leaves the pod's MariaDB and RabbitMQ running: the watchdog then drops
// the database through heat.conf's host_connection while nothing writes to
// it.
func (b *Backend) StopHeat(ctx context.Context, s *backend.Spec, rec *heatdir.Record) error {
	if err := b.connect(ctx, s, rec); err != nil {
		return err
	}
	names := []string{Name(b.dir())}
	if b.kind == Pod {
		names = []string{PodContainerName(b.dir(), CHeatAPI), PodContainerName(b.dir(), CHeatEngine)}
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
func (b *Backend) Remove(ctx context.Context, s *backend.Spec, rec *heatdir.Record) error {
	if err := b.connect(ctx, s, rec); err != nil {
		return err
	}
	x, err := find(b.pctx, b.dir())
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

func (b *Backend) grace() time.Duration {
	if b.s.StopGrace > 0 {
		return b.s.StopGrace
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
