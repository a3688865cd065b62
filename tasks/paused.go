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

// PausedTask is a Task that can also watch its work while its connector is PAUSED: a source task keeps showing
// how far behind the source its partitions fall (the backlog grows while paused), without replicating. The
// runtime calls RunPaused in a paused run, which holds the unit's claim and keeps its status PAUSED; it is
// stopped as Run is (ctx done, then env.StopContext() done within the stop budget) and must then return.
//
// A paused run may read (offsets, the offset map) and publish partition stats, and nothing else: its env refuses
// every other write (ErrPausedWrite), its Lease is never Valid (nothing may be handed to Kafka), and Running and
// Report keep the status PAUSED. An error it returns is logged and RunPaused is called again after a backoff;
// it never makes the unit FAILED, since a failed unit stays failed across the resume.
type PausedTask interface {
	Task
	RunPaused(ctx context.Context, env TaskEnv) error
}

// ErrPausedWrite is what a paused run's env returns to a write only a running task may make.
var ErrPausedWrite = errors.New("a paused task writes no offsets, offset map, group offsets, topics or pipeline figures")

// How long a paused run waits before calling RunPaused again after it returned an error.
const (
	pausedRetryMin = time.Second
	pausedRetryMax = time.Minute
)

// monitorPaused runs the paused mode of a task unit, if its task has one, until ctx is done or the run is fenced.
func (w *worker) monitorPaused(ctx context.Context, env *runEnv) {
	wk, log := env.work, env.log
	t, err := w.registry.NewTask(TaskID{Connector: wk.Connector, Task: wk.Task}, wk.TaskConfig)
	if err != nil {
		// The running task would fail with this; while paused there is nothing to show, and the resume reports it.
		log.Warn("cannot create the task to monitor it while paused", "error", err)
		return
	}
	pt, ok := t.(PausedTask)
	if !ok {
		return
	}
	penv := pausedEnv{taskEnv{env}}
	delay := pausedRetryMin
	for {
		began := time.Now()
		log.Debug("monitoring paused task")
		err := safely(func() error { return pt.RunPaused(ctx, penv) })
		switch {
		case ctx.Err() != nil:
			if err != nil && !quiet(err) && !errors.Is(err, context.Canceled) {
				log.Warn("paused monitor stopped with an error", "error", err)
			}
			return
		case quiet(err):
			log.Info("paused task lost its assignment; stopping its monitor", "error", err)
			return
		}
		if time.Since(began) > pausedRetryMax {
			delay = pausedRetryMin // it worked for a while: a new failure, not the same one again
		}
		w.limit.Log(ctx, log, slog.LevelWarn, "paused-monitor", "paused monitor failed, retrying", "error", err, "delay", delay)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, pausedRetryMax)
	}
}

// pausedEnv is the TaskEnv of a paused run: reads and partition stats pass, writes of replication progress are
// refused, the status stays PAUSED and the lease never lets anything be handed to Kafka.
type pausedEnv struct{ taskEnv }

func (e pausedEnv) Running(ctx context.Context) error {
	return e.w.putStatus(ctx, e.claim, store.StatePaused, "")
}

func (e pausedEnv) Report(ctx context.Context, notices []kmtype.Notice) error {
	return e.w.putNotices(ctx, e.claim, store.StatePaused, notices)
}

func (e pausedEnv) CommitOffsets(context.Context, []kmtype.Offset) error {
	return fmt.Errorf("commit offsets: %w", ErrPausedWrite)
}

func (e pausedEnv) CommitProgress(context.Context, []kmtype.Offset, []kmtype.OffsetRange) error {
	return fmt.Errorf("commit progress: %w", ErrPausedWrite)
}

func (e pausedEnv) PruneOffsetRanges(context.Context, kmtype.RangeKey, int64, int) error {
	return fmt.Errorf("prune the offset map: %w", ErrPausedWrite)
}

func (e pausedEnv) PublishPipelineStat(context.Context, kmtype.PipelineStat) error {
	return fmt.Errorf("publish pipeline figures: %w", ErrPausedWrite) // a paused run has no pipeline to measure
}

func (e pausedEnv) PutGroupOffsets(context.Context, []string, []kmtype.GroupOffset) error {
	return fmt.Errorf("put group offsets: %w", ErrPausedWrite)
}

func (e pausedEnv) RecordTopics(context.Context, []string) error {
	return fmt.Errorf("record topics: %w", ErrPausedWrite)
}

func (e pausedEnv) Lease() Lease { return pausedLease{e.lease} }

// pausedLease is a paused run's lease: revoked with the run's, and never valid for writing to Kafka.
type pausedLease struct{ *runLease }

func (pausedLease) Valid() bool { return false }

func (pausedLease) ValidFor() time.Duration { return 0 }
