package store

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/jackc/pgx/v5"

	"github.com/kmirror/kmirror/kmtype"
)

// TaskFence is the fence a changed task set owes Kafka (migrations/006_task_fences.sql): the transactional
// ids of TaskIDs must be fenced before the task set of Generation replicates in transactions.
type TaskFence struct {
	Generation int64
	TaskIDs    []int // nil: nothing (more) to fence
}

// ClaimTaskFence tells the run holding claim what its connector's task set still owes Kafka. A nil TaskIDs
// means the current generation is fenced. Otherwise the run becomes the fence holder: it fences TaskIDs and
// then calls CompleteTaskFence. ErrFencePending means somebody else must act first: another live run holds
// the fence, or a run of an older task generation still holds a unit (fencing it while it drains would only
// make it restart and initialize its producer again, after the fence).
func (s *Store) ClaimTaskFence(ctx context.Context, c Claim) (TaskFence, error) {
	var f TaskFence
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		// The connector's row first, then the claim's assignment, as ReplaceTaskConfigs (which updates the
		// tasks' assignments after the row) would otherwise deadlock with this.
		var fenced int64
		var holder *int64
		var ids []int32
		err := tx.QueryRow(ctx, "SELECT task_generation, fenced_generation, fence_task_ids, fence_holder FROM connectors WHERE name = $1 FOR UPDATE",
			c.Connector).Scan(&f.Generation, &fenced, &ids, &holder)
		if errors.Is(err, pgx.ErrNoRows) {
			return kmtype.ErrFenced // the connector is gone, and its units with it
		}
		if err != nil {
			return err
		}
		if _, err := holdClaim(ctx, tx, c); err != nil {
			return err
		}
		if fenced >= f.Generation {
			return nil
		}
		var busy bool
		err = tx.QueryRow(ctx, `
			SELECT ($2::bigint IS NOT NULL AND $2 <> $3 AND EXISTS (SELECT 1 FROM assignments a
				WHERE a.connector_name = $1 AND a.run_epoch = $2 AND `+heldBy("a")+`))
			    OR EXISTS (SELECT 1 FROM assignments a WHERE a.connector_name = $1 AND a.task_id >= 0
				AND a.run_generation < $4 AND `+heldBy("a")+`)`, c.Connector, holder, c.Epoch, f.Generation).Scan(&busy)
		if err != nil {
			return err
		}
		if busy {
			return ErrFencePending
		}
		if len(ids) == 0 {
			// Only tasks were added: their own InitTransactions fence whatever used their ids before.
			_, err := tx.Exec(ctx, "UPDATE connectors SET fenced_generation = $2, fence_holder = NULL WHERE name = $1", c.Connector, f.Generation)
			return err
		}
		for _, id := range ids {
			f.TaskIDs = append(f.TaskIDs, int(id))
		}
		_, err = tx.Exec(ctx, "UPDATE connectors SET fence_holder = $2 WHERE name = $1", c.Connector, c.Epoch)
		return err
	})
	if err != nil {
		return TaskFence{}, fmt.Errorf("claim the task fence of %q: %w", c.Connector, err)
	}
	return f, nil
}

// CompleteTaskFence records that the holder of claim fenced f.TaskIDs. If the task set changed meanwhile, the
// fence is not complete (the new generation may owe more ids) and ErrFencePending tells the holder to claim
// it again.
func (s *Store) CompleteTaskFence(ctx context.Context, c Claim, f TaskFence) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		// Lock order as in ClaimTaskFence.
		if _, err := tx.Exec(ctx, "SELECT 1 FROM connectors WHERE name = $1 FOR UPDATE", c.Connector); err != nil {
			return err
		}
		if _, err := holdClaim(ctx, tx, c); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `
			UPDATE connectors SET fenced_generation = task_generation, fence_task_ids = '{}', fence_holder = NULL
			WHERE name = $1 AND fence_holder = $2 AND task_generation = $3`, c.Connector, c.Epoch, f.Generation)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 1 {
			return notify(ctx, tx, "fenced")
		}
		if _, err := tx.Exec(ctx, "UPDATE connectors SET fence_holder = NULL WHERE name = $1 AND fence_holder = $2", c.Connector, c.Epoch); err != nil {
			return err
		}
		return ErrFencePending
	})
	if err != nil {
		return fmt.Errorf("complete the task fence of %q: %w", c.Connector, err)
	}
	return nil
}

// fencedTaskIDs are the task ids of current whose config changes or which disappear in next: their
// partitions may move to other task ids, so their transactional ids must be fenced before next replicates.
func fencedTaskIDs(current []TaskConfig, next []map[string]string) []int32 {
	var ids []int32
	for _, tc := range current {
		if tc.Task >= len(next) || !maps.Equal(tc.Config, next[tc.Task]) {
			ids = append(ids, int32(tc.Task))
		}
	}
	return ids
}
