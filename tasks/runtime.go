package tasks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kmirror/kmirror/lograte"
	"github.com/kmirror/kmirror/store"
)

// Defaults of Config's durations. A worker killed with -9 has its units running elsewhere about a worker TTL
// (plus up to a heartbeat interval for the leader's next round) after its last heartbeat: 6 s to 7 s. A
// heartbeat a second lets a worker miss two in a row before its lease (half the TTL after a heartbeat is
// sent) pauses its writes, and the leader's distrust of slow database answers keeps a stalled database from
// making live workers look dead.
const (
	DefaultHeartbeatInterval = time.Second
	DefaultWorkerTTL         = 6 * time.Second
	DefaultStopTimeout       = 30 * time.Second
	DefaultPollInterval      = 5 * time.Second
)

// Config configures a Runtime. Zero durations take the defaults.
type Config struct {
	WorkerID string // this process's id in statuses (worker_id)
	URL      string // this process's advertised REST URL
	Store    *store.Store
	Registry Registry
	Logger   *slog.Logger
	Observer Observer // told of unit states and leadership (metrics); nil: nobody

	PollInterval      time.Duration // safety-net reconcile when no notification arrives
	HeartbeatInterval time.Duration // worker heartbeat and leader lease renewal
	WorkerTTL         time.Duration // a worker silent this long is dead and loses its work
	LeaseTTL          time.Duration // leader lease duration (default: WorkerTTL)
	StopTimeout       time.Duration // the soft-stop budget: how long a run may take to drain, flush and commit
}

// settleOf is the settle window of a worker TTL: how long a record a run handed to Kafka may take to be written
// or dropped (tasks cap their producers' delivery timeout below it). Half of the TTL: the other half is the
// lease a heartbeat grants, so that with the heartbeat at most a quarter of the TTL a worker survives a lost
// heartbeat without pausing, and a loaded target has seconds to acknowledge a batch.
func settleOf(workerTTL time.Duration) time.Duration { return workerTTL / 2 }

// withDefaults fills in zero durations.
func (c Config) withDefaults() Config {
	c.PollInterval = cmp.Or(c.PollInterval, DefaultPollInterval)
	c.HeartbeatInterval = cmp.Or(c.HeartbeatInterval, DefaultHeartbeatInterval)
	c.WorkerTTL = cmp.Or(c.WorkerTTL, DefaultWorkerTTL)
	c.LeaseTTL = cmp.Or(c.LeaseTTL, c.WorkerTTL)
	c.StopTimeout = cmp.Or(c.StopTimeout, DefaultStopTimeout)
	if c.Observer == nil {
		c.Observer = nopObserver{}
	}
	return c
}

// Validate checks the durations against each other; the errors name the serve flags.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.HeartbeatInterval <= 0 || c.WorkerTTL <= 0 || c.LeaseTTL <= 0 || c.StopTimeout <= 0 || c.PollInterval <= 0 {
		errs = append(errs, errors.New("--heartbeat-interval, --worker-ttl, --leader-lease-ttl and --stop-timeout must be positive"))
	}
	if c.HeartbeatInterval > c.WorkerTTL/4 {
		errs = append(errs, fmt.Errorf("--heartbeat-interval %s is too long for --worker-ttl %s: at most a quarter of it (%s), so that a worker survives two lost heartbeats",
			c.HeartbeatInterval, c.WorkerTTL, c.WorkerTTL/4))
	}
	if c.HeartbeatInterval > c.LeaseTTL/3 {
		errs = append(errs, fmt.Errorf("--heartbeat-interval %s is too long for --leader-lease-ttl %s: at most a third of it", c.HeartbeatInterval, c.LeaseTTL))
	}
	if settleOf(c.WorkerTTL) < 500*time.Millisecond {
		errs = append(errs, fmt.Errorf("--worker-ttl %s is too short: at least 1s, so that records in flight can settle before a stalled worker's work moves", c.WorkerTTL))
	}
	return errors.Join(errs...)
}

// Runtime runs this process's share of the cluster's work: it heartbeats as a worker, campaigns for leadership
// (and assigns work while leader), and runs the connectors and tasks assigned to it.
type Runtime struct {
	cfg   Config
	ready atomic.Bool
}

// New returns a Runtime; Run starts it.
func New(cfg Config) *Runtime { return &Runtime{cfg: cfg.withDefaults()} }

// Ready tells whether the runtime has joined the cluster and reconciled its work at least once.
func (r *Runtime) Ready() bool { return r.ready.Load() }

// Run joins the cluster and runs until ctx is done. It then gives up leadership, stops every unit within the
// stop budget (each drains, flushes, commits and reports UNASSIGNED) while still heartbeating, leaves the
// cluster, and returns once everything it started has stopped.
func (r *Runtime) Run(ctx context.Context) error {
	cfg := r.cfg
	if cfg.WorkerID == "" || cfg.Store == nil || cfg.Registry == nil || cfg.Logger == nil {
		return errors.New("tasks: Config needs WorkerID, Store, Registry and Logger")
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	log := cfg.Logger.With("worker_id", cfg.WorkerID)
	limit := lograte.New(30 * time.Second)
	settle := settleOf(cfg.WorkerTTL)
	w := newWorker(cfg.WorkerID, cfg.Store, cfg.Registry, log, limit, cfg.StopTimeout, settle)
	w.observer = cfg.Observer
	hb := &heartbeater{cfg: cfg, w: w, log: log, limit: limit, settle: settle}
	if err := hb.join(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it joined: nothing was started
		}
		return err
	}

	// The heartbeat outlives ctx: it must go on while the units drain, or the worker would be declared dead
	// (and its units moved) in the middle of a long drain.
	bg, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBackground()
	notes := make(chan struct{}, 1)
	leaderWake := make(chan struct{}, 1)
	workerWake := make(chan struct{}, 1)

	var wg sync.WaitGroup
	wg.Go(func() { cfg.Store.ListenLoop(bg, notes) })
	wg.Go(func() { fanOut(bg, notes, leaderWake, workerWake) })
	wg.Go(func() { hb.run(bg, workerWake) })
	var leaderDone sync.WaitGroup
	l := &leader{id: cfg.WorkerID, store: cfg.Store, log: log, limit: limit, leaseTTL: cfg.LeaseTTL, workerTTL: cfg.WorkerTTL,
		slow: cfg.HeartbeatInterval, troubleAt: hb.troubleAt, observer: cfg.Observer}
	leaderDone.Go(func() { l.run(ctx, leaderWake, cfg.HeartbeatInterval) })

	w.run(ctx, workerWake, cfg.PollInterval, func() { r.ready.Store(true) })
	r.ready.Store(false)
	leaderDone.Wait()
	hb.leave()
	stopBackground()
	wg.Wait()
	return nil
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
