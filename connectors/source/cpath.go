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
	"github.com/kmirror/kmirror/tasks"
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
	pl  cPipeline
	idx map[mirror.TopicPartition]int
}

func newCPathReader(pl cPipeline, parts []*sourcePartition) *cpathReader {
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

// cEngine is the C data path: one pipeline of a consumer and a producer that moves records in C, with the
// worker's pooled admin clients beside it, and Go applying what each step reports (applyBatch).
type cEngine struct {
	r             *sourceRun
	clients       cClients
	pl            cPipeline
	rd            *cpathReader
	syncs         *offsetSyncer
	lastPositions time.Time // when an idle step last read the pipeline's positions
	closers       []func()  // what close undoes, in order
}

// cPipeline is what the C engine asks of its pipeline: *cpath.Pipeline answers it, and a test double that
// reports what it moved in cpath.Batch values can.
type cPipeline interface {
	engineProducer
	Assign(starts []int64) error
	Steps(timeout time.Duration, max int, validFor, budget time.Duration) *cpath.Batch
	Take() *cpath.Batch
	Serve(timeout time.Duration)
	ProducerReady(ctx context.Context, timeout time.Duration) bool
	Positions() ([]int64, error)
	Seek(part int, offset int64) error
	Watermarks(part int, timeout time.Duration) (low, high int64, err error)
	CachedWatermarks(part int) (low, high int64, err error)
	Interrupt()
	SetProvenance(name string, stamp []byte, targetAlias, targetID string)
	OwnThread() bool
	Close()
}

// cClients makes the C engine's pipeline and takes its admin clients: cpathClients, or a test double's.
type cClients interface {
	pipeline(cfg cpath.Config) (cPipeline, error)
	admin(r *sourceRun, role clientconfig.Role, clientProps map[string]string) (clusterAdmin, func(), error)
}

var (
	_ cPipeline = (*cpath.Pipeline)(nil)
	_ cClients  = cpathClients{}
)

// cpathClients makes pipelines of package cpath, and takes the worker's pooled admin clients (acquireAdmin).
type cpathClients struct{}

func (cpathClients) pipeline(cfg cpath.Config) (cPipeline, error) { return cpath.New(cfg) }

func (cpathClients) admin(r *sourceRun, role clientconfig.Role, clientProps map[string]string) (clusterAdmin, func(), error) {
	return r.acquireAdmin(role, clientProps)
}

func (c *cEngine) name() string { return string(DataPathC) }

// openSource makes the pipeline — both its clients, as the Go path's start before the admin work, so that the
// producer's request for its producer id overlaps it; assign then holds consuming back until it has one
// (awaitProducer) — and takes the source admin client.
func (c *cEngine) openSource() (clusterAdmin, error) {
	r := c.r
	consumerStats, removeConsumerStats := r.t.statsSink(clientconfig.ReplicationConsumer, r.consumerProps, r.consumerFigures.record)
	producerStats, removeProducerStats := r.t.statsSink(clientconfig.ReplicationProducer, r.producerProps, r.producerFigures.record)
	c.closers = append(c.closers, removeConsumerStats, removeProducerStats)
	parts := make([]cpath.Part, len(r.parts))
	for i, p := range r.parts {
		parts[i] = cpath.Part{Topic: p.tp.Topic, Partition: p.tp.Partition, Remote: *p.remote}
	}
	batch := propInt(r.producerProps, libDefaultBatchSize, "batch.size")
	pl, err := c.clients.pipeline(cpath.Config{
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
		return nil, err
	}
	c.pl, c.rd = pl, newCPathReader(pl, r.parts)
	c.closers = append(c.closers, pl.Close)
	if !pl.OwnThread() {
		c.closers = append(c.closers, r.t.procs.hold()) // the pipeline steps in this goroutine's thread: see cpathProcs
	}
	// The admin requests go through clients of package kafka, which the connector's tasks on this worker share
	// (adminPool).
	sourceAdmin, releaseSource, err := c.clients.admin(r, clientconfig.SourceAdmin, r.consumerProps)
	if err != nil {
		return nil, err
	}
	c.closers = append(c.closers, releaseSource)
	return sourceAdmin, nil
}

func (c *cEngine) openTarget(syncs *offsetSyncer) (clusterAdmin, error) {
	c.syncs = syncs
	targetAdmin, releaseTarget, err := c.clients.admin(c.r, clientconfig.TargetAdmin, c.r.producerProps)
	if err != nil {
		return nil, err
	}
	c.closers = append(c.closers, releaseTarget)
	return targetAdmin, nil
}

func (c *cEngine) assign(ctx context.Context, starts []kafka.Start) error {
	c.r.awaitProducer(ctx, c.pl)
	c.r.guardC(c.pl)
	offsets := make([]int64, len(starts))
	for i, s := range starts {
		offsets[i] = s.Offset // kafka's and cpath's logical offsets are librdkafka's
	}
	return c.pl.Assign(offsets)
}

func (c *cEngine) reader() sourceReader { return c.rd }

// A step waiting for room in a full producer queue gives up when the run stops, as forward does.
func (c *cEngine) interruptOn(ctx context.Context) func() bool {
	return context.AfterFunc(ctx, c.pl.Interrupt)
}

// reported applies the delivery reports a flush left (a refusal was reported by the poll loop already).
func (c *cEngine) reported()                { _ = c.r.applyReports(c.pl, c.pl.Take(), c.syncs) }
func (c *cEngine) txnProducer() txnProducer { return nil }
func (c *cEngine) closeProducer()           {} // the producer is the pipeline's: it closes with it

func (c *cEngine) close() {
	for i := len(c.closers) - 1; i >= 0; i-- {
		c.closers[i]()
	}
	c.closers = nil
}

// The pipeline's side of engineProducer.
func (c *cEngine) Fatal() error                  { return c.pl.Fatal() }
func (c *cEngine) AuthFailure() error            { return c.pl.AuthFailure() }
func (c *cEngine) Outstanding() int              { return c.pl.Outstanding() }
func (c *cEngine) Flush(ctx context.Context) int { return c.pl.Flush(ctx) }
func (c *cEngine) Purge(inFlight bool) error     { return c.pl.Purge(inFlight) }

// pause queues nothing more while the target acknowledges nothing, but keeps serving reports.
func (c *cEngine) pause(ctx context.Context) error {
	start := time.Now()
	c.pl.Serve(10 * time.Millisecond)
	c.r.clock.targetWait(time.Since(start))
	return c.r.applyBatch(ctx, c.pl, c.rd, c.pl.Take(), c.syncs)
}

// step steps the pipeline for up to cpathSteps and applies what moved.
func (c *cEngine) step(ctx context.Context, lease tasks.Lease) (bool, error) {
	r, pl := c.r, c.pl
	b := pl.Steps(cpathWait, cpathBatch, lease.ValidFor(), cpathSteps)
	// The steps' time waiting for the target (pacing, a full producer queue) and, in steps that consumed
	// nothing, for the source, are timed in C.
	r.clock.targetWait(b.TargetWait)
	r.clock.sourceWait(b.SourceWait)
	forwarded := len(b.Forwarded) > 0
	// Idle: the consumer had nothing, and every record it returned is with the producer, so the consumer's
	// position is what has been read through (readPositions' condition on the Go path).
	idle := b.Consumed == 0 && !b.Paced && b.Pending == 0 && b.TargetWait == 0
	if err := r.applyBatch(ctx, pl, c.rd, b, c.syncs); err != nil {
		return false, err
	}
	if idle {
		if now := time.Now(); now.Sub(c.lastPositions) >= sourcePositionInterval {
			c.lastPositions = now
			r.readPositionsC(pl)
		}
	}
	if forwarded && !lease.Valid() {
		// The lease ended while records were being handed over: nothing queued may be sent now, and the
		// pipeline ends (the Go engine's leaseLapsed).
		f := b.Forwarded[0]
		r.leaseLapsed(r.parts[f.Part], f.First, pl)
	}
	return false, nil
}

// awaitProducer holds consuming back until the pipeline's producer can send, for up to the producer's delivery
// timeout: an idempotent producer made a moment ago has no producer id yet (about a second here), and records
// handed to it meanwhile waited in its queue on the clock of the overdue watch and the stall pause. Past
// stallAfter the wait is reported as a stall is, so that a target down at start is visible as soon as
// before; past the timeout the pipeline starts anyway, and the clients' errors come with its first step.
func (r *sourceRun) awaitProducer(ctx context.Context, pl cPipeline) {
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

// readPositionsC is readPositions for a C pipeline.
func (r *sourceRun) readPositionsC(pl cPipeline) {
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
func (r *sourceRun) applyBatch(ctx context.Context, pl cPipeline, reader *cpathReader, b *cpath.Batch, syncs *offsetSyncer) error {
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
func (r *sourceRun) applyReports(pl cPipeline, b *cpath.Batch, syncs *offsetSyncer) error {
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
