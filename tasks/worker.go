package tasks

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/lograte"
	"github.com/kmirror/kmirror/store"
)

// worker runs the units of work assigned to this process and reports their statuses. Each unit has a
// supervisor of its own (slot), so that a unit that is slow to stop never holds up the others; the
// reconcile loop only tells supervisors what their unit should be doing.
type worker struct {
	id          string
	store       *store.Store
	registry    Registry
	log         *slog.Logger
	limit       *lograte.Limiter
	stopTimeout time.Duration // the soft-stop budget of a run
	settle      time.Duration // how long a revoked run's records may take to settle (Lease.Settle)
	observer    Observer
	cpu         *cpuMeter

	session atomic.Pointer[session] // the current session; replaced when the worker re-joins

	slots    map[store.Unit]*slot // touched only by the reconcile loop
	stopping map[store.Unit]*slot // supervisors of units that left, until they have stopped

	mu     sync.Mutex
	failed map[store.Unit]store.Work // the run identity under which a unit failed; it stays failed until restarted

	transMu     sync.Mutex
	handing     int  // units that left this worker whose supervisor has not stopped yet
	taking      int  // units that arrived whose first run has not claimed yet
	rebalancing bool // handing + taking > 0, as last told to the observer
}

// session is one membership of the worker in the cluster.
type session struct {
	id    int64
	lease *sessionLease
}

func newWorker(id string, st *store.Store, reg Registry, log *slog.Logger, limit *lograte.Limiter, stopTimeout, settle time.Duration) *worker {
	return &worker{
		id: id, store: st, registry: reg, log: log, limit: limit, stopTimeout: stopTimeout, settle: settle,
		observer: nopObserver{}, cpu: newCPUMeter(),
		slots:    make(map[store.Unit]*slot),
		stopping: make(map[store.Unit]*slot),
		failed:   make(map[store.Unit]store.Work),
	}
}

// run reconciles on every wake-up and poll tick until ctx is done, then stops every unit within the stop
// budget.
func (w *worker) run(ctx context.Context, wake <-chan struct{}, poll time.Duration, reconciled func()) {
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	for ctx.Err() == nil {
		if err := w.reconcile(ctx); err != nil {
			if ctx.Err() != nil {
				break
			}
			w.limit.Log(ctx, w.log, slog.LevelWarn, "reconcile", "worker reconcile failed", "error", err)
		} else {
			w.limit.Resolved(ctx, w.log, "reconcile", "worker reconcile works again")
			if reconciled != nil {
				reconciled()
			}
		}
		select {
		case <-ctx.Done():
		case <-wake:
		case <-ticker.C:
		}
	}
	w.shutdown()
}

// reconcile tells every supervisor what its unit should run now, starts supervisors for new units and stops
// those of units that left. It never waits for a unit.
func (w *worker) reconcile(ctx context.Context) error {
	sess := w.session.Load()
	works, err := w.store.WorkerWork(ctx, w.id)
	if err != nil {
		return err
	}
	desired := make(map[store.Unit]store.Work, len(works))
	for _, wk := range works {
		desired[wk.Unit] = wk
	}
	for u, s := range w.stopping {
		select {
		case <-s.done:
			delete(w.stopping, u)
		default:
		}
	}
	connectors := 0
	for u := range desired {
		if u.Task == store.ConnectorUnit {
			connectors++
		}
	}
	w.observer.Assignment(w.id, connectors, len(desired)-connectors)
	for u, s := range w.slots {
		if _, ok := desired[u]; !ok {
			w.transition(1, 0)
			s.leave()
			w.stopping[u] = s
			delete(w.slots, u)
		}
	}
	for u, wk := range desired {
		want := intent{work: wk, session: sess}
		if s, ok := w.slots[u]; ok {
			s.want(want)
			continue
		}
		s := newSlot(u)
		w.transition(0, 1)
		s.arrived = sync.OnceFunc(func() { w.transition(0, -1) })
		var prev <-chan struct{}
		if old, ok := w.stopping[u]; ok {
			prev = old.done // the unit came back before its last run stopped: never two runs at once
		}
		w.slots[u] = s
		go w.supervise(s, want, prev)
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

// shutdown stops every unit (each reports UNASSIGNED, as Connect does on a clean shutdown) and waits until all
// have stopped.
func (w *worker) shutdown() {
	w.observer.Assignment(w.id, 0, 0)
	for u, s := range w.slots {
		w.transition(1, 0)
		s.leave()
		w.stopping[u] = s
	}
	w.slots = make(map[store.Unit]*slot)
	for _, s := range w.stopping {
		<-s.done
	}
	w.stopping = make(map[store.Unit]*slot)
}

// transition counts units entering (+1) and leaving (-1) an assignment change, handing them over or taking
// them up, and tells the observer when the worker starts or stops being in one.
func (w *worker) transition(handing, taking int) {
	w.transMu.Lock()
	defer w.transMu.Unlock()
	w.handing += handing
	w.taking += taking
	if now := w.handing+w.taking > 0; now != w.rebalancing {
		w.rebalancing = now
		w.observer.Rebalancing(now)
	}
}

// quiet errors end a run without a FAILED status: the unit belongs to someone else now, or no longer exists.
func quiet(err error) bool {
	return errors.Is(err, kmtype.ErrFenced) || errors.Is(err, store.ErrNotFound)
}

func (w *worker) putStatus(ctx context.Context, c store.Claim, state, trace string) error {
	return w.writeStatus(ctx, c, state, trace, nil, nil) // a status written without notices clears them
}

// putNotices writes the unit's status in state with the notices it reports, their messages as the trace.
func (w *worker) putNotices(ctx context.Context, c store.Claim, state string, notices []kmtype.Notice) error {
	msgs, kinds := make([]string, len(notices)), make([]string, len(notices))
	for i, n := range notices {
		msgs[i], kinds[i] = n.Message, n.Kind
	}
	return w.writeStatus(ctx, c, state, strings.Join(msgs, "\n"), notices, kinds)
}

// writeStatus writes the unit's status and, once it is stored, tells the observer its state and notice kinds.
func (w *worker) writeStatus(ctx context.Context, c store.Claim, state, trace string, notices []kmtype.Notice, kinds []string) error {
	err := w.store.PutStatus(ctx, store.Status{Unit: c.Unit, State: state, WorkerID: w.id, Trace: trace, Notices: notices, Epoch: c.Epoch})
	if err == nil {
		w.observer.UnitState(c.Unit.Connector, c.Unit.Task, state)
		w.observer.UnitNotices(c.Unit.Connector, c.Unit.Task, kinds)
	}
	return err
}

// retry runs fn until it succeeds, is fenced, or ctx ends; database hiccups must not lose a status report. It
// returns fn's last error when that was a fencing one (quiet), and nil otherwise.
func (w *worker) retry(ctx context.Context, log *slog.Logger, what string, fn func() error) error {
	delay := 100 * time.Millisecond
	for {
		err := fn()
		if quiet(err) {
			return err
		}
		if err == nil || ctx.Err() != nil {
			return nil
		}
		w.limit.Log(ctx, log, slog.LevelWarn, what, what+" failed, retrying", "error", err, "delay", delay)
		select {
		case <-ctx.Done():
			return nil
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
