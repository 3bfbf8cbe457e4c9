// Package pod is the launch backend that runs the ephemeral Heat of one
// heat_dir as a pod in podman (package podheat holds what it shares with
// the container backend): heat_dir/heat-pod.yaml, a Kubernetes Pod started
// with play kube, of heat-api, heat-engine with engine_workers and, unless
// external URLs are given, its own MariaDB (datadir in heat_dir) and
// RabbitMQ, all on the pod's loopback; per-launch random credentials live
// only in heat_dir (0600).
package pod

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/containers/podman/v4/pkg/bindings/play"
	"github.com/containers/podman/v4/pkg/bindings/pods"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/podheat"
	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// HeatType selects this backend.
const HeatType = "pod"

// The options only a pod uses.
var (
	APIImage      = &backend.Option{Param: module.Param{Name: "api_image", Help: "pod: image of heat-api (default: image)"}}
	EngineImage   = &backend.Option{Param: module.Param{Name: "engine_image", Help: "pod: image of heat-engine (default: image)"}}
	EngineWorkers = &backend.Option{Param: module.Param{Name: "engine_workers", Type: module.Int, Range: module.Between(1, 256),
		Help: "pod: heat-engine workers (default: half the CPUs, at least 1)"}}
	TransportURL = &backend.Option{Param: module.Param{Name: "transport_url", NoLog: true,
		Help: "pod: an existing RabbitMQ, rabbit://USER:PASSWORD@HOST:PORT/ (default: the pod runs its own)"},
		Why: "(heat-all runs its RPC in-process)"}
)

// Declaration is heat_type pod.
var Declaration = backend.Declaration{
	HeatType:          HeatType,
	Options:           []*backend.Option{podheat.Image, APIImage, EngineImage, EngineWorkers, TransportURL, podheat.Socket},
	Identity:          podheat.IdentityKey,
	OwnDatabaseServer: true,
	New:               New,
}

// Backend runs Heat in a pod, for one launch.
type Backend struct {
	podheat.Base
	// The pod's own services: their ports (once chosen) and per-launch
	// credentials, for Start.
	ports *ports
	sec   secrets
}

// New returns the pod backend for one launch.
func New() backend.Backend { return &Backend{Base: podheat.Base{Kind: HeatType}} }

// DefaultEngineWorkers is half the CPUs, at least 1.
func DefaultEngineWorkers() int {
	n := runtime.NumCPU() / 2
	if n < 1 {
		n = 1
	}
	return n
}

// Check validates transport_url and engine_workers and fills in the
// workers and podman_socket.
func (b *Backend) Check(s *backend.Spec) error {
	if t := s.Options.Str(TransportURL.Name); t != "" {
		u, err := url.Parse(t)
		if err != nil || !strings.HasPrefix(u.Scheme, "rabbit") || u.Host == "" {
			return errors.New("transport_url must be the URL of an existing RabbitMQ, rabbit://USER:PASSWORD@HOST:PORT/")
		}
		if pw, ok := u.User.Password(); ok {
			s.Secret(pw)
		}
	}
	switch n := s.Options.Int(EngineWorkers.Name); {
	case n < 0:
		return fmt.Errorf("engine_workers must be at least 1, got %d", n)
	case n == 0:
		s.Options[EngineWorkers.Name] = DefaultEngineWorkers()
	}
	return b.Base.Check(s)
}

func (b *Backend) transportURL() string { return b.S.Options.Str(TransportURL.Name) }
func (b *Backend) workers() int         { return b.S.Options.Int(EngineWorkers.Name) }
func (b *Backend) externalDB() bool     { return b.S.AdminDB != nil }
func (b *Backend) hostNetwork() bool    { return b.HostNetwork(b.transportURL()) }

func (b *Backend) apiImage() string {
	if i := b.S.Options.Str(APIImage.Name); i != "" {
		return i
	}
	return b.Image()
}

func (b *Backend) engineImage() string {
	if i := b.S.Options.Str(EngineImage.Name); i != "" {
		return i
	}
	return b.Image()
}

// choosePorts chooses the ports of the pod's own services, once: inside a
// bridge-networked pod the standard ones; sharing the host's loopback, free
// ones.
func (b *Backend) choosePorts() (*ports, error) {
	if b.ports != nil {
		return b.ports, nil
	}
	p := standardPorts()
	if b.hostNetwork() {
		for _, n := range []*int{&p.MySQL, &p.AMQP, &p.EPMD, &p.Dist} {
			var err error
			if *n, err = proc.FreePort(); err != nil {
				return nil, err
			}
		}
		p.HostMySQL = p.MySQL
	}
	b.ports = &p
	return b.ports, nil
}

// Configure checks the images and sets heat.conf's message bus (the pod's
// own RabbitMQ unless transport_url) and the settings the pod needs.
func (b *Backend) Configure(ctx context.Context, s *backend.Spec, cfg *heatdir.Config, _ *heatdir.Record) error {
	if err := b.Prepare(ctx, s, cfg, b.hostNetwork(), b.Image(), b.apiImage(), b.engineImage()); err != nil {
		return err
	}
	cfg.EngineWorkers = b.workers()
	if t := b.transportURL(); t != "" {
		cfg.TransportURL = t
		return nil
	}
	p, err := b.choosePorts()
	if err != nil {
		return err
	}
	if b.sec.RabbitPassword, err = b.NewSecret(); err != nil {
		return err
	}
	cfg.TransportURL = fmt.Sprintf("rabbit://heat:%s@127.0.0.1:%d/", b.sec.RabbitPassword, p.AMQP)
	return nil
}

// Start writes the pod's files and plays heat-pod.yaml. With its own
// MariaDB, a restore happens once MariaDB answers, while heat-engine waits
// (restore.pending) before db_sync; with an external database, before the
// pod starts.
func (b *Backend) Start(ctx context.Context, s *backend.Spec, rec *heatdir.Record, restore func(context.Context) error) error {
	return b.Base.Start(ctx, s, func() error {
		ownDB := !b.externalDB()
		if restore != nil && !ownDB {
			if err := b.RestoreBeforeStart(ctx, restore); err != nil {
				return err
			}
		}
		if err := b.create(restore != nil && ownDB); err != nil {
			return err
		}
		rep, err := pods.Inspect(b.Podman(), b.Name(), nil)
		if err != nil {
			return fmt.Errorf("inspecting pod %s: %w", b.Name(), err)
		}
		if err := b.Record(rec, rep.ID); err != nil {
			return err
		}
		if restore != nil && ownDB {
			return b.restoreIntoPod(ctx, restore)
		}
		return nil
	})
}

func (b *Backend) create(holdEngine bool) error {
	p, err := b.choosePorts()
	if err != nil {
		return err
	}
	if !b.externalDB() {
		if err := fsutil.WriteFileAtomic(b.Path(heatdir.MariaDBInit), mariaDBInitSQL(b.sec.DBPassword, !b.hostNetwork()), heatdir.FileMode); err != nil {
			return err
		}
		if err := b.S.Dir.EnsureSub(heatdir.MariaDBDir); err != nil {
			return err
		}
	}
	if b.transportURL() == "" {
		if err := fsutil.WriteFileAtomic(b.Path(heatdir.RabbitConf), rabbitConf(b.sec.RabbitPassword, *p), heatdir.FileMode); err != nil {
			return err
		}
	}
	for _, m := range []string{heatdir.DBSyncDone, heatdir.RestorePending} {
		if err := os.Remove(b.S.Dir.Run(m)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	if holdEngine {
		if err := fsutil.WriteFileAtomic(b.S.Dir.Run(heatdir.RestorePending),
			[]byte("heat-engine waits until the launcher has restored the database\n"), heatdir.FileMode); err != nil {
			return err
		}
	}
	y, err := b.renderPod(*p)
	if err != nil {
		return err
	}
	yp := b.Path(heatdir.PodYAML)
	if err := fsutil.WriteFileAtomic(yp, y, heatdir.FileMode); err != nil {
		return err
	}
	rep, err := play.Kube(b.Podman(), yp, new(play.KubeOptions).WithStart(true).WithQuiet(true))
	if err != nil {
		return fmt.Errorf("podman play kube %s: %w", yp, err)
	}
	for _, p := range rep.Pods {
		if len(p.ContainerErrors) > 0 {
			return fmt.Errorf("podman play kube %s: %s", yp, strings.Join(p.ContainerErrors, "; "))
		}
	}
	return nil
}

// restoreIntoPod waits until the pod's MariaDB answers on the host
// (heat.conf's host database), restores the newest dump into it, and lets
// heat-engine go on to db_sync.
func (b *Backend) restoreIntoPod(ctx context.Context, restore func(context.Context) error) error {
	db, err := b.S.Dir.Database()
	if err != nil {
		return fmt.Errorf("restore_db: %w", err)
	}
	if !db.Published {
		return fmt.Errorf("restore_db: heat.conf names no database the host can reach ([database] host_connection)")
	}
	svc := b.service(CMariaDB)
	deadline := time.Now().Add(b.S.Timeout)
	for {
		if err := b.Exited(svc, "before the restore"); err != nil {
			return fmt.Errorf("restore_db: %w", err)
		}
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = heatdb.HasData(c, db.DB)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("restore_db: the pod's MariaDB did not answer at %s within %s (%v; raise timeout if this host is slow)%s",
				db, b.S.Timeout, err, b.LogTails(svc))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("restore_db: waiting for the pod's MariaDB: %w", ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
	if err := restore(ctx); err != nil {
		return err
	}
	if err := os.Remove(b.S.Dir.Run(heatdir.RestorePending)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("restore_db: letting heat-engine start: %w", err)
	}
	return nil
}

// service is container c of the pod.
func (b *Backend) service(c string) podheat.Service {
	return podheat.Service{Container: ContainerName(b.Dir(), c), Logs: podheat.ServiceLogs(c, c == CHeatEngine)}
}

// services are the pod's containers, without the MariaDB and RabbitMQ of
// external URLs.
func (b *Backend) services() []podheat.Service {
	var out []podheat.Service
	for _, c := range []string{CMariaDB, CRabbitMQ, CHeatEngine, CHeatAPI} {
		if c == CMariaDB && b.externalDB() || c == CRabbitMQ && b.transportURL() != "" {
			continue
		}
		out = append(out, b.service(c))
	}
	return out
}

// Ready: no container of the pod has exited, and the API lists
// engine_workers engines up.
func (b *Backend) Ready(ctx context.Context, s *backend.Spec, rec *heatdir.Record) error {
	b.S = s
	return b.Base.Ready(ctx, s, rec, b.services(), b.workers())
}

// Logs returns the last lines of the pod's containers' output and logs.
func (b *Backend) Logs(ctx context.Context, s *backend.Spec, rec *heatdir.Record) string {
	b.S = s
	return b.Base.Logs(ctx, s, rec, b.services())
}

// Alive checks the recorded pod: its id, labels, and that every container
// runs.
func (b *Backend) Alive(ctx context.Context, s *backend.Spec, rec *heatdir.Record) (bool, string) {
	return b.Base.Alive(ctx, s, rec, func(id *podheat.Identity) (map[string]string, string) {
		rep, err := pods.Inspect(b.Podman(), id.ID, nil)
		if err != nil {
			return nil, fmt.Sprintf("pod %s (%.12s) is gone", id.Name, id.ID)
		}
		for _, c := range rep.Containers {
			if c.ID != rep.InfraContainerID && c.State != "running" {
				return nil, fmt.Sprintf("its container %s is %s", c.Name, c.State)
			}
		}
		return rep.Labels, ""
	})
}

// StopHeat stops heat-api and heat-engine and leaves the pod's MariaDB and
// RabbitMQ running: the watchdog then drops the database through
// heat.conf's host_connection while nothing writes to it.
func (b *Backend) StopHeat(ctx context.Context, s *backend.Spec, rec *heatdir.Record) error {
	d := s.Dir.Path()
	return b.StopContainers(ctx, s, rec, ContainerName(d, CHeatAPI), ContainerName(d, CHeatEngine))
}
