package source

// The hooks the run skeleton and the Go engine call as a pipeline starts, before and after each record, while
// idle, on each delivery, at each transaction boundary, and as a pipeline ends: exactly-once mode's
// (sourceTxns, transactions.go) or at-least-once's, which do nothing.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/mm2offsets"
)

// txnHooks is what a replication mode adds to the run skeleton (replicate) and to the engine that forwards
// records one by one (goEngine). Exactly-once runs on the Go engine only (usesCPath).
type txnHooks interface {
	// startPipeline runs before the pipeline assigns its partitions.
	startPipeline(ctx context.Context, r *sourceRun, producer txnProducer, admin clusterAdmin, syncs *offsetSyncer) error
	// pollTimeout is how long the next poll may wait for a record, given the run's wait.
	pollTimeout(wait time.Duration) time.Duration
	// idle is called when the consumer had nothing to return.
	idle(ctx context.Context, r *sourceRun, producer txnProducer) error
	// beforeForward is called before a record is handed to the producer; forwarded after.
	beforeForward(producer txnProducer) error
	forwarded(ctx context.Context, r *sourceRun, producer txnProducer, p *sourcePartition, offset int64) error
	// delivered takes a delivery report first, and tells whether it took it over from the ordinary handler.
	delivered(r *sourceRun, d kafka.Delivery) bool
	// unconfirmedCounts tells whether a report without a target offset after a confirmed one counts as an
	// acknowledgement (kafka.Delivery.Unconfirmed).
	unconfirmedCounts() bool
	// endPipeline ends the pipeline's replication as it stops; clean: stopped with everything delivered.
	endPipeline(ctx context.Context, r *sourceRun, producer txnProducer, clean bool)
	// fenced decides what a pipeline's error means for the run.
	fenced(r *sourceRun, err error) error
}

// txnProducer is what exactly-once mode asks of the replication producer: *kafka.Producer answers it.
type txnProducer interface {
	InitTransactions(ctx context.Context) error
	BeginTransaction() error
	CommitTransaction(ctx context.Context) error
	AbortTransaction(ctx context.Context) error
	Produce(topic string, partition int32, key, value []byte, headers []kafka.Header, ts time.Time, opaque any) error
	Flush(ctx context.Context) int
}

var (
	_ txnHooks    = atLeastOnce{}
	_ txnHooks    = (*sourceTxns)(nil)
	_ txnProducer = (*kafka.Producer)(nil)
)

// atLeastOnce is the hooks of a run without exactly-once: the target's acknowledgements alone decide.
type atLeastOnce struct{}

func (atLeastOnce) startPipeline(context.Context, *sourceRun, txnProducer, clusterAdmin, *offsetSyncer) error {
	return nil
}
func (atLeastOnce) pollTimeout(wait time.Duration) time.Duration               { return wait }
func (atLeastOnce) idle(context.Context, *sourceRun, txnProducer) error        { return nil }
func (atLeastOnce) beforeForward(txnProducer) error                            { return nil }
func (atLeastOnce) delivered(*sourceRun, kafka.Delivery) bool                  { return false }
func (atLeastOnce) unconfirmedCounts() bool                                    { return true }
func (atLeastOnce) endPipeline(context.Context, *sourceRun, txnProducer, bool) {}
func (atLeastOnce) fenced(_ *sourceRun, err error) error                       { return err }
func (atLeastOnce) forwarded(context.Context, *sourceRun, txnProducer, *sourcePartition, int64) error {
	return nil
}

// unconfirmedCounts is false in exactly-once mode: the transaction is aborted instead, its records count only
// when it commits.
func (x *sourceTxns) unconfirmedCounts() bool { return false }

// pollTimeout is how long the poll loop may wait for the next record. With a transaction open, a poll
// boundary ends when the consumer has nothing fetched (Connect's poll() returns what one consumer poll
// returned): the loop does not wait, so the transaction commits at once. An interval boundary waits at most
// until the interval ends.
func (x *sourceTxns) pollTimeout(wait time.Duration) time.Duration {
	if !x.open {
		return wait
	}
	if x.boundary == mirrorconfig.TransactionBoundaryPoll {
		return 0
	}
	return max(min(wait, x.interval-time.Since(x.began)), 0)
}

// beforeForward opens a transaction for the record about to be forwarded, if none is open.
func (x *sourceTxns) beforeForward(producer txnProducer) error {
	if x.open {
		return nil
	}
	if err := producer.BeginTransaction(); err != nil {
		return &pipelineError{err: fmt.Errorf("exactly-once: %w", err)}
	}
	x.open, x.began, x.batch, x.produced = true, time.Now(), 0, 0
	x.touched = x.touched[:0]
	x.reported.Store(0)
	return nil
}

// forwarded accounts a record handed to the producer in the open transaction, and commits the transaction
// when its boundary is reached.
func (x *sourceTxns) forwarded(ctx context.Context, r *sourceRun, producer txnProducer, p *sourcePartition, offset int64) error {
	if p.txnLast < 0 {
		x.touched = append(x.touched, p)
	}
	p.txnLast = offset
	x.batch++
	x.produced++
	switch {
	case x.boundary == mirrorconfig.TransactionBoundaryPoll && x.batch >= x.maxPollRecords,
		x.boundary == mirrorconfig.TransactionBoundaryInterval && time.Since(x.began) >= x.interval:
		return x.commit(ctx, r, producer)
	}
	return nil
}

// idle is called when the consumer had nothing to return: the end of a poll batch, or a moment to see whether
// the interval is over.
func (x *sourceTxns) idle(ctx context.Context, r *sourceRun, producer txnProducer) error {
	if !x.open {
		return nil
	}
	if x.boundary == mirrorconfig.TransactionBoundaryInterval && time.Since(x.began) < x.interval {
		return nil
	}
	return x.commit(ctx, r, producer)
}

// delivered takes a delivery report in exactly-once mode. It returns false for the reports the ordinary
// handler must see: failures of replicated records (which end the pipeline, and so the transaction).
func (x *sourceTxns) delivered(r *sourceRun, d kafka.Delivery) bool {
	defer func() {
		x.reported.Add(1)
		select {
		case x.reports <- struct{}{}:
		default:
		}
	}()
	if _, ok := d.Opaque.(offsetsRecord); ok {
		if d.Err != nil || d.Unconfirmed {
			cause := d.Err
			if cause == nil {
				cause = errUnconfirmedDelivery
			}
			err := error(&pipelineError{err: fmt.Errorf("write offsets to %s on %s: %w", x.offsetsTopic, r.targetAlias, cause)})
			r.failure.CompareAndSwap(nil, &err)
		}
		return true
	}
	if d.Err != nil || d.Unconfirmed {
		return false // the ordinary handler fails the pipeline, which aborts the transaction
	}
	p := lookup(r.byRemote, d.Topic, d.Partition)
	if p == nil {
		return false // the ordinary handler logs it
	}
	p.stage(d.Offset)
	return true
}

// commit ends the open transaction: it writes each touched partition's last offset to the offsets topic inside
// the transaction, commits, and then lets the partitions advance over their staged records and sends their
// offset syncs. A commit happens only while the run's lease is valid; otherwise the transaction stays open
// until the lease is valid again or the run ends (and aborts it).
func (x *sourceTxns) commit(ctx context.Context, r *sourceRun, producer txnProducer) error {
	if !x.open || !r.env.Lease().Valid() {
		return nil
	}
	if f := r.failure.Load(); f != nil {
		return nil // the pipeline ends and aborts the transaction
	}
	// Bounded by the commit timeout, not by ctx: a stopping task still commits what it replicated.
	commitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), x.commitTimeout)
	defer cancel()
	for _, p := range x.touched {
		key := mm2offsets.Key(x.connector, mm2offsets.Partition{Cluster: r.sourceAlias, Topic: p.tp.Topic, Partition: p.tp.Partition})
		if err := x.produceOffset(commitCtx, producer, key, mm2offsets.Value(p.txnLast)); err != nil {
			x.abort(ctx, producer, r)
			return err
		}
		x.produced++
	}
	for {
		err := producer.CommitTransaction(commitCtx)
		if err == nil {
			break
		}
		switch {
		case kafka.TxnRequiresAbort(err):
			x.abort(ctx, producer, r)
			return &pipelineError{err: fmt.Errorf("exactly-once: the transaction could not commit and was aborted; replication resumes from the last committed transaction: %w", err)}
		case kafka.IsFenced(err) || kafka.IsFatal(err):
			x.dropStaged()
			return fmt.Errorf("exactly-once: commit the transaction: %w", err) // Run's fenced decides
		case kafka.IsRetriable(err) && commitCtx.Err() == nil:
			r.limit.Log(ctx, r.log, slog.LevelWarn, "txn-commit", "committing the transaction failed, retrying", "error", err)
			continue // librdkafka allows retrying the commit after a retriable error
		}
		// Outcome unknown: the next pipeline's InitTransactions settles it and its offsets say what committed.
		x.dropStaged()
		return &pipelineError{err: fmt.Errorf("exactly-once: committing the transaction failed; replication resumes from the offsets of the last committed transaction: %w", err)}
	}
	// Every record of the transaction was acknowledged before the commit returned; their reports may still be
	// on their way to the handler.
	if err := x.awaitReports(commitCtx); err != nil {
		x.dropStaged()
		return &pipelineError{err: err}
	}
	now := time.Now()
	var syncs []mirror.OffsetSync
	for _, p := range x.touched {
		syncs = p.committedTxn(now, syncs)
		p.txnLast = -1
	}
	x.open = false
	x.touched = x.touched[:0]
	if x.syncs != nil {
		for _, s := range syncs {
			x.syncs.send(s)
		}
	}
	return nil
}

// produceOffset queues one offsets record in the open transaction, in the partition Java's producer would use.
func (x *sourceTxns) produceOffset(ctx context.Context, producer txnProducer, key, value []byte) error {
	part := mm2offsets.PartitionFor(key, x.offsetsPartitions)
	for {
		err := producer.Produce(x.offsetsTopic, part, key, value, nil, time.Time{}, offsetsRecord{})
		if !errors.Is(err, kafka.ErrQueueFull) {
			if err != nil {
				return &pipelineError{err: fmt.Errorf("exactly-once: write offsets to %s: %w", x.offsetsTopic, err)}
			}
			return nil
		}
		// The queue drains as the target acknowledges: wait for that, not for a fixed time.
		drain, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
		producer.Flush(drain)
		cancel()
		if ctx.Err() != nil {
			return errAbandoned
		}
	}
}

// awaitReports waits until the delivery handler has taken every report of the open transaction.
func (x *sourceTxns) awaitReports(ctx context.Context) error {
	for x.reported.Load() < x.produced {
		select {
		case <-x.reports:
		case <-ctx.Done():
			return fmt.Errorf("exactly-once: %d of %d delivery reports of a committed transaction did not arrive: %w", x.produced-x.reported.Load(), x.produced, ctx.Err())
		}
	}
	return nil
}

// fenced decides what a fenced transactional producer means for the run; other errors are returned as they
// are. Without a valid lease the run lost its unit and ends fenced. With one, the fence
// is most likely a former owner that resumed after a stall: an abort or InitTransactions of its old producer
// reaching the coordinator while this owner's transaction is open fences this owner too (the coordinator
// bumps the epoch of an ongoing transaction without comparing the request's). A new pipeline fences it in
// turn and resumes from the last committed transaction, so that is what the run does, up to maxFences times
// in fenceWindow; a producer that keeps being fenced shares the transactional.id with another live writer
// (another kmirror cluster replicating the same connector to this target), and the task fails naming it.
func (x *sourceTxns) fenced(r *sourceRun, err error) error {
	// Only a fence: other fatal errors (a transaction timeout the broker refuses, say) keep their own
	// handling and message.
	if err == nil || !kafka.IsFenced(err) {
		return err
	}
	if !r.env.Lease().Valid() {
		return errLeaseRevoked
	}
	now := time.Now()
	recent := x.fences[:0]
	for _, at := range x.fences {
		if now.Sub(at) < fenceWindow {
			recent = append(recent, at)
		}
	}
	x.fences = append(recent, now)
	if len(x.fences) > maxFences {
		return fmt.Errorf("exactly-once: the replication producer was fenced %d times within %s while this worker owns the task: another producer uses transactional.id %s on %s (another kmirror cluster replicating the same connector to this target?): %w",
			len(x.fences), fenceWindow, x.txnID, r.targetAlias, err)
	}
	return &pipelineError{err: fmt.Errorf("exactly-once: the replication producer was fenced by another producer with transactional.id %s while this worker owns the task (a former owner that resumed after a stall?); a new producer fences it in turn and replication resumes from the last committed transaction: %w",
		x.txnID, err)}
}

// abort aborts the open transaction, if any, and forgets its staged records. Errors are logged: an abort
// that fails is completed by the next owner's (or pipeline's) InitTransactions, or by the coordinator's
// transaction timeout.
func (x *sourceTxns) abort(ctx context.Context, producer txnProducer, r *sourceRun) {
	if !x.open {
		return
	}
	x.dropStaged()
	abortCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), x.commitTimeout)
	defer cancel()
	if !r.env.Lease().Valid() {
		// An abort is an InitProducerId with the producer's old epoch when librdkafka needs an epoch bump (a
		// timed-out record), and a coordinator that holds an ongoing transaction of the task's new owner fences
		// that owner for it, without checking the epoch. A run whose lease ended leaves its transaction to the
		// new owner's fence or to the transaction timeout.
		r.log.Info("not aborting the open transaction: this run's lease ended; the new owner's fence or the transaction timeout aborts it", "transactional_id", x.txnID)
		return
	}
	if err := producer.AbortTransaction(abortCtx); err != nil {
		r.log.Warn("aborting the open transaction failed; the next owner's InitTransactions or the transaction timeout aborts it", "transactional_id", x.txnID, "error", err)
	}
}

// dropStaged forgets the open transaction's staged records and closes it locally.
func (x *sourceTxns) dropStaged() {
	for _, p := range x.touched {
		p.abortedTxn()
		p.txnLast = -1
	}
	x.touched = x.touched[:0]
	x.open = false
}

// endPipeline ends the transaction of a pipeline that stops: committed when the pipeline stops cleanly (ctx
// done, everything delivered, lease valid), aborted otherwise.
func (x *sourceTxns) endPipeline(ctx context.Context, r *sourceRun, producer txnProducer, clean bool) {
	if !x.open {
		return
	}
	if clean && r.failure.Load() == nil && r.env.Lease().Valid() {
		if err := x.commit(ctx, r, producer); err == nil && !x.open {
			return
		} else if err != nil {
			r.log.Warn("committing the last transaction at stop failed; it is aborted and replicated again by the next owner", "error", err)
		}
	}
	x.abort(ctx, producer, r)
}

// pollWait is how long the poll loop's next poll may wait for a record.
func (r *sourceRun) pollWait() time.Duration {
	return r.txn.pollTimeout(r.pollTimeout)
}
