package store

import (
	"context"
	"fmt"
	"maps"

	"github.com/jackc/pgx/v5"
)

// ConnectorUnit is the task id of a connector instance in assignments and statuses.
const ConnectorUnit = -1

// Unit names a unit of work: a connector instance (Task == ConnectorUnit) or one of its tasks.
type Unit struct {
	Connector string
	Task      int
}

// Assignment places a unit on a worker under an epoch.
type Assignment struct {
	Unit
	WorkerID string
	Epoch    int64
}

// Plan is what the leader reconciles: every unit that exists, and where each one runs now.
type Plan struct {
	Units       []Unit // connector instances and tasks, by connector then task
	Assignments []Assignment
}

// LoadPlan reads every unit and assignment in one snapshot.
func (s *Store) LoadPlan(ctx context.Context) (Plan, error) {
	var p Plan
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT name, -1 FROM connectors
			UNION ALL SELECT connector_name, task_id FROM task_configs
			ORDER BY 1, 2`)
		if err != nil {
			return err
		}
		p.Units, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Unit, error) {
			var u Unit
			err := r.Scan(&u.Connector, &u.Task)
			return u, err
		})
		if err != nil {
			return err
		}
		rows, err = tx.Query(ctx, "SELECT connector_name, task_id, worker_id, epoch FROM assignments ORDER BY 1, 2")
		if err != nil {
			return err
		}
		p.Assignments, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Assignment, error) {
			var a Assignment
			err := r.Scan(&a.Connector, &a.Task, &a.WorkerID, &a.Epoch)
			return a, err
		})
		return err
	})
	if err != nil {
		return Plan{}, fmt.Errorf("load plan: %w", err)
	}
	return p, nil
}

// Reassignment is one change the leader makes: put Unit on WorkerID under a new epoch, or remove its assignment
// when WorkerID is empty.
type Reassignment struct {
	Unit
	WorkerID string
	// Restarting marks a restart of the unit in place: its status becomes RESTARTING under the new epoch.
	Restarting bool
}

// ApplyReassignments writes the leader's changes and deletes the restart requests it handled, if leaderEpoch is
// still the lease epoch held by leaderID; ErrFenced otherwise. Units that no longer exist are skipped.
func (s *Store) ApplyReassignments(ctx context.Context, leaderID string, leaderEpoch int64, changes []Reassignment, handledRestarts []int64) error {
	if len(changes) == 0 && len(handledRestarts) == 0 {
		return nil
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var ok bool
		err := tx.QueryRow(ctx, "SELECT worker_id = $1 AND epoch = $2 AND expires_at > now() FROM leader_lease WHERE id = 1 FOR SHARE",
			leaderID, leaderEpoch).Scan(&ok)
		if err != nil {
			return err
		}
		if !ok {
			return ErrFenced
		}
		for _, ch := range changes {
			if ch.WorkerID == "" {
				if _, err := tx.Exec(ctx, "DELETE FROM assignments WHERE connector_name = $1 AND task_id = $2", ch.Connector, ch.Task); err != nil {
					return err
				}
				continue
			}
			var epoch int64
			err := tx.QueryRow(ctx, `
				INSERT INTO assignments (connector_name, task_id, worker_id, epoch)
				SELECT $1, $2, $3, nextval('assignment_epoch')
				WHERE EXISTS (SELECT 1 FROM connectors WHERE name = $1)
				  AND ($2 = -1 OR EXISTS (SELECT 1 FROM task_configs WHERE connector_name = $1 AND task_id = $2))
				ON CONFLICT (connector_name, task_id) DO UPDATE SET worker_id = EXCLUDED.worker_id, epoch = EXCLUDED.epoch
				RETURNING epoch`, ch.Connector, ch.Task, ch.WorkerID).Scan(&epoch)
			if err == pgx.ErrNoRows {
				continue
			}
			if err != nil {
				return err
			}
			if ch.Restarting {
				if _, err := tx.Exec(ctx, `
					INSERT INTO statuses (connector_name, task_id, state, worker_id, epoch) VALUES ($1, $2, 'RESTARTING', $3, $4)
					ON CONFLICT (connector_name, task_id) DO UPDATE
					SET state = 'RESTARTING', worker_id = EXCLUDED.worker_id, trace = '', epoch = EXCLUDED.epoch, updated_at = now()`,
					ch.Connector, ch.Task, ch.WorkerID, epoch); err != nil {
					return err
				}
			}
		}
		if len(handledRestarts) > 0 {
			if _, err := tx.Exec(ctx, "DELETE FROM restart_requests WHERE id = ANY($1)", handledRestarts); err != nil {
				return err
			}
		}
		return notify(ctx, tx, "assignments")
	})
	if err != nil {
		return fmt.Errorf("apply reassignments: %w", err)
	}
	return nil
}

// ActivateEpoch records that the worker is starting the run of unit under epoch; from then on commits of older
// runs are fenced. ErrFenced if the unit is no longer assigned to the worker under that epoch.
func (s *Store) ActivateEpoch(ctx context.Context, u Unit, workerID string, epoch int64) error {
	tag, err := s.pool.Exec(ctx, `
		UPDATE assignments SET active_epoch = $4
		WHERE connector_name = $1 AND task_id = $2 AND worker_id = $3 AND epoch = $4`, u.Connector, u.Task, workerID, epoch)
	if err != nil {
		return fmt.Errorf("activate %s/%d: %w", u.Connector, u.Task, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("activate %s/%d: %w", u.Connector, u.Task, ErrFenced)
	}
	return nil
}

// Work is one unit assigned to a worker, with everything needed to run it.
type Work struct {
	Assignment
	TargetState      TargetState
	ConnectorVersion int64
	ConnectorConfig  map[string]string
	TaskConfig       map[string]string // nil for a connector instance
}

// WorkerWork returns every unit assigned to the worker.
func (s *Store) WorkerWork(ctx context.Context, workerID string) ([]Work, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT a.connector_name, a.task_id, a.worker_id, a.epoch, c.target_state, c.version, c.config, t.config
		FROM assignments a
		JOIN connectors c ON c.name = a.connector_name
		LEFT JOIN task_configs t ON t.connector_name = a.connector_name AND t.task_id = a.task_id
		WHERE a.worker_id = $1 AND (a.task_id = -1 OR t.task_id IS NOT NULL)
		ORDER BY 1, 2`, workerID)
	if err != nil {
		return nil, fmt.Errorf("read work of %q: %w", workerID, err)
	}
	ws, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Work, error) {
		var w Work
		err := r.Scan(&w.Connector, &w.Task, &w.WorkerID, &w.Epoch, &w.TargetState, &w.ConnectorVersion, &w.ConnectorConfig, &w.TaskConfig)
		return w, err
	})
	if err != nil {
		return nil, fmt.Errorf("read work of %q: %w", workerID, err)
	}
	return ws, nil
}

// SameWork tells whether two Work values would run identically.
func SameWork(a, b Work) bool {
	return a.Assignment == b.Assignment && a.TargetState == b.TargetState && a.ConnectorVersion == b.ConnectorVersion &&
		maps.Equal(a.TaskConfig, b.TaskConfig)
}
