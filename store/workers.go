package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Worker is one live kmirror process.
type Worker struct {
	ID          string
	URL         string
	HeartbeatAt time.Time
}

// HeartbeatWorker registers the worker or refreshes its heartbeat.
func (s *Store) HeartbeatWorker(ctx context.Context, id, url string) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO workers (id, url) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET url = EXCLUDED.url, heartbeat_at = now()`, id, url)
	if err != nil {
		return fmt.Errorf("heartbeat worker %q: %w", id, err)
	}
	return nil
}

// RemoveWorker deletes the worker on a clean shutdown and hands its assignments back to the leader.
func (s *Store) RemoveWorker(ctx context.Context, id string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM workers WHERE id = $1", id); err != nil {
			return fmt.Errorf("remove worker %q: %w", id, err)
		}
		if _, err := tx.Exec(ctx, "DELETE FROM assignments WHERE worker_id = $1", id); err != nil {
			return fmt.Errorf("remove assignments of worker %q: %w", id, err)
		}
		return notify(ctx, tx, "workers")
	})
}

// LiveWorkers returns the workers whose heartbeat is younger than ttl, sorted by id, after deleting the others.
func (s *Store) LiveWorkers(ctx context.Context, ttl time.Duration) ([]Worker, error) {
	var ws []Worker
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM workers WHERE heartbeat_at < now() - $1::interval", ttl.String()); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT id, url, heartbeat_at FROM workers ORDER BY id")
		if err != nil {
			return err
		}
		ws, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Worker, error) {
			var w Worker
			err := r.Scan(&w.ID, &w.URL, &w.HeartbeatAt)
			return w, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list live workers: %w", err)
	}
	return ws, nil
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
