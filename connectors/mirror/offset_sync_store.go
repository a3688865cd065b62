package mirror

import "sync"

// offsetSyncsPerPartition is how many syncs the store keeps per source partition: one per bit of an int64
// offset (MM2's SYNCS_PER_PARTITION = Long.SIZE).
const offsetSyncsPerPartition = 64

// offsetSyncSlots is one partition's sync history. Slot 0 is the newest sync; higher slots hold
// exponentially older ones. The same *OffsetSync may fill several adjacent slots; slots are compared by
// identity, never by value, so two equal-valued syncs read from two records are distinct.
//
// The store keeps these invariants, checked between adjacent slots and holding for every pair i < j of
// distinct syncs:
//   - A: slot 0 is the latest sync read.
//   - B: slot[i].upstream <= slot[j].upstream + 2^j - 2^i (slot j is not too old for position j).
//   - C: slot[i].upstream >= slot[j].upstream + 2^max(i-2,0) (distinct syncs are spaced apart).
//   - D: slot 63 is the earliest sync usable for translation (the one that last reset the history).
//
// An array is never changed once published in the store's map: Add builds a new one, so Translate reads a
// consistent snapshot without holding the lock.
type offsetSyncSlots [offsetSyncsPerPartition]*OffsetSync

// OffsetSyncStore indexes offset syncs as MM2's checkpoint task does. Safe for concurrent use (one goroutine
// feeds it from the offset-syncs topic while checkpoint rounds translate).
//
// It ports MM2's OffsetSyncStore (Kafka 3.8+: KAFKA-14666, KAFKA-15202, KAFKA-15905) without the
// KafkaBasedLog: the caller reads the offset-syncs topic, calls Add for every sync and ReadToEnd once the
// initial read has reached the end offsets.
type OffsetSyncStore struct {
	mu            sync.RWMutex
	syncs         map[TopicPartition]*offsetSyncSlots
	mustReadToEnd bool
	readToEnd     bool
}

// NewOffsetSyncStore returns a store whose initial read keeps only the latest sync of each partition
// (mustReadToEnd true), which is MM2's default and what its checkpoint task uses when loading the
// checkpoints topic failed.
func NewOffsetSyncStore() *OffsetSyncStore {
	return NewOffsetSyncStoreReadToEnd(true)
}

// NewOffsetSyncStoreReadToEnd returns a store with MM2's initializationMustReadToEnd set to mustReadToEnd.
// MM2's checkpoint task passes false when it loaded the checkpoints topic, so that the whole sync history
// read at start-up stays usable, and true when it did not, so that no sync older than the latest one read
// at start-up can be used (a translation emitted by a previous task generation is never undercut).
func NewOffsetSyncStoreReadToEnd(mustReadToEnd bool) *OffsetSyncStore {
	return &OffsetSyncStore{
		syncs:         make(map[TopicPartition]*offsetSyncSlots),
		mustReadToEnd: mustReadToEnd,
	}
}

// Add indexes one sync read from the topic. While initial reading (before ReadToEnd is called) and
// mustReadToEnd is true every sync resets the partition's history (MM2's initializationMustReadToEnd).
// An upstream rewind (a sync whose upstream offset is below the newest one's) also resets the history.
func (s *OffsetSyncStore) Add(sync OffsetSync) {
	// A fresh allocation per call: slots compare by identity, so each record read is its own sync.
	n := &sync
	tp := sync.TopicPartition()

	s.mu.Lock()
	defer s.mu.Unlock()
	current := s.syncs[tp]
	next := new(offsetSyncSlots)
	if current == nil || (s.mustReadToEnd && !s.readToEnd) || n.UpstreamOffset < current[0].UpstreamOffset {
		next.fill(n)
	} else {
		*next = *current
		next.insert(current, n)
	}
	s.syncs[tp] = next
}

// ReadToEnd marks the initial read of the topic done; until then Translate returns ok=false. mustReadToEnd is set by a
// constructor option or field: provide `func NewOffsetSyncStoreReadToEnd(mustReadToEnd bool) *OffsetSyncStore` too.
func (s *OffsetSyncStore) ReadToEnd() {
	s.mu.Lock()
	s.readToEnd = true
	s.mu.Unlock()
}

// Translate applies MM2's translateDownstream: ok=false when not ready or no syncs for tp ("no translation"); otherwise
// the downstream offset, -1 when the upstream offset is before the oldest usable sync.
//
// With sync s the newest one at or before upstreamOffset, the result is s.DownstreamOffset when
// upstreamOffset is s's own offset and s.DownstreamOffset+1 otherwise: past a sync, the store only knows
// the next replicated record lands after s.DownstreamOffset, so it never positions a group ahead of data it
// has not read (it may make the group re-read records). downstream is 0 when ok is false.
func (s *OffsetSyncStore) Translate(tp TopicPartition, upstreamOffset int64) (downstream int64, ok bool) {
	s.mu.RLock()
	ready := s.readToEnd
	slots := s.syncs[tp]
	s.mu.RUnlock()
	if !ready || slots == nil {
		return 0, false
	}
	found := slots.lookup(upstreamOffset)
	switch {
	case found.UpstreamOffset > upstreamOffset:
		return -1, true
	case found.UpstreamOffset == upstreamOffset:
		return found.DownstreamOffset, true
	default:
		return found.DownstreamOffset + 1, true
	}
}

// fill points every slot at n; a uniform array meets invariants B and C trivially.
func (a *offsetSyncSlots) fill(n *OffsetSync) {
	for i := range a {
		a[i] = n
	}
}

// lookup returns the newest sync at or before upstreamOffset, or the oldest sync when every sync is after
// it. The scan over 64 exponentially spaced slots amounts to a binary search over the offsets.
func (a *offsetSyncSlots) lookup(upstreamOffset int64) *OffsetSync {
	for _, sync := range a {
		if sync.UpstreamOffset <= upstreamOffset {
			return sync
		}
	}
	return a[offsetSyncsPerPartition-1]
}

// insert makes n the newest sync of a, which starts as a copy of old and whose upstream offset is not
// below n's, then repairs invariant B slot by slot. A slot whose sync became too old for its position is
// replaced by the best candidate: n itself or, preferably, a sync from old that meets B and C at that
// position, which keeps more distinct syncs (and so better precision) than shifting n down. The repair
// stops at the first slot that still meets B: every later slot does too.
func (a *offsetSyncSlots) insert(old *offsetSyncSlots, n *OffsetSync) {
	a[0] = n
	candidate := n
	// next indexes the sync of old considered next as a candidate. It only moves forward and never
	// passes the slot being repaired.
	next := 0
	for cur := 1; cur < offsetSyncsPerPartition; cur++ {
		prev := cur - 1
		for {
			o := old[next]
			// Recent enough for this slot? If not, it may still fit a later, older slot.
			recent := invariantB(a[prev], o, prev, cur)
			// Far enough from the slot before? If not, it never will be at a later slot either.
			apartFromPrev := invariantC(a[prev], o, prev)
			// Far enough from the slot after (which prefers keeping the older, sparser sync there)?
			apartFromNext := cur+1 >= offsetSyncsPerPartition || invariantC(o, a[cur+1], cur)
			// The next slot of old holds the same sync: nothing new to learn from this one again.
			repeated := next+1 < offsetSyncsPerPartition && old[next+1] == o

			promote := recent && apartFromPrev && apartFromNext
			if promote {
				candidate = o
			}
			skip := repeated || !apartFromPrev
			if promote || skip {
				next++
			}
			if !skip || next >= cur {
				break
			}
		}
		if invariantB(a[prev], a[cur], prev, cur) {
			break
		}
		a[cur] = candidate
	}
}

// invariantB reports whether sync x at slot i and sync y at slot j (i < j) meet invariant B:
// x.upstream <= y.upstream + 2^j - 2^i. The arithmetic wraps like Java's long (2^63 is negative); a
// negative bound counts as met, as in MM2.
func invariantB(x, y *OffsetSync, i, j int) bool {
	bound := y.UpstreamOffset + int64(1)<<j - int64(1)<<i
	return x == y || bound < 0 || x.UpstreamOffset <= bound
}

// invariantC reports whether sync x at slot i and the sync y after it meet invariant C:
// x.upstream >= y.upstream + 2^max(i-2,0). A bound that wrapped negative counts as not met, as in MM2.
func invariantC(x, y *OffsetSync, i int) bool {
	bound := y.UpstreamOffset + int64(1)<<max(i-2, 0)
	return x == y || (bound >= 0 && x.UpstreamOffset >= bound)
}
