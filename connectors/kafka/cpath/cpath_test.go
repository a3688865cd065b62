package cpath_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/cpath"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

func TestVersionIsTheBundledLibrdkafka(t *testing.T) {
	if v := cpath.Version(); !strings.HasPrefix(v, "2.") {
		t.Fatalf("librdkafka version %q, want the bundled 2.x", v)
	}
}

// pipeline returns a pipeline from cluster A's parts to cluster B, closed when the test ends.
func pipeline(t *testing.T, parts []cpath.Part, pace int64, producer map[string]string, onStats ...func(bool, string)) *cpath.Pipeline {
	t.Helper()
	var stats func(bool, string)
	if len(onStats) > 0 {
		stats = onStats[0]
	}
	return pipelineWith(t, parts, pace, producer, func(c *cpath.Config) { c.OnStats = stats })
}

// pipelineWith is pipeline with the test's changes to the configuration applied last.
func pipelineWith(t *testing.T, parts []cpath.Part, pace int64, producer map[string]string, tweak func(*cpath.Config)) *cpath.Pipeline {
	t.Helper()
	prod := map[string]string{
		"bootstrap.servers": kafkatest.Bootstrap(t, "B"), "enable.idempotence": "true", "acks": "all",
		"linger.ms": "5", "message.timeout.ms": "10000",
	}
	for k, v := range producer {
		prod[k] = v
	}
	cfg := cpath.Config{
		Consumer: map[string]string{
			"bootstrap.servers": kafkatest.Bootstrap(t, "A"), "group.id": "cpath-test", "enable.auto.commit": "false",
			"enable.auto.offset.store": "false", "auto.offset.reset": "error", "isolation.level": "read_uncommitted",
			"enable.partition.eof": "false",
		},
		Producer:  prod,
		Parts:     parts,
		PaceBytes: pace,
		Log:       slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	tweak(&cfg)
	p, err := cpath.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// testWriter writes a test's log lines to its output, shown when it fails.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}

// ledger is what a test learns from a pipeline's batches, checked as the source task uses them.
type ledger struct {
	forwarded map[int]int64   // part -> records
	next      map[int]int64   // part -> next offset after the last forwarded
	acked     map[int][]int64 // part -> acknowledged source offsets, in report order
	target    map[int][]int64 // part -> their target offsets
	failures  []cpath.Failure
	cerrs     []cpath.ConsumerError
	maxFlight int64
	lastOpen  int // partitions with a batch in the producer after the last step
	steps     int // batches added
	consumed  int // records and errors the consumer returned
	paced     int // steps that waited for deliveries instead of consuming
}

func newLedger() *ledger {
	return &ledger{forwarded: map[int]int64{}, next: map[int]int64{}, acked: map[int][]int64{}, target: map[int][]int64{}}
}

func (l *ledger) add(t *testing.T, b *cpath.Batch) {
	t.Helper()
	for _, f := range b.Forwarded {
		if f.Records > 0 && (f.Last < f.First || f.Next != f.Last+1) {
			t.Fatalf("forwarded %+v: offsets incoherent", f)
		}
		l.forwarded[f.Part] += int64(f.Records)
		l.next[f.Part] = f.Next
	}
	for _, a := range b.Acked {
		if a.Records < 1 || (a.Kind != cpath.Dropped && a.Last < a.First) { // a dropped run's offsets say nothing
			t.Fatalf("ack run %+v: incoherent", a)
		}
		switch a.Kind {
		case cpath.Mapped:
			if a.Last-a.First+1 != a.Records {
				t.Fatalf("mapped run %+v: not contiguous", a)
			}
			for i := int64(0); i < a.Records; i++ {
				l.acked[a.Part] = append(l.acked[a.Part], a.First+i)
				l.target[a.Part] = append(l.target[a.Part], a.Target+i)
			}
		case cpath.Unmapped:
			t.Logf("unmapped run %+v", a)
		}
	}
	l.failures = append(l.failures, b.Failures...)
	l.cerrs = append(l.cerrs, b.ConsumerErrors...)
	l.maxFlight = max(l.maxFlight, b.InFlightBytes)
	l.lastOpen = b.OpenBatches
	l.steps++
	l.consumed += b.Consumed
	l.paced += btoi(b.Paced)
}

// ackedAll tells whether each of the pipeline's first `partitions` parts has at least perPartition acknowledged records.
func (l *ledger) ackedAll(partitions, perPartition int) bool {
	for p := range partitions {
		if len(l.acked[p]) < perPartition {
			return false
		}
	}
	return true
}

// assignFromBeginning assigns the pipeline's first `partitions` parts from their beginnings.
func assignFromBeginning(t *testing.T, pl *cpath.Pipeline, partitions int) {
	t.Helper()
	starts := make([]int64, partitions)
	for i := range starts {
		starts[i] = cpath.OffsetBeginning
	}
	if err := pl.Assign(starts); err != nil {
		t.Fatal(err)
	}
}

// sourceParts creates a source topic on A with perPartition records in each of its partitions (record i's
// value of size(i) bytes) and an empty remote topic on B, and returns the pipeline's parts.
func sourceParts(t *testing.T, partitions, perPartition int, size func(i int) int) []cpath.Part {
	t.Helper()
	src, dst := kafkatest.TopicName(t, "src"), kafkatest.TopicName(t, "dst")
	kafkatest.CreateTopic(t, "A", src, partitions, nil)
	kafkatest.CreateTopic(t, "B", dst, partitions, nil)
	var recs []kafkatest.Record
	var parts []cpath.Part
	for p := range int32(partitions) {
		for i := range perPartition {
			recs = append(recs, kafkatest.Record{Topic: src, Partition: p, Value: bytes.Repeat([]byte{'v'}, size(i))})
		}
		parts = append(parts, cpath.Part{Topic: src, Partition: p, Remote: dst})
	}
	kafkatest.Produce(t, "A", recs)
	return parts
}

// run steps p until done says so or the deadline passes, then flushes and takes the last reports.
func run(t *testing.T, p *cpath.Pipeline, l *ledger, done func() bool) {
	t.Helper()
	runWith(t, p, l, done, func() *cpath.Batch { return p.Step(10*time.Millisecond, cpath.MaxBatch) })
}

// runWith is run with the caller's way of stepping.
func runWith(t *testing.T, p *cpath.Pipeline, l *ledger, done func() bool, step func() *cpath.Batch) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			pos, err := p.Positions()
			t.Fatalf("timed out: forwarded %v, acked %d partitions, failures %v, consumer errors %v; %d steps, %d consumed, %d paced, consumer positions %v (%v)",
				l.forwarded, len(l.acked), l.failures, l.cerrs, l.steps, l.consumed, l.paced, pos, err)
		}
		l.add(t, step())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if left := p.Flush(ctx); left != 0 {
		t.Fatalf("%d records left after flush", left)
	}
	l.add(t, p.Take())
}

// TestRecordsKeepOrderKeysHeadersTimestampsAndOffsetsAreExact, stepped one step per call (Step) and many
// (Steps, which gathers the steps' batches into one).
func TestRecordsKeepOrderKeysHeadersTimestampsAndOffsetsAreExact(t *testing.T) {
	t.Parallel()
	t.Run("Step", func(t *testing.T) {
		t.Parallel()
		recordsKeepOrder(t, func(p *cpath.Pipeline) *cpath.Batch { return p.Step(10*time.Millisecond, cpath.MaxBatch) })
	})
	t.Run("Steps", func(t *testing.T) {
		t.Parallel()
		recordsKeepOrder(t, func(p *cpath.Pipeline) *cpath.Batch {
			return p.Steps(10*time.Millisecond, cpath.MaxBatch, -1, 200*time.Millisecond)
		})
	})
}

func recordsKeepOrder(t *testing.T, step func(*cpath.Pipeline) *cpath.Batch) {
	const partitions, perPartition = 3, 3000
	src, dst := kafkatest.TopicName(t, "src"), kafkatest.TopicName(t, "dst")
	kafkatest.CreateTopic(t, "A", src, partitions, nil)
	kafkatest.CreateTopic(t, "B", dst, partitions, nil)
	base := time.UnixMilli(1_700_000_000_000)
	var recs []kafkatest.Record
	for p := range int32(partitions) {
		for i := range perPartition {
			r := kafkatest.Record{Topic: src, Partition: p, Value: fmt.Appendf(nil, "v-%d-%d", p, i),
				Timestamp: base.Add(time.Duration(i) * time.Millisecond)}
			if i%3 != 0 {
				r.Key = fmt.Appendf(nil, "k-%d", i)
			}
			if i%5 == 0 {
				r.Headers = []kafka.Header{{Key: "h1", Value: []byte("x")}, {Key: "h1", Value: nil}, {Key: "h2", Value: []byte{}}}
			}
			if i%7 == 0 {
				r.Value = nil // a tombstone
			}
			recs = append(recs, r)
		}
	}
	kafkatest.Produce(t, "A", recs)

	var parts []cpath.Part
	for p := range int32(partitions) {
		parts = append(parts, cpath.Part{Topic: src, Partition: p, Remote: dst})
	}
	// A small pace bound, so that pacing holds the loop back many times.
	var statsFrom [2]int
	pl := pipeline(t, parts, 16<<10, map[string]string{"statistics.interval.ms": "100"}, func(producer bool, doc string) {
		// Whole and well-formed: the document is read in place, librdkafka's buffer up to its NUL.
		if strings.Contains(doc, `"type": "producer"`) == producer && json.Valid([]byte(doc)) {
			statsFrom[btoi(producer)]++
		}
	})
	assignFromBeginning(t, pl, partitions)
	l := newLedger()
	runWith(t, pl, l, func() bool { return l.ackedAll(partitions, perPartition) }, func() *cpath.Batch { return step(pl) })
	if len(l.failures) > 0 || len(l.cerrs) > 0 {
		t.Fatalf("failures %v, consumer errors %v", l.failures, l.cerrs)
	}
	if statsFrom[1] == 0 {
		t.Errorf("no statistics of the producer reached OnStats (%v)", statsFrom)
	}
	if l.maxFlight > 16<<10*partitions+4096*16 {
		t.Errorf("in-flight bytes reached %d, above the pace bound", l.maxFlight)
	}
	for p := range int32(partitions) {
		got := kafkatest.ReadAll(t, "B", dst, p)
		if len(got) != perPartition {
			t.Fatalf("partition %d: %d records on B, want %d", p, len(got), perPartition)
		}
		for i, g := range got {
			w := recs[int(p)*perPartition+i]
			if !bytes.Equal(g.Key, w.Key) || !bytes.Equal(g.Value, w.Value) || (g.Value == nil) != (w.Value == nil) ||
				(g.Key == nil) != (w.Key == nil) || !g.Timestamp.Equal(w.Timestamp) {
				t.Fatalf("partition %d record %d: got %q/%q at %v, want %q/%q at %v", p, i, g.Key, g.Value, g.Timestamp, w.Key, w.Value, w.Timestamp)
			}
			if fmt.Sprint(g.Headers) != fmt.Sprint(w.Headers) {
				t.Fatalf("partition %d record %d: headers %v, want %v", p, i, g.Headers, w.Headers)
			}
			// The acknowledged pairs are exact: source offset i at the target offset the record has on B.
			if l.acked[int(p)][i] != int64(i) || l.target[int(p)][i] != g.Offset {
				t.Fatalf("partition %d report %d: source %d at target %d; B has it at %d", p, i, l.acked[int(p)][i], l.target[int(p)][i], g.Offset)
			}
		}
		if l.forwarded[int(p)] != perPartition || l.next[int(p)] != perPartition {
			t.Fatalf("partition %d: forwarded %d, next %d", p, l.forwarded[int(p)], l.next[int(p)])
		}
	}
}

func TestAFailedDeliveryIsReportedAndStopsThePartition(t *testing.T) {
	t.Parallel()
	src := kafkatest.TopicName(t, "src")
	small := kafkatest.TopicName(t, "small")
	kafkatest.CreateTopic(t, "A", src, 2, nil)
	kafkatest.CreateTopic(t, "B", small, 2, map[string]string{"max.message.bytes": "2000"})
	var recs []kafkatest.Record
	for i := range 20 {
		size := 100
		if i == 5 {
			size = 5000 // larger than the remote topic takes
		}
		recs = append(recs, kafkatest.Record{Topic: src, Partition: 0, Value: bytes.Repeat([]byte{'x'}, size)})
	}
	kafkatest.Produce(t, "A", recs)
	// The broker refuses the whole batch the large record travels in, so the failure is at offset 5 or before.
	pl := pipeline(t, []cpath.Part{{Topic: src, Partition: 0, Remote: small}}, 0, nil)
	if err := pl.Assign([]int64{0}); err != nil {
		t.Fatal(err)
	}
	l := newLedger()
	run(t, pl, l, func() bool { return len(l.failures) > 0 })
	f := l.failures[0]
	if f.Part != 0 || f.Offset > 5 || f.Err == nil || !kafka.IsRecordTooLarge(f.Err) {
		t.Fatalf("failure %+v (%v), want offset 5 or before too large", f, f.Err)
	}
	for _, off := range l.acked[0] {
		if off >= f.Offset {
			t.Fatalf("offset %d counted as acknowledged after the failed offset %d", off, f.Offset)
		}
	}
}

func TestAMissingRemotePartitionIsReported(t *testing.T) {
	t.Parallel()
	src, dst := kafkatest.TopicName(t, "src"), kafkatest.TopicName(t, "dst")
	kafkatest.CreateTopic(t, "A", src, 2, nil)
	kafkatest.CreateTopic(t, "B", dst, 1, nil) // too small: partition 1 has nowhere to go
	kafkatest.Produce(t, "A", []kafkatest.Record{{Topic: src, Partition: 1, Value: []byte("v")}})
	pl := pipeline(t, []cpath.Part{{Topic: src, Partition: 1, Remote: dst}}, 0, nil)
	if err := pl.Assign([]int64{0}); err != nil {
		t.Fatal(err)
	}
	l := newLedger()
	run(t, pl, l, func() bool { return len(l.failures) > 0 })
	if f := l.failures[0]; f.Err == nil || !kafka.IsUnknownTopic(f.Err) {
		t.Fatalf("failure %+v (%v), want an unknown partition", f, f.Err)
	}
	if len(l.acked[0]) != 0 {
		t.Fatalf("acknowledged %v", l.acked[0])
	}
}

func TestAStartPastTheLogIsAConsumerErrorAndSeekRecovers(t *testing.T) {
	t.Parallel()
	src, dst := kafkatest.TopicName(t, "src"), kafkatest.TopicName(t, "dst")
	kafkatest.CreateTopic(t, "A", src, 1, nil)
	kafkatest.CreateTopic(t, "B", dst, 1, nil)
	var recs []kafkatest.Record
	for i := range 10 {
		recs = append(recs, kafkatest.Record{Topic: src, Partition: 0, Value: fmt.Appendf(nil, "%d", i)})
	}
	kafkatest.Produce(t, "A", recs)
	pl := pipeline(t, []cpath.Part{{Topic: src, Partition: 0, Remote: dst}}, 0, nil)
	if err := pl.Assign([]int64{50}); err != nil { // past the end: out of range
		t.Fatal(err)
	}
	l := newLedger()
	deadline := time.Now().Add(30 * time.Second)
	for len(l.cerrs) == 0 && time.Now().Before(deadline) {
		l.add(t, pl.Step(10*time.Millisecond, cpath.MaxBatch))
	}
	if len(l.cerrs) == 0 || !kafka.IsOffsetOutOfRange(l.cerrs[0].Err) {
		t.Fatalf("consumer errors %v, want an offset out of range", l.cerrs)
	}
	low, high, err := pl.Watermarks(0, 10*time.Second)
	if err != nil || low != 0 || high != 10 {
		t.Fatalf("watermarks %d, %d, %v", low, high, err)
	}
	if err := pl.Seek(0, 4); err != nil {
		t.Fatal(err)
	}
	run(t, pl, l, func() bool { return len(l.acked[0]) == 6 })
	if l.acked[0][0] != 4 || l.next[0] != 10 {
		t.Fatalf("acked %v, next %d", l.acked[0], l.next[0])
	}
	pos, err := pl.Positions()
	if err != nil || pos[0] != 10 {
		t.Fatalf("positions %v, %v", pos, err)
	}
	if low, high, err := pl.CachedWatermarks(0); err != nil || high != 10 {
		t.Fatalf("cached watermarks %d, %d, %v", low, high, err)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestAFullProducerQueueKeepsTheRestOfTheBatchInOrder(t *testing.T) {
	t.Parallel()
	const n = 4000
	src, dst := kafkatest.TopicName(t, "src"), kafkatest.TopicName(t, "dst")
	kafkatest.CreateTopic(t, "A", src, 1, nil)
	kafkatest.CreateTopic(t, "B", dst, 1, nil)
	var recs []kafkatest.Record
	for i := range n {
		recs = append(recs, kafkatest.Record{Topic: src, Partition: 0, Value: fmt.Appendf(make([]byte, 0, 1000), "%d-%0990d", i, 0)})
	}
	kafkatest.Produce(t, "A", recs)
	// A 64 KiB producer queue holds about 60 of these records: every batch of 1,024 waits for it.
	pl := pipeline(t, []cpath.Part{{Topic: src, Partition: 0, Remote: dst}}, 0,
		map[string]string{"queue.buffering.max.kbytes": "64", "queue.buffering.max.messages": "0"})
	if err := pl.Assign([]int64{cpath.OffsetBeginning}); err != nil {
		t.Fatal(err)
	}
	l := newLedger()
	var pending int
	var waited time.Duration
	deadline := time.Now().Add(60 * time.Second)
	for len(l.acked[0]) < n && time.Now().Before(deadline) {
		b := pl.Step(10*time.Millisecond, cpath.MaxBatch)
		pending, waited = max(pending, b.Pending), waited+b.TargetWait
		l.add(t, b)
	}
	if pending == 0 || waited == 0 {
		t.Errorf("the queue never held records back (pending %d, waited %v)", pending, waited)
	}
	got := kafkatest.ReadAll(t, "B", dst, 0)
	if len(got) != n || len(l.acked[0]) != n {
		t.Fatalf("%d records on B, %d acknowledged, want %d", len(got), len(l.acked[0]), n)
	}
	for i, g := range got {
		if !bytes.Equal(g.Value, recs[i].Value) || l.acked[0][i] != int64(i) || l.target[0][i] != g.Offset {
			t.Fatalf("record %d: out of order or its offsets inexact (source %d at target %d; B has it at %d)", i, l.acked[0][i], l.target[0][i], g.Offset)
		}
	}
}

// TestAStepPastItsPermissionProducesNothing: records a step has in hand once the caller's permission to write
// has run out stay with the pipeline — none reaches the producer — and go out, in order, with the next steps
// that may write. This is what keeps a worker stopped (SIGSTOP) inside a step's wait for records from writing
// them on resume, after its partitions moved to another worker.
func TestAStepPastItsPermissionProducesNothing(t *testing.T) {
	t.Parallel()
	const n = 300
	parts := sourceParts(t, 1, n, func(int) int { return 100 })
	pl := pipeline(t, parts, 0, nil)
	if err := pl.Assign([]int64{cpath.OffsetBeginning}); err != nil {
		t.Fatal(err)
	}
	l := newLedger()
	deadline := time.Now().Add(60 * time.Second)
	for l.consumed < n {
		if time.Now().After(deadline) {
			t.Fatalf("consumed %d of %d records in %d steps", l.consumed, n, l.steps)
		}
		b := pl.StepWithin(10*time.Millisecond, cpath.MaxBatch, 0)
		if len(b.Forwarded) > 0 || b.InFlightBytes > 0 {
			t.Fatalf("a step without permission forwarded %+v (%d bytes with the producer)", b.Forwarded, b.InFlightBytes)
		}
		l.add(t, b)
	}
	run(t, pl, l, func() bool { return len(l.acked[0]) == n })
	for i, off := range l.acked[0] {
		if off != int64(i) {
			t.Fatalf("report %d: source offset %d", i, off)
		}
	}
	if got := kafkatest.ReadAll(t, "B", parts[0].Remote, 0); len(got) != n {
		t.Fatalf("%d records on B, want %d", len(got), n)
	}
}

// TestEachPartitionHasOneBatchAtATime: without any pacing bound, what the pipeline has produced and not yet
// seen reported stays within one batch.size per partition (the batch gate, doc.go): records never queue
// behind a partition's request in flight, where librdkafka's broker thread would spin.
func TestEachPartitionHasOneBatchAtATime(t *testing.T) {
	t.Parallel()
	const partitions, perPartition, batchSize = 2, 2000, 16 << 10
	parts := sourceParts(t, partitions, perPartition, func(i int) int { return 100 + i%50 })
	pl := pipeline(t, parts, 0, map[string]string{"batch.size": fmt.Sprint(batchSize), "linger.ms": "50"})
	if err := pl.Assign([]int64{cpath.OffsetBeginning, cpath.OffsetBeginning}); err != nil {
		t.Fatal(err)
	}
	l := newLedger()
	run(t, pl, l, func() bool { return len(l.acked[0]) == perPartition && len(l.acked[1]) == perPartition })
	if len(l.failures) > 0 || len(l.cerrs) > 0 {
		t.Fatalf("failures %v, consumer errors %v", l.failures, l.cerrs)
	}
	if l.maxFlight > batchSize*partitions {
		t.Errorf("in-flight bytes reached %d, above one batch.size (%d) per partition", l.maxFlight, batchSize)
	}
	for p := range partitions {
		for i, off := range l.acked[p] {
			if off != int64(i) {
				t.Fatalf("partition %d report %d: source offset %d", p, i, off)
			}
		}
	}
}

// TestOpenBatchesStayWithinTheBound: with OpenLatency set, no more partitions than the bound have a batch in
// the producer at once — at a latency too small for any measured rate the bound is its floor, 64 — while
// every record of every partition still arrives in order; without it, all partitions with records open
// batches together (the burst that made 1,250-partition pipelines restart at scale).
func TestOpenBatchesStayWithinTheBound(t *testing.T) {
	t.Parallel()
	const partitions, perPartition, floor = 200, 5, 64
	for _, tc := range []struct {
		name    string
		latency time.Duration
	}{{"bounded", time.Nanosecond}, {"unbounded", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			parts := sourceParts(t, partitions, perPartition, func(int) int { return 100 })
			// A long linger keeps each batch open long enough for the others to pile up behind it.
			pl := pipelineWith(t, parts, 0, map[string]string{"linger.ms": "200"}, func(c *cpath.Config) { c.OpenLatency = tc.latency })
			assignFromBeginning(t, pl, partitions)
			l := newLedger()
			maxOpen := 0
			run(t, pl, l, func() bool {
				maxOpen = max(maxOpen, l.lastOpen)
				return l.ackedAll(partitions, perPartition)
			})
			if len(l.failures) > 0 || len(l.cerrs) > 0 {
				t.Fatalf("failures %v, consumer errors %v", l.failures, l.cerrs)
			}
			for p := range partitions {
				for i, off := range l.acked[p] {
					if off != int64(i) {
						t.Fatalf("partition %d report %d: source offset %d", p, i, off)
					}
				}
			}
			switch {
			case tc.latency > 0 && maxOpen > floor:
				t.Errorf("%d partitions had a batch in the producer at once, above the bound %d", maxOpen, floor)
			case tc.latency == 0 && maxOpen <= floor:
				t.Errorf("without a bound at most %d partitions had a batch at once: the test no longer shows the bound", maxOpen)
			}
			t.Logf("at most %d partitions had a batch in the producer at once", maxOpen)
		})
	}
}

// TestAPurgeStopsProducingEvenDuringAStep: Purge may come from another goroutine while the pipeline is being
// stepped (the source task's overdue watch), and nothing is produced after it: a record produced after a
// purge would be written ahead of the purged records before it. What was acknowledged is a prefix of each
// partition, as everywhere.
func TestAPurgeStopsProducingEvenDuringAStep(t *testing.T) {
	t.Parallel()
	t.Run("Step", func(t *testing.T) {
		t.Parallel()
		purgeDuringSteps(t, func(p *cpath.Pipeline) *cpath.Batch { return p.Step(10*time.Millisecond, cpath.MaxBatch) })
	})
	t.Run("Steps", func(t *testing.T) { // the steps run in the pipeline's own thread
		t.Parallel()
		purgeDuringSteps(t, func(p *cpath.Pipeline) *cpath.Batch {
			return p.Steps(10*time.Millisecond, cpath.MaxBatch, -1, 20*time.Millisecond)
		})
	})
}

func purgeDuringSteps(t *testing.T, step func(*cpath.Pipeline) *cpath.Batch) {
	const partitions, perPartition = 2, 20000
	parts := sourceParts(t, partitions, perPartition, func(int) int { return 200 })
	pl := pipeline(t, parts, 0, nil)
	if err := pl.Assign([]int64{cpath.OffsetBeginning, cpath.OffsetBeginning}); err != nil {
		t.Fatal(err)
	}
	l := newLedger()
	purged := make(chan struct{})
	purging := false
	steps, stepsAfter := 0, 0
	deadline := time.Now().Add(60 * time.Second)
	for {
		if !purging && len(l.acked[0])+len(l.acked[1]) >= 1000 {
			purging = true // records flow: purge while the next steps produce
			go func() {
				defer close(purged)
				if err := pl.Purge(true); err != nil {
					t.Errorf("purge: %v", err)
				}
			}()
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out: forwarded %v, acknowledged %d and %d", l.forwarded, len(l.acked[0]), len(l.acked[1]))
		}
		after := false // the step begins after the purge returned
		select {
		case <-purged:
			after = true
		default:
		}
		b := step(pl)
		if after {
			stepsAfter++
			for _, f := range b.Forwarded {
				if f.Records > 0 {
					t.Fatalf("%d records of part %d produced after the purge", f.Records, f.Part)
				}
			}
		}
		l.add(t, b)
		steps++
		if stepsAfter >= 20 {
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pl.Flush(ctx)
	l.add(t, pl.Take())
	for p := range partitions {
		for i, off := range l.acked[p] {
			if off != int64(i) {
				t.Fatalf("partition %d report %d: source offset %d, not a prefix", p, i, off)
			}
		}
	}
	if l.forwarded[0]+l.forwarded[1] >= 2*perPartition {
		t.Fatalf("forwarded %v: everything, so the purge came too late to show anything", l.forwarded)
	}
	t.Logf("%d steps; forwarded %v, acknowledged %d and %d", steps, l.forwarded, len(l.acked[0]), len(l.acked[1]))
}

// debugLines are the messages of a text log's DEBUG lines.
func debugLines(log string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, " level=DEBUG ") {
			out = append(out, line)
		}
	}
	return out
}

// An idempotent producer can send once it has its producer id; ProducerReady waits for that, and the debug
// lines librdkafka is asked for to learn it stay out of the log when the configuration asked for none.
func TestProducerReadyWaitsForTheProducerID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		producer  map[string]string
		wantDebug bool
		wantQuick bool
	}{
		{name: "idempotent", producer: map[string]string{"enable.idempotence": "true"}},
		{name: "idempotent, debug asked for", producer: map[string]string{"enable.idempotence": "true", "debug": "broker"}, wantDebug: true},
		{name: "not idempotent", producer: map[string]string{"enable.idempotence": "false"}, wantQuick: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src, dst := kafkatest.TopicName(t, "src"), kafkatest.TopicName(t, "dst")
			kafkatest.CreateTopic(t, "A", src, 1, nil)
			kafkatest.CreateTopic(t, "B", dst, 1, nil)
			var logs bytes.Buffer // written by Take, on this goroutine
			prod := map[string]string{"bootstrap.servers": kafkatest.Bootstrap(t, "B"), "acks": "all"}
			for k, v := range tc.producer {
				prod[k] = v
			}
			pl, err := cpath.New(cpath.Config{
				Consumer: map[string]string{"bootstrap.servers": kafkatest.Bootstrap(t, "A"), "group.id": "cpath-test",
					"enable.auto.commit": "false", "auto.offset.reset": "error"},
				Producer: prod,
				Parts:    []cpath.Part{{Topic: src, Partition: 0, Remote: dst}},
				Log:      slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pl.Close)
			start := time.Now()
			if !pl.ProducerReady(t.Context(), 30*time.Second) {
				t.Fatalf("producer not ready after %s", time.Since(start))
			}
			took := time.Since(start)
			// A wait for a producer id takes librdkafka's 500 ms steps; one that needs none takes no step.
			if tc.wantQuick && took > 250*time.Millisecond {
				t.Errorf("a producer that needs no producer id waited %s", took)
			}
			pl.Take() // hands the log lines over
			got := debugLines(logs.String())
			if (len(got) > 0) != tc.wantDebug {
				t.Errorf("debug lines %q, want some: %v", got, tc.wantDebug)
			}
			if tc.wantDebug && !slices.ContainsFunc(got, func(l string) bool { return strings.Contains(l, "-> Assigned") }) {
				t.Errorf("ready before librdkafka said the producer has its id: %q", got)
			}
		})
	}
}

// TestStepsGathersStepsAndReturnsWhenThereIsNothingToDo: one Steps call goes on stepping in C — a batch both
// paced and forwarded took more than one step — and still returns at once when it may not write and soon
// when the source has nothing, long before its budget.
func TestStepsGathersStepsAndReturnsWhenThereIsNothingToDo(t *testing.T) {
	t.Parallel()
	const n = 2000
	parts := sourceParts(t, 1, n, func(int) int { return 100 })
	pl := pipeline(t, parts, 1<<10, nil) // a small pace bound: many steps wait for deliveries
	assignFromBeginning(t, pl, 1)
	const budget = 30 * time.Second

	start := time.Now()
	b := pl.Steps(10*time.Millisecond, cpath.MaxBatch, 0, budget)
	if len(b.Forwarded) > 0 || b.InFlightBytes > 0 {
		t.Fatalf("steps without permission forwarded %+v (%d bytes with the producer)", b.Forwarded, b.InFlightBytes)
	}
	if took := time.Since(start); took > budget/6 {
		t.Fatalf("steps without permission took %v", took)
	}

	l := newLedger()
	l.add(t, b)
	gathered := false
	runWith(t, pl, l, func() bool { return len(l.acked[0]) == n }, func() *cpath.Batch {
		b := pl.Steps(10*time.Millisecond, cpath.MaxBatch, -1, 200*time.Millisecond)
		gathered = gathered || (b.Paced && len(b.Forwarded) > 0 && b.Forwarded[0].Records > 0)
		return b
	})
	if !gathered {
		t.Errorf("no Steps call both waited for deliveries and forwarded records (%d calls)", l.steps)
	}
	for i, off := range l.acked[0] {
		if off != int64(i) {
			t.Fatalf("report %d: source offset %d", i, off)
		}
	}

	start = time.Now()
	b = pl.Steps(10*time.Millisecond, cpath.MaxBatch, -1, budget)
	if took := time.Since(start); took > budget/6 || b.Consumed != 0 {
		t.Fatalf("steps on an idle source took %v and consumed %d", took, b.Consumed)
	}
	if b.SourceWait <= 0 {
		t.Errorf("steps on an idle source waited %v for it", b.SourceWait)
	}
}

// stepsState returns the state of the goroutine in Steps, from a dump of all goroutines ("" if none is).
func stepsState(dump string) string {
	header := regexp.MustCompile(`^goroutine \d+ \[([^\]]+)\]:`)
	for _, g := range strings.Split(dump, "\n\n") {
		if m := header.FindStringSubmatch(g); m != nil && strings.Contains(g, "cpath.(*Pipeline).Steps(") {
			return m[1]
		}
	}
	return ""
}

func TestStepsWaitsInGoWhileItsThreadSteps(t *testing.T) {
	t.Parallel()
	parts := sourceParts(t, 1, 10, func(int) int { return 100 })
	pl := pipeline(t, parts, 0, nil)
	if !pl.OwnThread() {
		t.Fatal("the pipeline has no thread of its own")
	}
	assignFromBeginning(t, pl, 1)
	l := newLedger()
	run(t, pl, l, func() bool { return len(l.acked[0]) == 10 })

	// The source is idle now: one step waits up to 3 s for records, in the pipeline's thread. The goroutine
	// meanwhile waits in Go's poller ("IO wait"), not in a call into C ("syscall"), where Go's sysmon would
	// take its P every 10 ms.
	done := make(chan *cpath.Batch)
	go func() { done <- pl.Steps(3*time.Second, cpath.MaxBatch, -1, 10*time.Second) }()
	buf := make([]byte, 1<<20)
	state := ""
	// Until the goroutine is seen waiting in the poller, or for 2 s of the step's 3 s wait: it passes through
	// other states on its way in (runnable, a short call into C to hand the run over).
	for deadline := time.Now().Add(2 * time.Second); !strings.HasPrefix(state, "IO wait") && time.Now().Before(deadline); {
		state = stepsState(string(buf[:runtime.Stack(buf, true)]))
		time.Sleep(time.Millisecond)
	}
	b := <-done
	if !strings.HasPrefix(state, "IO wait") {
		t.Errorf("the goroutine in Steps was in state %q, not waiting in Go's poller", state)
	}
	if b.Consumed != 0 || b.SourceWait < time.Second {
		t.Errorf("steps on an idle source consumed %d and waited %v for it", b.Consumed, b.SourceWait)
	}
}
