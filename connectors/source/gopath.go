package source

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
)

// replicate runs one pipeline — consumer, producer, committer — until ctx is done (nil), the pipeline breaks
// (*pipelineError), source topics were re-created (errRecreated), the lease was revoked (errLeaseRevoked) or
// the task must fail (any other error). It always commits what was acknowledged.
func (r *sourceRun) replicate(ctx context.Context) (err error) {
	if r.usesCPath() {
		return r.replicateC(ctx)
	}
	r.failure.Store(nil)
	r.ids.recreated.Store(nil)
	consumerStats, removeConsumerStats := r.t.clientStats(clientconfig.ReplicationConsumer, r.consumerProps, r.statsEvery(clientconfig.ReplicationConsumer), r.consumerFigures.record)
	defer removeConsumerStats() // after the consumer closed: no statistics come later
	consumer, err := kafka.NewConsumer(r.consumerProps, r.log, consumerStats...)
	if err != nil {
		return err
	}
	defer consumer.Close()
	sourceAdmin, err := consumer.Admin()
	if err != nil {
		return err
	}
	defer sourceAdmin.Close()
	sourceAdmin.Timeout = taskAdminTimeout
	r.sourceAdmin = sourceAdmin

	syncs, err := r.startSyncs()
	if err != nil {
		return err
	}
	if syncs != nil {
		defer syncs.close()
	}
	producerStats, removeProducerStats := r.t.clientStats(clientconfig.ReplicationProducer, r.producerProps, r.statsEvery(clientconfig.ReplicationProducer), r.producerFigures.record)
	defer removeProducerStats()
	producer, err := kafka.NewProducer(r.producerProps, r.log, func(d kafka.Delivery) { r.delivered(d, syncs) }, producerStats...)
	if err != nil {
		return err
	}
	r.producer.Store(producer)
	defer r.producer.Store(nil)
	r.stalls.pipelineStarts() // before the committer that owns its clock starts below
	targetAdmin, err := producer.Admin()
	if err != nil {
		producer.Close()
		return err
	}
	targetAdmin.Timeout = taskAdminTimeout
	closeProducer := func() {
		targetAdmin.Close()
		producer.Close()
	}
	r.awaitRemotesWritable(ctx, targetAdmin)
	r.learnOrigins(ctx, sourceAdmin, targetAdmin)
	if r.txns != nil {
		if err := r.txns.startPipeline(ctx, r, producer, targetAdmin, syncs); err != nil {
			closeProducer()
			return err
		}
	}

	starts, err := r.startOffsets(ctx, sourceAdmin)
	if err != nil {
		closeProducer()
		return err
	}
	for i, p := range r.parts {
		p.startAt = starts[i].Offset
	}
	if err := consumer.Assign(starts); err != nil {
		closeProducer()
		return err
	}
	r.log.Info("replicating", "partitions", len(r.parts), "source", r.sourceAlias, "target", r.targetAlias, "data_path", "go")
	if r.log.Enabled(ctx, slog.LevelDebug) {
		for _, s := range starts {
			r.log.Debug("partition starts", "topic", s.Topic, "partition", s.Partition, "offset", s.Offset)
		}
	}

	watches := r.startWatches(ctx, syncs, consumer, sourceAdmin, targetAdmin, producer)
	loopErr, committerErr, committerDone := r.pollLoop(ctx, consumer, producer, watches.committer)
	watches.stopWatches()

	// Soft stop: let everything in flight reach the target (or fail), then commit it.
	left := r.drain(producer, func() {})
	if r.txns != nil {
		r.txns.endPipeline(ctx, r, producer, loopErr == nil && left == 0)
	}
	closeProducer()
	committerErr = watches.stopCommits(committerErr, committerDone)
	return r.settle(ctx, loopErr, committerErr, syncs)
}

// pollLoop moves records from the consumer to the producer until ctx is done or something breaks. It hands a
// record over only while the run's lease is valid. When it returns because the committer stopped, it returns
// the committer's result too (committerDone), which it has taken from the channel.
func (r *sourceRun) pollLoop(ctx context.Context, consumer *kafka.Consumer, producer *kafka.Producer, committer <-chan error) (loopErr, committerErr error, committerDone bool) {
	lease := r.env.Lease()
	var lastPositions time.Time
	for ctx.Err() == nil {
		if stop, loopErr, committerErr, committerDone := r.loopEnds(producer, committer); stop {
			return loopErr, committerErr, committerDone
		}
		if !lease.Valid() {
			start := time.Now()
			err := r.awaitLease(ctx, lease, producer)
			r.clock.targetWait(time.Since(start))
			if err != nil {
				return err, nil, false
			}
			continue
		}
		if r.stalls.stalled.Load() {
			// The target has acknowledged nothing for a while: queueing more now would only give the producer
			// records that outlive the stuck ones, and if those time out, the newer ones would land first.
			time.Sleep(10 * time.Millisecond)
			r.clock.targetWait(10 * time.Millisecond)
			continue
		}

		pollStart, timed := r.clock.pollStart()
		wait := r.pollWait()
		rec, ok, err := consumer.Poll(wait)
		r.clock.pollEnd(pollStart, timed, ok, wait)
		if err != nil {
			if err := r.consumeError(ctx, consumer, err); err != nil {
				return err, nil, false
			}
			continue
		}
		if !ok {
			if r.txns != nil {
				if err := r.txns.idle(ctx, r, producer); err != nil {
					return err, nil, false
				}
			}
			if now := time.Now(); now.Sub(lastPositions) >= sourcePositionInterval {
				lastPositions = now
				r.readPositions(consumer)
			}
			continue
		}
		p := lookup(r.bySource, rec.Topic(), rec.Partition())
		if p == nil {
			continue // not ours (cannot happen with assign, but never forward a stray record)
		}
		r.clearNotice("source")
		off, ts, valueBytes := rec.Offset(), rec.Timestamp(), len(rec.Value())
		if p.next < 0 && r.firstRecord(consumer, p, off) {
			continue // read again from the start
		}
		if r.skipsRecord(p, rec) {
			continue // came from the target cluster (provenance.go)
		}
		if r.txns != nil {
			if err := r.txns.beforeForward(producer); err != nil {
				return err, nil, false
			}
		}
		p.next = off + 1
		p.forwarded(off, unixMilli(ts), rec.Size(), valueBytes)
		if err := r.forward(ctx, producer, rec, p); err != nil {
			p.unforward()
			if errors.Is(err, errAbandoned) {
				return nil, nil, false
			}
			return err, nil, false
		}
		p.metrics.fetched(valueBytes, ts)
		if r.txns != nil {
			if err := r.txns.forwarded(ctx, r, producer, p, off); err != nil {
				return err, nil, false
			}
		}
		if !lease.Valid() {
			// The lease ended while the record was being handed over (the process stalled in between): it may
			// have been queued after the lease ended, so nothing queued may be sent now, and the pipeline ends.
			r.leaseLapsed(p, off, producer)
		}
	}
	return nil, nil, false
}

// firstRecord checks a partition's first record of the pipeline against where the pipeline started the
// partition. Compaction, transaction markers and aborted transactions legitimately put it past the start;
// anything else means the consumer skipped records, which nothing downstream could notice: the offsets after
// them are acknowledged as usual. So the first time in a pipeline, the task drops the record
// and reads the partition again from its start. If the re-read's first record is the same one, the records in
// between are not in the log for this consumer, and it goes on; if it is an earlier one, the consumer had
// skipped records, which the log now says. It returns whether the record was dropped.
func (r *sourceRun) firstRecord(consumer *kafka.Consumer, p *sourcePartition, off int64) bool {
	want := p.startAt
	if want == kafka.OffsetBeginning {
		low, _, err := consumer.CachedWatermarks(p.tp.Topic, p.tp.Partition)
		if err != nil || low < 0 {
			return false
		}
		want = low
	}
	if want < 0 {
		return false
	}
	if p.firstPast >= 0 {
		if off < p.firstPast {
			r.log.Warn("the consumer had skipped records at the partition's start: reading it again returned them",
				"topic", p.tp.Topic, "partition", p.tp.Partition, "start", want, "first_read", p.firstPast, "first_reread", off)
		}
		return false
	}
	if off <= want {
		return false
	}
	if err := consumer.Seek(p.tp.Topic, p.tp.Partition, want); err != nil {
		r.log.Warn("first record of the partition is past its start position, and seeking back failed: continuing from it",
			"topic", p.tp.Topic, "partition", p.tp.Partition, "start", want, "first", off, "error", err)
		return false
	}
	p.firstPast = off
	r.log.Debug("first record of the partition is past its start position: reading the partition again from its start",
		"topic", p.tp.Topic, "partition", p.tp.Partition, "start", want, "first", off)
	return true
}

// How often an idle poll loop reads the consumer's positions for the offset map: a group committed past a
// trailing transaction marker translates exactly once the task has read past it.
const sourcePositionInterval = time.Second

// readPositions hands each partition the consumer's position. The poll loop calls it when the consumer had
// nothing to return, so every record below a position has been forwarded already.
func (r *sourceRun) readPositions(consumer *kafka.Consumer) {
	starts := make([]kafka.Start, len(r.parts))
	for i, p := range r.parts {
		starts[i] = kafka.Start{Topic: p.tp.Topic, Partition: p.tp.Partition}
	}
	pos, err := consumer.Position(starts)
	if err != nil {
		return // a later idle moment tries again; nothing depends on it but exactness past markers
	}
	for i, p := range r.parts {
		if next, ok := pos[starts[i]]; ok {
			p.readThrough(next)
		}
	}
}

// forward hands one record to the producer, waiting while librdkafka's queue is full.
func (r *sourceRun) forward(ctx context.Context, producer *kafka.Producer, rec kafka.Record, p *sourcePartition) error {
	offset, size := rec.Offset(), len(rec.Value())
	var waitStart time.Time // set once the queue was found full
	for {
		r.produceMu.Lock()
		if r.failure.Load() != nil {
			r.produceMu.Unlock()
			return errAbandoned
		}
		err := producer.Forward(rec, p.remote)
		r.produceMu.Unlock()
		if !waitStart.IsZero() {
			r.clock.targetWait(time.Since(waitStart))
			waitStart = time.Now()
		}
		if err == nil {
			return nil
		}
		if !errors.Is(err, kafka.ErrQueueFull) {
			if f := producer.Fatal(); f != nil && kafka.IsFatal(err) {
				err = f // "Local: Fatal error" says nothing; the producer's fatal error says why (a fence, say)
			}
			return r.refusedError(p, offset, size, err)
		}
		if r.failure.Load() != nil || ctx.Err() != nil {
			return errAbandoned
		}
		// The queue drains as deliveries arrive on the producer's own goroutine.
		if waitStart.IsZero() {
			waitStart = time.Now()
		}
		time.Sleep(time.Millisecond)
	}
}

// delivered handles one delivery report of the replication producer.
func (r *sourceRun) delivered(d kafka.Delivery, syncs *offsetSyncer) {
	if r.txns != nil && r.txns.delivered(r, d) {
		return
	}
	p := lookup(r.byRemote, d.Topic, d.Partition)
	if p == nil {
		r.log.Error("delivery report for a partition this task does not replicate", "topic", d.Topic, "partition", d.Partition)
		return
	}
	if d.Err == nil && d.Unconfirmed && r.txns == nil {
		// When the partition already had a delivery with an offset from this producer, the broker holds the
		// producer's state and would have refused the later request had this one not been written: the
		// implicit acknowledgement is true. Its target offset is unknown, so the offset map leaves it out. (In
		// exactly-once mode the transaction is aborted instead: its records count only when it commits.)
		if rec, ok := p.ackUnmapped(); ok {
			p.metrics.acked(rec.ts, rec.size, d.At)
			return
		}
	}
	if d.Err != nil || d.Unconfirmed {
		upstream := p.fail()
		var pr purger
		cause := d.Err
		if kp := r.producer.Load(); kp != nil {
			pr = kp
			if cause != nil && kafka.IsFatal(cause) && kp.Fatal() != nil {
				cause = kp.Fatal() // why the producer is unusable; a new pipeline's producer replaces it
			}
		}
		r.deliveryFailed(p, upstream, cause, pr)
		return
	}
	acked, rec, sync, send := p.ack(d.Offset)
	if acked {
		p.metrics.acked(rec.ts, rec.size, d.At)
	}
	if send {
		syncs.send(sync)
	}
}
