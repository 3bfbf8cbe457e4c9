package podheat

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	nettypes "github.com/containers/common/libnetwork/types"
	"github.com/containers/podman/v4/pkg/bindings/containers"
	"github.com/containers/podman/v4/pkg/specgen"
	spec "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
)

// sqlite gives a container Heat the sqlite file in heat_dir.
func (b *Backend) sqlite(cfg *heatdir.Config, rec *heatdir.Record) error {
	cfg.Database = heatdb.DB{Kind: heatdb.SQLite, Path: b.path(heatdir.SQLiteFile)}
	rec.Database, rec.DBLocation = string(heatdb.SQLite), cfg.Database.Path
	return nil
}

// startContainer restores the dump (into the sqlite file in heat_dir or the
// external database) before the container starts, then runs db_sync and
// heat-all in it.
func (b *Backend) startContainer(ctx context.Context, rec *heatdir.Record, restore func(context.Context) error) error {
	if restore != nil {
		if err := b.restoreBeforeStart(ctx, restore); err != nil {
			return err
		}
	}
	name := Name(b.dir())
	s := specgen.NewSpecGenerator(b.s.Image, false)
	s.Name = name
	s.Labels = b.labels()
	conf := shq(b.path(heatdir.HeatConf))
	s.Command = b.script(CHeatAll, append(b.dbSyncScript(), "exec heat-all --config-file "+conf)...)
	s.Mounts = []spec.Mount{{Type: "bind", Source: b.dir(), Destination: b.dir(), Options: []string{"rbind", "rw"}}}
	for _, f := range b.roFiles() {
		s.Mounts = append(s.Mounts, spec.Mount{Type: "bind", Source: b.path(f), Destination: b.path(f), Options: []string{"rbind", "ro"}})
	}
	if b.hostNetwork() {
		s.NetNS = specgen.Namespace{NSMode: specgen.Host}
	} else {
		s.PortMappings = []nettypes.PortMapping{{HostIP: strings.Trim(b.s.BindHost, "[]"), HostPort: uint16(b.s.APIPort),
			ContainerPort: uint16(b.s.APIPort), Protocol: "tcp"}}
	}
	if _, err := containers.CreateWithSpec(b.pctx, s, nil); err != nil {
		return fmt.Errorf("creating container %s: %w", name, err)
	}
	if err := b.recordObject(rec); err != nil {
		return err
	}
	if err := containers.Start(b.pctx, name, nil); err != nil {
		return fmt.Errorf("starting container %s: %w%s", name, err, b.logTails([]string{name}, CHeatAll))
	}
	return nil
}

// restoreBeforeStart loads the newest dump into the sqlite file in heat_dir
// or the external database, before the container or pod starts.
func (b *Backend) restoreBeforeStart(ctx context.Context, restore func(context.Context) error) error {
	db, err := b.s.Dir.Database()
	if err != nil {
		return fmt.Errorf("restore_db: %w", err)
	}
	if db.Kind == heatdb.SQLite {
		// The container sees heat_dir at the same path, and nothing else of
		// the host: the file heat.conf names must be inside it.
		rel, err := filepath.Rel(b.dir(), db.Path)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			return fmt.Errorf("restore_db: heat.conf names the sqlite database %s, which is not inside heat_dir %s, "+
				"the only host directory the container sees: remove the [database] connection override", db.Path, b.dir())
		}
	}
	if err := restore(ctx); err != nil {
		return err
	}
	if db.Kind == heatdb.SQLite {
		// The restore keeps the mode of the file it replaces, which a Heat
		// still running after a wipe may have recreated with its umask 027.
		if err := os.Chmod(db.Path, heatdir.FileMode); err != nil {
			return fmt.Errorf("restore_db: %w", err)
		}
	}
	return nil
}
