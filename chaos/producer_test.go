package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// Offsets of a sequence in seqProducer.offsets that are not offsets.
const (
	seqPending = -1 // produced, not acknowledged yet
	seqFailed  = -2 // the delivery failed: it may or may not be on A, and nothing requires it on B
)

// seqProducer writes records to every partition of one source topic on A whose values carry the partition's
// sequence number (from 0) and the topic's generation: "gen=1 seq=000042 ...". What A acknowledged is the
// truth the audit checks B against.
type seqProducer struct {
	t          *testing.T
	topic      string
	gen        int
	partitions int
	pad        string
	p          *kafka.Producer

	mu       sync.Mutex
	offsets  [][]int64 // partition -> sequence -> offset on A (or seqPending, seqFailed)
	pending  int
	failed   int
	firstErr error
	rr       int // next partition, round robin
	deleted  []offsetRange
	lostByA  [][]int        // partition -> sequences A acknowledged, then no longer had (see goneFromA)
	txn      *txnWriting    // transactional mode (newTxnSeqProducer); nil for the idempotent producer
	headers  []kafka.Header // written on every record (none by default)

	stopRun chan struct{}
	runDone chan struct{}
}

type seqOpaque struct {
	partition int32
	seq       int
	aborted   bool // written in a transaction that is then aborted
}

// txnWriting is the state of a transactional seqProducer (guarded by its mu).
type txnWriting struct {
	abortEvery int       // every abortEvery-th transaction is aborted
	aborted    [][]int64 // partition -> aborted sequence -> offset on A (seqPending, seqFailed)
	commits    int
	aborts     int
}

// abortedGen is the generation in the values of the records a transactional seqProducer of generation gen
// writes in the transactions it aborts: their sequences are their own ("gen=1001 seq=000000" is the first
// aborted record of a partition of generation 1), so that the committed records keep consecutive sequences
// and no aborted record can pass for a committed one.
func abortedGen(gen int) int { return 1000 + gen }

// newSeqProducer creates the producer: idempotent and acks=all, so a record is acknowledged once, in order,
// and only when it is durable on A. message.timeout.ms is longer than any outage the cases inject: when A is
// down the producer keeps retrying until A acknowledges, instead of failing records.
func newSeqProducer(t *testing.T, topic string, partitions, gen, valueSize int) *seqProducer {
	t.Helper()
	return newSeqProducerWith(t, topic, partitions, gen, valueSize, nil)
}

// newTxnSeqProducer is newSeqProducer writing in transactions (transactional.id chaos-<topic>): Run opens one
// per 100 ms of records, and aborts every abortEvery-th of them after A has written its records, so that
// each partition's log interleaves committed records and aborted ones. The aborted records carry
// abortedGen(gen) and sequences of their own; only the committed ones are required on B. Burst is not
// available in this mode.
func newTxnSeqProducer(t *testing.T, topic string, partitions, gen, valueSize, abortEvery int) *seqProducer {
	t.Helper()
	tw := &txnWriting{abortEvery: abortEvery, aborted: make([][]int64, partitions)}
	sp := newSeqProducerWith(t, topic, partitions, gen, valueSize, map[string]string{"transactional.id": "chaos-" + topic,
		// librdkafka bounds a record's delivery by the transaction timeout (60 s by default); the cases that use
		// this producer do not stop A.
		"message.timeout.ms": "60000"})
	sp.txn = tw
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := sp.p.InitTransactions(ctx); err != nil {
		t.Fatalf("transactional producer of %s: %v", topic, err)
	}
	return sp
}

func newSeqProducerWith(t *testing.T, topic string, partitions, gen, valueSize int, extra map[string]string) *seqProducer {
	t.Helper()
	sp := &seqProducer{t: t, topic: topic, gen: gen, partitions: partitions, offsets: make([][]int64, partitions),
		lostByA: make([][]int, partitions)}
	if n := valueSize - len(sp.value(0)); n > 0 {
		sp.pad = strings.Repeat("x", n)
	}
	props := map[string]string{
		"bootstrap.servers": kafkatest.Bootstrap(t, "A"), "enable.idempotence": "true", "acks": "all",
		"linger.ms": "5", "message.timeout.ms": "600000", "queue.buffering.max.messages": "0",
		"queue.buffering.max.kbytes": "262144",
	}
	maps.Copy(props, extra)
	p, err := kafka.NewProducer(props, slog.New(slog.DiscardHandler), sp.delivered)
	if err != nil {
		t.Fatalf("create the sequenced producer: %v", err)
	}
	sp.p = p
	t.Cleanup(func() {
		sp.stopRunning()
		p.Close()
	})
	return sp
}

func (sp *seqProducer) value(seq int) string { return sp.valueOf(sp.gen, seq) }

func (sp *seqProducer) valueOf(gen, seq int) string {
	return fmt.Sprintf("gen=%d seq=%06d %s", gen, seq, sp.pad)
}

func (sp *seqProducer) delivered(d kafka.Delivery) {
	o := d.Opaque.(seqOpaque)
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.pending--
	offsets := sp.offsets
	if o.aborted {
		offsets = sp.txn.aborted
	}
	if d.Err != nil {
		offsets[o.partition][o.seq] = seqFailed
		sp.failed++
		if sp.firstErr == nil {
			sp.firstErr = d.Err
		}
		return
	}
	offsets[o.partition][o.seq] = d.Offset
}

// produceOne queues the next record of the next partition (round robin); false if librdkafka's queue is full.
// aborted (transactional mode) writes a record of abortedGen, for a transaction that will be aborted.
func (sp *seqProducer) produceOne(aborted bool) (bool, error) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	p := int32(sp.rr)
	offsets, gen := sp.offsets, sp.gen
	if aborted {
		offsets, gen = sp.txn.aborted, abortedGen(sp.gen)
	}
	seq := len(offsets[p])
	err := sp.p.Produce(sp.topic, p, nil, []byte(sp.valueOf(gen, seq)), sp.headers, time.Now(), seqOpaque{p, seq, aborted})
	if err == kafka.ErrQueueFull {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	offsets[p] = append(offsets[p], seqPending)
	sp.pending++
	sp.rr = (sp.rr + 1) % sp.partitions
	return true, nil
}

// Burst produces n records (round robin over the partitions) as fast as librdkafka takes them and waits until
// every record produced so far is acknowledged.
func (sp *seqProducer) Burst(n int) {
	sp.t.Helper()
	if sp.txn != nil {
		sp.t.Fatalf("Burst of the transactional producer of %s", sp.topic)
	}
	for i := 0; i < n; {
		ok, err := sp.produceOne(false)
		if err != nil {
			sp.t.Fatalf("produce to %s: %v", sp.topic, err)
		}
		if ok {
			i++
		} else {
			time.Sleep(time.Millisecond) // queue full: librdkafka frees room as A acknowledges
		}
	}
	sp.flush(3 * time.Minute)
}

// Run starts producing at a steady rate (records per second over all partitions) until Stop.
func (sp *seqProducer) Run(rate int) {
	sp.stopRun, sp.runDone = make(chan struct{}), make(chan struct{})
	if sp.txn != nil {
		go sp.runTransactions(rate)
		return
	}
	go func() {
		defer close(sp.runDone)
		start := time.Now()
		produced := 0
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-sp.stopRun:
				return
			case <-tick.C:
			}
			due := int(time.Since(start).Seconds() * float64(rate))
			for produced < due {
				ok, err := sp.produceOne(false)
				if err != nil {
					sp.mu.Lock()
					if sp.firstErr == nil {
						sp.firstErr = err
					}
					sp.mu.Unlock()
					return
				}
				if !ok {
					break // queue full (A down for long): catch up on the next tick
				}
				produced++
			}
		}
	}()
}

// runTransactions is Run of the transactional mode: every 100 ms, one transaction of the records due in that
// time, committed, or aborted if it is the abortEvery-th. A record of a transaction still open counts as
// acknowledged once A has it (the transaction ends within the slice); a transaction that fails to commit or
// abort fails the case, whose premise it is. Stop lets the open transaction end first.
func (sp *seqProducer) runTransactions(rate int) {
	defer close(sp.runDone)
	const slice = 100 * time.Millisecond
	per := max(sp.partitions, rate*int(slice/time.Millisecond)/1000)
	tick := time.NewTicker(slice)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-sp.stopRun:
			return
		case <-tick.C:
		}
		if err := sp.transaction(per, n%sp.txn.abortEvery == 0); err != nil {
			sp.t.Errorf("transactional producer of %s: %v", sp.topic, err)
			return
		}
	}
}

// transaction writes n records (round robin) in one transaction, and commits it or aborts it.
func (sp *seqProducer) transaction(n int, abort bool) error {
	if err := sp.p.BeginTransaction(); err != nil {
		return err
	}
	for i := 0; i < n; {
		ok, err := sp.produceOne(abort)
		if err != nil {
			return err
		}
		if ok {
			i++
		} else {
			time.Sleep(time.Millisecond) // queue full: librdkafka frees room as A acknowledges
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if !abort {
		if err := sp.p.CommitTransaction(ctx); err != nil {
			return err
		}
		sp.mu.Lock()
		sp.txn.commits++
		sp.mu.Unlock()
		return nil
	}
	// Flushed first, so that the records are in A's log when the abort marker follows them: an abort of
	// records still queued purges them unsent, and nothing would be left for the mirror to skip.
	if left := sp.p.Flush(ctx); left > 0 {
		return fmt.Errorf("%d records of a transaction to abort not acknowledged within a minute", left)
	}
	if err := sp.p.AbortTransaction(ctx); err != nil {
		return err
	}
	sp.mu.Lock()
	sp.txn.aborts++
	sp.mu.Unlock()
	return nil
}

// transactions returns how many transactions the transactional producer committed and aborted (0, 0 for the
// idempotent one).
func (sp *seqProducer) transactions() (commits, aborts int) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.txn == nil {
		return 0, 0
	}
	return sp.txn.commits, sp.txn.aborts
}

func (sp *seqProducer) stopRunning() {
	if sp.stopRun != nil {
		close(sp.stopRun)
		<-sp.runDone
		sp.stopRun = nil
	}
}

// Stop ends a Run, waits until every record is acknowledged (or failed), and returns the number of acknowledged
// records per partition.
func (sp *seqProducer) Stop() []int {
	sp.t.Helper()
	sp.stopRunning()
	sp.flush(3 * time.Minute)
	exp := sp.expected()
	out := make([]int, sp.partitions)
	for p := range out {
		out[p] = exp.ackedCount(p)
	}
	return out
}

func (sp *seqProducer) flush(within time.Duration) {
	sp.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if left := sp.p.Flush(ctx); left > 0 {
		sp.t.Fatalf("producer of %s: %d records not acknowledged within %s", sp.topic, left, within)
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.firstErr != nil {
		sp.t.Logf("producer of %s: %d records failed (not counted as acknowledged), first error: %v", sp.topic, sp.failed, sp.firstErr)
	}
}

// Mark returns, per partition, the next sequence to be produced: every record with a sequence at least this
// high was produced after the call.
func (sp *seqProducer) Mark() []int {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	out := make([]int, sp.partitions)
	for p := range out {
		out[p] = len(sp.offsets[p])
	}
	return out
}

// offsetRange is [from, to) of a partition on A.
type offsetRange struct {
	partition int
	from, to  int64
}

// deletedOnA records that the records of partition p at offsets [from, to) were deleted on A before they
// could be replicated: they are no longer required on B.
func (sp *seqProducer) deletedOnA(p int, from, to int64) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.deleted = append(sp.deleted, offsetRange{p, from, to})
}

// goneFromA records that A no longer holds these acknowledged sequences of partition p: a broker killed with
// -9 lost them itself. kmirror cannot replicate what its source no longer has, so they are no longer required
// on B (the case reports them apart from what is missing).
func (sp *seqProducer) goneFromA(p int, seqs []int) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.lostByA[p] = append(sp.lostByA[p], seqs...)
}

// expected returns what must be on B of this generation: the sequences A has acknowledged so far, less those
// deleted on A and those A lost itself.
func (sp *seqProducer) expected() *expected {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	e := &expected{topic: sp.topic, gen: sp.gen, offsets: make([][]int64, sp.partitions), excluded: make([]int, sp.partitions)}
	for p := range sp.offsets {
		e.offsets[p] = append([]int64(nil), sp.offsets[p]...)
	}
	for _, d := range sp.deleted {
		e.exclude(d.partition, d.from, d.to)
	}
	for p, seqs := range sp.lostByA {
		for _, seq := range seqs {
			e.excludeSeq(p, seq)
		}
	}
	if sp.txn != nil {
		e.abortedGen = abortedGen(sp.gen)
		e.abortedOnA = make([]int, sp.partitions)
		for p, offsets := range sp.txn.aborted {
			for _, o := range offsets {
				if o >= 0 {
					e.abortedOnA[p]++
				}
			}
		}
	}
	return e
}

// expected is the truth about one generation of a source topic: per partition, the offset on A of every
// sequence (seqPending and seqFailed for those not acknowledged). Excluded sequences (deleted on A before
// they could be read, or lost by A itself) are not required on B.
type expected struct {
	topic    string
	gen      int
	offsets  [][]int64
	excluded []int

	// A transactional producer's aborted records (newTxnSeqProducer): the generation in their values, and
	// per partition how many A holds in aborted transactions. None of them may be on B.
	abortedGen int
	abortedOnA []int
}

func (e *expected) required(p, seq int) bool { return e.offsets[p][seq] >= 0 }

func (e *expected) ackedCount(p int) int {
	n := 0
	for _, o := range e.offsets[p] {
		if o >= 0 {
			n++
		}
	}
	return n
}

// exclude drops the sequences whose offset on A is in [from, to) from what must arrive.
func (e *expected) exclude(p int, from, to int64) {
	for seq, o := range e.offsets[p] {
		if o >= from && o < to {
			e.excludeSeq(p, seq)
		}
	}
}

// excludeSeq drops one acknowledged sequence from what must arrive.
func (e *expected) excludeSeq(p, seq int) {
	if e.required(p, seq) {
		e.offsets[p][seq] = seqFailed
		e.excluded[p]++
	}
}

// lastOffset returns the offset on A of the partition's last acknowledged record (-1 if none).
func (e *expected) lastOffset(p int) int64 {
	last := int64(-1)
	for _, o := range e.offsets[p] {
		last = max(last, o)
	}
	return last
}

func (e *expected) ackedTotal() int {
	n := 0
	for p := range e.offsets {
		n += e.ackedCount(p)
	}
	return n
}
