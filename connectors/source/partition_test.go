package source

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/offsetmap"
)

// Property tests of a source partition's bookkeeping (sourcePartition and its offsetRing), without Kafka:
// random interleavings of what the poll loop, the delivery handler, the committer and pipeline restarts do
// to one partition, checked against a simple model after every step. The seeds are fixed, so a failure
// names the seed and the steps that led to it, and starting the seed loop there replays it.

const (
	partitionSeeds = 2000 // random runs of TestPartitionBookkeepingMatchesModel
	partitionSteps = 400  // steps per run
	ringSeeds      = 500  // random runs of TestOffsetRingIsAFIFO
	ringSteps      = 3000 // operations per run
)

var testTP = mirror.TopicPartition{Topic: "orders", Partition: 3}

// partitionModel drives one sourcePartition and models what it must report. librdkafka's side is modelled
// as in-order delivery reports, which is what the validation (clientconfig's checkDeliveryOrder) ensures.
type partitionModel struct {
	t     *testing.T
	seed  uint64
	rng   *rand.Rand
	steps []string

	p          *sourcePartition
	syncs      bool  // offset syncs are on
	offsetLag  int64 // offset.lag.max of the syncs
	initStored int64 // the stored offset the first task started from: older records are not modelled

	// The source log: the offsets of its records, ascending with gaps (compaction and transaction markers
	// leave offsets without a record), grown on demand; pos is the index of the next record the consumer
	// returns.
	log []int64
	pos int

	// What p must hold.
	inflight  []int64 // forwarded offsets not reported yet, oldest first
	acked     int64
	delivered bool
	broken    bool

	// The current run of the pipeline.
	runStart  int64 // acked when the run started
	lastAcked int64 // acked at the previous check
	failedAt  int64 // the first record whose delivery failed in this run; -1 if none
	refusing  bool  // the producer refused the newest forwarded record: unforward is due
	draining  bool  // the poll loop stopped after a refusal: nothing more is forwarded in this run

	// The target and the store.
	nextDownstream int64
	inTarget       map[int64][]int64 // source offset -> target offsets of its copies
	committed      int64             // what the committer stored last
	verified       int               // log[:verified] are known to be in the target
}

func newPartitionModel(t *testing.T, seed uint64) *partitionModel {
	rng := rand.New(rand.NewPCG(seed, 0x6b6d6972726f72))
	m := &partitionModel{t: t, seed: seed, rng: rng, inTarget: map[int64][]int64{}, failedAt: -1}
	m.initStored = -1
	if rng.IntN(2) == 0 {
		m.initStored = rng.Int64N(1 << 40)
	}
	m.committed, m.acked = m.initStored, m.initStored
	m.runStart, m.lastAcked = m.acked, m.acked
	m.log = []int64{m.initStored + 1 + m.gap()}
	m.syncs = rng.IntN(2) == 0
	m.offsetLag = 1 + rng.Int64N(20)
	m.nextDownstream = rng.Int64N(1000)
	m.p = newSourcePartition(testTP, "A.orders", m.initStored, "")
	if m.syncs {
		m.p.withOffsetSyncs(m.offsetLag)
	}
	return m
}

// gap is how many offsets lie between two records: usually none.
func (m *partitionModel) gap() int64 {
	if m.rng.IntN(8) == 0 {
		return 1 + m.rng.Int64N(20)
	}
	return 0
}

// record returns the offset of the i-th record of the source log.
func (m *partitionModel) record(i int) int64 {
	for len(m.log) <= i {
		m.log = append(m.log, m.log[len(m.log)-1]+1+m.gap())
	}
	return m.log[i]
}

// seekAfter places the consumer at the first record after offset, as a pipeline started at offset+1 reads.
func (m *partitionModel) seekAfter(offset int64) {
	i, _ := slices.BinarySearch(m.log, offset+1)
	m.pos = i
}

func (m *partitionModel) failf(format string, args ...any) {
	m.t.Helper()
	from := max(0, len(m.steps)-40)
	m.t.Fatalf("seed %d, step %d: %s\nlast steps:\n  %s", m.seed, len(m.steps), fmt.Sprintf(format, args...),
		strings.Join(m.steps[from:], "\n  "))
}

func (m *partitionModel) step(format string, args ...any) {
	m.steps = append(m.steps, fmt.Sprintf(format, args...))
}

// tsOf is the source timestamp the model gives the record at off (Unix ms), so that every ack can be checked
// against the record it reports on.
func tsOf(off int64) int64 { return 1_700_000_000_000 + off%(1<<30) }

// deliverable is how many forwarded records the producer can still report on: a refused record gets none.
func (m *partitionModel) deliverable() int {
	if m.refusing {
		return len(m.inflight) - 1
	}
	return len(m.inflight)
}

// forward is the poll loop handing the next source record to the producer, which may refuse it. Offsets
// increase within a run, as the consumer returns them; the one exception, the seek back to the log's start
// after the source topic was re-created (sourceRun.skipGap), is outside this model.
func (m *partitionModel) forward() {
	if m.refusing || m.draining {
		return
	}
	off := m.record(m.pos)
	m.pos++
	m.step("forwarded(%d)", off)
	m.p.forwarded(off, tsOf(off), int(off%100)+3, int(off%100))
	m.inflight = append(m.inflight, off)
	m.refusing = m.rng.IntN(40) == 0
}

// unforward is the poll loop taking the refused record back; the loop then stops, as pollLoop returns.
func (m *partitionModel) unforward() {
	if !m.refusing {
		return
	}
	m.step("unforward() of %d", m.inflight[len(m.inflight)-1])
	m.p.unforward()
	m.inflight = m.inflight[:len(m.inflight)-1]
	m.refusing, m.draining = false, true
}

// ack is a successful delivery report for the oldest record in flight.
func (m *partitionModel) ack() {
	if m.deliverable() == 0 {
		return
	}
	off := m.inflight[0]
	m.inflight = m.inflight[1:]
	down := m.nextDownstream
	m.nextDownstream += 1 + m.gap()
	m.inTarget[off] = append(m.inTarget[off], down)
	m.step("ack(%d) for %d", down, off)
	acked, rec, sync, now := m.p.ack(down)
	if acked == m.broken || (acked && (rec.ts != tsOf(off) || rec.size != int(off%100)+3)) {
		m.failf("ack of %d = %v with %+v; want %v with timestamp %d (broken: %v)", off, acked, rec, !m.broken, tsOf(off), m.broken)
	}
	if !m.broken {
		m.acked, m.delivered = off, true
	}
	if now {
		switch {
		case !m.syncs:
			m.failf("ack returned an offset sync with offset syncs off: %+v", sync)
		case m.broken:
			m.failf("ack returned an offset sync after a failed delivery: %+v", sync)
		case sync.UpstreamOffset != off || sync.DownstreamOffset != down:
			m.failf("ack of %d at %d returned the sync %+v", off, down, sync)
		}
	}
}

// fail is a failed delivery report for the oldest record in flight.
func (m *partitionModel) fail() {
	if m.deliverable() == 0 {
		return
	}
	off := m.inflight[0]
	m.inflight = m.inflight[1:]
	m.step("fail() for %d", off)
	if got := m.p.fail(); got != off {
		m.failf("fail() returned %d, want the failed record %d", got, off)
	}
	m.broken = true
	if m.failedAt < 0 {
		m.failedAt = off
	}
}

// delayedSync is the committer promoting the delayed offset sync: it must pair a source record with the
// target offset of one of its copies.
func (m *partitionModel) delayedSync() {
	if !m.syncs {
		return
	}
	m.step("delayedSync()")
	sync, ok := m.p.delayedSync()
	if ok && !slices.Contains(m.inTarget[sync.UpstreamOffset], sync.DownstreamOffset) {
		m.failf("delayed sync %+v: source offset %d is at %v in the target", sync, sync.UpstreamOffset, m.inTarget[sync.UpstreamOffset])
	}
}

// commit is the committer storing progress, as sourceRun.commit does: only forward.
func (m *partitionModel) commit() {
	acked, _ := m.p.progress()
	m.step("commit: progress %d, stored %d", acked, m.committed)
	if acked > m.committed {
		m.committed = acked
	}
}

// restart ends the run (a final commit, as replicate does) and starts the next pipeline from the acknowledged
// offsets. Records still in flight are forgotten: their producer is closed.
func (m *partitionModel) restart() {
	if m.refusing {
		return // the poll loop takes a refused record back before the run ends
	}
	m.commit()
	if m.syncs {
		m.p.withOffsetSyncs(m.offsetLag)
	}
	resume := m.p.reset()
	m.step("reset() = %d", resume)
	if resume != m.acked {
		m.failf("reset() = %d, want the acknowledged offset %d", resume, m.acked)
	}
	if m.p.inflight.len() != 0 || m.p.next != -1 || m.p.broken {
		m.failf("reset left %d in flight, next %d, broken %v", m.p.inflight.len(), m.p.next, m.p.broken)
	}
	m.newRun(resume)
}

// crash loses everything in memory; the next task starts from the store. Records in flight may or may not
// have reached the target.
func (m *partitionModel) crash() {
	for _, off := range m.inflight {
		if m.rng.IntN(2) == 0 {
			m.inTarget[off] = append(m.inTarget[off], m.nextDownstream)
			m.nextDownstream++
		}
	}
	m.step("crash; restart from stored %d", m.committed)
	m.p = newSourcePartition(testTP, "A.orders", m.committed, "")
	if m.syncs {
		m.p.withOffsetSyncs(m.offsetLag)
	}
	m.acked, m.delivered = m.committed, false
	m.newRun(m.p.reset())
}

func (m *partitionModel) newRun(resume int64) {
	m.inflight, m.broken, m.failedAt, m.refusing, m.draining = nil, false, -1, false, false
	m.runStart, m.lastAcked = resume, resume
	m.seekAfter(resume)
}

// check compares p with the model and checks the properties that make replication at least once.
func (m *partitionModel) check() {
	acked, delivered := m.p.progress()
	if acked != m.acked || delivered != m.delivered {
		m.failf("progress() = %d, %v; want %d, %v", acked, delivered, m.acked, m.delivered)
	}
	if n := m.p.inflight.len(); n != len(m.inflight) {
		m.failf("%d offsets in flight, want %d (%v)", n, len(m.inflight), m.inflight)
	}
	if acked < m.lastAcked {
		m.failf("acked moved back from %d to %d within a run", m.lastAcked, acked)
	}
	m.lastAcked = acked
	if m.failedAt >= 0 && acked >= m.failedAt {
		m.failf("acked %d is at or past the record %d whose delivery failed", acked, m.failedAt)
	}
	if m.committed > acked {
		m.failf("stored offset %d is ahead of acked %d", m.committed, acked)
	}
	// Everything up to the acknowledged offset, and so up to the stored one, is in the target: a restart or a
	// crash resumes right after it and skips nothing. Records once in the target stay there, so the prefix
	// checked already need not be checked again.
	for ; m.verified < len(m.log) && m.log[m.verified] <= acked; m.verified++ {
		if off := m.log[m.verified]; len(m.inTarget[off]) == 0 {
			m.failf("acked %d passes record %d, which the target never acknowledged", acked, off)
		}
	}
}

// TestPartitionBookkeepingMatchesModel drives sourcePartition through random interleavings of forwarded
// records (increasing offsets with gaps), refusals (unforward), in-order acknowledgements, failed deliveries,
// offset-sync promotions, commits, pipeline restarts and crashes.
func TestPartitionBookkeepingMatchesModel(t *testing.T) {
	type op struct {
		weight int
		do     func(*partitionModel)
	}
	ops := []op{
		{40, (*partitionModel).forward},
		{20, (*partitionModel).unforward},
		{30, (*partitionModel).ack},
		{2, (*partitionModel).fail},
		{4, (*partitionModel).delayedSync},
		{8, (*partitionModel).commit},
		{2, (*partitionModel).restart},
		{1, (*partitionModel).crash},
	}
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	for seed := range uint64(partitionSeeds) {
		m := newPartitionModel(t, seed)
		for range partitionSteps {
			n := m.rng.IntN(total)
			for _, o := range ops {
				if n < o.weight {
					o.do(m)
					break
				}
				n -= o.weight
			}
			m.check()
		}
	}
}

// TestPartitionResumesAfterAckedAcrossFailures is one fixed run of the model's properties, readable on its
// own: a failure freezes progress, the restart resumes right after the last acknowledged record, and the
// records after the failed one are sent again.
func TestPartitionResumesAfterAckedAcrossFailures(t *testing.T) {
	p := newSourcePartition(testTP, "A.orders", 9, "")
	if got := p.reset(); got != 9 {
		t.Fatalf("reset() = %d, want the stored offset 9", got)
	}
	for _, off := range []int64{10, 11, 14, 15} { // 12 and 13 were compacted away
		p.forwarded(off, tsOf(off), 1, 1)
	}
	p.ack(100)
	p.ack(101)
	if got := p.fail(); got != 14 {
		t.Fatalf("fail() = %d, want 14", got)
	}
	p.ack(102) // 15 arrived, but 14 did not: progress must stay before 14
	if acked, _ := p.progress(); acked != 11 {
		t.Fatalf("acked = %d after the failure of 14, want 11", acked)
	}
	if got := p.reset(); got != 11 {
		t.Fatalf("reset() = %d, want 11: the next pipeline reads from 12 on", got)
	}
	p.forwarded(14, tsOf(14), 1, 1)
	p.ack(103)
	if acked, _ := p.progress(); acked != 14 {
		t.Fatalf("acked = %d after the restart delivered 14, want 14", acked)
	}
}

// TestPartitionOutOfOrderDeliveriesCommitPastAnUnackedRecord shows why a replication producer that can
// reorder delivery reports is rejected at validation (clientconfig's checkDeliveryOrder). The partition
// matches reports to records by position, so it cannot tell which record a report is for. With
// enable.idempotence=false and more than one request in flight, librdkafka can put the batch of record 10
// back in its queue after a retriable error while the batch of record 11 is acknowledged: the first report is
// 11's. The partition takes it for 10's and marks 10 acknowledged; the committer stores 10, and the next
// pipeline (or task, after a crash) starts at 11. If 10's retry then fails, or the process dies before it
// succeeds, record 10 is never replicated — and the failure is even blamed on 11. The test asserts this
// behaviour as it is; it must not happen because such configurations never run.
func TestPartitionOutOfOrderDeliveriesCommitPastAnUnackedRecord(t *testing.T) {
	p := newSourcePartition(testTP, "A.orders", 9, "")
	p.forwarded(10, tsOf(10), 1, 1)
	p.forwarded(11, tsOf(11), 1, 1)

	p.ack(500) // the report for 11, ahead of 10's
	acked, _ := p.progress()
	if acked != 10 {
		t.Fatalf("acked = %d; position matching was expected to credit the first report to 10", acked)
	}
	// The committer would store 10 now: the target has 11 but not 10.

	if got := p.fail(); got != 11 {
		t.Fatalf("fail() = %d; position matching was expected to blame 11 for 10's failure", got)
	}
	if got := p.reset(); got != 10 {
		t.Fatalf("reset() = %d, want 10", got)
	}
	// The next pipeline resumes at 11: record 10 is lost.
}

// TestPartitionConcurrentInOrderDeliveries runs the poll loop, the delivery handler and the committer on
// goroutines of their own, as a source task does (run it with -race too): the committer never sees progress
// move back or pass the record whose report is being handled.
func TestPartitionConcurrentInOrderDeliveries(t *testing.T) {
	const records = 20000
	p := newSourcePartition(testTP, "A.orders", -1, "")
	queue := make(chan int64, 256) // librdkafka's queue: reports come in produce order
	var reporting atomic.Int64     // the record whose report is being handled, set before ack
	reporting.Store(-1)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // poll loop
		defer wg.Done()
		defer close(queue)
		off := int64(0)
		for i := range records {
			if i%7 == 6 {
				off += 3 // a gap now and then
			}
			p.forwarded(off, tsOf(off), 1, 1)
			queue <- off
			off++
		}
	}()
	go func() { // delivery handler
		defer wg.Done()
		for down := int64(0); ; down++ {
			off, ok := <-queue
			if !ok {
				return
			}
			reporting.Store(off)
			p.ack(down)
		}
	}()
	var finished atomic.Bool
	failure := make(chan string, 1)
	go func() { // committer
		defer close(failure)
		prev := int64(-1)
		for !finished.Load() {
			acked, _ := p.progress()
			if bound := reporting.Load(); acked < prev || acked > bound {
				failure <- fmt.Sprintf("progress %d after %d, while the report of %d is handled", acked, prev, bound)
				return
			}
			prev = acked
		}
	}()
	wg.Wait()
	finished.Store(true)
	if f, ok := <-failure; ok {
		t.Fatal(f)
	}
	if acked, _ := p.progress(); acked != reporting.Load() {
		t.Fatalf("acked = %d after all reports, want %d", acked, reporting.Load())
	}
}

// TestOffsetRingIsAFIFO checks offsetRing against a slice through random pushes, pops and popBacks. Each
// run drifts between filling and draining, so the ring grows several times, and grows while its head is in
// the middle of the buffer, and its head wraps around at every size.
func TestOffsetRingIsAFIFO(t *testing.T) {
	grewWrapped, largest := 0, 0
	for seed := range uint64(ringSeeds) {
		rng := rand.New(rand.NewPCG(seed, 0x72696e67))
		var r offsetRing
		var model []int64
		next := int64(0)
		pushBias := 0.5
		for step := range ringSteps {
			if step%200 == 0 {
				pushBias = 0.3 + 0.45*rng.Float64()
			}
			switch x := rng.Float64(); {
			case x < pushBias:
				if r.size == len(r.buf) && r.head != 0 {
					grewWrapped++
				}
				r.push(next)
				model = append(model, next)
				next += 1 + rng.Int64N(3)
			case x < pushBias+(1-pushBias)*0.8:
				v, ok := r.pop()
				if ok != (len(model) > 0) || (ok && v != model[0]) {
					t.Fatalf("seed %d, step %d: pop() = %d, %v; model %v", seed, step, v, ok, model)
				}
				if ok {
					model = model[1:]
				}
			default:
				r.popBack()
				if len(model) > 0 {
					model = model[:len(model)-1]
				}
			}
			if r.len() != len(model) {
				t.Fatalf("seed %d, step %d: len() = %d, want %d", seed, step, r.len(), len(model))
			}
			for i, want := range model {
				if got := r.buf[(r.head+i)%len(r.buf)]; got != want {
					t.Fatalf("seed %d, step %d: element %d is %d, want %d", seed, step, i, got, want)
				}
			}
			largest = max(largest, len(r.buf))
		}
	}
	if grewWrapped == 0 || largest < 256 {
		t.Fatalf("the runs never grew a wrapped ring (%d) or never reached 256 slots (%d): adjust the biases", grewWrapped, largest)
	}
}

// TestOffsetRingGrowsAroundItsHead is the growth case the random runs must cover, spelled out: the buffer is
// full, its head is in the middle, and the next push must keep the order.
func TestOffsetRingGrowsAroundItsHead(t *testing.T) {
	var r offsetRing
	for i := range int64(64) {
		r.push(i)
	}
	for range 40 {
		r.pop()
	}
	for i := int64(64); i < 200; i++ {
		r.push(i) // wraps into the slots the pops freed, then grows
	}
	for want := int64(40); want < 200; want++ {
		if got, ok := r.pop(); !ok || got != want {
			t.Fatalf("pop() = %d, %v; want %d", got, ok, want)
		}
	}
	if _, ok := r.pop(); ok || r.len() != 0 {
		t.Fatalf("the ring is not empty: %d left", r.len())
	}
}

// TestOffsetRingReusesItsBuffer checks why offsetRing exists: once grown, forwarding and acknowledging
// records allocates nothing, even as the head wraps around.
func TestOffsetRingReusesItsBuffer(t *testing.T) {
	var r offsetRing
	for i := range int64(50) {
		r.push(i)
	}
	i := int64(50)
	allocs := testing.AllocsPerRun(1000, func() {
		r.push(i)
		r.pop()
		i++
	})
	if allocs != 0 {
		t.Fatalf("push and pop allocated %v times per record", allocs)
	}
}

// The offset map keeps the gap between where a pipeline read a partition from and its first record, when the
// first-record check confirmed it (the record is at the start, or the partition was read again from there), in
// either mode: an acknowledgement, or a staged record whose transaction committed.
func TestPartitionKeepsTheGapBeforeItsFirstRecord(t *testing.T) {
	cases := []struct {
		name      string
		startAt   int64
		first     int64
		firstPast int64
		eos       bool
		want      int64
	}{
		{"read again from the start: an aborted transaction before", 0, 4, 4, false, 4},
		{"read again, in a transaction", 0, 4, 4, true, 4},
		{"at the start", 4, 4, -1, true, 0},
		{"past the start, not read again (a failed seek back)", 0, 4, -1, false, 0},
		{"a logical start", kafka.OffsetBeginning, 4, 4, false, 0},
	}
	for _, tc := range cases {
		p := newSourcePartition(testTP, "A.orders", -1, "")
		p.reset()
		p.startAt, p.firstPast = tc.startAt, tc.firstPast
		p.forwarded(tc.first, 0, 1, 1)
		p.forwarded(tc.first+1, 0, 1, 1)
		if tc.eos {
			p.stage(0)
			p.stage(1)
			p.committedTxn(time.Now(), nil)
		} else {
			p.ack(0)
			p.ack(1)
		}
		_, _, snap := p.progressWithRanges()
		if len(snap.Ranges) != 1 || snap.Ranges[0].SourceStart != tc.first || snap.Ranges[0].GapBefore != tc.want {
			t.Errorf("%s: ranges %+v, want one from %d with a gap of %d before", tc.name, snap.Ranges, tc.first, tc.want)
		}
	}
}

// After a crash in exactly-once mode the offsets topic may be ahead of PostgreSQL's copy, which holds the offset
// map: the records in between are on the target where the map does not know. The first range after the resume
// says so, so that a group among them is not translated past them.
func TestPartitionResumedAheadOfTheMapMarksTheRecordsUnmapped(t *testing.T) {
	p := newSourcePartition(testTP, "A.orders", 9, "")
	p.continueRanges(offsetmap.Range{SourceStart: 0, SourceEnd: 9, TargetStart: 0, SourceNext: 10})
	p.resumeFrom(19) // source 10..19 committed on the target, their ranges lost with the crash
	p.reset()
	p.startAt = 20
	p.forwarded(20, 0, 1, 1)
	p.stage(30)
	p.committedTxn(time.Now(), nil)
	_, _, snap := p.progressWithRanges()
	if len(snap.Ranges) != 1 || snap.Ranges[0].SourceStart != 20 || !snap.Ranges[0].UnmappedBefore {
		t.Fatalf("ranges %+v: want one from 20 that says records before it are unmapped", snap.Ranges)
	}
	if a, ok := offsetmap.Translate(&offsetmap.Range{SourceStart: 0, SourceEnd: 9, TargetStart: 0, SourceNext: 10}, &snap.Ranges[0], 15); !ok || a.Exact || a.Offset != 10 {
		t.Fatalf("a group among the unmapped records: %+v %v, want 10 (approximate, never ahead)", a, ok)
	}

	// Resumed at the map's end: nothing is unmapped.
	p = newSourcePartition(testTP, "A.orders", 9, "")
	p.continueRanges(offsetmap.Range{SourceStart: 0, SourceEnd: 9, TargetStart: 0, SourceNext: 10})
	p.resumeFrom(9)
	p.reset()
	p.startAt = 10
	p.forwarded(12, 0, 1, 1) // 10 and 11 are markers
	p.ack(12)
	_, _, snap = p.progressWithRanges()
	if last := snap.Ranges[len(snap.Ranges)-1]; last.UnmappedBefore {
		t.Fatalf("ranges %+v: nothing is unmapped", snap.Ranges)
	}
}
