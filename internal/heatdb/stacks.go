package heatdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// Stack is a stack as Heat's database holds it.
type Stack struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"` // ACTION_STATUS, as the API shows it
}

// sqliteBusyTimeout is how long a read waits while Heat writes to its sqlite
// database (a writer locks it; without a timeout a read fails at once with
// SQLITE_BUSY).
const sqliteBusyTimeout = 30 * time.Second

// open opens the database with Heat's credentials (a sqlite file read-only,
// waiting for a writer to finish).
func open(d DB) (*sql.DB, error) {
	if d.Kind == SQLite {
		u := url.URL{Scheme: "file", Path: d.Path,
			RawQuery: fmt.Sprintf("mode=ro&_pragma=busy_timeout(%d)", sqliteBusyTimeout.Milliseconds())}
		return sql.Open("sqlite", u.String())
	}
	return sql.Open("mysql", d.DSN())
}

// ListStacks reads the live top-level stacks.
func ListStacks(ctx context.Context, d DB) ([]Stack, error) {
	return queryStacks(ctx, d, "SELECT id, name, action, status FROM stack WHERE deleted_at IS NULL AND owner_id IS NULL ORDER BY name, id")
}

// InterruptedStacks lists the stacks, nested ones too, that Heat's legacy
// engine resets to FAILED when it starts: IN_PROGRESS, created by the
// legacy engine (a stack of the convergence engine stays IN_PROGRESS, and
// Heat accepts an update of it anyway).
func InterruptedStacks(ctx context.Context, d DB) ([]Stack, error) {
	return queryStacks(ctx, d, "SELECT id, name, action, status FROM stack WHERE deleted_at IS NULL AND status = 'IN_PROGRESS' "+
		"AND (convergence IS NULL OR convergence = 0) ORDER BY name, id")
}

func queryStacks(ctx context.Context, d DB, query string) ([]Stack, error) {
	db, err := open(d)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("listing stacks in %s: %w", d, err)
	}
	defer rows.Close()
	out := []Stack{}
	for rows.Next() {
		var s Stack
		var action, status sql.NullString
		if err := rows.Scan(&s.ID, &s.Name, &action, &status); err != nil {
			return nil, fmt.Errorf("listing stacks in %s: %w", d, err)
		}
		s.Status = action.String + "_" + status.String
		out = append(out, s)
	}
	return out, rows.Err()
}

// StackEnvironment reads the environment a stack was last given, as Heat
// stores it (raw_template.environment, JSON): hidden parameters are there
// as they were given, where Heat's API shows "******". Heat's option
// encrypt_parameters_and_properties stores them encrypted instead; their
// names are in the environment's encrypted_param_names.
func StackEnvironment(ctx context.Context, d DB, stackID string) (map[string]any, error) {
	db, err := open(d)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var raw sql.NullString
	err = db.QueryRowContext(ctx, "SELECT raw_template.environment FROM stack JOIN raw_template ON stack.raw_template_id = raw_template.id "+
		"WHERE stack.id = ? AND stack.deleted_at IS NULL", stackID).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s holds no stack %s", d, stackID)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the environment of stack %s in %s: %w", stackID, d, err)
	}
	env := map[string]any{}
	if raw.Valid && raw.String != "" {
		if err := json.Unmarshal([]byte(raw.String), &env); err != nil {
			return nil, fmt.Errorf("the environment of stack %s in %s is not JSON: %v", stackID, d, err)
		}
	}
	return env, nil
}
