package tasks

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/kmirror/kmirror/store"
)

// worker runs the units of work assigned to this process and reports their statuses.
type worker struct {
	id          string
	store       *store.Store
	registry    Registry
	log         *slog.Logger
	stopTimeout time.Duration

	units map[store.Unit]*unitRun // touched only by the reconcile loop

	mu     sync.Mutex
	failed map[store.Unit]store.Work // the run identity under which a unit failed; it stays failed until restarted
}

// unitRun is one run of a unit: a goroutine bound to one version of its Work.
type unitRun struct {
	work   store.Work
	cancel context.CancelFunc
	done   chan struct{}
}

func newWorker(id string, st *store.Store, reg Registry, log *slog.Logger, stopTimeout time.Duration) *worker {
	return &worker{
		id: id, store: st, registry: reg, log: log, stopTimeout: stopTimeout,
		units:  make(map[store.Unit]*unitRun),
		failed: make(map[store.Unit]store.Work),
	}
}

// run reconciles on every wake-up and poll tick until ctx is done, then stops every unit.
func (w *worker) run(ctx context.Context, wake <-chan struct{}, poll time.Duration, reconciled func()) {
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	for {
		if err := w.reconcile(ctx); err != nil {
			if ctx.Err() != nil {
				break
			}
			w.log.Warn("worker reconcile failed", "error", err)
		} else if reconciled != nil {
			reconciled()
		}
		select {
		case <-ctx.Done():
		case <-wake:
		case <-ticker.C:
		}
		if ctx.Err() != nil {
			break
		}
	}
	w.shutdown()
}

// reconcile makes the running units match the assignments: it stops runs whose work changed or went away and
// starts runs for new or changed work.
func (w *worker) reconcile(ctx context.Context) error {
	works, err := w.store.WorkerWork(ctx, w.id)
	if err != nil {
		return err
	}
	desired := make(map[store.Unit]store.Work, len(works))
	for _, wk := range works {
		desired[wk.Unit] = wk
	}
	var stopping []*unitRun
	for u, run := range w.units {
		if wk, ok := desired[u]; !ok || !store.SameWork(run.work, wk) {
			run.cancel()
			stopping = append(stopping, run)
			delete(w.units, u)
		}
	}
	w.await(stopping)
	for u, wk := range desired {
		if _, ok := w.units[u]; !ok {
			w.start(ctx, wk)
		}
	}
	w.mu.Lock()
	for u := range w.failed {
		if _, ok := desired[u]; !ok {
			delete(w.failed, u)
		}
	}
	w.mu.Unlock()
	return nil
}

// await waits for stopping runs to finish their soft stop (drain, flush, commit); a run that overstays
// stopTimeout is abandoned — its assignment is already gone or changed, so its commits are fenced.
func (w *worker) await(runs []*unitRun) {
	if len(runs) == 0 {
		return
	}
	deadline := time.NewTimer(w.stopTimeout)
	defer deadline.Stop()
	for _, run := range runs {
		select {
		case <-run.done:
		case <-deadline.C:
			w.log.Error("unit did not stop in time; abandoning it", "connector", run.work.Connector, "task", run.work.Task,
				"timeout", w.stopTimeout)
			return
		}
	}
}

func (w *worker) start(parent context.Context, wk store.Work) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	run := &unitRun{work: wk, cancel: cancel, done: make(chan struct{})}
	w.units[wk.Unit] = run
	go func() {
		defer close(run.done)
		w.runUnit(ctx, wk)
	}()
}

// shutdown stops every unit, reports them UNASSIGNED (as Connect does on a clean shutdown) and leaves the
// cluster so the leader can hand the work to others at once.
func (w *worker) shutdown() {
	var runs []*unitRun
	for _, run := range w.units {
		run.cancel()
		runs = append(runs, run)
	}
	w.await(runs)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, run := range runs {
		if err := w.putStatus(ctx, run.work, store.StateUnassigned, ""); err != nil && !quiet(err) {
			w.log.Warn("report unit unassigned", "connector", run.work.Connector, "task", run.work.Task, "error", err)
		}
	}
	w.units = make(map[store.Unit]*unitRun)
	if err := w.store.RemoveWorker(ctx, w.id); err != nil {
		w.log.Warn("leave cluster", "error", err)
	}
}

// runUnit is the life of one run: what it does depends on the unit kind and the connector's target state.
func (w *worker) runUnit(ctx context.Context, wk store.Work) {
	log := w.log.With("connector", wk.Connector, "task", wk.Task, "epoch", wk.Epoch)
	isConnector := wk.Task == store.ConnectorUnit
	if wk.TargetState == store.TargetStopped {
		if isConnector {
			w.retry(ctx, log, "stop connector", func() error {
				if _, err := w.store.ReplaceTaskConfigs(ctx, wk.Connector, wk.Epoch, nil); err != nil {
					return err
				}
				return w.putStatus(ctx, wk, store.StateStopped, "")
			})
		}
		<-ctx.Done()
		return
	}
	if w.failedBefore(wk) {
		// Connect keeps a FAILED unit failed across pause and resume until it is restarted.
		<-ctx.Done()
		return
	}
	// The previous run of this unit on this worker has stopped (reconcile waits for it), so from here on
	// only this run may commit.
	if err := w.store.ActivateEpoch(ctx, wk.Unit, w.id, wk.Epoch); err != nil {
		if !quiet(err) {
			log.Warn("could not start the run", "error", err)
		}
		<-ctx.Done()
		return
	}
	switch wk.TargetState {
	case store.TargetPaused:
		w.retry(ctx, log, "pause", func() error { return w.putStatus(ctx, wk, store.StatePaused, "") })
		<-ctx.Done()
		return
	}

	var err error
	if isConnector {
		err = safely(func() error {
			c, err := w.registry.NewConnector(wk.Connector, wk.ConnectorConfig)
			if err != nil {
				return err
			}
			log.Info("starting connector")
			return c.Run(ctx, &connectorEnv{w: w, work: wk, log: log})
		})
	} else {
		err = safely(func() error {
			t, err := w.registry.NewTask(TaskID{Connector: wk.Connector, Task: wk.Task}, wk.TaskConfig)
			if err != nil {
				return err
			}
			log.Info("starting task")
			return t.Run(ctx, &taskEnv{w: w, work: wk, log: log})
		})
	}
	switch {
	case ctx.Err() != nil:
		log.Info("stopped")
		return
	case quiet(err):
		log.Info("lost its assignment; stopping", "error", err)
	case err != nil:
		log.Error("failed", "error", err)
		w.markFailed(wk)
		w.retry(ctx, log, "report failure", func() error { return w.putStatus(ctx, wk, store.StateFailed, trace(err, wk, w.id)) })
	}
	<-ctx.Done()
}

// quiet errors end a run without a FAILED status: the unit belongs to someone else now, or no longer exists.
func quiet(err error) bool {
	return errors.Is(err, store.ErrFenced) || errors.Is(err, store.ErrNotFound)
}

func (w *worker) putStatus(ctx context.Context, wk store.Work, state, trace string) error {
	return w.store.PutStatus(ctx, store.Status{Unit: wk.Unit, State: state, WorkerID: w.id, Trace: trace, Epoch: wk.Epoch})
}

// retry runs fn until it succeeds, is fenced, or ctx ends; database hiccups must not lose a status report.
func (w *worker) retry(ctx context.Context, log *slog.Logger, what string, fn func() error) {
	delay := 100 * time.Millisecond
	for {
		err := fn()
		if err == nil || quiet(err) || ctx.Err() != nil {
			return
		}
		log.Warn(what+" failed, retrying", "error", err, "delay", delay)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

func (w *worker) markFailed(wk store.Work) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failed[wk.Unit] = wk
}

// failedBefore tells whether the unit already failed under the same assignment epoch and the same configs, in
// which case only a restart (a new epoch) or a reconfiguration runs it again.
func (w *worker) failedBefore(wk store.Work) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	f, ok := w.failed[wk.Unit]
	return ok && f.Epoch == wk.Epoch && maps.Equal(f.ConnectorConfig, wk.ConnectorConfig) && maps.Equal(f.TaskConfig, wk.TaskConfig)
}
