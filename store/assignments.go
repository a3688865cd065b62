package store

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/jackc/pgx/v5"

	"github.com/kmirror/kmirror/kmtype"
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
		rows, err = tx.Query(ctx, "SELECT connector_name, task_id, worker_id, epoch FROM assignments WHERE worker_id <> '' ORDER BY 1, 2")
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
	// Restarting marks a restart of the unit in place under a new epoch.
	Restarting bool
	// ShowRestarting makes the unit's status RESTARTING under the new epoch, as Connect shows the units of a
	// restart plan (includeTasks or onlyFailed). A plain connector or task restart leaves the status as it is
	// until the new run reports, as Connect does.
	ShowRestarting bool
}

// ApplyReassignments writes the leader's changes and deletes the restart requests it handled, if leaderEpoch is
// still the lease epoch held by leaderID; ErrFenced otherwise. Units that no longer exist are skipped. A unit
// moved to another worker keeps its holder: the new owner starts when the old run has released it (a
// hand-over). A unit without owner whose run still holds it keeps its row (worker_id empty) until the release.
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
			return kmtype.ErrFenced
		}
		for _, ch := range changes {
			if ch.WorkerID == "" {
				if _, err := tx.Exec(ctx, `
					DELETE FROM assignments a WHERE connector_name = $1 AND task_id = $2 AND NOT `+heldBy("a"),
					ch.Connector, ch.Task); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, "UPDATE assignments SET worker_id = '' WHERE connector_name = $1 AND task_id = $2",
					ch.Connector, ch.Task); err != nil {
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
			if ch.Restarting && ch.ShowRestarting {
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

// heldBy is the SQL condition "the assignment row alias is held by a run of a live session".
func heldBy(alias string) string {
	return "(" + alias + ".run_epoch IS NOT NULL AND EXISTS (SELECT 1 FROM workers w WHERE w.session = " + alias + ".run_session))"
}

// Claim is a run's hold on its unit: its fencing token is Epoch.
type Claim struct {
	Unit
	Epoch int64 // the run's epoch: every offset, status and task-config write of the run carries it
}

// ClaimUnit makes the calling run the holder of the unit, if the unit is assigned to the worker under epoch
// and no run of a live session holds it; it returns ErrFenced when the assignment moved or ended, or the task
// set changed since the worker read w (it claims again with the work it reads next), and
// ErrUnitBusy while the previous holder has not released it (the caller retries). A task run of generation
// also waits until no run of an older task generation of the connector holds a unit.
func (s *Store) ClaimUnit(ctx context.Context, w Work, session int64) (Claim, error) {
	var c Claim
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var worker string
		var epoch int64
		var held bool
		if w.Task != ConnectorUnit {
			// Work read before the task set changed claims as a run of the older generation, and a task whose
			// config stayed carries on under the new one (SameWork): it would count as older for as long as it
			// runs, and every run of the new set and the fence (ClaimTaskFence) would wait for it for good. The
			// worker claims again with the work it reads next. The lock orders this against ReplaceTaskConfigs,
			// which updates the task's config before the assignment's run_generation, as this takes them.
			var gen int64
			err := tx.QueryRow(ctx, "SELECT generation FROM task_configs WHERE connector_name = $1 AND task_id = $2 FOR SHARE",
				w.Connector, w.Task).Scan(&gen)
			if err == pgx.ErrNoRows || (err == nil && gen != w.Generation) {
				return kmtype.ErrFenced
			}
			if err != nil {
				return err
			}
		}
		// A hold by this very session is a run of this worker that was abandoned or could not release: the
		// worker runs one run of a unit at a time, so it is over.
		err := tx.QueryRow(ctx, `
			SELECT a.worker_id, a.epoch, `+heldBy("a")+` AND a.run_session <> $3 FROM assignments a
			WHERE a.connector_name = $1 AND a.task_id = $2 FOR UPDATE`, w.Connector, w.Task, session).Scan(&worker, &epoch, &held)
		if err == pgx.ErrNoRows || (err == nil && (worker != w.WorkerID || epoch != w.Epoch)) {
			return kmtype.ErrFenced
		}
		if err != nil {
			return err
		}
		if held {
			return ErrUnitBusy
		}
		if w.Task != ConnectorUnit {
			var older bool
			err := tx.QueryRow(ctx, `
				SELECT EXISTS (SELECT 1 FROM assignments a WHERE a.connector_name = $1 AND a.task_id >= 0
					AND a.task_id <> $3 AND a.run_generation < $2 AND `+heldBy("a")+`)`, w.Connector, w.Generation, w.Task).Scan(&older)
			if err != nil {
				return err
			}
			if older {
				return ErrUnitBusy
			}
		}
		c.Unit = w.Unit
		return tx.QueryRow(ctx, `
			UPDATE assignments SET run_epoch = nextval('assignment_epoch'), run_session = $3, run_generation = $4
			WHERE connector_name = $1 AND task_id = $2 RETURNING run_epoch`,
			w.Connector, w.Task, session, w.Generation).Scan(&c.Epoch)
	})
	if err != nil {
		return Claim{}, fmt.Errorf("claim %s/%d: %w", w.Connector, w.Task, err)
	}
	return c, nil
}

// ReleaseUnit ends the claim, after writing final (if not nil) as the unit's last status of this run. A unit
// that lost its owner while the run drained (worker_id empty) loses its row with the release. Releasing a claim
// that is no longer held (the run was abandoned or its session declared dead) changes nothing.
func (s *Store) ReleaseUnit(ctx context.Context, c Claim, final *Status) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if final != nil {
			st := s.hidden(*final)
			st.Unit, st.Epoch = c.Unit, c.Epoch
			if err := putStatus(ctx, tx, st); err != nil && !errors.Is(err, kmtype.ErrFenced) && !errors.Is(err, ErrNotFound) {
				return err
			}
		}
		deleted, err := tx.Exec(ctx, "DELETE FROM assignments WHERE connector_name = $1 AND task_id = $2 AND run_epoch = $3 AND worker_id = ''",
			c.Connector, c.Task, c.Epoch)
		if err != nil {
			return err
		}
		released, err := tx.Exec(ctx, "UPDATE assignments SET run_epoch = NULL, run_session = NULL, run_generation = NULL WHERE connector_name = $1 AND task_id = $2 AND run_epoch = $3",
			c.Connector, c.Task, c.Epoch)
		if err != nil || deleted.RowsAffected()+released.RowsAffected() == 0 {
			return err
		}
		// The next owner (or a task of a newer generation) waits for this.
		return notify(ctx, tx, "released")
	})
	if err != nil {
		return fmt.Errorf("release %s/%d: %w", c.Connector, c.Task, err)
	}
	return nil
}

// holdClaim locks the unit's assignment row for the rest of the transaction and checks that the claim still
// holds it, so that a concurrent claim or release waits for this transaction or fences it. removed tells that
// the unit left the task set while its run drains: it may still commit offsets, but has no status any more.
func holdClaim(ctx context.Context, tx pgx.Tx, c Claim) (removed bool, err error) {
	var held bool
	var worker string
	err = tx.QueryRow(ctx, `SELECT `+heldBy("a")+`, a.worker_id FROM assignments a
		WHERE a.connector_name = $1 AND a.task_id = $2 AND a.run_epoch = $3 FOR SHARE`, c.Connector, c.Task, c.Epoch).Scan(&held, &worker)
	if err == pgx.ErrNoRows || (err == nil && !held) {
		return false, kmtype.ErrFenced
	}
	return worker == "", err
}

// Work is one unit assigned to a worker, with everything needed to run it.
type Work struct {
	Assignment
	TargetState      TargetState
	ConnectorVersion int64
	ConnectorConfig  map[string]string
	TaskConfig       map[string]string // nil for a connector instance
	Generation       int64             // the task set generation of TaskConfig (0 for a connector instance)
}

// WorkerWork returns every unit assigned to the worker.
func (s *Store) WorkerWork(ctx context.Context, workerID string) ([]Work, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT a.connector_name, a.task_id, a.worker_id, a.epoch, c.target_state, c.version, c.config, t.config, coalesce(t.generation, 0)
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
		if err := r.Scan(&w.Connector, &w.Task, &w.WorkerID, &w.Epoch, &w.TargetState, &w.ConnectorVersion, &w.ConnectorConfig, &w.TaskConfig, &w.Generation); err != nil {
			return w, err
		}
		var err error
		if w.ConnectorConfig, err = s.open(w.ConnectorConfig); err != nil {
			return w, err
		}
		w.TaskConfig, err = s.open(w.TaskConfig)
		return w, err
	})
	if err != nil {
		return nil, fmt.Errorf("read work of %q: %w", workerID, err)
	}
	return ws, nil
}

// SameWork tells whether two Work values would run identically. A new task generation with the same task
// config is the same work: the run carries on (ReplaceTaskConfigs moves its claim to the new generation).
func SameWork(a, b Work) bool {
	return a.Assignment == b.Assignment && a.TargetState == b.TargetState && a.ConnectorVersion == b.ConnectorVersion &&
		maps.Equal(a.TaskConfig, b.TaskConfig)
}

// UnitPlacement is where a unit is assigned and which worker's run holds it, for GET /workers.
type UnitPlacement struct {
	Unit
	WorkerID string // the owner ("" while a removed unit drains)
	Epoch    int64
	Holder   string // the worker whose run holds the unit ("" when released)
	RunEpoch int64
}

// Placements lists every assignment with its holder.
func (s *Store) Placements(ctx context.Context) ([]UnitPlacement, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT a.connector_name, a.task_id, a.worker_id, a.epoch, coalesce(w.id, ''), coalesce(a.run_epoch, 0)
		FROM assignments a LEFT JOIN workers w ON w.session = a.run_session
		ORDER BY 1, 2`)
	if err != nil {
		return nil, fmt.Errorf("list assignments: %w", err)
	}
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (UnitPlacement, error) {
		var p UnitPlacement
		err := r.Scan(&p.Connector, &p.Task, &p.WorkerID, &p.Epoch, &p.Holder, &p.RunEpoch)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("list assignments: %w", err)
	}
	return ps, nil
}
