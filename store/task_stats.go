package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kmirror/kmirror/kmtype"
)

// TaskStat is what a source task last measured of its pipeline.
type TaskStat struct {
	Task      int    // set by the store from the claim
	WorkerID  string // set by the runtime
	Pipeline  kmtype.PipelineStat
	UpdatedAt time.Time // read only
}

// PutTaskStat stores a task's pipeline figures for the run holding claim; ErrFenced once it no longer holds its
// unit. A run of a superseded task set stores nothing, as in PutPartitionStats: its task may be gone from the new
// set.
func (s *Store) PutTaskStat(ctx context.Context, c Claim, worker string, st kmtype.PipelineStat) error {
	doc, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("store task stats of %s-%d: %w", c.Connector, c.Task, err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := holdClaim(ctx, tx, c); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO task_stats (connector_name, task_id, worker_id, pipeline, updated_at)
			SELECT $1, $2, $3, $4, now()
			WHERE EXISTS (SELECT 1 FROM connectors c JOIN assignments a ON a.connector_name = c.name
				WHERE c.name = $1 AND a.task_id = $2 AND a.run_epoch = $5 AND a.run_generation >= c.task_generation)
			ON CONFLICT (connector_name, task_id) DO UPDATE
			SET worker_id = EXCLUDED.worker_id, pipeline = EXCLUDED.pipeline, updated_at = now()`,
			c.Connector, c.Task, worker, doc, c.Epoch)
		return err
	})
	if err != nil {
		return fmt.Errorf("store task stats of %s-%d: %w", c.Connector, c.Task, err)
	}
	return nil
}

// ConnectorTaskStats returns what the connector's tasks last measured of their pipelines, by task; ErrNotFound
// if the connector does not exist. Rows of tasks above the current task count may remain from a larger task
// set: callers match them against the task configs.
func (s *Store) ConnectorTaskStats(ctx context.Context, connector string) ([]TaskStat, error) {
	if _, err := s.GetConnector(ctx, connector); err != nil {
		return nil, fmt.Errorf("read task stats of %q: %w", connector, err)
	}
	rows, err := s.pool.Query(ctx, `
		SELECT task_id, worker_id, pipeline, updated_at FROM task_stats WHERE connector_name = $1 ORDER BY task_id`, connector)
	if err != nil {
		return nil, fmt.Errorf("read task stats of %q: %w", connector, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (TaskStat, error) {
		var st TaskStat
		var doc []byte
		if err := r.Scan(&st.Task, &st.WorkerID, &doc, &st.UpdatedAt); err != nil {
			return st, err
		}
		return st, json.Unmarshal(doc, &st.Pipeline)
	})
	if err != nil {
		return nil, fmt.Errorf("read task stats of %q: %w", connector, err)
	}
	return out, nil
}
