// Package failover runs the failover operations the REST API files (POST /connectors/{c}/failover): it stops
// an A→B source connector once it has replicated what A still serves, moves the followed consumer groups to B
// with their exact translated positions, and reports, per partition and group, where everything stands. The
// API only files the operation in PostgreSQL; whichever worker's Runner takes it runs it, so a failover
// outlives the request that asked for it and the worker that began it.
package failover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
)

// Runner takes filed failovers and runs them, one at a time.
type Runner struct {
	store    *store.Store
	flows    flows
	workerID string
	log      *slog.Logger
	// Poll is how often the runner looks for work without a wake-up; Stale is how long a running operation
	// may go without a sign of life before another worker takes it over.
	Poll, Stale time.Duration
	// ExactlyOnceSource is the workers' exactly.once.source.support: enabled, a source connector resumes from
	// its offsets topic on the target, so a failback's start offsets are written there too.
	ExactlyOnceSource mirrorconfig.ExactlyOnceSourceSupport
}

// NewRunner returns a runner for workerID whose clients follow clients, the operator's rules for client
// settings (as the connectors' own do).
func NewRunner(st *store.Store, clients clientconfig.Options, workerID string, log *slog.Logger) *Runner {
	return &Runner{store: st, flows: flows{clients: clients, log: log}, workerID: workerID, log: log, Poll: time.Second, Stale: 30 * time.Second}
}

// Run takes and runs failovers until ctx is done.
func (r *Runner) Run(ctx context.Context) error {
	// A poll, not LISTEN: a failover is rare and waits a second at most to be taken, where a LISTEN would hold
	// one of the pool's connections on every worker for good and wake at every change of the cluster.
	ticker := time.NewTicker(r.Poll)
	defer ticker.Stop()
	for {
		f, err := r.store.TakeFailover(ctx, r.workerID, r.Stale)
		switch {
		case err != nil && ctx.Err() == nil:
			r.log.Warn("looking for failovers failed, retrying", "error", err)
		case f != nil:
			r.run(ctx, *f)
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// run runs one operation to its end and stores the outcome. A worker that stops meanwhile leaves it running:
// another worker takes it over once it is stale, and runs it again from the start (every step may be repeated).
func (r *Runner) run(ctx context.Context, f store.Failover) {
	log := r.log.With("connector", f.Connector, "failover", f.ID)
	log.Info(f.Kind+" started", "checkpoint_connector", f.CheckpointConnector, "drain_timeout_ms", f.DrainTimeout.Milliseconds())
	op := &operation{store: r.store, flows: r.flows, f: f, log: log, offsetsInKafka: r.ExactlyOnceSource.Enabled(), progress: func(ctx context.Context, phase string) error {
		return r.store.FailoverProgress(ctx, f.ID, r.workerID, phase)
	}}
	rep, err := op.run(ctx)
	if ctx.Err() != nil || errors.Is(err, kmtype.ErrFenced) {
		log.Info(f.Kind+" left to another worker", "error", err)
		return
	}
	var body json.RawMessage
	if rep != nil {
		b, merr := json.Marshal(rep)
		if merr != nil {
			err = errors.Join(err, fmt.Errorf("encode the report: %w", merr))
		}
		body = b
	}
	failure := ""
	if err != nil {
		failure = shown(err, f)
		log.Warn(f.Kind+" failed", "error", err)
	} else {
		log.Info(f.Kind+" succeeded", "not_replicated_offsets", rep.NotReplicatedOffsets, "groups", len(rep.Groups))
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := r.store.FinishFailover(fctx, f.ID, r.workerID, body, failure); err != nil {
		log.Warn("could not store the failover's outcome", "error", err)
	}
}

// publicError is a failure whose text may be shown by the REST API: it names connectors and fields, nothing of
// the clusters or the database.
type publicError struct{ msg string }

func (e *publicError) Error() string { return e.msg }

func publicf(format string, args ...any) error {
	return &publicError{msg: fmt.Sprintf(format, args...)}
}

// shown is what the REST API shows of a failure: a publicError's text, else where it failed and where to look,
// since the cause may name addresses or carry the database's words.
func shown(err error, f store.Failover) string {
	var pe *publicError
	if errors.As(err, &pe) {
		return pe.msg
	}
	return fmt.Sprintf("the %s failed; the cause is in the log of worker %s (logger kmirror.failover, failover=%d)", f.Kind, f.WorkerID, f.ID)
}
