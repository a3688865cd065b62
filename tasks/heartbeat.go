package tasks

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/lograte"
)

// heartbeater keeps the worker's session alive and its lease extended. When the database says the session is
// gone (the leader declared the worker dead, typically after a stall), it revokes the session's lease at once
// — every run of it stops writing — and joins again with a new session, whose runs start afresh.
type heartbeater struct {
	cfg    Config
	w      *worker
	log    *slog.Logger
	limit  *lograte.Limiter
	settle time.Duration
	// trouble is when this worker last failed to heartbeat (or joined): since then its link to the database has
	// worked without a break. The leader trusts heartbeat ages only once that has lasted a worker TTL.
	trouble atomic.Int64
}

func (h *heartbeater) troubleAt() time.Time { return time.Unix(0, h.trouble.Load()) }

// join registers a new session, retrying while the database is unreachable.
func (h *heartbeater) join(ctx context.Context) error {
	delay := 100 * time.Millisecond
	for {
		sent := time.Now()
		id, err := h.cfg.Store.RegisterWorker(ctx, h.cfg.WorkerID, h.cfg.URL)
		if err == nil {
			h.w.observer.Database(true)
			h.trouble.Store(time.Now().UnixNano())
			lease := newSessionLease(h.settle)
			lease.extend(sent.Add(h.cfg.WorkerTTL - h.settle))
			h.w.session.Store(&session{id: id, lease: lease})
			h.log.Info("joined the cluster", "session", id)
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if h.w.session.Load() == nil {
			return err // the first join fails fast: the server reports it
		}
		h.w.observer.Database(false)
		h.limit.Log(ctx, h.log, slog.LevelWarn, "join", "re-joining the cluster failed, retrying", "error", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

func (h *heartbeater) run(ctx context.Context, wake chan<- struct{}) {
	ticker := time.NewTicker(h.cfg.HeartbeatInterval)
	defer ticker.Stop()
	again := false
	for {
		if !again {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
		again = false
		sess := h.w.session.Load()
		sent := time.Now()
		err := h.cfg.Store.HeartbeatWorker(ctx, h.cfg.WorkerID, sess.id)
		if ctx.Err() == nil {
			// Fenced is an answer from PostgreSQL: only other errors mean it was not reached.
			h.w.observer.Database(err == nil || errors.Is(err, kmtype.ErrFenced))
		}
		switch {
		case err == nil:
			sess.lease.extend(sent.Add(h.cfg.WorkerTTL - h.settle))
			if time.Since(sent) > h.cfg.HeartbeatInterval {
				// As slow as a failure for a leader's trust in heartbeat ages (leader.trusted): the others'
				// heartbeats may have waited as long. The lease was extended from when this one was sent, maybe
				// into the past: heartbeat again at once, so that the runs may write again now.
				h.trouble.Store(time.Now().UnixNano())
				again = true
			}
			h.limit.Resolved(ctx, h.log, "heartbeat", "worker heartbeats work again")
		case ctx.Err() != nil:
			return
		case errors.Is(err, kmtype.ErrFenced):
			h.log.Warn("this worker was declared dead (no heartbeat within the worker TTL, e.g. after a stall); its runs stop and it joins again",
				"session", sess.id, "worker_ttl", h.cfg.WorkerTTL)
			sess.lease.revoke()
			if err := h.join(ctx); err != nil {
				return
			}
			select {
			case wake <- struct{}{}:
			default:
			}
		default:
			h.trouble.Store(time.Now().UnixNano())
			h.limit.Log(ctx, h.log, slog.LevelWarn, "heartbeat", "worker heartbeat failed", "error", err)
		}
	}
}

// leave ends the session after the units have stopped: the leader hands its assignments to others at once.
func (h *heartbeater) leave() {
	sess := h.w.session.Load()
	sess.lease.revoke()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.cfg.Store.RemoveWorker(ctx, h.cfg.WorkerID, sess.id); err != nil {
		h.log.Warn("leave cluster", "error", err)
	}
}
