package tasks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
)

// Fencing a changed task set in Kafka.
//
// PostgreSQL's epochs fence a former run's offsets and statuses, and a task's own InitTransactions fences the
// former owners of its transactional id. Neither stops a zombie of a task id whose partitions moved to another
// task id when the task set changed (tasks.max, new partitions): Connect fences every transactional id of the
// previous generation before the new one starts (DistributedHerder's zombie fencing). Here the store keeps the
// task ids a change owes a fence (ReplaceTaskConfigs: those whose config changed or which went away), and the
// first exactly-once run of the connector that finds the fence owed, once no run of an older generation holds
// a unit any more (they drained or their sessions died), fences them and records it; every other exactly-once
// run of the connector waits for that before it initializes transactions. So no run of the new generation has
// a producer yet when the fence lands, and nothing a zombie of the old one still sends can commit after.

// fenceWait bounds the pause between two looks at a fence somebody else owes.
const fenceWait = 250 * time.Millisecond

// FenceTaskSet implements TaskEnv.FenceTaskSet and OffsetsEnv.FenceTaskSet for the run of env.
func (e *runEnv) FenceTaskSet(ctx context.Context, fence FenceFunc) error {
	waiting := false
	for {
		f, err := e.w.store.ClaimTaskFence(ctx, e.claim)
		switch {
		case err == nil && f.TaskIDs == nil:
			if waiting {
				e.log.Info("the previous task set is fenced in Kafka; starting")
			}
			return nil
		case err == nil && e.lease.Valid():
			began := time.Now()
			if err := fence(ctx, f.TaskIDs); err != nil {
				return fmt.Errorf("fence the transactional ids of tasks %v of the previous task set: %w", f.TaskIDs, err)
			}
			err := e.w.store.CompleteTaskFence(ctx, e.claim, f)
			if err == nil {
				e.log.Info("fenced the transactional ids of the previous task set in Kafka", "fenced_tasks", f.TaskIDs,
					"task_generation", f.Generation, "fence_ms", time.Since(began).Milliseconds())
				return nil
			}
			if !errors.Is(err, store.ErrFencePending) {
				return err
			}
			// The task set changed while this run fenced: the new one may owe more.
		case err == nil:
			// No lease, no writes to Kafka: the holder keeps the fence and tries again when the lease is back.
		case errors.Is(err, store.ErrFencePending):
			if !waiting {
				e.log.Info("waiting until the previous task set is fenced in Kafka (its runs must stop first)")
				waiting = true
			}
		default:
			return err
		}
		select {
		case <-ctx.Done():
			if waiting {
				return fmt.Errorf("the previous task set's runs did not stop (or nobody fenced them) in time: %w", ctx.Err())
			}
			return ctx.Err()
		case <-time.After(fenceWait):
		}
	}
}

// offsetsEnv is the OffsetsEnv of a STOPPED connector's run.
type offsetsEnv struct{ *runEnv }

func (e offsetsEnv) ReadOffsets(ctx context.Context) ([]kmtype.Offset, error) {
	return e.w.store.Offsets(ctx, e.work.Connector)
}

// offsetRequestPoll is how often a STOPPED connector's run looks for offset changes to apply: the REST API
// waits for them, so not much longer than a request takes.
const offsetRequestPoll = 250 * time.Millisecond

// serveOffsetRequests applies, until ctx is done, the offset changes filed for the STOPPED connector whose unit
// env's run holds: Kafka first (the registry's OffsetsWriter), then PostgreSQL with the request's outcome.
func (w *worker) serveOffsetRequests(ctx context.Context, env *runEnv) {
	ow, ok := w.registry.(OffsetsWriter)
	if !ok || !ow.WritesOffsets(env.work.ConnectorConfig) {
		return
	}
	ticker := time.NewTicker(offsetRequestPoll)
	defer ticker.Stop()
	for {
		req, err := w.store.TakeOffsetRequest(ctx, env.claim)
		switch {
		case err != nil && (quiet(err) || ctx.Err() != nil):
			return
		case err != nil:
			w.limit.Log(ctx, env.log, slog.LevelWarn, "offset-requests", "reading offset requests failed, retrying", "error", err)
		case req != nil:
			werr := safely(func() error {
				return ow.WriteOffsets(ctx, offsetsEnv{env}, req.Connector, env.work.ConnectorConfig, req.Offsets, req.Reset)
			})
			if werr != nil {
				env.log.Warn("altering the connector's offsets failed", "request", req.ID, "error", werr)
			} else {
				env.log.Info("altered the connector's offsets", "request", req.ID, "offsets", len(req.Offsets), "reset", req.Reset)
			}
			w.retry(ctx, env.log, "finish offset request", func() error { return w.store.FinishOffsetRequest(ctx, env.claim, req, werr) })
			continue // the next one at once
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}
