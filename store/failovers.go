package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kmirror/kmirror/kmtype"
)

// Failover operations (migrations/011_failovers.sql): the REST API files one (RequestFailover) and reads it back
// (LatestFailover); a worker's failover runner takes it (TakeFailover), keeps it alive while it runs
// (FailoverProgress) and ends it with its report (FinishFailover). The store keeps the report as the runner
// wrote it: its shape belongs to the failover package.

// States of a failover operation.
const (
	FailoverPending   = "pending"
	FailoverRunning   = "running"
	FailoverSucceeded = "succeeded"
	FailoverFailed    = "failed"
)

// ErrFailoverOpen is returned when a failover is filed for a connector that has one pending or running.
var ErrFailoverOpen = errors.New("a failover of the connector is already under way")

// Kinds of operation.
const (
	KindFailover = "failover"
	KindFailback = "failback"
)

// Failover is one failover or failback operation.
type Failover struct {
	ID                  int64
	Kind                string
	Connector           string
	FailoverOf          string // a failback: the A->B source connector whose failover it undoes
	CheckpointConnector string // "" when none was named
	DrainTimeout        time.Duration
	State               string
	Phase               string // what a running operation is doing
	Error               string // why it failed
	Report              json.RawMessage
	WorkerID            string
	RequestedAt         time.Time
	FinishedAt          *time.Time
}

const failoverColumns = `id, kind, connector_name, coalesce(failover_of, ''), coalesce(checkpoint_connector, ''), drain_timeout_ms, state, phase, error,
	report::text, worker_id, requested_at, finished_at`

func scanFailover(row pgx.Row) (Failover, error) {
	var f Failover
	var ms int64
	var report *string
	if err := row.Scan(&f.ID, &f.Kind, &f.Connector, &f.FailoverOf, &f.CheckpointConnector, &ms, &f.State, &f.Phase, &f.Error, &report, &f.WorkerID,
		&f.RequestedAt, &f.FinishedAt); err != nil {
		return Failover{}, err
	}
	f.DrainTimeout = time.Duration(ms) * time.Millisecond
	if report != nil {
		f.Report = json.RawMessage(*report)
	}
	return f, nil
}

// FailoverRequest is what RequestFailover files.
type FailoverRequest struct {
	Kind       string // KindFailover or KindFailback
	Connector  string
	FailoverOf string // a failback: the A->B source connector whose failover it undoes
	Checkpoint string // "" for none named
	Drain      time.Duration
}

// RequestFailover files an operation, in one transaction with the checks that the connectors it names exist
// (ErrNotFound for the connector, a FailoverFieldError naming the field for the others), and returns it.
// ErrFailoverOpen when the connector already has one under way.
func (s *Store) RequestFailover(ctx context.Context, req FailoverRequest) (Failover, error) {
	var f Failover
	connector, checkpoint := req.Connector, req.Checkpoint
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, "SELECT 1 FROM connectors WHERE name = $1 FOR SHARE", connector).Scan(&one); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return ErrNotFound
			}
			return err
		}
		for field, name := range map[string]string{"checkpoint_connector": checkpoint, "failover_of": req.FailoverOf} {
			if name == "" {
				continue
			}
			if err := tx.QueryRow(ctx, "SELECT 1 FROM connectors WHERE name = $1 FOR SHARE", name).Scan(&one); err != nil {
				if errors.Is(err, pgx.ErrNoRows) {
					return &FailoverFieldError{Field: field, Err: ErrNotFound}
				}
				return err
			}
		}
		row := tx.QueryRow(ctx, `INSERT INTO failovers (kind, connector_name, failover_of, checkpoint_connector, drain_timeout_ms)
			VALUES ($1, $2, nullif($3, ''), nullif($4, ''), $5) RETURNING `+failoverColumns,
			cmp.Or(req.Kind, KindFailover), connector, req.FailoverOf, checkpoint, req.Drain.Milliseconds())
		var err error
		if f, err = scanFailover(row); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "23505" {
				return ErrFailoverOpen
			}
			return err
		}
		return notify(ctx, tx, "failover")
	})
	if err != nil {
		return Failover{}, fmt.Errorf("request a failover of %q: %w", connector, err)
	}
	return f, nil
}

// FailoverFieldError is an error about one field of a failover request.
type FailoverFieldError struct {
	Field string
	Err   error
}

func (e *FailoverFieldError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap makes errors.Is see the cause.
func (e *FailoverFieldError) Unwrap() error { return e.Err }

// LatestFailover returns the connector's newest operation of kind; ErrNotFound when it has none.
func (s *Store) LatestFailover(ctx context.Context, connector, kind string) (Failover, error) {
	f, err := scanFailover(s.pool.QueryRow(ctx, "SELECT "+failoverColumns+" FROM failovers WHERE connector_name = $1 AND kind = $2 ORDER BY id DESC LIMIT 1",
		connector, kind))
	if errors.Is(err, pgx.ErrNoRows) {
		return Failover{}, fmt.Errorf("failover of %q: %w", connector, ErrNotFound)
	}
	if err != nil {
		return Failover{}, fmt.Errorf("failover of %q: %w", connector, err)
	}
	return f, nil
}

// TakeFailover hands worker the oldest pending failover, or a running one whose runner has not shown a sign of
// life for stale (its worker died), and marks it running by worker; nil when there is none.
func (s *Store) TakeFailover(ctx context.Context, worker string, stale time.Duration) (*Failover, error) {
	f, err := scanFailover(s.pool.QueryRow(ctx, `
		UPDATE failovers SET state = 'running', worker_id = $1, heartbeat_at = now()
		WHERE id = (SELECT id FROM failovers WHERE state = 'pending'
			OR (state = 'running' AND heartbeat_at < now() - make_interval(secs => $2)) ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING `+failoverColumns, worker, stale.Seconds()))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("take a failover: %w", err)
	}
	return &f, nil
}

// FailoverProgress records what worker's running operation id is doing, which also shows it alive;
// ErrFenced when another worker has taken it over.
func (s *Store) FailoverProgress(ctx context.Context, id int64, worker, phase string) error {
	tag, err := s.pool.Exec(ctx, "UPDATE failovers SET phase = $3, heartbeat_at = now() WHERE id = $1 AND worker_id = $2 AND state = 'running'",
		id, worker, phase)
	if err != nil {
		return fmt.Errorf("record the progress of failover %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("record the progress of failover %d: %w", id, kmtype.ErrFenced)
	}
	return nil
}

// FinishFailover ends worker's operation id with its report, succeeded unless failure is set; ErrFenced when
// another worker has taken it over.
func (s *Store) FinishFailover(ctx context.Context, id int64, worker string, report json.RawMessage, failure string) error {
	state := FailoverSucceeded
	if failure != "" {
		state = FailoverFailed
	}
	var body *string
	if report != nil {
		b := string(report)
		body = &b
	}
	tag, err := s.pool.Exec(ctx, `UPDATE failovers SET state = $3, error = $4, report = $5::json, phase = '', finished_at = now()
		WHERE id = $1 AND worker_id = $2 AND state = 'running'`, id, worker, state, failure, body)
	if err != nil {
		return fmt.Errorf("finish failover %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("finish failover %d: %w", id, kmtype.ErrFenced)
	}
	return nil
}

// ConnectorDrained tells whether the connector is STOPPED and none of its tasks still runs (a stopping task
// commits what the target acknowledged before it lets its unit go): its stored offsets are final then.
func (s *Store) ConnectorDrained(ctx context.Context, connector string) (bool, error) {
	var drained bool
	err := s.pool.QueryRow(ctx, `
		SELECT c.target_state = 'STOPPED'
			AND NOT EXISTS (SELECT 1 FROM task_configs t WHERE t.connector_name = c.name)
			AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.connector_name = c.name AND a.task_id >= 0 AND a.run_epoch IS NOT NULL)
		FROM connectors c WHERE c.name = $1`, connector).Scan(&drained)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("drain of %q: %w", connector, ErrNotFound)
	}
	if err != nil {
		return false, fmt.Errorf("drain of %q: %w", connector, err)
	}
	return drained, nil
}

// OffsetRangeAtTarget returns the offset-map range of key whose target offsets start last at or before target
// (nil when none does): the inverse lookup, from a position on the target back to the source.
func (s *Store) OffsetRangeAtTarget(ctx context.Context, key kmtype.RangeKey, target int64) (*kmtype.OffsetRange, error) {
	r := kmtype.OffsetRange{RangeKey: key}
	err := s.pool.QueryRow(ctx, `
		SELECT source_id, source_start, source_end, target_start, source_next, gap_before, unmapped_before, uncommitted, updated_at
		FROM offset_ranges WHERE source_alias = $1 AND target_alias = $2 AND topic = $3 AND partition = $4 AND target_start <= $5
		ORDER BY target_start DESC, source_start DESC LIMIT 1`, key.SourceAlias, key.TargetAlias, key.Topic, key.Partition, target).
		Scan(&r.SourceID, &r.SourceStart, &r.SourceEnd, &r.TargetStart, &r.SourceNext, &r.GapBefore, &r.UnmappedBefore, &r.Uncommitted, &r.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the offset map of %s-%d at target offset %d: %w", key.Topic, key.Partition, target, err)
	}
	return &r, nil
}
