package mirror

import (
	"container/list"
	"iter"
	"sync"
)

// OffsetSyncWriter decides when MirrorSourceTask emits offset syncs (OffsetSyncWriter in MM2 3.7+); see
// the package documentation for why. It holds no producer: the caller takes pending syncs, sends them
// to partition 0 of the offset-syncs topic, and keeps at most 10 in flight as MM2 does. Its state lives
// as long as the task, as in Java, where a restarted task starts over. It is safe for concurrent use:
// Record typically runs in delivery callbacks while PromoteDelayed runs on commit.
type OffsetSyncWriter struct {
	offsetLagMax int64

	mu         sync.Mutex
	partitions map[TopicPartition]*partitionState
	pending    syncQueue // to send as soon as possible
	delayed    syncQueue // to send on the next offset commit
}

// NewOffsetSyncWriter returns a writer for offset.lag.max = offsetLagMax.
func NewOffsetSyncWriter(offsetLagMax int64) *OffsetSyncWriter {
	return &OffsetSyncWriter{
		offsetLagMax: offsetLagMax,
		partitions:   make(map[TopicPartition]*partitionState),
		pending:      newSyncQueue(),
		delayed:      newSyncQueue(),
	}
}

// Record notes that the target acknowledged the record at upstream offset upstream of tp at downstream
// offset downstream. The sync becomes pending when it must be sent now, and otherwise replaces tp's
// delayed sync.
func (w *OffsetSyncWriter) Record(tp TopicPartition, upstream, downstream int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	state, ok := w.partitions[tp]
	if !ok {
		state = newPartitionState(w.offsetLagMax)
		w.partitions[tp] = state
	}
	offsetSync := OffsetSync{Topic: tp.Topic, Partition: tp.Partition, UpstreamOffset: upstream, DownstreamOffset: downstream}
	if state.update(upstream, downstream) {
		w.delayed.remove(tp)
		w.pending.put(tp, offsetSync)
		state.reset()
		return
	}
	w.delayed.put(tp, offsetSync)
}

// PromoteDelayed makes every delayed sync pending; call it on each offset commit, so every partition
// gets an exact sync for its latest record at least once per commit interval.
func (w *OffsetSyncWriter) PromoteDelayed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for tp, offsetSync := range w.delayed.all() {
		w.pending.put(tp, offsetSync)
	}
	w.delayed = newSyncQueue()
}

// TakePending removes and returns up to max pending syncs, oldest first. A partition's place in the
// queue is where it first became pending; a newer sync for it replaces the queued one in place.
func (w *OffsetSyncWriter) TakePending(max int) []OffsetSync {
	w.mu.Lock()
	defer w.mu.Unlock()
	var taken []OffsetSync
	for len(taken) < max {
		offsetSync, ok := w.pending.popFront()
		if !ok {
			break
		}
		taken = append(taken, offsetSync)
	}
	return taken
}

// Pending returns how many syncs are waiting to be taken.
func (w *OffsetSyncWriter) Pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pending.len()
}

// Forget drops everything known about tp once it is no longer assigned. Its queued syncs are dropped
// too: sent after the partition's new owner has written newer syncs, an older one would look like an
// upstream rewind to the checkpoint side and wipe its sync history.
func (w *OffsetSyncWriter) Forget(tp TopicPartition) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.partitions, tp)
	w.pending.remove(tp)
	w.delayed.remove(tp)
}

// PartitionSyncs applies the emission rules to one partition without any shared state, for a caller that
// already serialises a partition's deliveries (a source task does, per partition) and wants the per-record
// decision off any lock: Record says whether the sync must be sent now, and otherwise keeps it as the
// partition's delayed sync until TakeDelayed. It behaves as OffsetSyncWriter does for that partition.
type PartitionSyncs struct {
	tp         TopicPartition
	state      partitionState
	delayed    OffsetSync
	hasDelayed bool
}

// NewPartitionSyncs returns the emission state of tp for offset.lag.max = offsetLagMax.
func NewPartitionSyncs(tp TopicPartition, offsetLagMax int64) *PartitionSyncs {
	return &PartitionSyncs{tp: tp, state: *newPartitionState(offsetLagMax)}
}

// Record notes that the target acknowledged upstream offset upstream at downstream offset downstream. It
// returns the sync to send now, or false when the sync is only kept as the delayed one.
func (p *PartitionSyncs) Record(upstream, downstream int64) (OffsetSync, bool) {
	offsetSync := OffsetSync{Topic: p.tp.Topic, Partition: p.tp.Partition, UpstreamOffset: upstream, DownstreamOffset: downstream}
	if p.state.update(upstream, downstream) {
		p.state.reset()
		p.hasDelayed = false
		return offsetSync, true
	}
	p.delayed, p.hasDelayed = offsetSync, true
	return OffsetSync{}, false
}

// RecordRun is Record for the n records at upstream offsets upstream..upstream+n-1 written at downstream
// offsets downstream..downstream+n-1, in order: it calls send with every sync Record would have returned
// true for, oldest first, and leaves the same state (and delayed sync) behind, without a step per record.
// Inside a run neither offset skips or goes back, so past its first record only offset.lag.max triggers.
func (p *PartitionSyncs) RecordRun(upstream, downstream, n int64, send func(OffsetSync)) {
	if n <= 0 {
		return
	}
	if s, ok := p.Record(upstream, downstream); ok {
		send(s)
	}
	if n == 1 {
		return
	}
	lastDown := downstream + n - 1
	st := &p.state
	synced := false
	for {
		// update triggers at the first d with d-(lastSync+1) >= offsetLagMax, and never before the next record.
		next := max(st.lastSyncDownstream+1+max(st.offsetLagMax, 0), st.previousDownstream+1)
		if next > lastDown {
			break
		}
		up := upstream + (next - downstream)
		st.lastSyncDownstream = next
		st.previousUpstream, st.previousDownstream = up, next
		synced = next == lastDown
		send(OffsetSync{Topic: p.tp.Topic, Partition: p.tp.Partition, UpstreamOffset: up, DownstreamOffset: next})
		p.hasDelayed = false
	}
	st.previousUpstream, st.previousDownstream = upstream+n-1, lastDown
	st.shouldSync = false
	if !synced {
		p.delayed = OffsetSync{Topic: p.tp.Topic, Partition: p.tp.Partition, UpstreamOffset: upstream + n - 1, DownstreamOffset: lastDown}
		p.hasDelayed = true
	}
}

// TakeDelayed returns and clears the delayed sync (OffsetSyncWriter.PromoteDelayed for this partition).
func (p *PartitionSyncs) TakeDelayed() (OffsetSync, bool) {
	if !p.hasDelayed {
		return OffsetSync{}, false
	}
	p.hasDelayed = false
	return p.delayed, true
}

// partitionState is MM2's OffsetSyncWriter.PartitionState, kept separate so its vectors can be ported
// as they are written upstream.
type partitionState struct {
	offsetLagMax       int64
	previousUpstream   int64
	previousDownstream int64
	lastSyncDownstream int64
	shouldSync         bool
}

func newPartitionState(offsetLagMax int64) *partitionState {
	return &partitionState{offsetLagMax: offsetLagMax, previousUpstream: -1, previousDownstream: -1, lastSyncDownstream: -1}
}

// update records (upstream, downstream) and reports whether a sync must be sent now. The flag stays
// set until reset.
func (s *partitionState) update(upstream, downstream int64) bool {
	firstThisLifetime := s.lastSyncDownstream == -1
	// Translation positions a group one past the last sync, hence the +1.
	translationTooStale := downstream-(s.lastSyncDownstream+1) >= s.offsetLagMax
	skippedUpstream := upstream-s.previousUpstream != 1
	truncatedDownstream := downstream < s.previousDownstream
	if firstThisLifetime || translationTooStale || skippedUpstream || truncatedDownstream {
		s.lastSyncDownstream = downstream
		s.shouldSync = true
	}
	s.previousUpstream = upstream
	s.previousDownstream = downstream
	return s.shouldSync
}

func (s *partitionState) reset() { s.shouldSync = false }

// syncQueue is Java's LinkedHashMap<TopicPartition, OffsetSync>: one sync per partition, kept in the
// order partitions were first inserted; replacing a value keeps its place.
type syncQueue struct {
	order   *list.List // of TopicPartition
	entries map[TopicPartition]*syncEntry
}

type syncEntry struct {
	sync OffsetSync
	elem *list.Element
}

func newSyncQueue() syncQueue {
	return syncQueue{order: list.New(), entries: make(map[TopicPartition]*syncEntry)}
}

func (q syncQueue) put(tp TopicPartition, offsetSync OffsetSync) {
	if e, ok := q.entries[tp]; ok {
		e.sync = offsetSync
		return
	}
	q.entries[tp] = &syncEntry{sync: offsetSync, elem: q.order.PushBack(tp)}
}

func (q syncQueue) remove(tp TopicPartition) {
	if e, ok := q.entries[tp]; ok {
		q.order.Remove(e.elem)
		delete(q.entries, tp)
	}
}

func (q syncQueue) popFront() (OffsetSync, bool) {
	front := q.order.Front()
	if front == nil {
		return OffsetSync{}, false
	}
	tp := front.Value.(TopicPartition)
	offsetSync := q.entries[tp].sync
	q.remove(tp)
	return offsetSync, true
}

func (q syncQueue) len() int { return len(q.entries) }

// all yields the entries in queue order.
func (q syncQueue) all() iter.Seq2[TopicPartition, OffsetSync] {
	return func(yield func(TopicPartition, OffsetSync) bool) {
		for e := q.order.Front(); e != nil; e = e.Next() {
			tp := e.Value.(TopicPartition)
			if !yield(tp, q.entries[tp].sync) {
				return
			}
		}
	}
}
