// Package container is the launch backend that runs the ephemeral Heat of
// one heat_dir as one heat-all container in podman (package podheat holds
// what it shares with the pod backend): sqlite in heat_dir or an existing
// MySQL, the configuration mounted read-only, its API published on
// bind_host:api_port only.
package container

import (
	"context"
	"fmt"
	"strings"

	nettypes "github.com/containers/common/libnetwork/types"
	"github.com/containers/podman/v4/pkg/bindings/containers"
	"github.com/containers/podman/v4/pkg/specgen"
	spec "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/podheat"
)

// HeatType selects this backend.
const HeatType = "container"

// Declaration is heat_type container.
var Declaration = backend.Declaration{
	HeatType: HeatType,
	Options:  []*backend.Option{podheat.Image, podheat.Socket},
	Identity: podheat.IdentityKey,
	New:      New,
}

// heatAll is the container's service: its name in heat_dir/log.
const heatAll = "heat-all"

// Backend runs Heat in a container, for one launch.
type Backend struct {
	podheat.Base
}

// New returns the container backend for one launch.
func New() backend.Backend { return &Backend{Base: podheat.Base{Kind: HeatType}} }

// Database: the sqlite file in heat_dir, which the container sees at the
// same path.
func (b *Backend) Database() backend.Database { return backend.SQLiteFile{} }

// Configure checks the image and sets what a container needs in heat.conf.
func (b *Backend) Configure(ctx context.Context, s *backend.Spec, cfg *heatdir.Config, _ *heatdir.Record) error {
	cfg.EngineWorkers = 1
	return b.Prepare(ctx, s, cfg, b.HostNetwork(), b.Image())
}

func (b *Backend) service() podheat.Service {
	return podheat.Service{Container: b.Name(), Logs: podheat.ServiceLogs(heatAll, true)}
}

// Start restores the dump (into the sqlite file in heat_dir or the
// external database) before the container starts, then runs db_sync and
// heat-all in it, and records the container's id.
func (b *Backend) Start(ctx context.Context, s *backend.Spec, rec *heatdir.Record, restore func(context.Context) error) error {
	return b.Base.Start(ctx, s, func() error {
		if restore != nil {
			if err := b.RestoreBeforeStart(ctx, restore); err != nil {
				return err
			}
		}
		return b.create(rec)
	})
}

func (b *Backend) create(rec *heatdir.Record) error {
	name := b.Name()
	s := specgen.NewSpecGenerator(b.Image(), false)
	s.Name = name
	s.Labels = b.Labels()
	// A local sqlite database needs no db_sync retry: a failure is final.
	s.Command = b.Script(heatAll, append(b.DBSyncScript(b.S.AdminDB != nil), "exec heat-all --config-file "+b.HeatConf())...)
	s.Mounts = []spec.Mount{{Type: "bind", Source: b.Dir(), Destination: b.Dir(), Options: []string{"rbind", "rw"}}}
	for _, f := range podheat.ROFiles() {
		s.Mounts = append(s.Mounts, spec.Mount{Type: "bind", Source: b.Path(f), Destination: b.Path(f), Options: []string{"rbind", "ro"}})
	}
	if b.HostNetwork() {
		s.NetNS = specgen.Namespace{NSMode: specgen.Host}
	} else {
		s.PortMappings = []nettypes.PortMapping{{HostIP: strings.Trim(b.S.BindHost, "[]"), HostPort: uint16(b.S.APIPort),
			ContainerPort: uint16(b.S.APIPort), Protocol: "tcp"}}
	}
	if _, err := containers.CreateWithSpec(b.Podman(), s, nil); err != nil {
		return fmt.Errorf("creating container %s: %w", name, err)
	}
	c, err := containers.Inspect(b.Podman(), name, nil)
	if err != nil {
		return fmt.Errorf("inspecting container %s: %w", name, err)
	}
	if err := b.Record(rec, c.ID); err != nil {
		return err
	}
	if err := containers.Start(b.Podman(), name, nil); err != nil {
		return fmt.Errorf("starting container %s: %w%s", name, err, b.LogTails(b.service()))
	}
	return nil
}

// Ready: the container runs and the API answers with its engine up.
func (b *Backend) Ready(ctx context.Context, s *backend.Spec, rec *heatdir.Record) error {
	return b.Base.Ready(ctx, s, rec, []podheat.Service{b.service()}, 1)
}

// Logs returns the last lines of the container's output and logs.
func (b *Backend) Logs(ctx context.Context, s *backend.Spec, rec *heatdir.Record) string {
	return b.Base.Logs(ctx, s, rec, []podheat.Service{b.service()})
}

// Alive checks the recorded container: its id, labels, and that it runs.
func (b *Backend) Alive(ctx context.Context, s *backend.Spec, rec *heatdir.Record) (bool, string) {
	return b.Base.Alive(ctx, s, rec, func(id *podheat.Identity) (map[string]string, string) {
		c, err := containers.Inspect(b.Podman(), id.ID, nil)
		if err != nil {
			return nil, fmt.Sprintf("container %s (%.12s) is gone", id.Name, id.ID)
		}
		if c.State == nil || !c.State.Running {
			return nil, fmt.Sprintf("container %s is not running", id.Name)
		}
		return c.Config.Labels, ""
	})
}

// StopHeat stops the container (its database, sqlite or external, needs
// nothing running).
func (b *Backend) StopHeat(ctx context.Context, s *backend.Spec, rec *heatdir.Record) error {
	return b.StopContainers(ctx, s, rec, podheat.Name(s.Dir.Path()))
}
