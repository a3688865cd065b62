package source

import (
	"context"
	"errors"
	"time"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/tasks"
)

// goEngine is the Go data path: a consumer and a producer, each with its admin client, and every record
// handed over by the poll loop, one by one (step). The producer reports deliveries on its own goroutine
// (delivered).
type goEngine struct {
	r             *sourceRun
	clients       goClients
	consumer      goConsumer
	producer      goProducer
	lastPositions time.Time // when an idle step last read the consumer's positions
	stopProducer  func()    // closes the producer and its admin client (closeProducer)
	closers       []func()  // what close undoes after the producer, in order
}

// goConsumer is what the Go engine asks of its consumer: *kafka.Consumer answers it, and a test double of
// the source log can.
type goConsumer interface {
	sourceReader
	Assign(starts []kafka.Start) error
	Position(starts []kafka.Start) (map[kafka.Start]int64, error)
	Poll(timeout time.Duration) (kafka.Record, bool, error)
}

// goProducer is what the Go engine and exactly-once mode ask of the replication producer: *kafka.Producer
// answers it, and a test double of the target can.
type goProducer interface {
	engineProducer
	txnProducer
	Forward(rec kafka.Record, topic *string) error
}

// goClients makes the Go engine's clients, each with the admin client beside it and what closes them both:
// kafkaClients, or a test double's.
type goClients interface {
	consumer(r *sourceRun) (goConsumer, clusterAdmin, func(), error)
	producer(r *sourceRun, onDelivery func(kafka.Delivery)) (goProducer, clusterAdmin, func(), error)
}

var (
	_ goConsumer = (*kafka.Consumer)(nil)
	_ goProducer = (*kafka.Producer)(nil)
	_ goClients  = kafkaClients{}
)

// kafkaClients makes the Go engine's clients of package kafka; their admin clients ride on their connections.
type kafkaClients struct{}

func (kafkaClients) consumer(r *sourceRun) (goConsumer, clusterAdmin, func(), error) {
	stats, removeStats := r.t.clientStats(clientconfig.ReplicationConsumer, r.consumerProps, r.statsEvery(clientconfig.ReplicationConsumer), r.consumerFigures.record)
	consumer, err := kafka.NewConsumer(r.consumerProps, r.log, stats...)
	if err != nil {
		removeStats()
		return nil, nil, nil, err
	}
	admin, closeAll, err := withAdmin(consumer.Admin, func() { consumer.Close() }, removeStats)
	return consumer, admin, closeAll, err
}

func (kafkaClients) producer(r *sourceRun, onDelivery func(kafka.Delivery)) (goProducer, clusterAdmin, func(), error) {
	stats, removeStats := r.t.clientStats(clientconfig.ReplicationProducer, r.producerProps, r.statsEvery(clientconfig.ReplicationProducer), r.producerFigures.record)
	producer, err := kafka.NewProducer(r.producerProps, r.log, onDelivery, stats...)
	if err != nil {
		removeStats()
		return nil, nil, nil, err
	}
	admin, closeAll, err := withAdmin(producer.Admin, producer.Close, removeStats)
	return producer, admin, closeAll, err
}

// withAdmin makes the admin client riding on a new client's connections, and returns what closes both; if it
// cannot, it closes the client.
func withAdmin(newAdmin func() (*kafka.Admin, error), closeClient, removeStats func()) (clusterAdmin, func(), error) {
	admin, err := newAdmin()
	if err != nil {
		closeClient()
		removeStats()
		return nil, nil, err
	}
	admin.Timeout = taskAdminTimeout
	return admin, func() {
		admin.Close()
		closeClient()
		removeStats() // after the client closed: no statistics come later
	}, nil
}

func (g *goEngine) name() string { return string(DataPathGo) }

func (g *goEngine) openSource() (clusterAdmin, error) {
	consumer, admin, closeConsumer, err := g.clients.consumer(g.r)
	if err != nil {
		return nil, err
	}
	g.consumer = consumer
	g.closers = append(g.closers, closeConsumer)
	return admin, nil
}

// openTarget makes the producer, whose delivery handler sends the offset syncs.
func (g *goEngine) openTarget(syncs *offsetSyncer) (clusterAdmin, error) {
	r := g.r
	producer, admin, closeProducer, err := g.clients.producer(r, func(d kafka.Delivery) { r.delivered(d, syncs) })
	if err != nil {
		return nil, err
	}
	g.producer, g.stopProducer = producer, closeProducer
	r.producer.Store(&g.producer)
	g.closers = append(g.closers, func() { r.producer.Store(nil) })
	return admin, nil
}

// closeProducer closes the producer and its admin client, ahead of the rest.
func (g *goEngine) closeProducer() {
	if g.stopProducer != nil {
		g.stopProducer()
		g.stopProducer = nil
	}
}

func (g *goEngine) close() {
	g.closeProducer()
	for i := len(g.closers) - 1; i >= 0; i-- {
		g.closers[i]()
	}
	g.closers = nil
}

func (g *goEngine) assign(_ context.Context, starts []kafka.Start) error {
	return g.consumer.Assign(starts)
}
func (g *goEngine) reader() sourceReader                    { return g.consumer }
func (g *goEngine) interruptOn(context.Context) func() bool { return func() bool { return false } }
func (g *goEngine) reported()                               {}
func (g *goEngine) txnProducer() txnProducer                { return g.producer }

// The producer's side of engineProducer.
func (g *goEngine) Fatal() error                  { return g.producer.Fatal() }
func (g *goEngine) AuthFailure() error            { return g.producer.AuthFailure() }
func (g *goEngine) Outstanding() int              { return g.producer.Outstanding() }
func (g *goEngine) Flush(ctx context.Context) int { return g.producer.Flush(ctx) }
func (g *goEngine) Purge(inFlight bool) error     { return g.producer.Purge(inFlight) }

func (g *goEngine) pause(context.Context) error {
	time.Sleep(10 * time.Millisecond) // the producer serves its reports on its own goroutine meanwhile
	g.r.clock.targetWait(10 * time.Millisecond)
	return nil
}

// step polls the consumer once and hands the record it returned, if any, to the producer.
func (g *goEngine) step(ctx context.Context, lease tasks.Lease) (bool, error) {
	r, consumer, producer := g.r, g.consumer, g.producer
	pollStart, timed := r.clock.pollStart()
	wait := r.pollWait()
	rec, ok, err := consumer.Poll(wait)
	r.clock.pollEnd(pollStart, timed, ok, wait)
	if err != nil {
		return false, r.consumeError(ctx, consumer, err)
	}
	if !ok {
		if err := r.txn.idle(ctx, r, producer); err != nil {
			return false, err
		}
		if now := time.Now(); now.Sub(g.lastPositions) >= sourcePositionInterval {
			g.lastPositions = now
			r.readPositions(consumer)
		}
		return false, nil
	}
	p := lookup(r.bySource, rec.Topic(), rec.Partition())
	if p == nil {
		return false, nil // not ours (cannot happen with assign, but never forward a stray record)
	}
	r.clearNotice("source")
	off, ts, valueBytes := rec.Offset(), rec.Timestamp(), len(rec.Value())
	if p.next < 0 && r.firstRecord(consumer, p, off) {
		return false, nil // read again from the start
	}
	if r.skipsRecord(ctx, consumer, p, rec) {
		return false, nil // came from the target cluster (provenance.go)
	}
	if err := r.txn.beforeForward(producer); err != nil {
		return false, err
	}
	p.next = off + 1
	p.forwarded(off, unixMilli(ts), rec.Size(), valueBytes)
	if err := r.forward(ctx, producer, rec, p); err != nil {
		p.unforward()
		if errors.Is(err, errAbandoned) {
			return true, nil
		}
		return false, err
	}
	p.metrics.fetched(valueBytes, ts)
	if err := r.txn.forwarded(ctx, r, producer, p, off); err != nil {
		return false, err
	}
	if !lease.Valid() {
		// The lease ended while the record was being handed over (the process stalled in between): it may
		// have been queued after the lease ended, so nothing queued may be sent now, and the pipeline ends.
		r.leaseLapsed(p, off, producer)
	}
	return false, nil
}

// firstRecord checks a partition's first record of the pipeline against where the pipeline started the
// partition. Compaction, transaction markers and aborted transactions legitimately put it past the start;
// anything else means the consumer skipped records, which nothing downstream could notice: the offsets after
// them are acknowledged as usual. So the first time in a pipeline, the task drops the record
// and reads the partition again from its start. If the re-read's first record is the same one, the records in
// between are not in the log for this consumer, and it goes on; if it is an earlier one, the consumer had
// skipped records, which the log now says. It returns whether the record was dropped.
func (r *sourceRun) firstRecord(consumer goConsumer, p *sourcePartition, off int64) bool {
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
func (r *sourceRun) readPositions(consumer goConsumer) {
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
func (r *sourceRun) forward(ctx context.Context, producer goProducer, rec kafka.Record, p *sourcePartition) error {
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
	if r.txn.delivered(r, d) {
		return
	}
	p := lookup(r.byRemote, d.Topic, d.Partition)
	if p == nil {
		r.log.Error("delivery report for a partition this task does not replicate", "topic", d.Topic, "partition", d.Partition)
		return
	}
	if d.Err == nil && d.Unconfirmed && r.txn.unconfirmedCounts() {
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
		if kp := r.producer.Load(); kp != nil && *kp != nil {
			pr = *kp
			if cause != nil && kafka.IsFatal(cause) && (*kp).Fatal() != nil {
				cause = (*kp).Fatal() // why the producer is unusable; a new pipeline's producer replaces it
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
