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
	tcs, err := pgx.CollectRows(rows, s.scanTaskConfig)
	if err != nil {
		return nil, fmt.Errorf("read task configs of %q: %w", connector, err)
	}
	return tcs, nil
}

// scanTaskConfig reads a task config row, its secrets decrypted.
func (s *Store) scanTaskConfig(r pgx.CollectableRow) (TaskConfig, error) {
	var tc TaskConfig
	if err := r.Scan(&tc.Connector, &tc.Task, &tc.Config); err != nil {
		return tc, err
	}
	var err error
	tc.Config, err = s.open(tc.Config)
	return tc, err
}

// ReplaceTaskConfigs installs configs as the connector's task set on behalf of the connector instance run
// holding claim. If the set is unchanged nothing is written and changed is false. Otherwise the task generation
// grows: tasks whose config is unchanged carry on (their runs move to the new generation), the others restart,
// and their successors start only once every run of an older generation has released its unit (ClaimUnit). New
// tasks get status UNASSIGNED; the statuses of tasks that no longer exist are removed, and their assignments
// too, except while a run still holds one (it drains, commits, and the release removes it). A claim that no
// longer holds the connector unit gives ErrFenced.
func (s *Store) ReplaceTaskConfigs(ctx context.Context, c Claim, configs []map[string]string) (changed bool, err error) {
	return s.replaceTaskConfigs(ctx, c, configs, false)
}

// StopTaskSet removes the task set of the connector being STOPPED, as ReplaceTaskConfigs(nil) does, but keeps
// its partitions' stats, marked stop: the STOPPED connector's run keeps their end offsets up to date
// (RefreshPartitionEnds), so that a source topic deleted meanwhile is judged, when the connector runs again, on
// what was last seen of it.
func (s *Store) StopTaskSet(ctx context.Context, c Claim) error {
	_, err := s.replaceTaskConfigs(ctx, c, nil, true)
	return err
}

func (s *Store) replaceTaskConfigs(ctx context.Context, c Claim, configs []map[string]string, keepStats bool) (changed bool, err error) {
	connector := c.Connector
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := holdClaim(ctx, tx, c); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT connector_name, task_id, config FROM task_configs WHERE connector_name = $1 ORDER BY task_id", connector)
		if err != nil {
			return err
		}
		current, err := pgx.CollectRows(rows, s.scanTaskConfig)
		if err != nil {
			return err
		}
		if sameTaskSet(current, configs) {
			return nil
		}
		changed = true
		var gen int64
		// The task ids whose partitions may move are owed a fence in Kafka (ClaimTaskFence), added to those
		// an earlier change still owes.
		if err := tx.QueryRow(ctx, `
			UPDATE connectors SET task_generation = task_generation + 1,
				fence_task_ids = ARRAY(SELECT DISTINCT x FROM unnest(fence_task_ids || $2::int[]) AS x ORDER BY x)
			WHERE name = $1 RETURNING task_generation`,
			connector, fencedTaskIDs(current, configs)).Scan(&gen); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM task_configs WHERE connector_name = $1 AND task_id >= $2", connector, len(configs)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM assignments a WHERE connector_name = $1 AND task_id >= $2 AND NOT "+heldBy("a"), connector, len(configs)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE assignments SET worker_id = '' WHERE connector_name = $1 AND task_id >= $2", connector, len(configs)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM statuses WHERE connector_name = $1 AND task_id >= $2", connector, len(configs)); err != nil {
			return err
		}
		// Partitions of tasks that no longer exist are replicated by nobody until a new owner reports them (a
		// stopped or disabled connector has no tasks at all); their runs, superseded, cannot store them again.
		statsSQL := "DELETE FROM partition_stats WHERE connector_name = $1 AND task_id >= $2"
		if keepStats {
			statsSQL = "UPDATE partition_stats SET status = '" + PartitionStopped + "', records_per_second = 0, bytes_per_second = 0 WHERE connector_name = $1 AND task_id >= $2"
		}
		if _, err := tx.Exec(ctx, statsSQL, connector, len(configs)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM task_stats WHERE connector_name = $1 AND task_id >= $2", connector, len(configs)); err != nil {
			return err
		}
		for i, cfg := range configs {
			if i < len(current) && maps.Equal(current[i].Config, cfg) {
				if _, err := tx.Exec(ctx, "UPDATE task_configs SET generation = $3 WHERE connector_name = $1 AND task_id = $2", connector, i, gen); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, "UPDATE assignments SET run_generation = $3 WHERE connector_name = $1 AND task_id = $2 AND run_epoch IS NOT NULL",
					connector, i, gen); err != nil {
					return err
				}
				continue
			}
			sealed, err := s.seal(cfg)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `
				INSERT INTO task_configs (connector_name, task_id, config, generation) VALUES ($1, $2, $3, $4)
				ON CONFLICT (connector_name, task_id) DO UPDATE SET config = EXCLUDED.config, generation = EXCLUDED.generation`, connector, i, sealed, gen); err != nil {
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
