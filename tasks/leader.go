package tasks

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/lograte"
	"github.com/kmirror/kmirror/store"
)

// leader campaigns for the lease and, while it holds it, keeps every unit of work assigned to a live worker.
type leader struct {
	id        string
	store     *store.Store
	log       *slog.Logger
	limit     *lograte.Limiter
	leaseTTL  time.Duration
	workerTTL time.Duration
	// slow is how long a call to the database may take before the leader stops trusting heartbeat ages: the
	// heartbeat interval. A database that stalls (SIGSTOP, a storage hiccup, a failover) holds every
	// heartbeat as long as the leader's own calls, so the workers look silent though they are not.
	slow     time.Duration
	isLeader bool
	// trusted is when the leader's view of heartbeats became trustworthy: the last time it could not reach
	// the database or the database answered slowly (a failed or slow heartbeat of its own, a failed or slow
	// round, joining). Until one worker TTL has passed
	// since then, it declares no worker dead: after a database outage or a stall of the leader itself every
	// heartbeat looks old, though the workers are alive and about to heartbeat again. A worker that takes over
	// after a healthy TTL of its own (the old leader died) acts at once.
	trusted time.Time
	// troubleAt tells when this worker last failed to reach the database (heartbeater.troubleAt).
	troubleAt func() time.Time
	observer  Observer
	load      *workerLoad // weighs tasks over workers by their rates; nil until the first round that leads
}

// run campaigns on every tick and wake-up until ctx is done, then releases the lease so another worker can
// take over without waiting for it to expire.
func (l *leader) run(ctx context.Context, wake <-chan struct{}, renew time.Duration) {
	ticker := time.NewTicker(renew)
	defer ticker.Stop()
	for {
		l.round(ctx)
		select {
		case <-ctx.Done():
			release, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := l.store.ReleaseLeadership(release, l.id); err != nil {
				l.log.Warn("release leadership", "error", err)
			}
			cancel()
			l.observer.Leader(false)
			return
		case <-wake:
		case <-ticker.C:
		}
	}
}

func (l *leader) round(ctx context.Context) {
	began := time.Now()
	epoch, ok, err := l.store.AcquireLeadership(ctx, l.id, l.leaseTTL)
	took := time.Since(began)
	if err != nil {
		if ctx.Err() == nil {
			l.limit.Log(ctx, l.log, slog.LevelWarn, "campaign", "campaign for leadership failed", "error", err)
		}
		l.trusted = time.Now()
		return
	}
	l.limit.Resolved(ctx, l.log, "campaign", "campaigning for leadership works again")
	if ok != l.isLeader {
		l.isLeader = ok
		l.observer.Leader(ok)
		if ok {
			l.log.Info("became leader", "lease_epoch", epoch)
			l.trusted = l.troubleAt()
			l.load = nil // what an earlier term measured is old
		} else {
			l.log.Info("lost leadership")
		}
	}
	if !ok {
		return
	}
	if took > l.slow {
		l.distrust("campaign", took)
	}
	if err := l.assign(ctx, epoch); err != nil && ctx.Err() == nil {
		if errors.Is(err, kmtype.ErrFenced) {
			l.log.Info("leadership moved during assignment", "lease_epoch", epoch)
			return
		}
		l.trusted = time.Now()
		l.limit.Log(ctx, l.log, slog.LevelWarn, "assign", "assignment round failed", "error", err)
		return
	}
	l.limit.Resolved(ctx, l.log, "assign", "assignment rounds work again")
}

// exchangeByLoad returns the exchanges of tasks between workers that their measured load calls for, in a round
// that has nothing else to change. Without rates (a failed read) nothing moves: counts are already even.
func (l *leader) exchangeByLoad(ctx context.Context, p placement) []store.Reassignment {
	if l.load == nil {
		l.load = newWorkerLoad()
	}
	rates, err := l.store.TaskRates(ctx, rateFreshness)
	if err != nil {
		l.limit.Log(ctx, l.log, slog.LevelWarn, "task-rates", "reading the tasks' rates failed; tasks are spread by count only", "error", err)
		return nil
	}
	changes, reasons := l.load.exchange(time.Now(), p.workers, p.current, rates)
	for _, r := range reasons {
		l.log.Info("exchanging tasks between workers by load", "reason", r)
	}
	return changes
}

// assign runs one leader round: read the plan, compute the changes, write them fenced by the lease epoch.
func (l *leader) assign(ctx context.Context, epoch int64) error {
	var workers []store.Worker
	if time.Since(l.trusted) >= l.workerTTL {
		live, dropped, err := l.store.DropDeadWorkers(ctx, l.workerTTL, l.id, l.slow)
		if errors.Is(err, store.ErrTooSlow) {
			l.distrust("drop dead workers", l.slow)
			return nil // the next round, a TTL later, judges again
		}
		if err != nil {
			return err
		}
		for _, d := range dropped {
			l.log.Warn("declared a worker dead: no heartbeat within the worker TTL; its units move", "dead_worker", d.ID,
				"heartbeat_age", d.HeartbeatAge.Round(time.Millisecond), "worker_ttl", l.workerTTL)
		}
		workers = live
	} else {
		all, err := l.store.Workers(ctx)
		if err != nil {
			return err
		}
		workers = all
	}
	plan, err := l.store.LoadPlan(ctx)
	if err != nil {
		return err
	}
	restarts, err := l.store.PendingRestarts(ctx)
	if err != nil {
		return err
	}
	var statuses map[string][]store.Status
	if len(restarts) > 0 {
		if statuses, err = l.store.AllStatuses(ctx); err != nil {
			return err
		}
	}
	p := placement{units: plan.Units, current: plan.Assignments, restarts: restarts, statuses: statuses}
	for _, w := range workers {
		p.workers = append(p.workers, w.ID)
	}
	changes, handled := p.plan()
	if len(changes) > 0 {
		l.log.Info("reassigning work", "changes", len(changes), "workers", len(workers))
	} else if len(handled) == 0 {
		changes = l.exchangeByLoad(ctx, p)
	}
	return l.store.ApplyReassignments(ctx, l.id, epoch, changes, handled)
}

// distrust makes the leader judge no heartbeat for a worker TTL after a call to the database took took.
func (l *leader) distrust(call string, took time.Duration) {
	l.trusted = time.Now()
	l.log.Info("the database answered slowly; no worker is declared dead until heartbeats have had a worker TTL to arrive",
		"call", call, "took", took.Round(time.Millisecond), "slow", l.slow, "worker_ttl", l.workerTTL)
}
