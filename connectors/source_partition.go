package connectors

import (
	"sync"
	"time"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/offsetmap"
)

// sourcePartition is the replication state of one source partition inside a source task. The poll loop
// pushes the source offset of every record it forwards; the delivery handler pops them in the same order,
// because librdkafka reports deliveries of one partition in the order they were produced. So the offset of a
// delivery is known without attaching anything to the record.
type sourcePartition struct {
	tp     mirror.TopicPartition
	remote *string // the remote topic name, shared by every forwarded record

	mu        sync.Mutex
	inflight  offsetRing
	syncs     *mirror.PartitionSyncs // offset-sync emission state; nil when offset syncs are off
	ranges    *offsetmap.Tracker     // the partition's offset map (source -> target offsets), persisted on commit
	acked     int64                  // last source offset the target acknowledged; -1 before the first
	delivered bool                   // the target acknowledged at least one record in this run (for topic tracking)
	broken    bool                   // a delivery failed: acked must not move past the failed record until the pipeline restarts
	acks      uint64                 // acknowledgements so far (the hot path's only stall bookkeeping)
	// Owned by the stall check (stalledFor): when it last saw the partition idle or acknowledging.
	acksSeen   uint64
	progressAt time.Time

	// Owned by the poll loop.
	next int64 // the next source offset the consumer should return; -1 until known

	// Owned by the committer.
	committed int64 // last source offset committed to PostgreSQL
	tracked   bool  // the remote topic has been recorded as an active topic

	// Source identity, under mu: the identity checks and the committer both use it.
	sourceID string // the source topic id the offsets belong to ("" until known)
	newID    string // the id of the topic that replaced it, once a re-creation was seen
	idDirty  bool   // sourceID changed and must be stored even if the offset did not move
	seenEnd  int64  // the end offset of the source partition as last seen (0: unknown)
	logStart int64  // the log start offset of the source partition as last seen (0: unknown)
}

func newSourcePartition(tp mirror.TopicPartition, remote string, stored int64, sourceID string) *sourcePartition {
	return &sourcePartition{tp: tp, remote: &remote, acked: stored, committed: stored, next: -1, sourceID: sourceID,
		ranges: offsetmap.NewTracker(nil)}
}

// continueRanges makes the offset map continue the partition's last stored range.
func (p *sourcePartition) continueRanges(last offsetmap.Range) {
	p.mu.Lock()
	p.ranges = offsetmap.NewTracker(&last)
	p.mu.Unlock()
}

// readThrough records the consumer's position while it has nothing more to return for the partition.
func (p *sourcePartition) readThrough(next int64) {
	p.mu.Lock()
	p.ranges.ReadThrough(next)
	p.mu.Unlock()
}

// withOffsetSyncs starts the partition's offset-sync state over, as MM2 does for every task start.
func (p *sourcePartition) withOffsetSyncs(offsetLagMax int64) {
	p.mu.Lock()
	p.syncs = mirror.NewPartitionSyncs(p.tp, offsetLagMax)
	p.mu.Unlock()
}

// forwarded records that the record at offset is on its way to the target.
func (p *sourcePartition) forwarded(offset int64) {
	p.mu.Lock()
	p.inflight.push(offset)
	p.ranges.Forwarded()
	p.mu.Unlock()
}

// stalledFor tells how long the partition has had records in flight without any acknowledgement (0 when
// nothing is in flight), as seen by the caller's periodic checks at now: the hot path only counts
// acknowledgements, and the clock is read here.
func (p *sourcePartition) stalledFor(now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inflight.len() == 0 || p.acks != p.acksSeen || p.progressAt.IsZero() {
		p.acksSeen, p.progressAt = p.acks, now
		return 0
	}
	return now.Sub(p.progressAt)
}

// unforward takes back the newest forwarded offset when the producer refused the record.
func (p *sourcePartition) unforward() {
	p.mu.Lock()
	p.inflight.popBack()
	p.ranges.Dropped()
	p.mu.Unlock()
}

// ack records that the target acknowledged the oldest forwarded record at downstream, and returns the offset
// sync to send now, if the offset-sync rules ask for one. After a failed delivery the partition stops
// advancing: a later record that did arrive must not let a restart skip the failed one.
func (p *sourcePartition) ack(downstream int64) (mirror.OffsetSync, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	off, ok := p.inflight.pop()
	if !ok || p.broken {
		p.ranges.Dropped()
		return mirror.OffsetSync{}, false
	}
	p.acks++
	p.acked = off
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
	off, _ := p.inflight.pop()
	p.broken = true
	p.ranges.Dropped()
	return off
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
}

// restartAt starts the partition over, at the beginning of the source topic that replaced the one it
// replicated (id).
func (p *sourcePartition) restartAt(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acked, p.delivered = -1, false
	p.committed = -1
	p.sourceID, p.newID, p.idDirty, p.seenEnd, p.logStart = id, "", true, 0, 0
	p.ranges = offsetmap.NewTracker(nil)
	p.ranges.StartOver()
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
	p.inflight = offsetRing{}
	p.next = -1
	p.broken = false
	p.ranges.Reset()
	return p.acked
}

// offsetRing is a growable FIFO of offsets that reuses its buffer, so the hot path does not allocate.
type offsetRing struct {
	buf        []int64
	head, size int
}

func (r *offsetRing) push(v int64) {
	if r.size == len(r.buf) {
		grown := make([]int64, max(64, 2*len(r.buf)))
		for i := range r.size {
			grown[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = grown, 0
	}
	r.buf[(r.head+r.size)%len(r.buf)] = v
	r.size++
}

func (r *offsetRing) pop() (int64, bool) {
	if r.size == 0 {
		return 0, false
	}
	v := r.buf[r.head]
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return v, true
}

func (r *offsetRing) popBack() {
	if r.size > 0 {
		r.size--
	}
}

func (r *offsetRing) len() int { return r.size }
