package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// RestartRequest asks the leader to restart a connector instance (Task nil), possibly with its tasks, or one
// task (Task set).
type RestartRequest struct {
	ID           int64
	Connector    string
	Task         *int
	IncludeTasks bool
	OnlyFailed   bool
}

// RequestRestart queues a restart request; ErrNotFound if the connector does not exist. A restart of the
// connector instance, unless only failed units are asked for, clears its lasting loss notices (PutLoss).
func (s *Store) RequestRestart(ctx context.Context, r RestartRequest) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `
			INSERT INTO restart_requests (connector_name, task_id, include_tasks, only_failed) VALUES ($1, $2, $3, $4)`,
			r.Connector, r.Task, r.IncludeTasks, r.OnlyFailed)
		if isForeignKeyViolation(err) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		// Restarting the connector instance (not only its failed units) is how an operator acknowledges what it
		// found lost.
		if r.Task == nil && !r.OnlyFailed {
			if _, err := tx.Exec(ctx, "DELETE FROM connector_losses WHERE connector_name = $1", r.Connector); err != nil {
				return err
			}
		}
		return notify(ctx, tx, "restart")
	})
	if err != nil {
		return fmt.Errorf("request restart of %q: %w", r.Connector, err)
	}
	return nil
}

// PendingRestarts returns the queued restart requests, oldest first.
func (s *Store) PendingRestarts(ctx context.Context) ([]RestartRequest, error) {
	return readAll(ctx, s, "read restart requests", "SELECT id, connector_name, task_id, include_tasks, only_failed FROM restart_requests ORDER BY id",
		func(r pgx.CollectableRow, rr *RestartRequest) error {
			return r.Scan(&rr.ID, &rr.Connector, &rr.Task, &rr.IncludeTasks, &rr.OnlyFailed)
		})
}
