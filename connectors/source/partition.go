package source

import (
	"math"
	"sync"
	"time"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/offsetmap"
)

// sourcePartition is the replication state of one source partition inside a source task. The poll loop
// pushes the source offset (and timestamp) of every record it forwards; the delivery handler pops them in the
// same order, because librdkafka reports deliveries of one partition in the order they were produced. So the
// offset of a delivery, and the source timestamp its replication latency is measured from, are known without
// attaching anything to the record.
type sourcePartition struct {
	tp     mirror.TopicPartition
	remote *string // the remote topic name, shared by every forwarded record

	mu       sync.Mutex
	inflight ring[inflightRecord]
	// batched counts records in flight on the C data path (cpath.go), which keeps no ring: its
	// reports come per run of records.
	batched int
	// batchedHead is, while batched > 0, the oldest such record's source offset or an offset at most that;
	// sent holds the C path's forwarded batches not yet fully acknowledged, oldest first, for the source
	// timestamp at the head (lag in seconds, to within one batch).
	batchedHead int64
	sent        ring[sentBatch]
	syncs       *mirror.PartitionSyncs // offset-sync emission state; nil when offset syncs are off
	ranges      *offsetmap.Tracker     // the partition's offset map (source -> target offsets), persisted on commit
	acked       int64                  // last source offset the target acknowledged; -1 before the first
	delivered   bool                   // the target acknowledged at least one record in this run (for topic tracking)
	confirmed   bool                   // a delivery of the current pipeline's producer came with a target offset
	broken      bool                   // a delivery failed: acked must not move past the failed record until the pipeline restarts
	acks        uint64                 // acknowledgements so far (the hot path's only stall bookkeeping)
	pushed      uint64                 // records forwarded so far, less those taken back (overdue's bookkeeping)
	bytes       uint64                 // value bytes forwarded so far (MM2's byte-count: at poll, values only)
	lastTS      int64                  // source timestamp of the last acknowledged record (Unix ms); noTimestamp before
	readNext    int64                  // the consumer's position when it last had nothing to return; -1 unknown
	stall       stallClock             // owned by the stall check (ackWait)
	// Owned by the overdue watch (overdue): at its checks, how many records had been forwarded.
	marks []forwardMark // oldest first; usually one or two, so a slice rather than a ring

	// Exactly-once mode (transactions.go): records the target acknowledged inside the open transaction,
	// which count as replicated only once it commits.
	staged ring[stagedRecord]

	// The cycle guard's skips not applied yet, oldest first, and how many records it skipped (partition_skip.go).
	skips        ring[skipMark]
	skippedTotal uint64

	// Owned by the poll loop.
	txnLast int64 // exactly-once: the last source offset forwarded in the open transaction; -1 none
	next    int64 // the next source offset the consumer should return; -1 until known
	// readEnd is the furthest next of this task's earlier pipelines in the current source topic (-1: none):
	// what a topic deleted during a restart took with it (restartRecreated).
	readEnd int64
	fresh   bool  // nothing forwarded yet in this pipeline
	startAt int64 // where the pipeline assigned the partition: an offset, or kafka.OffsetBeginning/OffsetEnd
	// firstPast is the first record's offset when it lay past startAt and the pipeline read the partition again
	// from startAt (-1: not read again).
	firstPast int64

	// Owned by the committer.
	committed int64 // last source offset committed to PostgreSQL
	tracked   bool  // the remote topic has been recorded as an active topic
	stats     partitionStats
	// The offset map's pruning (pruneRanges): whether the partition has stored ranges at all, whether it stored
	// new ones since it was last pruned, and the log start offset it was last pruned at.
	hasRanges, rangesChanged bool
	prunedLogStart           int64

	metrics partitionMetrics // the partition's series, for the run's life (zero without metrics)

	// Source identity, under mu: the identity checks and the committer both use it.
	sourceID string    // the source topic id the offsets belong to ("" until known)
	newID    string    // the id of the topic that replaced it, once a re-creation was seen
	idDirty  bool      // sourceID changed and must be stored even if the offset did not move
	seenEnd  int64     // the end offset of the source partition as last seen (0: unknown)
	seenAt   time.Time // when seenEnd was seen, if before this run (its last published stats); zero otherwise
	gone     bool      // the source topic is gone, or was re-created without this partition
	logStart int64     // the log start offset of the source partition as last seen (0: unknown)
	// uncommittedReads: the consumer reads uncommitted records (uncommitted.go), under mu.
	uncommittedReads bool
}

func newSourcePartition(tp mirror.TopicPartition, remote string, stored int64, sourceID string) *sourcePartition {
	return &sourcePartition{tp: tp, remote: &remote, acked: stored, committed: stored, next: -1, readEnd: -1, firstPast: -1, txnLast: -1, sourceID: sourceID,
		ranges: offsetmap.NewTracker(nil), lastTS: noTimestamp, readNext: -1}
}

// continueRanges makes the offset map continue the partition's last stored range.
func (p *sourcePartition) continueRanges(last offsetmap.Range) {
	p.mu.Lock()
	p.ranges = offsetmap.NewTracker(&last)
	p.flagSkipsIfUncommitted()
	p.mu.Unlock()
}

// readThrough records the consumer's position while it has nothing more to return for the partition.
func (p *sourcePartition) readThrough(next int64) {
	p.mu.Lock()
	p.ranges.ReadThrough(next)
	p.readNext = next
	p.mu.Unlock()
}

// withOffsetSyncs starts the partition's offset-sync state over, as MM2 does for every task start.
func (p *sourcePartition) withOffsetSyncs(offsetLagMax int64) {
	p.mu.Lock()
	p.syncs = mirror.NewPartitionSyncs(p.tp, offsetLagMax)
	p.mu.Unlock()
}

// forwarded records that the record at offset, with source timestamp ts (Unix ms, or noTimestamp), size
// bytes in all and valueBytes of value, is on its way to the target.
//
// The first record of a pipeline is the first one the consumer returned from startAt, checked by firstRecord
// (read again from startAt when it lay past it): no source record lies in between, which the offset map keeps.
// A start the check could not confirm (a failed seek back, a logical start) claims nothing.
func (p *sourcePartition) forwarded(offset, ts int64, size, valueBytes int) {
	p.mu.Lock()
	if p.fresh {
		p.fresh = false
		if p.startAt >= 0 && (offset == p.startAt || offset > p.startAt && p.firstPast >= 0) {
			p.ranges.ReadFrom(p.startAt)
		}
	}
	p.inflight.push(inflightRecord{offset: offset, ts: ts, size: size})
	p.pushed++
	p.bytes += uint64(valueBytes)
	p.ranges.Forwarded()
	p.mu.Unlock()
}

// ackWait tells the stall check how long the partition has had records waiting without any acknowledgement
// (0 when none wait), whether records wait, and how many acknowledgements it has had, as seen by the check's
// periodic calls at now: the hot path only counts acknowledgements, and the clock is read here.
func (p *sourcePartition) ackWait(now time.Time) (stalled time.Duration, waiting bool, acks uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	waiting = p.inflight.len()+p.batched > 0
	return p.stall.waited(now, waiting, p.acks), waiting, p.acks
}

// forwardMark is what the overdue watch saw at one of its checks: how many records had been forwarded by then.
type forwardMark struct {
	at     time.Time
	pushed uint64
}

// overdue tells whether the oldest record still waiting for its delivery report was forwarded at least after
// ago as seen at now, and its source offset (on the C path, an offset at most its own). Reading the clock per
// record would cost the hot path; instead the caller's periodic checks (every tick) mark how many records had
// been forwarded, and the oldest waiting record is older than the earliest mark that counts it: so the answer
// is late by at most one tick, never early.
func (p *sourcePartition) overdue(now time.Time, after time.Duration) (offset int64, overdue bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	waiting := uint64(p.inflight.len() + p.batched)
	done := p.pushed - min(waiting, p.pushed)
	drop := 0
	for drop < len(p.marks) && p.marks[drop].pushed <= done {
		drop++ // every record forwarded by then has been reported
	}
	p.marks = p.marks[drop:]
	if waiting == 0 {
		return 0, false
	}
	if n := len(p.marks); n == 0 || p.marks[n-1].pushed != p.pushed {
		p.marks = append(p.marks, forwardMark{at: now, pushed: p.pushed})
	}
	if now.Sub(p.marks[0].at) < after {
		return 0, false
	}
	if rec, ok := p.inflight.peek(); ok {
		return rec.offset, true
	}
	return p.batchedHead, true
}

// inflightLen is how many forwarded records await their delivery report.
func (p *sourcePartition) inflightLen() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inflight.len() + p.batched
}

// unforward takes back the newest forwarded offset when the producer refused the record.
func (p *sourcePartition) unforward() {
	p.mu.Lock()
	p.inflight.popBack()
	p.pushed--
	p.ranges.Dropped()
	p.mu.Unlock()
}

// ack records that the target acknowledged the oldest forwarded record at downstream. It returns whether the
// record counts as replicated (acked), the record as forwarded (its source timestamp and size), and the offset
// sync to send now, if the offset-sync rules ask for one (send). After a failed delivery the partition stops
// advancing: a later record that did arrive must not let a restart skip the failed one.
func (p *sourcePartition) ack(downstream int64) (acked bool, rec inflightRecord, sync mirror.OffsetSync, send bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rec, ok := p.inflight.pop()
	if !ok || p.broken {
		p.ranges.Dropped()
		return false, rec, mirror.OffsetSync{}, false
	}
	p.acks++
	p.confirmed = true
	sync, send = p.replicatedLocked(rec, downstream)
	p.applySkipsLocked()
	return true, rec, sync, send
}

// ackUnmapped counts the oldest forwarded record as written without a target offset (an implicit
// acknowledgement), if a delivery of the current producer was confirmed for the partition before; it returns
// false, changing nothing, otherwise. The offset map and the offset syncs leave the record out: the next range
// says records before it are unmapped, so a group offset there translates by the range before, which is never
// ahead of it.
func (p *sourcePartition) ackUnmapped() (inflightRecord, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.confirmed || p.broken || p.inflight.len() == 0 {
		return inflightRecord{}, false
	}
	rec, _ := p.inflight.pop()
	p.acks++
	p.acked = rec.offset
	p.lastTS = rec.ts
	p.ranges.Dropped()
	p.ranges.Unmapped()
	p.applySkipsLocked()
	return rec, true
}

// replicatedLocked advances the partition over a record that counts as replicated: acknowledged by the
// target, and in exactly-once mode part of a committed transaction. It returns the offset sync to send, if any.
func (p *sourcePartition) replicatedLocked(rec inflightRecord, downstream int64) (sync mirror.OffsetSync, send bool) {
	off := rec.offset
	p.acked = off
	p.lastTS = rec.ts
	p.delivered = true
	p.ranges.Acked(off, downstream)
	if p.syncs == nil {
		return mirror.OffsetSync{}, false
	}
	return p.syncs.Record(off, downstream)
}

// delayedSync returns the partition's latest offset sync that was not sent yet, if any.
func (p *sourcePartition) delayedSync() (mirror.OffsetSync, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.syncs == nil {
		return mirror.OffsetSync{}, false
	}
	return p.syncs.TakeDelayed()
}

// fail records a failed delivery and returns the source offset it was for.
func (p *sourcePartition) fail() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	rec, _ := p.inflight.pop()
	p.broken = true
	p.ranges.Dropped()
	return rec.offset
}

// progress returns the last acknowledged offset and whether anything was delivered.
func (p *sourcePartition) progress() (acked int64, delivered bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acked, p.delivered
}

// progressWithRanges is progress with the offset-map ranges that cover exactly the acknowledged records.
func (p *sourcePartition) progressWithRanges() (acked int64, delivered bool, ranges offsetmap.Snapshot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acked, p.delivered, p.ranges.Take()
}

// rangesStored records that a snapshot of the offset map was committed.
func (p *sourcePartition) rangesStored(s offsetmap.Snapshot) {
	p.mu.Lock()
	p.ranges.Persisted(s)
	p.mu.Unlock()
	p.hasRanges, p.rangesChanged = true, true
}

// needsPrune tells whether pruning the partition's stored ranges at logStart could delete anything: only if it
// has stored ranges, and stored more or saw its log start move since it was last pruned.
func (p *sourcePartition) needsPrune(logStart int64) bool {
	return p.hasRanges && (p.rangesChanged || logStart != p.prunedLogStart)
}

// pruned records a successful pruning at logStart.
func (p *sourcePartition) pruned(logStart int64) {
	p.rangesChanged, p.prunedLogStart = false, logStart
}

// restartAt starts the partition over, at the beginning of the source topic that replaced the one it
// replicated (id).
func (p *sourcePartition) restartAt(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acked, p.delivered = -1, false
	p.committed = -1
	p.readNext = -1
	p.next, p.readEnd = -1, -1 // positions in the deleted topic (no poll loop runs while a partition starts over)
	p.sourceID, p.newID, p.idDirty, p.seenEnd, p.logStart = id, "", true, 0, 0
	p.seenAt, p.gone = time.Time{}, false
	p.ranges = offsetmap.NewTracker(nil)
	p.ranges.StartOver()
	p.flagSkipsIfUncommitted()
	p.dropSkipsLocked()
}

// knownEnd returns the end offset last seen of the source partition (0: unknown), and notes end (at most 0:
// unknown) as seen now: a partition whose topic is gone keeps showing the end it was last seen with.
func (p *sourcePartition) knownEnd(end int64) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if end > p.seenEnd {
		p.seenEnd, p.seenAt = end, time.Time{}
	}
	return p.seenEnd
}

// isGone tells whether the partition's source topic is gone (checkSources).
func (p *sourcePartition) isGone() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gone
}

// identity returns the source id the partition's offsets belong to, and whether it still has to be stored.
func (p *sourcePartition) identity() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sourceID, p.idDirty
}

// identityStored records that the source id was committed with the offset.
func (p *sourcePartition) identityStored() {
	p.mu.Lock()
	p.idDirty = false
	p.mu.Unlock()
}

// reset forgets what was in flight (after the pipeline restarted) and returns where to resume.
func (p *sourcePartition) reset() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight = ring[inflightRecord]{}
	p.batched = 0
	p.sent = ring[sentBatch]{}
	p.readEnd = max(p.readEnd, p.next)
	p.next = -1
	p.fresh = true
	p.firstPast = -1
	p.confirmed = false
	p.readNext = -1
	p.broken = false
	p.ranges.Reset()
	p.dropSkipsLocked()
	return p.acked
}

// sentBatch is a batch of one partition forwarded on the C path: its last source offset and the source
// timestamp of its first record.
type sentBatch struct{ last, ts int64 }

// inflightRecord is a forwarded record whose delivery report has not arrived yet.
type inflightRecord struct {
	offset int64
	ts     int64 // the record's source timestamp in Unix milliseconds; noTimestamp when it has none
	size   int   // bytes of its key, value and headers
}

// noTimestamp stands for a record without a timestamp.
const noTimestamp = math.MinInt64

// unixMilli turns a record timestamp into Unix milliseconds (noTimestamp for the zero time).
func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return noTimestamp
	}
	return t.UnixMilli()
}

// ring is a growable FIFO that reuses its buffer, so the hot path does not allocate.
type ring[T any] struct {
	buf        []T
	head, size int
}

// offsetRing is a ring of offsets.
type offsetRing = ring[int64]

func (r *ring[T]) push(v T) {
	if r.size == len(r.buf) {
		// Small at first: a task holds a ring per partition, and the C path's usually holds a batch or two (64
		// slots each were 11 MB of heap at 10,000 partitions); a busy partition's doubles to its size at once.
		grown := make([]T, max(4, 2*len(r.buf)))
		for i := range r.size {
			grown[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = grown, 0
	}
	r.buf[(r.head+r.size)%len(r.buf)] = v
	r.size++
}

func (r *ring[T]) pop() (T, bool) {
	if r.size == 0 {
		var zero T
		return zero, false
	}
	v := r.buf[r.head]
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return v, true
}

// peek returns the oldest element without removing it.
func (r *ring[T]) peek() (T, bool) {
	if r.size == 0 {
		var zero T
		return zero, false
	}
	return r.buf[r.head], true
}

func (r *ring[T]) popBack() {
	if r.size > 0 {
		r.size--
	}
}

func (r *ring[T]) len() int { return r.size }
