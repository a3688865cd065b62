package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/tasks"
)

// settle ends a pipeline whose producer has closed and whose committer has stopped: it sends the last offset
// syncs, commits what was acknowledged, and returns what ended the pipeline (see replicate).
func (r *sourceRun) settle(ctx context.Context, loopErr, committerErr error, syncs *offsetSyncer) error {
	if syncs != nil {
		flushCtx, cancelFlush := r.settleContext(ctx)
		defer cancelFlush()
		r.commits.promoteSyncs(syncs)
		syncs.flush(flushCtx)
	}
	commitCtx, cancelCommit := connectors.FinalCommitContext(r.env)
	defer cancelCommit()
	if err := r.commits.commit(commitCtx); err != nil && committerErr == nil && !errors.Is(err, context.Canceled) {
		committerErr = err
	}
	if loopErr != nil {
		if f := r.failure.Load(); f != nil && kafka.IsGapless(loopErr) {
			return *f // the producer stopped for the failed delivery, which says why
		}
		return loopErr
	}
	if check := r.ids.recreated.Load(); check != nil {
		r.ids.restartRecreated(check.recreated, false)
		return errRecreated
	}
	if f := r.failure.Load(); f != nil {
		return *f
	}
	if errors.Is(committerErr, kmtype.ErrFenced) {
		return committerErr
	}
	if committerErr != nil && !errors.Is(committerErr, context.Canceled) {
		return &pipelineError{err: committerErr}
	}
	return nil
}

// loopClient is what loopEnds asks of the target producer of either data path.
type loopClient interface {
	Fatal() error
	AuthFailure() error
}

// loopEnds tells whether a poll loop (pollLoop, or the C path's) must stop before its next step, and with what:
// a delivery failure or re-created topics (the replicate function reports them once everything is flushed), a
// fatal producer, a failed authentication, or a committer that stopped (whose result it has then taken).
func (r *sourceRun) loopEnds(producer loopClient, committer <-chan error) (stop bool, loopErr, committerErr error, committerDone bool) {
	if r.failure.Load() != nil || r.ids.recreated.Load() != nil {
		return true, nil, nil, false
	}
	if err := producer.Fatal(); err != nil {
		return true, &pipelineError{err: fmt.Errorf("target producer: %w", err)}, nil, false
	}
	if err := producer.AuthFailure(); err != nil {
		// Not a pipeline restart: new clients with the same credentials fail the same way.
		return true, fmt.Errorf("authenticate to target cluster %s: %w", r.targetAlias, err), nil, false
	}
	select {
	case err := <-committer:
		if err == nil {
			err = errors.New("committer stopped")
		}
		return true, err, err, true
	default:
	}
	return false, nil, nil, false
}

// startSyncs makes the offset-sync producer when the connector emits syncs (nil otherwise; the caller closes
// it).
func (r *sourceRun) startSyncs() (*offsetSyncer, error) {
	if r.syncTopic == "" {
		return nil, nil
	}
	syncs, err := newOffsetSyncer(r.t.syncs, r.syncProps, r.syncTopic, r.log)
	if err != nil {
		return nil, err
	}
	for _, p := range r.parts {
		p.withOffsetSyncs(r.offsetLagMax)
	}
	return syncs, nil
}

// startOffsets is where each partition of a new pipeline of either data path starts: after its last
// acknowledged record, or where auto.offset.reset says. The ids of the source topics are checked first, at
// the last moment before the consumer is assigned: a topic re-created since its offsets were acknowledged
// starts over (they belong to the deleted topic), and the check must not precede a start that waited for
// the target — librdkafka would go on reading the new topic at the old topic's offsets as if nothing had
// happened. A source that cannot answer yet is no reason not to start: the identity watch checks again.
func (r *sourceRun) startOffsets(ctx context.Context, sourceAdmin clusterAdmin) ([]kafka.Start, error) {
	if check, err := r.ids.checkSources(ctx, sourceAdmin, nil, true); err != nil {
		r.limit.Log(ctx, r.log, slog.LevelWarn, "identity-source", "checking source topic ids failed", "error", err)
	} else {
		r.ids.restartRecreated(check.recreated, true)
	}
	starts := make([]kafka.Start, 0, len(r.parts))
	for _, p := range r.parts {
		acked := p.reset()
		start := kafka.Start{Topic: p.tp.Topic, Partition: p.tp.Partition, Offset: acked + 1}
		if acked < 0 {
			switch r.resetPolicy {
			case "latest":
				start.Offset = kafka.OffsetEnd
			case "error":
				return nil, fmt.Errorf("%s topic %s partition %d has no stored offset and the consumer's auto.offset.reset is none: set an offset with PATCH /connectors/%s/offsets",
					r.sourceAlias, p.tp.Topic, p.tp.Partition, r.t.id.Connector)
			default:
				start.Offset = kafka.OffsetBeginning
			}
		}
		starts = append(starts, start)
	}
	r.resolveBeginnings(ctx, sourceAdmin, starts)
	return starts, nil
}

// leaseLapsed ends the pipeline because its lease ended while the record at offset of p was being handed to
// the producer, dropping what the producer holds.
func (r *sourceRun) leaseLapsed(p *sourcePartition, offset int64, producer purger) {
	r.halt(&pipelineError{err: fmt.Errorf("replicate %s topic %s partition %d offset %d to %s topic %s: %w",
		r.sourceAlias, p.tp.Topic, p.tp.Partition, offset, r.targetAlias, *p.remote, errLeaseLapsed)}, producer)
}

// halt ends the pipeline with err, if nothing ended it before, and drops everything its producer holds
// (nil: nothing to drop yet): records behind a failed or overdue one must not reach the target before it,
// since the next pipeline sends it again, and neither may a record produced after the purge
// (overdue.go). It reports whether err is the pipeline's failure.
func (r *sourceRun) halt(err error, producer purger) bool {
	r.produceMu.Lock()
	defer r.produceMu.Unlock()
	if !r.failure.CompareAndSwap(nil, &err) {
		return false
	}
	if producer != nil {
		if err := producer.Purge(true); err != nil {
			r.log.Warn("purge the producer", "error", err)
		}
	}
	return true
}

// How long a pipeline start waits for remote partitions that cannot take writes yet (see awaitRemotesWritable).
const remoteWritableWait = 5 * time.Second

// awaitRemotesWritable waits, up to remoteWritableWait, until the leader of every remote partition answers for
// it. A remote topic the connector has just created exists in the target's metadata before its leader has
// created the logs (seconds, on a busy broker), and writing to a partition in that moment is how a record can
// be lost: the producer's first request is refused, its answer comes too late, a later request is accepted
// as the producer's first, and librdkafka then reports the earlier records written (kafka.Delivery.Unconfirmed).
// The task would send them again, after the later ones; waiting here keeps their order. A partition still not
// writable after the wait is left to the producer's retries.
func (r *sourceRun) awaitRemotesWritable(ctx context.Context, admin clusterAdmin) {
	ids := make([]kafka.PartitionID, 0, len(r.parts))
	for _, p := range r.parts {
		ids = append(ids, kafka.PartitionID{Topic: *p.remote, Partition: p.tp.Partition})
	}
	deadline := time.Now().Add(remoteWritableWait)
	backoff := 50 * time.Millisecond
	for {
		waitCtx, cancel := context.WithDeadline(ctx, deadline)
		logs, failed, err := admin.LogOffsets(waitCtx, ids, false, false)
		cancel()
		if err == nil && len(failed) == 0 && len(logs) == len(ids) {
			return
		}
		if ctx.Err() != nil || time.Now().Add(backoff).After(deadline) {
			r.log.Info("remote partitions not all writable yet; replicating anyway (the producer retries them)",
				"partitions", len(ids), "answered", len(logs), "waited", remoteWritableWait)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

// resolveBeginnings turns the logical start "beginning" of starts into the partitions' log start offsets, in
// one batched request, so that each partition starts at an offset the task knows: the first record the consumer
// returns can then be checked against it (firstRecord), and no logical-offset lookup is
// left to the consumer, whose failure it would report as an auto.offset.reset error with the partition
// stopped. A partition the source cannot answer for keeps the logical start. The same request gives every
// partition's end offset, noted as seen (knownEnd): the committer's first report, as it starts, carries it, so a
// topic deleted in the pipeline's first second is judged on it rather than being of unknown extent.
func (r *sourceRun) resolveBeginnings(ctx context.Context, admin clusterAdmin, starts []kafka.Start) {
	all := make([]kafka.PartitionID, 0, len(starts))
	fromBeginning := false
	for _, s := range starts {
		all = append(all, kafka.PartitionID{Topic: s.Topic, Partition: s.Partition})
		fromBeginning = fromBeginning || s.Offset == kafka.OffsetBeginning
	}
	if len(all) == 0 {
		return
	}
	logs, _, err := admin.LogOffsets(ctx, all, r.consumerProps["isolation.level"] == "read_committed", fromBeginning)
	if err != nil {
		r.limit.Log(ctx, r.log, slog.LevelWarn, "log-starts", "reading the log start and end offsets failed; the consumer looks them up itself", "error", err)
		return
	}
	for i, s := range starts {
		lo, ok := logs[kafka.PartitionID{Topic: s.Topic, Partition: s.Partition}]
		if !ok {
			continue
		}
		if p := lookup(r.bySource, s.Topic, s.Partition); p != nil && lo.End > 0 {
			p.knownEnd(lo.End)
		}
		if s.Offset == kafka.OffsetBeginning && lo.Start >= 0 {
			starts[i].Offset = lo.Start
		}
	}
}

// awaitLease pauses replication while the lease is not valid: the worker's heartbeats are not being
// confirmed, so its units may move soon. It returns nil once the lease is valid again, and errLeaseRevoked
// (after dropping everything queued and in flight) if it is revoked.
func (r *sourceRun) awaitLease(ctx context.Context, lease tasks.Lease, producer purger) error {
	r.log.Warn("writes paused: this worker's heartbeats have not been confirmed for a while (is the database reachable?)")
	r.notice("lease", kmtype.Notice{Kind: NoticeWritesPaused, Message: "writes paused: this worker's heartbeats to the database have not been confirmed for a while; replication resumes when they are"})
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-lease.Revoked():
			if err := producer.Purge(true); err != nil {
				r.log.Warn("purge the producer", "error", err)
			}
			r.log.Warn("this run lost its unit; stopping without writing anything more")
			return errLeaseRevoked
		case <-tick.C:
			if lease.Valid() {
				r.clearNotice("lease")
				r.log.Info("writes resumed: heartbeats are confirmed again")
				return nil
			}
		}
	}
}

// purger drops what a replication producer holds: *kafka.Producer, and the C data path's pipeline.
type purger interface{ Purge(inFlight bool) error }

// deliveryFailed records the pipeline's first delivery failure: a failed report (deliveryErr) or one that
// came without a target offset before any confirmed one (deliveryErr nil), of the record at upstream, and
// drops what the producer holds (halt).
func (r *sourceRun) deliveryFailed(p *sourcePartition, upstream int64, deliveryErr error, producer purger) {
	var err error
	if deliveryErr != nil {
		err = fmt.Errorf("replicate %s topic %s partition %d offset %d to %s topic %s: %w%s",
			r.sourceAlias, p.tp.Topic, p.tp.Partition, upstream, r.targetAlias, *p.remote, deliveryErr, r.refusedByBrokerAdvice(p, deliveryErr))
		if kafka.IsRetriable(deliveryErr) || kafka.IsPurged(deliveryErr) || kafka.IsFatal(deliveryErr) {
			err = &pipelineError{err: err}
		}
	} else {
		// No delivery of the partition from this producer has been confirmed yet: the broker may have had no
		// state for the producer and taken the later request as its first. Counting this one as written would
		// then lose it; the pipeline sends it again instead, which at worst duplicates it.
		err = &pipelineError{err: fmt.Errorf("replicate %s topic %s partition %d offset %d to %s topic %s: %w",
			r.sourceAlias, p.tp.Topic, p.tp.Partition, upstream, r.targetAlias, *p.remote, errUnconfirmedDelivery)}
	}
	r.halt(err, producer)
}

// pipelineSettleWait bounds each wait of a pipeline that ends while its run goes on (a restart, not a stop):
// for the records its producer holds (drain) and for its offset syncs (settle). A target that cannot be written
// must not hold up the restart.
const pipelineSettleWait = 10 * time.Second

// settleContext bounds one wait of a pipeline's end: a stopping run (ctx done) waits within its stop budget
// (tasks.Task); a restarting pipeline at most pipelineSettleWait (settleWait, when set), and no longer than the
// budget should the run be stopped meanwhile.
func (r *sourceRun) settleContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() != nil {
		return context.WithCancel(r.env.StopContext())
	}
	wait := r.settleWait
	if wait <= 0 {
		wait = pipelineSettleWait
	}
	return context.WithTimeout(r.env.StopContext(), wait)
}
