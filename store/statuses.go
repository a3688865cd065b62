package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kmirror/kmirror/kmtype"
)

// The states a connector or task can report (AbstractStatus.State; DESTROYED is never stored).
const (
	StateUnassigned = "UNASSIGNED"
	StateRunning    = "RUNNING"
	StatePaused     = "PAUSED"
	StateFailed     = "FAILED"
	StateRestarting = "RESTARTING"
	StateStopped    = "STOPPED"
)

// Status is the reported state of a connector instance or task.
type Status struct {
	Unit
	State     string
	WorkerID  string
	Trace     string
	Notices   []kmtype.Notice // typed facts beside the trace (the trace shows their messages)
	Epoch     int64
	UpdatedAt time.Time
}

// PutStatus records the state reported by the run that holds the unit (st.Epoch is the run's claim epoch).
// ErrFenced when that run no longer holds it; ErrNotFound for a deleted connector or task.
func (s *Store) PutStatus(ctx context.Context, st Status) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error { return putStatus(ctx, tx, s.hidden(st)) })
	if err != nil {
		return fmt.Errorf("put status of %s/%d: %w", st.Connector, st.Task, err)
	}
	return nil
}

// hidden is st with OpenOptions.Hide applied to its trace and notice messages.
func (s *Store) hidden(st Status) Status {
	st.Trace = s.hide(st.Trace)
	if len(st.Notices) > 0 {
		notices := make([]kmtype.Notice, len(st.Notices))
		for i, n := range st.Notices {
			n.Message = s.hide(n.Message)
			notices[i] = n
		}
		st.Notices = notices
	}
	return st
}

func putStatus(ctx context.Context, tx pgx.Tx, st Status) error {
	removed, err := holdClaim(ctx, tx, Claim{Unit: st.Unit, Epoch: st.Epoch})
	if err != nil {
		return err
	}
	if removed {
		return ErrNotFound
	}
	notices := st.Notices
	if notices == nil {
		notices = []kmtype.Notice{}
	}
	_, err = tx.Exec(ctx, `
		INSERT INTO statuses (connector_name, task_id, state, worker_id, trace, notices, epoch) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (connector_name, task_id) DO UPDATE
		SET state = EXCLUDED.state, worker_id = EXCLUDED.worker_id, trace = EXCLUDED.trace, notices = EXCLUDED.notices,
			epoch = EXCLUDED.epoch, updated_at = now()`,
		st.Connector, st.Task, st.State, st.WorkerID, st.Trace, notices, st.Epoch)
	if isForeignKeyViolation(err) {
		return ErrNotFound
	}
	return err
}

const statusColumns = "connector_name, task_id, state, worker_id, trace, notices, epoch, updated_at"

func scanStatus(r pgx.CollectableRow) (Status, error) {
	var st Status
	err := r.Scan(&st.Connector, &st.Task, &st.State, &st.WorkerID, &st.Trace, &st.Notices, &st.Epoch, &st.UpdatedAt)
	return st, err
}

// ConnectorStatus returns the connector instance's status and its tasks' statuses (by task id). ErrNotFound when
// the connector has reported no status yet (or does not exist).
func (s *Store) ConnectorStatus(ctx context.Context, connector string) (Status, []Status, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+statusColumns+" FROM statuses WHERE connector_name = $1 ORDER BY task_id", connector)
	if err != nil {
		return Status{}, nil, fmt.Errorf("read status of %q: %w", connector, err)
	}
	all, err := pgx.CollectRows(rows, scanStatus)
	if err != nil {
		return Status{}, nil, fmt.Errorf("read status of %q: %w", connector, err)
	}
	if len(all) == 0 || all[0].Task != ConnectorUnit {
		return Status{}, nil, fmt.Errorf("read status of %q: %w", connector, ErrNotFound)
	}
	return all[0], all[1:], nil
}

// AllStatuses returns every stored status grouped by connector name.
func (s *Store) AllStatuses(ctx context.Context) (map[string][]Status, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+statusColumns+" FROM statuses ORDER BY connector_name, task_id")
	if err != nil {
		return nil, fmt.Errorf("read statuses: %w", err)
	}
	all, err := pgx.CollectRows(rows, scanStatus)
	if err != nil {
		return nil, fmt.Errorf("read statuses: %w", err)
	}
	out := make(map[string][]Status)
	for _, st := range all {
		out[st.Connector] = append(out[st.Connector], st)
	}
	return out, nil
}

// TaskStatus returns one task's status or ErrNotFound.
func (s *Store) TaskStatus(ctx context.Context, connector string, task int) (Status, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+statusColumns+" FROM statuses WHERE connector_name = $1 AND task_id = $2", connector, task)
	if err != nil {
		return Status{}, fmt.Errorf("read status of %s-%d: %w", connector, task, err)
	}
	st, err := pgx.CollectExactlyOneRow(rows, scanStatus)
	if errors.Is(err, pgx.ErrNoRows) {
		return Status{}, fmt.Errorf("read status of %s-%d: %w", connector, task, ErrNotFound)
	}
	if err != nil {
		return Status{}, fmt.Errorf("read status of %s-%d: %w", connector, task, err)
	}
	return st, nil
}
