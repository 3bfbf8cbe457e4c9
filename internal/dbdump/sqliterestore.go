package dbdump

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// RestoreSQLite loads SQL text (as written by DumpSQLite or `sqlite3 .dump`)
// into a new database file at dbPath. It builds the database in a temporary
// file next to dbPath and renames it into place only when every statement
// succeeded. An existing non-empty dbPath is refused unless WithOverwrite is
// given; then its mode and owner are kept and stale -wal/-shm/-journal files
// are removed. Only the target is written: the dump may not ATTACH others.
func RestoreSQLite(ctx context.Context, r io.Reader, dbPath string, opts ...Option) (Stats, error) {
	o := buildOptions(opts)
	var st Stats
	old, err := os.Stat(dbPath)
	switch {
	case err == nil && !old.Mode().IsRegular():
		return st, fmt.Errorf("sqlite restore: %s exists and is not a regular file", dbPath)
	case err == nil && old.Size() > 0 && !o.overwrite:
		return st, fmt.Errorf("sqlite restore: %s exists and is not empty (refusing to overwrite without the overwrite option)", dbPath)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return st, fmt.Errorf("sqlite restore: %w", err)
	case err != nil:
		old = nil
	}

	var suffix [6]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return st, fmt.Errorf("sqlite restore: %w", err)
	}
	tmp := filepath.Join(filepath.Dir(dbPath), "."+filepath.Base(dbPath)+".restore-"+hex.EncodeToString(suffix[:]))
	removeTmp := func() {
		for _, p := range []string{tmp, tmp + "-journal", tmp + "-wal", tmp + "-shm"} {
			_ = os.Remove(p) // best effort: the files may not exist
		}
	}
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return st, fmt.Errorf("sqlite restore: create temporary database: %w", err)
	}
	if err := f.Close(); err != nil {
		removeTmp()
		return st, fmt.Errorf("sqlite restore: %w", err)
	}

	st, err = loadSQLite(ctx, r, tmp)
	if err != nil {
		removeTmp()
		return st, fmt.Errorf("sqlite restore into %s: %w", dbPath, err)
	}
	if err := finishSQLiteFile(tmp, dbPath, old); err != nil {
		removeTmp()
		return st, fmt.Errorf("sqlite restore into %s: %w", dbPath, err)
	}
	return st, nil
}

func loadSQLite(ctx context.Context, r io.Reader, path string) (Stats, error) {
	var st Stats
	uri, err := sqliteURI(path, "_pragma=foreign_keys(0)")
	if err != nil {
		return st, err
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return st, fmt.Errorf("open: %w", err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return st, fmt.Errorf("open: %w", err)
	}
	defer conn.Close()

	cr := &countingReader{r: r}
	sp := newSQLiteSplitter(cr)
	inTx := false
	for {
		stmt, line, err := sp.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			st.Bytes = cr.n
			return st, err
		}
		kind, table := classifyStatement(stmt, false)
		if kind == stmtAttach {
			return st, fmt.Errorf("line %d: ATTACH is not allowed in a restore", line)
		}
		res, err := conn.ExecContext(ctx, string(stmt))
		if err != nil {
			st.Bytes = cr.n
			return st, fmt.Errorf("line %d: %w (statement: %s)", line, err, abbreviate(stmt))
		}
		st.Statements++
		switch kind {
		case stmtBegin:
			inTx = true
		case stmtCommit:
			inTx = false
		case stmtCreateTable:
			st.Tables++
		case stmtInsert:
			if n, err := res.RowsAffected(); err == nil && !hasPrefixFold(table, "sqlite_") {
				st.addRows(table, n)
			}
		}
	}
	st.Bytes = cr.n
	if inTx {
		return st, errors.New("dump ends inside a transaction (truncated file?): BEGIN without COMMIT")
	}
	if err := conn.Close(); err != nil {
		return st, fmt.Errorf("close: %w", err)
	}
	if err := db.Close(); err != nil {
		return st, fmt.Errorf("close: %w", err)
	}
	return st, nil
}

// finishSQLiteFile syncs tmp, gives it the mode and owner of the file it
// replaces (0600 for a new file), removes stale journal files and renames it
// over dbPath.
func finishSQLiteFile(tmp, dbPath string, old os.FileInfo) error {
	f, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if old != nil {
		if err := f.Chmod(old.Mode().Perm()); err != nil {
			f.Close()
			return err
		}
		if sys, ok := old.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
			if err := f.Chown(int(sys.Uid), int(sys.Gid)); err != nil {
				f.Close()
				return err
			}
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if err := os.Remove(dbPath + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove stale %s: %w", suffix, err)
		}
	}
	if err := os.Rename(tmp, dbPath); err != nil {
		return err
	}
	dir, err := os.Open(filepath.Dir(dbPath))
	if err != nil {
		return err
	}
	defer dir.Close()
	if err := dir.Sync(); err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	return nil
}

func abbreviate(stmt []byte) string {
	const n = 200
	s := string(stmt)
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}
