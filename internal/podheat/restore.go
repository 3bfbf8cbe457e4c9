package podheat

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/containers/podman/v4/pkg/bindings/containers"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dbdump"
	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
)

// ownDBInPod reports whether the requested Heat is a pod with its own MariaDB.
func (o *Options) ownDBInPod() bool { return o.HeatType == Pod && !o.externalDB() }

// restore loads the newest dump into the sqlite file in heat_dir or the
// external database, before the container or pod starts.
func (o *Options) restore(ctx context.Context) (*dumps.Result, error) {
	t, err := dumps.Target(o.HeatDir)
	if err != nil {
		return nil, fmt.Errorf("restore_db: %w", err)
	}
	if t.Kind == dbdump.KindSQLite {
		// The container sees heat_dir at the same path, and nothing else of
		// the host: the file heat.conf names must be inside it.
		rel, err := filepath.Rel(filepath.Clean(o.HeatDir), t.Path)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			return nil, fmt.Errorf("restore_db: heat.conf names the sqlite database %s, which is not inside heat_dir %s, "+
				"the only host directory the container sees: remove the [database] connection override", t.Path, o.HeatDir)
		}
	}
	r, err := dumps.Restore(ctx, dumps.RestoreOptions{HeatDir: o.HeatDir, Dump: o.RestoreFrom, Warn: o.Warn, Secret: o.Secret})
	if err != nil {
		return nil, fmt.Errorf("restore_db: %w", err)
	}
	if t.Kind == dbdump.KindSQLite {
		// The restore keeps the mode of the file it replaces, which a Heat
		// still running after a wipe may have recreated with its umask 027.
		if err := os.Chmod(t.Path, 0o600); err != nil {
			return nil, fmt.Errorf("restore_db: %w", err)
		}
	}
	return &r, nil
}

// restoreIntoPod waits until the pod's MariaDB answers on the host
// (heat.conf [database] host_connection), restores the newest dump into it,
// and lets heat-engine go on to db_sync.
func (o *Options) restoreIntoPod(ctx, pctx context.Context) (*dumps.Result, error) {
	t, err := dumps.Target(o.HeatDir)
	if err != nil {
		return nil, fmt.Errorf("restore_db: %w", err)
	}
	if t.Kind != dbdump.KindMySQL {
		return nil, fmt.Errorf("restore_db: heat.conf names no MySQL database the host can reach ([database] %s)", dumps.HostConnectionKey)
	}
	db := PodContainerName(o.HeatDir, CMariaDB)
	deadline := time.Now().Add(o.Timeout)
	for {
		data, err := containers.Inspect(pctx, db, nil)
		if err != nil {
			return nil, fmt.Errorf("restore_db: inspecting container %s: %w", db, err)
		}
		if data.State != nil && !data.State.Running {
			return nil, fmt.Errorf("restore_db: container %s exited before the restore (%s, exit code %d)%s",
				db, data.State.Status, data.State.ExitCode, o.logTails(pctx, []string{db}, CMariaDB))
		}
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = dumps.Exists(c, t)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("restore_db: the pod's MariaDB did not answer at %s within %s (%v; raise timeout if this host is slow)%s",
				dumps.Describe(t), o.Timeout, err, o.logTails(pctx, []string{db}, CMariaDB))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("restore_db: waiting for the pod's MariaDB: %w", ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
	r, err := dumps.Restore(ctx, dumps.RestoreOptions{HeatDir: o.HeatDir, Dump: o.RestoreFrom, Warn: o.Warn, Secret: o.Secret})
	if err != nil {
		return nil, fmt.Errorf("restore_db: %w", err)
	}
	if err := os.Remove(filepath.Join(o.HeatDir, RunDir, restorePending)); err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("restore_db: letting heat-engine start: %w", err)
	}
	return &r, nil
}

// StopHeat stops the Heat services of heatDir's container or pod (heat-all,
// or heat-api and heat-engine) as its launch record names them, and leaves
// the pod's MariaDB and RabbitMQ running: the watchdog then drops the
// database through heat.conf's host_connection while nothing writes to it.
// A missing record or container is fine.
func StopHeat(ctx context.Context, heatDir string, grace time.Duration) error {
	rec, err := readRecord(heatDir)
	if err != nil || rec == nil {
		return err
	}
	pctx, err := Connect(ctx, rec.Socket)
	if err != nil {
		return err
	}
	var names []string
	switch rec.HeatType {
	case Container:
		names = []string{Name(heatDir)}
	case Pod:
		names = []string{PodContainerName(heatDir, CHeatAPI), PodContainerName(heatDir, CHeatEngine)}
	default:
		return fmt.Errorf("%s records a %s Heat, not a container or pod", filepath.Join(heatDir, StateFile), rec.HeatType)
	}
	for _, n := range names {
		opts := new(containers.StopOptions).WithTimeout(uint(grace / time.Second)).WithIgnore(true)
		if err := containers.Stop(pctx, n, opts); err != nil && !isNotFound(err) {
			return fmt.Errorf("stopping container %s: %w", n, err)
		}
	}
	return nil
}
