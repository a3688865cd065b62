package source

// The C data path of the source task (worker option --data-path=c; package connectors/kafka/cpath): records
// move from the source consumer to the target producer inside librdkafka's C API, in paced batches, and this
// file applies what each batch reports to the same partition state, offset map, offset syncs, notices and
// metrics the Go path keeps record by record (gopath.go). Exactly-once mode stays on the Go path.

import (
	"context"
	"errors"
	"time"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/cpath"
	"github.com/kmirror/kmirror/connectors/mirror"
)

// The C path's batches and pacing. cpathPace is the bound of produced-but-undelivered bytes per partition,
// in batch.size units, over the whole pipeline; what keeps librdkafka's idempotent producer from spinning is
// cpath's batch gate (one batch per partition at a time, doc.go), which stays under it. cpathWait bounds how long a step waits for a batch to fill:
// librdkafka's batch consume waits for a full batch or its timeout, so this is latency added at low rates.
// cpathSteps bounds how long the pipeline steps in C before Go applies what moved (cpath.Pipeline.Steps):
// the delay it adds to the stall pause, the lease check and commits is small against their own periods.
const (
	cpathBatch = 1024
	cpathPace  = 1.5
	cpathWait  = 10 * time.Millisecond
	cpathSteps = 20 * time.Millisecond
)

// cpathReader answers sourceReader for a C pipeline, whose partitions are the run's parts in order.
type cpathReader struct {
	pl  *cpath.Pipeline
	idx map[mirror.TopicPartition]int
}

func newCPathReader(pl *cpath.Pipeline, parts []*sourcePartition) *cpathReader {
	idx := make(map[mirror.TopicPartition]int, len(parts))
	for i, p := range parts {
		idx[p.tp] = i
	}
	return &cpathReader{pl: pl, idx: idx}
}

var errNotAssigned = errors.New("partition not assigned to this pipeline")

func (c *cpathReader) part(topic string, partition int32) (int, error) {
	i, ok := c.idx[mirror.TopicPartition{Topic: topic, Partition: partition}]
	if !ok {
		return 0, errNotAssigned
	}
	return i, nil
}

func (c *cpathReader) Watermarks(topic string, partition int32, timeout time.Duration) (int64, int64, error) {
	i, err := c.part(topic, partition)
	if err != nil {
		return 0, 0, err
	}
	return c.pl.Watermarks(i, timeout)
}

func (c *cpathReader) CachedWatermarks(topic string, partition int32) (int64, int64, error) {
	i, err := c.part(topic, partition)
	if err != nil {
		return 0, 0, err
	}
	return c.pl.CachedWatermarks(i)
}

func (c *cpathReader) Seek(topic string, partition int32, offset int64) error {
	i, err := c.part(topic, partition)
	if err != nil {
		return err
	}
	return c.pl.Seek(i, offset)
}

// replicateC is replicate on the C path: the same pipeline — identity checks, offset syncs, admin clients,
// start positions, committer, identity watcher, soft stop — with a C pipeline for consumer and producer.
func (r *sourceRun) replicateC(ctx context.Context) error {
	r.failure.Store(nil)
	r.ids.recreated.Store(nil)
	consumerStats, removeConsumerStats := r.t.statsSink(clientconfig.ReplicationConsumer, r.consumerProps, r.consumerFigures.record)
	defer removeConsumerStats()
	producerStats, removeProducerStats := r.t.statsSink(clientconfig.ReplicationProducer, r.producerProps, r.producerFigures.record)
	defer removeProducerStats()

	// The pipeline's clients start first, as the Go path's do, so that the producer's request for its producer
	// id overlaps the admin work below; awaitProducer then holds consuming back until it has one.
	parts := make([]cpath.Part, len(r.parts))
	for i, p := range r.parts {
		parts[i] = cpath.Part{Topic: p.tp.Topic, Partition: p.tp.Partition, Remote: *p.remote}
	}
	batch := propInt(r.producerProps, libDefaultBatchSize, "batch.size")
	pl, err := cpath.New(cpath.Config{
		Consumer: cpathProps(r.consumerProps, r.statsEvery(clientconfig.ReplicationConsumer)),
		Producer: cpathProducerProps(r.producerProps, r.statsEvery(clientconfig.ReplicationProducer)), Parts: parts,
		PaceBytes: int64(cpathPace * float64(batch)),
		// Half the stall pause's wait: a record queued behind the other partitions' batches is acknowledged
		// well before it could pause forwarding or reach the overdue watch.
		OpenLatency: r.stalls.stallAfter / 2,
		Log:         r.log,
		OnStats: func(producer bool, json string) {
			if producer {
				producerStats(json)
			} else {
				consumerStats(json)
			}
		},
	})
	if err != nil {
		return err
	}
	defer pl.Close()
	if !pl.OwnThread() {
		defer r.t.procs.hold()() // the pipeline steps in this goroutine's thread: see cpathProcs
	}
	r.stalls.pipelineStarts() // before the committer that owns its clock starts below

	// The admin requests go through clients of package kafka, which the connector's tasks on this worker share
	// (adminPool).
	sourceAdmin, releaseSource, err := r.acquireAdmin(clientconfig.SourceAdmin, r.consumerProps)
	if err != nil {
		return err
	}
	defer releaseSource()
	r.sourceAdmin = sourceAdmin
	syncs, err := r.startSyncs()
	if err != nil {
		return err
	}
	if syncs != nil {
		defer syncs.close()
	}
	targetAdmin, releaseTarget, err := r.acquireAdmin(clientconfig.TargetAdmin, r.producerProps)
	if err != nil {
		return err
	}
	defer releaseTarget()
	r.awaitRemotesWritable(ctx, targetAdmin)

	starts, err := r.startOffsets(ctx, sourceAdmin)
	if err != nil {
		return err
	}
	r.awaitProducer(ctx, pl)
	r.learnOriginsC(ctx, pl, sourceAdmin, targetAdmin)
	offsets := make([]int64, len(starts))
	for i, p := range r.parts {
		p.startAt = starts[i].Offset
		offsets[i] = starts[i].Offset // kafka's and cpath's logical offsets are librdkafka's
	}
	if err := pl.Assign(offsets); err != nil {
		return err
	}
	r.log.Info("replicating", "partitions", len(r.parts), "source", r.sourceAlias, "target", r.targetAlias, "data_path", "c")
	reader := newCPathReader(pl, r.parts)

	watches := r.startWatches(ctx, syncs, reader, sourceAdmin, targetAdmin, pl)
	loopErr, committerErr, committerDone := r.cPollLoop(ctx, pl, reader, syncs, watches.committer)
	watches.stopWatches()

	// Soft stop, as replicate's; the C path applies the delivery reports each flush leaves (a refusal was
	// reported by the poll loop already).
	r.drain(pl, func() { _ = r.applyReports(pl, pl.Take(), syncs) })
	committerErr = watches.stopCommits(committerErr, committerDone)
	pl.Close()
	return r.settle(ctx, loopErr, committerErr, syncs)
}

// awaitProducer holds consuming back until the pipeline's producer can send, for up to the producer's delivery
// timeout: an idempotent producer made a moment ago has no producer id yet (about a second here), and records
// handed to it meanwhile waited in its queue on the clock of the overdue watch and the stall pause. Past
// stallAfter the wait is reported as a stall is, so that a target down at start is visible as soon as
// before; past the timeout the pipeline starts anyway, and the clients' errors come with its first step.
func (r *sourceRun) awaitProducer(ctx context.Context, pl *cpath.Pipeline) {
	start := time.Now()
	defer func() { r.clock.targetWait(time.Since(start)) }()
	if pl.ProducerReady(ctx, r.stalls.stallAfter) {
		return
	}
	// The committer, which owns the notice's state from then on, has not started yet.
	r.stalls.setUnreachable(true)
	if pl.ProducerReady(ctx, 3*r.stalls.stallAfter) { // stallAfter is a quarter of the delivery timeout
		r.stalls.setUnreachable(false)
	}
}

// acquireAdmin returns the worker's admin client for this connector beside the pipeline's consumer (role
// SourceAdmin) or producer (TargetAdmin), with its release. It connects as that client does, so that a request
// reaches the cluster exactly as the Go path's admin requests riding on the client would; its client.id is the
// one MM2 gives the connector's admin client of that role, without a task index, which makes it the same for
// every task of the connector and so one client (adminPool).
func (r *sourceRun) acquireAdmin(role clientconfig.Role, clientProps map[string]string) (*kafka.Admin, func(), error) {
	props, err := r.pooledAdminProps(role, clientProps)
	if err != nil {
		return nil, nil, err
	}
	return r.t.admins.acquire(props)
}

func (r *sourceRun) pooledAdminProps(role clientconfig.Role, clientProps map[string]string) (map[string]string, error) {
	named, err := r.t.cfg.ClientProps(role, r.t.id.Connector, -1)
	if err != nil {
		return nil, err
	}
	props := cpathAdminProps(clientProps)
	props["client.id"] = named["client.id"]
	return props, nil
}

// cPollLoop is pollLoop on the C path: it steps the pipeline until ctx is done or something breaks, and
// applies what each call of steps moved. It hands records over only while the run's lease is valid.
func (r *sourceRun) cPollLoop(ctx context.Context, pl *cpath.Pipeline, reader *cpathReader, syncs *offsetSyncer, committer <-chan error) (loopErr, committerErr error, committerDone bool) {
	lease := r.env.Lease()
	// A step waiting for room in a full producer queue gives up when the run stops, as forward does.
	stopInterrupt := context.AfterFunc(ctx, pl.Interrupt)
	defer stopInterrupt()
	var lastPositions time.Time
	for ctx.Err() == nil {
		if stop, loopErr, committerErr, committerDone := r.loopEnds(pl, committer); stop {
			return loopErr, committerErr, committerDone
		}
		if !lease.Valid() {
			start := time.Now()
			err := r.awaitLease(ctx, lease, pl)
			r.clock.targetWait(time.Since(start))
			if err != nil {
				return err, nil, false
			}
			continue
		}
		if r.stalls.stalled.Load() {
			// As pollLoop: queue nothing more while the target acknowledges nothing, but keep serving reports.
			start := time.Now()
			pl.Serve(10 * time.Millisecond)
			r.clock.targetWait(time.Since(start))
			if err := r.applyBatch(ctx, pl, reader, pl.Take(), syncs); err != nil {
				return err, nil, false
			}
			continue
		}

		b := pl.Steps(cpathWait, cpathBatch, lease.ValidFor(), cpathSteps)
		// The steps' time waiting for the target (pacing, a full producer queue) and, in steps that consumed
		// nothing, for the source, are timed in C.
		r.clock.targetWait(b.TargetWait)
		r.clock.sourceWait(b.SourceWait)
		forwarded := len(b.Forwarded) > 0
		// Idle: the consumer had nothing, and every record it returned is with the producer, so the consumer's
		// position is what has been read through (readPositions' condition on the Go path).
		idle := b.Consumed == 0 && !b.Paced && b.Pending == 0 && b.TargetWait == 0
		if err := r.applyBatch(ctx, pl, reader, b, syncs); err != nil {
			return err, nil, false
		}
		if idle {
			if now := time.Now(); now.Sub(lastPositions) >= sourcePositionInterval {
				lastPositions = now
				r.readPositionsC(pl)
			}
		}
		if forwarded && !lease.Valid() {
			// The lease ended while records were being handed over: nothing queued may be sent now, and the
			// pipeline ends (pollLoop's leaseLapsed).
			f := b.Forwarded[0]
			r.leaseLapsed(r.parts[f.Part], f.First, pl)
		}
	}
	return nil, nil, false
}

// readPositionsC is readPositions for a C pipeline.
func (r *sourceRun) readPositionsC(pl *cpath.Pipeline) {
	pos, err := pl.Positions()
	if err != nil {
		return
	}
	for i, p := range r.parts {
		if pos[i] >= 0 {
			p.readThrough(pos[i])
		}
	}
}

// applyBatch applies one step's batch: forwarded records, delivery reports, failures and consumer errors. It
// returns the error that ends the pipeline, if any.
func (r *sourceRun) applyBatch(ctx context.Context, pl *cpath.Pipeline, reader *cpathReader, b *cpath.Batch, syncs *offsetSyncer) error {
	if b.Consumed > 0 {
		r.clearNotice("source")
	}
	var now time.Time
	for _, f := range b.Forwarded {
		p := r.parts[f.Part]
		if f.Reread {
			r.log.Debug("first record of the partition is past its start position: reading the partition again from its start",
				"topic", p.tp.Topic, "partition", p.tp.Partition, "start", p.startAt)
		}
		r.skippedC(p, f)
		if f.Records == 0 {
			continue
		}
		p.next = f.Next
		p.forwardedBatch(f.First, f.Last, f.FirstTS, f.Records, f.ValueBytes)
		if p.metrics.on() {
			if now.IsZero() {
				now = time.Now()
			}
			p.metrics.fetchedBatch(f.ValueBytes, f.LastTS, now)
		}
	}
	refused := r.applyReports(pl, b, syncs)
	for _, e := range b.ConsumerErrors {
		err := e.Err
		if e.Part >= 0 && e.Part < len(r.parts) {
			p := r.parts[e.Part]
			err = &kafka.PartitionError{Topic: p.tp.Topic, Partition: p.tp.Partition, Offset: e.Offset, Err: e.Err}
		}
		if err := r.consumeError(ctx, reader, err); err != nil {
			return err
		}
	}
	return refused
}

// applyReports applies a batch's delivery reports and failures; it returns the error of a record the
// producer refused, if any, which ends the pipeline.
func (r *sourceRun) applyReports(pl *cpath.Pipeline, b *cpath.Batch, syncs *offsetSyncer) error {
	var at time.Time
	for _, a := range b.Acked {
		p := r.parts[a.Part]
		switch a.Kind {
		case cpath.Mapped:
			p.ackedRun(a.First, a.Target, a.Records, a.LastTS, syncs)
		case cpath.Unmapped:
			p.ackedUnmappedRun(a.Last, a.Records, a.LastTS)
		default:
			p.droppedRun(a.Records)
			continue
		}
		if p.metrics.on() {
			if at.IsZero() {
				at = time.Now()
			}
			p.metrics.ackedBatch(a.Records, a.LastTS, a.SizeBytes, at)
		}
	}
	var refused error
	for _, f := range b.Failures {
		p := r.parts[f.Part]
		if f.Refused {
			if refused == nil {
				refused = r.refusedError(p, f.Offset, -1, f.Err)
			}
			continue
		}
		p.failBatched()
		r.deliveryFailed(p, f.Offset, f.Err, pl)
	}
	return refused
}
