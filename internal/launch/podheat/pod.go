package podheat

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/containers/podman/v4/pkg/bindings/containers"
	"github.com/containers/podman/v4/pkg/bindings/play"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// ownMariaDB gives Heat the pod's own MariaDB: a random password per
// launch, published on a free port of the host's 127.0.0.1 (heat.conf's
// host database) for heat_db_dump, restore_db and the watchdog.
func (b *Backend) ownMariaDB(cfg *heatdir.Config, rec *heatdir.Record) error {
	var err error
	if b.sec.DBPassword, err = randomSecret(); err != nil {
		return err
	}
	b.s.Secret(b.sec.DBPassword)
	b.ports.HostMySQL = b.ports.MySQL
	if !b.hostNetwork() {
		if b.ports.HostMySQL, err = proc.FreePort(); err != nil {
			return err
		}
	}
	inPod := heatdb.DB{Kind: heatdb.MySQL, User: "heat", Password: b.sec.DBPassword, Net: "tcp",
		Addr: fmt.Sprintf("127.0.0.1:%d", b.ports.MySQL), Database: "heat"}
	host := inPod
	host.Addr = fmt.Sprintf("127.0.0.1:%d", b.ports.HostMySQL)
	cfg.Database, cfg.HostDatabase = inPod, &host
	rec.Database, rec.DBHostPort = string(heatdb.MySQL), b.ports.HostMySQL
	rec.DBLocation = fmt.Sprintf("%s (MariaDB of pod %s, datadir %s)", host, Name(b.dir()), b.path(heatdir.MariaDBDir))
	if b.ports.HostMySQL != b.ports.MySQL {
		rec.DBLocation = fmt.Sprintf("%s (MariaDB of pod %s, 127.0.0.1:%d inside the pod, datadir %s)",
			host, Name(b.dir()), b.ports.MySQL, b.path(heatdir.MariaDBDir))
	}
	return nil
}

func (b *Backend) ownDBInPod() bool { return b.kind == Pod && !b.externalDB() }

// startPod writes the pod's files and plays heat-pod.yaml. With its own
// MariaDB, a restore happens once MariaDB answers, while heat-engine waits
// (restore.pending) before db_sync; with an external database, before the
// pod starts.
func (b *Backend) startPod(ctx context.Context, rec *heatdir.Record, restore func(context.Context) error) error {
	if restore != nil && !b.ownDBInPod() {
		if err := b.restoreBeforeStart(ctx, restore); err != nil {
			return err
		}
	}
	if err := b.createPod(restore != nil && b.ownDBInPod()); err != nil {
		return err
	}
	if err := b.recordObject(rec); err != nil {
		return err
	}
	if restore != nil && b.ownDBInPod() {
		return b.restoreIntoPod(ctx, restore)
	}
	return nil
}

func (b *Backend) createPod(holdEngine bool) error {
	if !b.externalDB() {
		if err := fsutil.WriteFileAtomic(b.path(heatdir.MariaDBInit), mariaDBInitSQL(b.sec.DBPassword, !b.hostNetwork()), heatdir.FileMode); err != nil {
			return err
		}
		if err := b.s.Dir.EnsureSub(heatdir.MariaDBDir); err != nil {
			return err
		}
	}
	if b.s.TransportURL == "" {
		if err := fsutil.WriteFileAtomic(b.path(heatdir.RabbitConf), rabbitConf(b.sec.RabbitPassword, b.ports), heatdir.FileMode); err != nil {
			return err
		}
	}
	for _, m := range []string{heatdir.DBSyncDone, heatdir.RestorePending} {
		if err := os.Remove(b.s.Dir.Run(m)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	if holdEngine {
		if err := fsutil.WriteFileAtomic(b.s.Dir.Run(heatdir.RestorePending),
			[]byte("heat-engine waits until the launcher has restored the database\n"), heatdir.FileMode); err != nil {
			return err
		}
	}
	y, err := b.renderPod(b.ports)
	if err != nil {
		return err
	}
	yp := b.path(heatdir.PodYAML)
	if err := fsutil.WriteFileAtomic(yp, y, heatdir.FileMode); err != nil {
		return err
	}
	rep, err := play.Kube(b.pctx, yp, new(play.KubeOptions).WithStart(true).WithQuiet(true))
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
	db, err := b.s.Dir.Database()
	if err != nil {
		return fmt.Errorf("restore_db: %w", err)
	}
	if !db.Published {
		return fmt.Errorf("restore_db: heat.conf names no database the host can reach ([database] host_connection)")
	}
	ctr := PodContainerName(b.dir(), CMariaDB)
	deadline := time.Now().Add(b.s.Timeout)
	for {
		data, err := containers.Inspect(b.pctx, ctr, nil)
		if err != nil {
			return fmt.Errorf("restore_db: inspecting container %s: %w", ctr, err)
		}
		if data.State != nil && !data.State.Running {
			return fmt.Errorf("restore_db: container %s exited before the restore (%s, exit code %d)%s",
				ctr, data.State.Status, data.State.ExitCode, b.logTails([]string{ctr}, CMariaDB))
		}
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = heatdb.HasData(c, db.DB)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("restore_db: the pod's MariaDB did not answer at %s within %s (%v; raise timeout if this host is slow)%s",
				db, b.s.Timeout, err, b.logTails([]string{ctr}, CMariaDB))
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
	if err := os.Remove(b.s.Dir.Run(heatdir.RestorePending)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("restore_db: letting heat-engine start: %w", err)
	}
	return nil
}
