package store

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kmirror/kmirror/lograte"
)

// Listen delivers a wake-up on wake for every NOTIFY on Channel, coalescing bursts (wake should be buffered with
// capacity 1). It returns when ctx is done or the connection fails; callers keep a slow poll as a safety net and
// call Listen again.
func (s *Store) Listen(ctx context.Context, wake chan<- struct{}) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("listen: acquire connection: %w", err)
	}
	// A LISTENing connection must not go back to the pool with the subscription still active.
	defer func() {
		conn.Conn().Close(context.WithoutCancel(ctx))
		conn.Release()
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	for {
		if _, err := conn.Conn().WaitForNotification(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("listen: wait for notification: %w", err)
		}
		select {
		case wake <- struct{}{}:
		default:
		}
	}
}

// ListenLoop keeps Listen running until ctx is done, retrying after failures (logged at most every 30 s:
// a database outage would otherwise log a line a second).
func (s *Store) ListenLoop(ctx context.Context, wake chan<- struct{}) {
	limit := lograte.New(30 * time.Second)
	for ctx.Err() == nil {
		if err := s.Listen(ctx, wake); err != nil {
			limit.Log(ctx, s.log, slog.LevelWarn, "listen", "notification listener failed, retrying", "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}
