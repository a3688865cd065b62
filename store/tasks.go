package store

import (
	"context"
	"fmt"
	"maps"

	"github.com/jackc/pgx/v5"
)

// TaskConfig is the config of one task of a connector's current task set.
type TaskConfig struct {
	Connector string
	Task      int
	Config    map[string]string
}

// TaskConfigs returns the connector's current task set, ordered by task id (empty when it has none).
func (s *Store) TaskConfigs(ctx context.Context, connector string) ([]TaskConfig, error) {
	rows, err := s.pool.Query(ctx, "SELECT connector_name, task_id, config FROM task_configs WHERE connector_name = $1 ORDER BY task_id", connector)
	if err != nil {
		return nil, fmt.Errorf("read task configs of %q: %w", connector, err)
	}
	tcs, err := pgx.CollectRows(rows, scanTaskConfig)
	if err != nil {
		return nil, fmt.Errorf("read task configs of %q: %w", connector, err)
	}
	return tcs, nil
}

func scanTaskConfig(r pgx.CollectableRow) (TaskConfig, error) {
	var tc TaskConfig
	err := r.Scan(&tc.Connector, &tc.Task, &tc.Config)
	return tc, err
}

// ReplaceTaskConfigs installs configs as the connector's task set on behalf of the connector instance running
// under assignment epoch. If the set is unchanged nothing is written and changed is false. New tasks get status
// UNASSIGNED; the statuses and assignments of tasks that no longer exist are removed. A stale epoch gives ErrFenced.
func (s *Store) ReplaceTaskConfigs(ctx context.Context, connector string, epoch int64, configs []map[string]string) (changed bool, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := holdEpoch(ctx, tx, connector, -1, epoch); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT connector_name, task_id, config FROM task_configs WHERE connector_name = $1 ORDER BY task_id", connector)
		if err != nil {
			return err
		}
		current, err := pgx.CollectRows(rows, scanTaskConfig)
		if err != nil {
			return err
		}
		if sameTaskSet(current, configs) {
			return nil
		}
		changed = true
		if _, err := tx.Exec(ctx, "DELETE FROM task_configs WHERE connector_name = $1 AND task_id >= $2", connector, len(configs)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM assignments WHERE connector_name = $1 AND task_id >= $2", connector, len(configs)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM statuses WHERE connector_name = $1 AND task_id >= $2", connector, len(configs)); err != nil {
			return err
		}
		for i, cfg := range configs {
			if _, err := tx.Exec(ctx, `
				INSERT INTO task_configs (connector_name, task_id, config) VALUES ($1, $2, $3)
				ON CONFLICT (connector_name, task_id) DO UPDATE SET config = EXCLUDED.config`, connector, i, cfg); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `
				INSERT INTO statuses (connector_name, task_id, state) VALUES ($1, $2, 'UNASSIGNED')
				ON CONFLICT (connector_name, task_id) DO NOTHING`, connector, i); err != nil {
				return err
			}
		}
		return notify(ctx, tx, "tasks")
	})
	if err != nil {
		return false, fmt.Errorf("replace task configs of %q: %w", connector, err)
	}
	return changed, nil
}

func sameTaskSet(current []TaskConfig, next []map[string]string) bool {
	if len(current) != len(next) {
		return false
	}
	for i, tc := range current {
		if tc.Task != i || !maps.Equal(tc.Config, next[i]) {
			return false
		}
	}
	return true
}

// holdEpoch locks the unit's assignment row for the rest of the transaction and checks that its epoch is still
// epoch, so a concurrent reassignment waits for this transaction or fences it.
func holdEpoch(ctx context.Context, tx pgx.Tx, connector string, task int, epoch int64) error {
	var current int64
	err := tx.QueryRow(ctx, "SELECT epoch FROM assignments WHERE connector_name = $1 AND task_id = $2 FOR SHARE", connector, task).Scan(&current)
	if err == pgx.ErrNoRows || (err == nil && current != epoch) {
		return ErrFenced
	}
	return err
}
