package tasks

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
)

// intent is what a unit should be doing: its work, under which session of this worker.
type intent struct {
	work    store.Work
	session *session
}

func (a intent) same(b intent) bool { return a.session == b.session && store.SameWork(a.work, b.work) }

// slot is the supervisor of one unit on this worker. It runs at most one run of the unit at a time: a run
// is stopped, and has released its claim, before the next one starts.
type slot struct {
	unit    store.Unit
	intents chan intent   // the newest intent (capacity 1: a newer one replaces an unread one)
	left    chan struct{} // closed when the unit left this worker (or the worker stops)
	once    sync.Once
	done    chan struct{} // closed when the supervisor has stopped its last run
	arrived func()        // ends the unit's arrival (worker.transition) once a run claimed it; idempotent
}

func newSlot(u store.Unit) *slot {
	return &slot{unit: u, intents: make(chan intent, 1), left: make(chan struct{}), done: make(chan struct{}), arrived: func() {}}
}

func (s *slot) want(i intent) {
	for {
		select {
		case s.intents <- i:
			return
		default:
		}
		select {
		case <-s.intents:
		default:
		}
	}
}

func (s *slot) leave() { s.once.Do(func() { close(s.left) }) }

// supervise runs the unit's runs one after the other until the unit leaves this worker.
func (w *worker) supervise(s *slot, want intent, prev <-chan struct{}) {
	defer close(s.done)
	// arrival ends the current assignment change of the unit once a run claimed it; a unit that leaves before
	// that has arrived and gone.
	arrival := s.arrived
	defer func() { arrival() }()
	if prev != nil {
		<-prev
	}
	w.observer.UnitState(s.unit.Connector, s.unit.Task, store.StateUnassigned)
	for {
		r := w.launch(want, arrival)
		next, leaving := s.await(want, r)
		if leaving {
			w.stop(r, &store.Status{State: store.StateUnassigned, WorkerID: w.id})
			w.observer.UnitGone(s.unit.Connector, s.unit.Task)
			w.transition(-1, 0) // handed over: the run released the unit
			return
		}
		arrival() // the stopped run's change, if it never claimed, is over
		if s.unit.Task != store.ConnectorUnit && !maps.Equal(want.work.TaskConfig, next.work.TaskConfig) {
			// A new task set: this run drains, and the next one waits until every run of the old set has
			// released (ClaimUnit), as Connect rebalances after a task config change. Restarts, pause and resume
			// are not assignment changes.
			w.transition(0, 1)
			arrival = sync.OnceFunc(func() { w.transition(0, -1) })
		} else {
			arrival = func() {}
		}
		// Restarted, reconfigured, paused or resumed in place: the next run reports its own status.
		w.stop(r, nil)
		want = next
	}
}

// await returns the next intent that differs from current, or leaving once the unit left this worker. Once
// the run was fenced, the next intent is returned even if it is the same: a fenced run idles until the
// reconcile loop says what to do next, and when it still says the same, only a new claim can tell whether the
// unit is still this worker's (ClaimUnit refuses it if not). Without that, a run fenced while its work stayed
// unchanged would idle for good.
func (s *slot) await(current intent, r *unitRun) (next intent, leaving bool) {
	for {
		select {
		case <-s.left:
			return intent{}, true
		case next := <-s.intents:
			if !next.same(current) {
				return next, false
			}
			if r.fenced.Load() {
				r.log.Info("run was fenced but its work is unchanged; claiming the unit again")
				return next, false
			}
		}
	}
}

// unitRun is one run of a unit: a goroutine bound to one version of its work.
type unitRun struct {
	work    store.Work
	log     *slog.Logger
	soft    context.CancelFunc // starts the soft stop
	hard    context.CancelFunc // ends the stop budget
	done    chan struct{}
	session *session
	onClaim func() // called once the run holds its unit

	// fenced is set when the run idles because the store refused its claim or a write of it (ErrFenced,
	// ErrNotFound): it waits for the next intent.
	fenced atomic.Bool

	mu    sync.Mutex
	claim store.Claim // zero until claimed
	lease *runLease
	final *store.Status // the status to leave behind at the release
}

func (r *unitRun) claimed() (store.Claim, *runLease) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.claim, r.lease
}

// launch starts a run of the work; claimed is called when the run holds its unit.
func (w *worker) launch(want intent, claimed func()) *unitRun {
	wk := want.work
	softCtx, soft := context.WithCancel(context.Background())
	hardCtx, hard := context.WithCancel(context.Background())
	r := &unitRun{
		work: wk, soft: soft, hard: hard, done: make(chan struct{}), session: want.session, onClaim: claimed,
		log: w.log.With("connector", wk.Connector, "task", wk.Task, "epoch", wk.Epoch),
	}
	go func() {
		defer close(r.done)
		defer hard()
		w.runUnit(softCtx, hardCtx, r)
	}()
	return r
}

// stop ends a run within the stop budget: soft stop first (the run drains, flushes and commits); when the
// budget is spent, the hard stop (its lease is revoked, it drops what it has queued and returns); a run that
// has still not returned one settle window later is abandoned: its claim is released for it, which fences
// its offset and status writes, and its lease has been revoked for longer than anything it queued can take.
func (w *worker) stop(r *unitRun, final *store.Status) {
	r.mu.Lock()
	r.final = final
	r.mu.Unlock()
	r.soft()
	if closedWithin(r.done, w.stopTimeout) {
		return
	}
	r.log.Warn("unit did not stop within the stop budget; stopping it hard", "stop_timeout", w.stopTimeout)
	r.hard()
	c, lease := r.claimed()
	if lease != nil {
		lease.revoke()
	}
	if closedWithin(r.done, w.settle) {
		return
	}
	r.log.Error("unit did not stop; abandoning its run (its writes are fenced)", "settle", w.settle)
	if c.Epoch != 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w.retry(ctx, r.log, "release abandoned run", func() error { return w.store.ReleaseUnit(ctx, c, final) })
	}
}

// runUnit is the life of one run: claim the unit, do what the unit kind and the connector's target state ask,
// wait for the stop, release the claim.
func (w *worker) runUnit(ctx, hardCtx context.Context, r *unitRun) {
	wk, log := r.work, r.log
	c, ok := w.claim(ctx, r)
	if !ok {
		r.fenced.Store(ctx.Err() == nil)
		<-ctx.Done()
		return
	}
	lease := newRunLease(r.session.lease)
	r.mu.Lock()
	r.claim, r.lease = c, lease
	r.mu.Unlock()
	r.onClaim()
	defer func() {
		lease.done()
		r.mu.Lock()
		final := r.final
		r.mu.Unlock()
		// The release must happen even when the stop budget is spent, and even through a database outage: until
		// then the unit's next owner waits. It is retried until it succeeds or the session ends (a dead or
		// departed session holds nothing).
		rctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-r.session.lease.revoked:
				cancel()
			case <-rctx.Done():
			}
		}()
		w.retry(rctx, log, "release unit", func() error { return w.store.ReleaseUnit(rctx, c, final) })
	}()
	log = log.With("run_epoch", c.Epoch)
	env := &runEnv{w: w, work: wk, claim: c, lease: lease, stopCtx: hardCtx, log: log}

	isConnector := wk.Task == store.ConnectorUnit
	if wk.TargetState == store.TargetStopped {
		if isConnector {
			err := w.retry(ctx, log, "stop connector", func() error {
				if err := w.store.StopTaskSet(ctx, c); err != nil {
					return err
				}
				return w.putIdleStatus(ctx, c, store.StateStopped)
			})
			if err != nil {
				r.fenced.Store(true)
				<-ctx.Done()
				return
			}
			watched := make(chan struct{})
			go func() {
				defer close(watched)
				w.watchStopped(ctx, env)
			}()
			// Offsets change only while the connector is STOPPED; those that must reach Kafka too are applied
			// by this run, which holds the connector's unit.
			w.serveOffsetRequests(ctx, env)
			<-watched
		}
		<-ctx.Done()
		return
	}
	if w.failedBefore(wk) {
		// Connect keeps a FAILED unit failed across pause and resume until it is restarted.
		<-ctx.Done()
		return
	}
	if wk.TargetState == store.TargetPaused {
		if err := w.retry(ctx, log, "pause", func() error { return w.putIdleStatus(ctx, c, store.StatePaused) }); err != nil {
			r.fenced.Store(true)
			<-ctx.Done()
			return
		}
		if !isConnector && ctx.Err() == nil {
			w.monitorPaused(ctx, env)
		}
		<-ctx.Done()
		return
	}

	var err error
	if isConnector {
		err = safely(func() error {
			cn, err := w.registry.NewConnector(wk.Connector, wk.ConnectorConfig)
			if err != nil {
				return err
			}
			log.Info("starting connector")
			return cn.Run(ctx, connectorEnv{env})
		})
	} else {
		err = safely(func() error {
			t, err := w.registry.NewTask(TaskID{Connector: wk.Connector, Task: wk.Task}, wk.TaskConfig)
			if err != nil {
				return err
			}
			log.Info("starting task")
			return t.Run(ctx, taskEnv{env})
		})
	}
	switch {
	case ctx.Err() != nil:
		// What goes wrong while a run stops (a flush that timed out, a context cancelled under a call) is not a
		// failure of the unit: the next run starts from what was committed.
		if err != nil && !quiet(err) && !errors.Is(err, context.Canceled) {
			log.Warn("stopped with an error", "error", err)
		} else {
			log.Info("stopped")
		}
		return
	case quiet(err):
		log.Info("lost its assignment; stopping", "error", err)
		r.fenced.Store(true)
	case err != nil:
		log.Error("failed", "error", err)
		w.markFailed(wk)
		w.retry(ctx, log, "report failure", func() error { return w.putFailed(ctx, c, wk, err) })
	}
	<-ctx.Done()
}

// claim waits until the run holds its unit: the previous holder must have released it (or died). It returns
// false when the run is stopped first or the assignment moved on (the reconcile loop then stops this run).
func (w *worker) claim(ctx context.Context, r *unitRun) (store.Claim, bool) {
	delay := 50 * time.Millisecond
	waiting := false
	for {
		c, err := w.store.ClaimUnit(ctx, r.work, r.session.id)
		switch {
		case err == nil:
			if waiting {
				r.log.Info("previous run released the unit; starting")
			}
			return c, true
		case ctx.Err() != nil:
			return store.Claim{}, false
		case errors.Is(err, kmtype.ErrFenced):
			r.log.Debug("assignment changed before the run could start", "error", err)
			return store.Claim{}, false
		case errors.Is(err, store.ErrUnitBusy):
			if !waiting {
				r.log.Info("waiting for the unit's previous run to stop and release it")
				waiting = true
			}
			delay = min(delay*2, 500*time.Millisecond)
		default:
			w.limit.Log(ctx, r.log, slog.LevelWarn, "claim", "claim unit failed, retrying", "error", err)
			delay = min(delay*2, 5*time.Second)
		}
		select {
		case <-ctx.Done():
			return store.Claim{}, false
		case <-time.After(delay):
		}
	}
}

// closedWithin reports whether done is closed within d.
func closedWithin(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
