package podheat

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
)

// RestoreBeforeStart loads the newest dump into the sqlite file in heat_dir
// or the external database, before the container or pod starts.
func (b *Base) RestoreBeforeStart(ctx context.Context, restore func(context.Context) error) error {
	db, err := b.S.Dir.Database()
	if err != nil {
		return fmt.Errorf("restore_db: %w", err)
	}
	if db.Kind == heatdb.SQLite {
		// The container sees heat_dir at the same path, and nothing else of
		// the host: the file heat.conf names must be inside it.
		rel, err := filepath.Rel(b.Dir(), db.Path)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			return fmt.Errorf("restore_db: heat.conf names the sqlite database %s, which is not inside heat_dir %s, "+
				"the only host directory the container sees: remove the [database] connection override", db.Path, b.Dir())
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
