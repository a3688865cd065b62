package source

// The engines' clients over kafkafake: the Go engine's consumer, producer and admin clients, and a C pipeline
// that moves records through the double and reports them in cpath.Batch values as the C side does.

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/cpath"
	"github.com/kmirror/kmirror/connectors/kafkafake"
)

// fakeErr turns an error of the double into kafka's, so that the kafka.Is* helpers class it as the engines
// expect (codes as librdkafka's rd_kafka_resp_err_t).
func fakeErr(err error) error {
	if err == nil {
		return nil
	}
	var pe *kafkafake.PartitionError
	if errors.As(err, &pe) {
		return &kafka.PartitionError{Topic: pe.Topic, Partition: pe.Partition, Offset: pe.Offset, Err: fakeErr(pe.Err)}
	}
	code, fatal := 0, false
	switch {
	case errors.Is(err, kafkafake.ErrQueueFull):
		return kafka.ErrQueueFull
	case errors.Is(err, kafkafake.ErrOffsetOutOfRange):
		code = 1
	case errors.Is(err, kafkafake.ErrUnknownTopic):
		code = 3
	case errors.Is(err, kafkafake.ErrTimedOut):
		code = -192
	case errors.Is(err, kafkafake.ErrNoRoom):
		code = 19
	case errors.Is(err, kafkafake.ErrPurged):
		code = -152
	case errors.Is(err, kafkafake.ErrRecordTooLarge):
		code = 10
	case errors.Is(err, kafkafake.ErrFenced):
		code, fatal = 90, true
	case errors.Is(err, kafkafake.ErrFatal):
		code, fatal = -150, true
	case errors.Is(err, kafkafake.ErrAuthentication):
		code = -169
	default:
		return err
	}
	return kafka.CodeError(code, err.Error(), fatal)
}

// fakeAdmin is a clusterAdmin over the double's admin client.
type fakeAdmin struct{ a *kafkafake.Admin }

// ClusterID is unknown to the double: the provenance guard then names both clusters by their aliases.
func (f fakeAdmin) ClusterID(context.Context) (string, error) {
	return "", errors.New("the double has no cluster id")
}

func (f fakeAdmin) TopicIDs(ctx context.Context, topics []string) (map[string]string, error) {
	return f.a.TopicIDs(ctx, topics)
}

func (f fakeAdmin) TopicShapes(ctx context.Context, topics []string) (map[string]kafka.TopicShape, error) {
	s, err := f.a.TopicShapes(ctx, topics)
	out := make(map[string]kafka.TopicShape, len(s))
	for k, v := range s {
		out[k] = kafka.TopicShape{ID: v.ID, Partitions: v.Partitions}
	}
	return out, err
}

func (f fakeAdmin) LogOffsets(ctx context.Context, parts []kafka.PartitionID, readCommitted, starts bool) (map[kafka.PartitionID]kafka.LogOffsets, map[kafka.PartitionID]error, error) {
	ids := make([]kafkafake.PartitionID, len(parts))
	for i, p := range parts {
		ids[i] = kafkafake.PartitionID{Topic: p.Topic, Partition: p.Partition}
	}
	logs, failed, err := f.a.LogOffsets(ctx, ids, readCommitted, starts)
	out, errs := map[kafka.PartitionID]kafka.LogOffsets{}, map[kafka.PartitionID]error{}
	for k, v := range logs {
		out[kafka.PartitionID{Topic: k.Topic, Partition: k.Partition}] = kafka.LogOffsets{Start: v.Start, End: v.End}
	}
	for k, v := range failed {
		errs[kafka.PartitionID{Topic: k.Topic, Partition: k.Partition}] = fakeErr(v)
	}
	return out, errs, err
}

func (f fakeAdmin) PartitionCount(ctx context.Context, topic string) (int, error) {
	n, err := f.a.PartitionCount(ctx, topic)
	return n, fakeErr(err)
}

func (f fakeAdmin) CreateTopics(context.Context, []kafka.NewTopic) (map[string]error, error) {
	return nil, errors.New("the double creates no topics")
}

// fakeConsumer is a goConsumer over the double's consumer.
type fakeConsumer struct{ c *kafkafake.Consumer }

func (f fakeConsumer) Watermarks(topic string, partition int32, timeout time.Duration) (int64, int64, error) {
	lo, hi, err := f.c.Watermarks(topic, partition, timeout)
	return lo, hi, fakeErr(err)
}

func (f fakeConsumer) CachedWatermarks(topic string, partition int32) (int64, int64, error) {
	lo, hi, err := f.c.CachedWatermarks(topic, partition)
	return lo, hi, fakeErr(err)
}

func (f fakeConsumer) Seek(topic string, partition int32, offset int64) error {
	return fakeErr(f.c.Seek(topic, partition, offset))
}

func (f fakeConsumer) Assign(starts []kafka.Start) error {
	return fakeErr(f.c.Assign(fakeStarts(starts)))
}

func fakeStarts(starts []kafka.Start) []kafkafake.Start {
	out := make([]kafkafake.Start, len(starts))
	for i, s := range starts {
		out[i] = kafkafake.Start{Topic: s.Topic, Partition: s.Partition, Offset: s.Offset}
	}
	return out
}

func (f fakeConsumer) Position(starts []kafka.Start) (map[kafka.Start]int64, error) {
	pos, err := f.c.Position(fakeStarts(starts))
	out := make(map[kafka.Start]int64, len(pos))
	for k, v := range pos {
		out[kafka.Start{Topic: k.Topic, Partition: k.Partition}] = v
	}
	return out, fakeErr(err)
}

func (f fakeConsumer) Poll(timeout time.Duration) (kafka.Record, bool, error) {
	rec, ok, err := f.c.Poll(min(timeout, 5*time.Millisecond))
	if !ok || err != nil {
		return kafka.Record{}, false, fakeErr(err)
	}
	var hs []kafka.Header
	for _, h := range rec.Headers() {
		hs = append(hs, kafka.Header{Key: h.Key, Value: h.Value})
	}
	return kafka.NewRecord(rec.Topic(), rec.Partition(), rec.Offset(), rec.Key(), rec.Value(), hs, rec.Timestamp()), true, nil
}

// fakeProducer is a goProducer over the double's producer; handOver (if set) sees every record produced.
type fakeProducer struct {
	p        *kafkafake.Producer
	handOver func()
}

func (f fakeProducer) Fatal() error                  { return fakeErr(f.p.Fatal()) }
func (f fakeProducer) AuthFailure() error            { return fakeErr(f.p.AuthFailure()) }
func (f fakeProducer) Outstanding() int              { return f.p.Outstanding() }
func (f fakeProducer) Flush(ctx context.Context) int { return f.p.Flush(ctx) }
func (f fakeProducer) Purge(inFlight bool) error     { return f.p.Purge(inFlight) }
func (f fakeProducer) InitTransactions(ctx context.Context) error {
	return fakeErr(f.p.InitTransactions(ctx))
}
func (f fakeProducer) BeginTransaction() error { return fakeErr(f.p.BeginTransaction()) }
func (f fakeProducer) CommitTransaction(ctx context.Context) error {
	return fakeErr(f.p.CommitTransaction(ctx))
}
func (f fakeProducer) AbortTransaction(ctx context.Context) error {
	return fakeErr(f.p.AbortTransaction(ctx))
}

func (f fakeProducer) Produce(topic string, partition int32, key, value []byte, headers []kafka.Header, ts time.Time, opaque any) error {
	var hs []kafkafake.Header
	for _, h := range headers {
		hs = append(hs, kafkafake.Header{Key: h.Key, Value: h.Value})
	}
	if f.handOver != nil && opaque == nil {
		f.handOver()
	}
	return fakeErr(f.p.Produce(topic, partition, key, value, hs, ts, opaque))
}

func (f fakeProducer) Forward(rec kafka.Record, topic *string) error {
	return f.Produce(*topic, rec.Partition(), rec.Key(), rec.Value(), rec.Headers(), rec.Timestamp(), nil)
}

// fakeGoClients makes the Go engine's clients on the double; handOver (if set) sees every record produced.
type fakeGoClients struct {
	source     *kafkafake.Log
	target     *kafkafake.Target
	handOver   func()
	queueLimit int
}

func (f fakeGoClients) consumer(r *sourceRun) (goConsumer, clusterAdmin, func(), error) {
	c := f.source.NewConsumer(kafkafake.ConsumerOptions{ReadCommitted: r.consumerProps["isolation.level"] == "read_committed"})
	return fakeConsumer{c}, fakeAdmin{f.source.Admin()}, func() { c.Close() }, nil
}

func (f fakeGoClients) producer(r *sourceRun, onDelivery func(kafka.Delivery)) (goProducer, clusterAdmin, func(), error) {
	p := f.target.NewProducer(func(d kafkafake.Delivery) {
		onDelivery(kafka.Delivery{Topic: d.Topic, Partition: d.Partition, Offset: d.Offset, Err: fakeErr(d.Err),
			Unconfirmed: d.Unconfirmed, Opaque: d.Opaque, At: d.At})
	}, kafkafake.ProducerOptions{QueueLimit: f.queueLimit, TransactionalID: r.producerProps["transactional.id"]})
	return fakeProducer{p: p, handOver: f.handOver}, fakeAdmin{f.target.Admin()}, p.Close, nil
}

// fakeCClients makes C pipelines on the double; its admin clients are the clusters'. handOver (if set) sees
// every record produced.
type fakeCClients struct {
	source     *kafkafake.Log
	target     *kafkafake.Target
	handOver   func()
	queueLimit int
}

func (f fakeCClients) pipeline(cfg cpath.Config) (cPipeline, error) {
	pl := &fakePipeline{parts: cfg.Parts, idx: map[kafkafake.PartitionID]int{}, out: &cpath.Batch{}, handOver: f.handOver}
	for i, p := range cfg.Parts {
		pl.idx[kafkafake.PartitionID{Topic: p.Remote, Partition: p.Partition}] = i
		pl.idx[kafkafake.PartitionID{Topic: "\x00" + p.Topic, Partition: p.Partition}] = i
	}
	pl.state = make([]fakePart, len(cfg.Parts))
	pl.c = f.source.NewConsumer(kafkafake.ConsumerOptions{ReadCommitted: cfg.Consumer["isolation.level"] == "read_committed"})
	pl.p = f.target.NewProducer(pl.delivered, kafkafake.ProducerOptions{Manual: true, QueueLimit: f.queueLimit})
	return pl, nil
}

func (f fakeCClients) admin(_ *sourceRun, role clientconfig.Role, _ map[string]string) (clusterAdmin, func(), error) {
	if role == clientconfig.SourceAdmin {
		return fakeAdmin{f.source.Admin()}, func() {}, nil
	}
	return fakeAdmin{f.target.Admin()}, func() {}, nil
}

// fakePipeline moves records from the double's source to its target as the C pipeline does, in steps, and
// reports what moved as batches: runs of forwarded records, runs of acknowledgements (mapped, unmapped, or
// dropped after a partition's failure), a partition's first failure, refused records and consumer errors.
// Like the C side, it re-reads a partition whose first record lies past where it was assigned once, and
// produces nothing after a purge.
type fakePipeline struct {
	parts []cpath.Part
	idx   map[kafkafake.PartitionID]int
	c     *kafkafake.Consumer
	p     *kafkafake.Producer

	mu       sync.Mutex // guards out and state against the delivery handler
	out      *cpath.Batch
	state    []fakePart
	pending  []kafkafake.Record // consumed, waiting for room in the producer's queue
	purged   bool
	handOver func()
}

type fakePart struct {
	start             int64
	forwarded, reread bool // forwarded: the partition has a position (a record forwarded, or a seek)
	failed, confirmed bool
	refused           bool
}

func (f *fakePipeline) part(topic string, partition int32) int {
	return f.idx[kafkafake.PartitionID{Topic: "\x00" + topic, Partition: partition}]
}

func (f *fakePipeline) Assign(starts []int64) error {
	ss := make([]kafkafake.Start, len(starts))
	for i, s := range starts {
		ss[i] = kafkafake.Start{Topic: f.parts[i].Topic, Partition: f.parts[i].Partition, Offset: s}
		f.state[i].start = s
	}
	return fakeErr(f.c.Assign(ss))
}

// delivered turns one delivery report into the batch's acknowledgement runs and failures.
func (f *fakePipeline) delivered(d kafkafake.Delivery) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := f.idx[kafkafake.PartitionID{Topic: d.Topic, Partition: d.Partition}]
	st, src := &f.state[i], d.Opaque.(int64)
	b := f.out
	if d.Err != nil && !errors.Is(d.Err, kafkafake.ErrPurged) {
		f.gapless()
	}
	switch {
	case st.failed:
		b.Acked = append(b.Acked, cpath.Acked{Part: i, Kind: cpath.Dropped, First: src, Last: src, Records: 1})
	case d.Err != nil:
		st.failed = true
		b.Failures = append(b.Failures, cpath.Failure{Part: i, Offset: src, Err: fakeErr(d.Err)})
	case d.Unconfirmed && !st.confirmed:
		st.failed = true
		b.Failures = append(b.Failures, cpath.Failure{Part: i, Offset: src, Unconfirmed: true})
	case d.Unconfirmed:
		b.Acked = append(b.Acked, cpath.Acked{Part: i, Kind: cpath.Unmapped, First: src, Last: src, Records: 1, LastTS: cpath.NoTimestamp})
	default:
		st.confirmed = true
		if n := len(b.Acked); n > 0 {
			last := &b.Acked[n-1]
			if last.Part == i && last.Kind == cpath.Mapped && last.Last+1 == src && last.Target+last.Records == d.Offset {
				last.Last, last.Records = src, last.Records+1
				return
			}
		}
		b.Acked = append(b.Acked, cpath.Acked{Part: i, Kind: cpath.Mapped, First: src, Last: src, Target: d.Offset, Records: 1, LastTS: cpath.NoTimestamp})
	}
}

// gapless stops the producer at a failed delivery, as librdkafka's enable.gapless.guarantee does (the task
// requires it, requireGapless): nothing after it is written. The Go engine's delivery handler purges the
// producer before the next report; the C engine applies reports a step later, so without this the double
// would write records behind a failed one that librdkafka would not. The caller holds f.mu.
func (f *fakePipeline) gapless() {
	f.purged, f.pending = true, nil // nothing is produced after it, as after Purge
	_ = f.p.Purge(true)
}

func (f *fakePipeline) Steps(timeout time.Duration, max int, validFor, _ time.Duration) *cpath.Batch {
	began := time.Now()
	f.p.Deliver(-1)
	f.mu.Lock()
	stopped := f.purged
	f.mu.Unlock()
	if !stopped && f.p.Fatal() == nil {
		f.consume(min(timeout, 5*time.Millisecond), max, func() bool { return validFor < 0 || time.Since(began) < validFor })
	}
	f.p.Deliver(-1)
	return f.Take()
}

// consume forwards up to max records, the ones a full queue held back first.
func (f *fakePipeline) consume(wait time.Duration, max int, valid func() bool) {
	for n := 0; n < max && valid(); n++ {
		var rec kafkafake.Record
		if len(f.pending) > 0 {
			rec = f.pending[0]
		} else {
			r, ok, err := f.c.Poll(wait)
			wait = 0
			if err != nil {
				f.consumerError(err)
				return
			}
			if !ok {
				return
			}
			rec = r
			f.mu.Lock()
			f.out.Consumed++
			f.mu.Unlock()
		}
		if !f.forward(rec) {
			return
		}
	}
}

func (f *fakePipeline) consumerError(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.out.Consumed++
	ce := cpath.ConsumerError{Part: -1, Err: fakeErr(err)}
	var pe *kafkafake.PartitionError
	if errors.As(err, &pe) {
		ce = cpath.ConsumerError{Part: f.part(pe.Topic, pe.Partition), Offset: pe.Offset, Err: fakeErr(pe.Err)}
	}
	f.out.ConsumerErrors = append(f.out.ConsumerErrors, ce)
}

// forward hands one record to the producer and tells whether the step goes on.
func (f *fakePipeline) forward(rec kafkafake.Record) bool {
	i := f.part(rec.Topic(), rec.Partition())
	f.mu.Lock()
	st := &f.state[i]
	if st.refused {
		f.mu.Unlock()
		return true
	}
	if !st.forwarded && !st.reread && st.start >= 0 && rec.Offset() > st.start {
		st.reread = true
		f.out.Forwarded = append(f.out.Forwarded, cpath.Forwarded{Part: i, Reread: true})
		f.mu.Unlock()
		_ = f.c.Seek(rec.Topic(), rec.Partition(), st.start)
		return true
	}
	f.mu.Unlock()
	if f.handOver != nil {
		f.handOver()
	}
	err := f.p.Produce(f.parts[i].Remote, rec.Partition(), rec.Key(), rec.Value(), rec.Headers(), rec.Timestamp(), rec.Offset())
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case errors.Is(err, kafkafake.ErrQueueFull):
		if len(f.pending) == 0 {
			f.pending = append(f.pending, rec)
		}
		f.out.Pending = len(f.pending)
		return false
	case err != nil:
		st.refused = true
		f.out.Failures = append(f.out.Failures, cpath.Failure{Part: i, Offset: rec.Offset(), Err: fakeErr(err), Refused: true})
		return false
	}
	if len(f.pending) > 0 {
		f.pending = f.pending[1:]
	}
	st.forwarded = true
	b := f.out
	size := int64(len(rec.Key()) + len(rec.Value()))
	if n := len(b.Forwarded); n > 0 && b.Forwarded[n-1].Part == i && b.Forwarded[n-1].Records > 0 {
		fw := &b.Forwarded[n-1]
		fw.Last, fw.Next, fw.Records = rec.Offset(), rec.Offset()+1, fw.Records+1
		fw.ValueBytes, fw.SizeBytes = fw.ValueBytes+int64(len(rec.Value())), fw.SizeBytes+size
		return true
	}
	b.Forwarded = append(b.Forwarded, cpath.Forwarded{Part: i, Records: 1, First: rec.Offset(), Last: rec.Offset(), Next: rec.Offset() + 1,
		ValueBytes: int64(len(rec.Value())), SizeBytes: size, FirstTS: cpath.NoTimestamp, LastTS: cpath.NoTimestamp})
	return true
}

func (f *fakePipeline) Take() *cpath.Batch {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.out
	b.Pending = len(f.pending)
	f.out = &cpath.Batch{}
	return b
}

func (f *fakePipeline) Serve(time.Duration) { f.p.Deliver(-1) }

func (f *fakePipeline) ProducerReady(context.Context, time.Duration) bool { return true }

func (f *fakePipeline) Positions() ([]int64, error) {
	starts := make([]kafkafake.Start, len(f.parts))
	for i, p := range f.parts {
		starts[i] = kafkafake.Start{Topic: p.Topic, Partition: p.Partition}
	}
	pos, err := f.c.Position(starts)
	out := make([]int64, len(f.parts))
	for i, s := range starts {
		out[i] = -1
		if v, ok := pos[s]; ok {
			out[i] = v
		}
	}
	return out, fakeErr(err)
}

// Seek moves a partition, which then has a position: its next record is not checked against its start (as
// cp_seek sets the partition's next offset).
func (f *fakePipeline) Seek(part int, offset int64) error {
	f.mu.Lock()
	f.state[part].forwarded = true
	f.mu.Unlock()
	return fakeErr(f.c.Seek(f.parts[part].Topic, f.parts[part].Partition, offset))
}

func (f *fakePipeline) Watermarks(part int, timeout time.Duration) (int64, int64, error) {
	lo, hi, err := f.c.Watermarks(f.parts[part].Topic, f.parts[part].Partition, timeout)
	return lo, hi, fakeErr(err)
}

func (f *fakePipeline) CachedWatermarks(part int) (int64, int64, error) {
	lo, hi, err := f.c.CachedWatermarks(f.parts[part].Topic, f.parts[part].Partition)
	return lo, hi, fakeErr(err)
}

func (f *fakePipeline) Fatal() error                                 { return fakeErr(f.p.Fatal()) }
func (f *fakePipeline) AuthFailure() error                           { return fakeErr(f.p.AuthFailure()) }
func (f *fakePipeline) Outstanding() int                             { return f.p.Outstanding() }
func (f *fakePipeline) Flush(ctx context.Context) int                { return f.p.Flush(ctx) }
func (f *fakePipeline) Interrupt()                                   {}
func (f *fakePipeline) OwnThread() bool                              { return true }
func (f *fakePipeline) SetProvenance(string, []byte, string, string) {}

func (f *fakePipeline) Purge(inFlight bool) error {
	f.mu.Lock()
	f.purged = true
	f.pending = nil
	f.mu.Unlock()
	return f.p.Purge(inFlight)
}

func (f *fakePipeline) Close() {
	f.c.Close()
	f.p.Close()
}
