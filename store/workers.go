package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kmirror/kmirror/kmtype"
)

// Worker is one live kmirror process.
type Worker struct {
	ID          string
	URL         string
	Session     int64 // changes every time the worker (re)joins
	StartedAt   time.Time
	HeartbeatAt time.Time
	// HeartbeatAge is how long ago the last heartbeat was, by the database's clock.
	HeartbeatAge time.Duration
}

// RegisterWorker joins the cluster as worker id with a new session, replacing any earlier session of the same
// id: runs of that session can no longer claim, commit or report (their holder session is gone).
func (s *Store) RegisterWorker(ctx context.Context, id, url string) (session int64, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `
			INSERT INTO workers (id, url) VALUES ($1, $2)
			ON CONFLICT (id) DO UPDATE SET url = EXCLUDED.url, session = nextval('worker_session'),
				started_at = now(), heartbeat_at = now()
			RETURNING session`, id, url).Scan(&session)
		if err != nil {
			return err
		}
		return notify(ctx, tx, "workers")
	})
	if err != nil {
		return 0, fmt.Errorf("register worker %q: %w", id, err)
	}
	return session, nil
}

// HeartbeatWorker refreshes the worker's heartbeat. ErrFenced when the session is no longer registered: the
// leader declared the worker dead and its units may run elsewhere already.
func (s *Store) HeartbeatWorker(ctx context.Context, id string, session int64) error {
	tag, err := s.pool.Exec(ctx, "UPDATE workers SET heartbeat_at = now() WHERE id = $1 AND session = $2", id, session)
	if err != nil {
		return fmt.Errorf("heartbeat worker %q: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("heartbeat worker %q: %w", id, kmtype.ErrFenced)
	}
	return nil
}

// RemoveWorker deletes the worker's session on a clean shutdown and hands its assignments back to the leader.
// Its runs have released their units by then.
func (s *Store) RemoveWorker(ctx context.Context, id string, session int64) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM workers WHERE id = $1 AND session = $2", id, session)
		if err != nil {
			return fmt.Errorf("remove worker %q: %w", id, err)
		}
		if tag.RowsAffected() == 0 {
			return nil // declared dead already; its assignments were moved then
		}
		if _, err := tx.Exec(ctx, "DELETE FROM assignments WHERE worker_id = $1 AND (run_epoch IS NULL OR run_session = $2)", id, session); err != nil {
			return fmt.Errorf("remove assignments of worker %q: %w", id, err)
		}
		return notify(ctx, tx, "workers")
	})
}

// Workers returns every registered worker, sorted by id, with its heartbeat age by the database's clock.
func (s *Store) Workers(ctx context.Context) ([]Worker, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT id, url, session, started_at, heartbeat_at, extract(epoch FROM now() - heartbeat_at)
		FROM workers ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list workers: %w", err)
	}
	ws, err := pgx.CollectRows(rows, scanWorker)
	if err != nil {
		return nil, fmt.Errorf("list workers: %w", err)
	}
	return ws, nil
}

func scanWorker(r pgx.CollectableRow) (Worker, error) {
	var w Worker
	var age float64
	err := r.Scan(&w.ID, &w.URL, &w.Session, &w.StartedAt, &w.HeartbeatAt, &age)
	w.HeartbeatAge = time.Duration(age * float64(time.Second))
	return w, err
}

// ErrTooSlow is returned by DropDeadWorkers when the database answered too late for heartbeat ages to mean
// anything: nothing was dropped.
var ErrTooSlow = errors.New("the database answered too slowly to judge heartbeat ages")

// DropDeadWorkers deletes the workers whose last heartbeat is older than ttl (never keep), and returns the
// workers that remain. The units held by the dropped workers' sessions become claimable by their new owners.
// When the deletion is done more than within after the call (the database or this process stalled, and the
// workers' heartbeats waited as long: they look old but are not), it is rolled back and ErrTooSlow returned.
// within <= 0 checks nothing.
func (s *Store) DropDeadWorkers(ctx context.Context, ttl time.Duration, keep string, within time.Duration) (live, dropped []Worker, err error) {
	began := time.Now()
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			DELETE FROM workers WHERE heartbeat_at < now() - $1::interval AND id <> $2
			RETURNING id, url, session, started_at, heartbeat_at, extract(epoch FROM now() - heartbeat_at)`, ttl.String(), keep)
		if err != nil {
			return err
		}
		if dropped, err = pgx.CollectRows(rows, scanWorker); err != nil {
			return err
		}
		if took := time.Since(began); within > 0 && len(dropped) > 0 && took > within {
			return fmt.Errorf("%w (%s, more than %s)", ErrTooSlow, took.Round(time.Millisecond), within)
		}
		rows, err = tx.Query(ctx, "SELECT id, url, session, started_at, heartbeat_at, extract(epoch FROM now() - heartbeat_at) FROM workers ORDER BY id")
		if err != nil {
			return err
		}
		live, err = pgx.CollectRows(rows, scanWorker)
		if err != nil {
			return err
		}
		if len(dropped) > 0 {
			return notify(ctx, tx, "workers")
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("drop dead workers: %w", err)
	}
	return live, dropped, nil
}

// AcquireLeadership makes worker id the leader until ttl from now, if the lease is free, expired or already its
// own. It returns the lease epoch, which grows whenever leadership changes hands, and whether id is leader.
func (s *Store) AcquireLeadership(ctx context.Context, id string, ttl time.Duration) (epoch int64, leader bool, err error) {
	err = s.pool.QueryRow(ctx, `
		UPDATE leader_lease
		SET epoch = CASE WHEN worker_id = $1 AND expires_at > now() THEN epoch ELSE epoch + 1 END,
		    worker_id = $1, expires_at = now() + $2::interval
		WHERE id = 1 AND (worker_id = $1 OR worker_id IS NULL OR expires_at <= now())
		RETURNING epoch`, id, ttl.String()).Scan(&epoch)
	if err == pgx.ErrNoRows {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("acquire leadership: %w", err)
	}
	return epoch, true, nil
}

// ReleaseLeadership gives up the lease if id holds it, so another worker can take over at once.
func (s *Store) ReleaseLeadership(ctx context.Context, id string) error {
	_, err := s.pool.Exec(ctx, "UPDATE leader_lease SET worker_id = NULL, expires_at = '-infinity' WHERE id = 1 AND worker_id = $1", id)
	if err != nil {
		return fmt.Errorf("release leadership: %w", err)
	}
	return nil
}

// Leader returns the current leader's worker id and URL, or ErrNotFound when no lease is held.
func (s *Store) Leader(ctx context.Context) (Worker, error) {
	var w Worker
	err := s.pool.QueryRow(ctx, `
		SELECT w.id, w.url, w.heartbeat_at FROM leader_lease l JOIN workers w ON w.id = l.worker_id
		WHERE l.expires_at > now()`).Scan(&w.ID, &w.URL, &w.HeartbeatAt)
	if err == pgx.ErrNoRows {
		return Worker{}, fmt.Errorf("read leader: %w", ErrNotFound)
	}
	if err != nil {
		return Worker{}, fmt.Errorf("read leader: %w", err)
	}
	return w, nil
}
