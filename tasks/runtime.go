package tasks

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kmirror/kmirror/store"
)

// Config configures a Runtime. Zero durations take the defaults in parentheses.
type Config struct {
	WorkerID string // this process's id in statuses (worker_id)
	URL      string // this process's advertised REST URL
	Store    *store.Store
	Registry Registry
	Logger   *slog.Logger

	PollInterval      time.Duration // safety-net reconcile when no notification arrives (5s)
	HeartbeatInterval time.Duration // worker heartbeat and leader lease renewal (2s)
	WorkerTTL         time.Duration // a worker silent this long is dead and loses its work (10s)
	LeaseTTL          time.Duration // leader lease duration (10s)
	StopTimeout       time.Duration // how long a unit may take to drain and commit when stopped (30s)
}

// Runtime runs this process's share of the cluster's work: it heartbeats as a worker, campaigns for leadership
// (and assigns work while leader), and runs the connectors and tasks assigned to it.
type Runtime struct {
	cfg   Config
	ready atomic.Bool
}

// New returns a Runtime; Run starts it.
func New(cfg Config) *Runtime {
	cfg.PollInterval = cmp.Or(cfg.PollInterval, 5*time.Second)
	cfg.HeartbeatInterval = cmp.Or(cfg.HeartbeatInterval, 2*time.Second)
	cfg.WorkerTTL = cmp.Or(cfg.WorkerTTL, 10*time.Second)
	cfg.LeaseTTL = cmp.Or(cfg.LeaseTTL, 10*time.Second)
	cfg.StopTimeout = cmp.Or(cfg.StopTimeout, 30*time.Second)
	return &Runtime{cfg: cfg}
}

// Ready tells whether the runtime has joined the cluster and reconciled its work at least once.
func (r *Runtime) Ready() bool { return r.ready.Load() }

// Run joins the cluster and runs until ctx is done. It then stops every unit softly (each drains, flushes and
// commits within StopTimeout), reports them UNASSIGNED, leaves the cluster and releases leadership, and returns
// once everything it started has stopped.
func (r *Runtime) Run(ctx context.Context) error {
	cfg := r.cfg
	if cfg.WorkerID == "" || cfg.Store == nil || cfg.Registry == nil || cfg.Logger == nil {
		return errors.New("tasks: Config needs WorkerID, Store, Registry and Logger")
	}
	log := cfg.Logger.With("worker_id", cfg.WorkerID)
	if err := cfg.Store.HeartbeatWorker(ctx, cfg.WorkerID, cfg.URL); err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it joined: nothing was started
		}
		return err
	}

	listenCtx, stopListening := context.WithCancel(ctx)
	defer stopListening()
	notes := make(chan struct{}, 1)
	leaderWake := make(chan struct{}, 1)
	workerWake := make(chan struct{}, 1)

	var wg sync.WaitGroup
	wg.Go(func() { cfg.Store.ListenLoop(listenCtx, notes) })
	wg.Go(func() { fanOut(listenCtx, notes, leaderWake, workerWake) })
	wg.Go(func() { heartbeat(ctx, cfg, log) })

	l := &leader{id: cfg.WorkerID, store: cfg.Store, log: log, leaseTTL: cfg.LeaseTTL, workerTTL: cfg.WorkerTTL}
	wg.Go(func() { l.run(ctx, leaderWake, cfg.HeartbeatInterval) })

	w := newWorker(cfg.WorkerID, cfg.Store, cfg.Registry, log, cfg.StopTimeout)
	w.run(ctx, workerWake, cfg.PollInterval, func() { r.ready.Store(true) })
	r.ready.Store(false)
	stopListening()
	wg.Wait()
	return nil
}

func heartbeat(ctx context.Context, cfg Config, log *slog.Logger) {
	ticker := time.NewTicker(cfg.HeartbeatInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			if err := cfg.Store.HeartbeatWorker(ctx, cfg.WorkerID, cfg.URL); err != nil && ctx.Err() == nil {
				log.Warn("worker heartbeat failed", "error", err)
			}
		}
	}
}

// fanOut forwards each notification to every subscriber without blocking; subscribers coalesce bursts.
func fanOut(ctx context.Context, in <-chan struct{}, outs ...chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-in:
			for _, out := range outs {
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}
}
