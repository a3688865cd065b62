package offsetmap

// MaxRangesPerPartition bounds the stored history of one partition. A partition needs a new range only at a
// gap in its offsets, so this is reached only by heavily compacted or transactional topics; past it the oldest
// ranges are dropped and translation there falls back to offset syncs.
const MaxRangesPerPartition = 10_000

// Range maps the source offsets SourceStart..SourceEnd one to one onto the target offsets TargetStart.. .
type Range struct {
	SourceStart, SourceEnd int64
	TargetStart            int64
	// SourceNext is the source position read through: no source record lies in (SourceEnd, SourceNext).
	SourceNext int64
	// GapBefore is how many source offsets right before SourceStart are known to hold no record: the task read
	// the partition from SourceStart-GapBefore and the first record it got was at SourceStart (a partition that
	// starts with an aborted transaction, or with compacted records). A group positioned there translates
	// exactly even when no range precedes this one. 0 claims nothing.
	GapBefore int64
	// UnmappedBefore says source records between the previous range and this one's gap were replicated at target
	// offsets the map does not know (records acknowledged without an offset, or committed in transactions whose
	// ranges were not persisted before a crash): a group positioned there translates from the previous range,
	// approximately (never ahead), not from this one, which would skip them.
	UnmappedBefore bool
	// Uncommitted says the range was replicated by a consumer reading uncommitted records from a partition
	// that skips offsets (transaction markers, so it holds transactions): it may hold copies of records of
	// aborted transactions, which a read_committed consumer of the source never saw, so no translation into it
	// is exact.
	Uncommitted bool
	// Rewind marks a range that began with a step backwards in the source or the target offsets: it supersedes
	// every other stored range of the partition that it overlaps, that follows it in the source, or that ends at
	// or after its target start. Not stored.
	Rewind bool
}

// TargetEnd is the target offset of the range's last record.
func (r Range) TargetEnd() int64 { return r.TargetStart + (r.SourceEnd - r.SourceStart) }

// Tracker extends one partition's ranges as the target acknowledges records in source order. It is not safe
// for concurrent use: the source task calls it under the partition's lock.
type Tracker struct {
	cur    Range
	curSeq uint64 // identifies cur: a new range gets a new number
	has    bool
	closed []seqRange // ranges completed since they were last persisted, oldest first
	dirty  bool       // cur changed since it was last persisted
	seq    uint64
	readTo int64 // a source position read through, waiting for everything before it to be acknowledged
	from   int64 // the source position the consumer read from, for the next range to start (-1: none)
	// unmapped: records after the current range were replicated without the map knowing where; the next range
	// says so (UnmappedBefore).
	unmapped bool
	pending  int  // records forwarded and not yet acknowledged (or dropped)
	over     bool // the next range supersedes everything stored (StartOver)
	// uncommitted: the consumer reads uncommitted records (FlagSkips), and has skipped offsets since, so every
	// range from the one before the skip on is Uncommitted. skippedAt is the first offset it skipped (-1 none).
	flagSkips   bool
	uncommitted bool
	skippedAt   int64
}

type seqRange struct {
	Range
	seq uint64
}

// Snapshot is what a persist takes from a tracker; hand it back to Persisted once it is stored.
type Snapshot struct {
	Ranges []Range
	closed uint64 // the newest closed range taken (0: none)
	cur    uint64
}

// NewTracker returns a tracker that continues last (the partition's last stored range) if the first record
// acknowledged is contiguous with it.
func NewTracker(last *Range) *Tracker {
	t := &Tracker{from: -1, skippedAt: -1}
	if last != nil {
		t.cur, t.has = *last, true
		t.uncommitted = last.Uncommitted
		t.cur.Rewind = false
		t.seq++
		t.curSeq = t.seq
	}
	return t
}

// FlagSkips says that the consumer reads uncommitted records: once it skips offsets (a transaction marker), the
// ranges are Uncommitted from the current one on.
func (t *Tracker) FlagSkips() { t.flagSkips = true }

// Skipped returns the first source offset the consumer skipped while FlagSkips was set; false when none.
func (t *Tracker) Skipped() (int64, bool) { return t.skippedAt, t.skippedAt >= 0 }

// skipped records that the consumer skipped the source offset at.
func (t *Tracker) skipped(at int64) {
	if !t.flagSkips {
		return
	}
	if t.skippedAt < 0 {
		t.skippedAt = at
	}
	t.uncommitted = true
	if t.has && !t.cur.Uncommitted {
		t.cur.Uncommitted, t.dirty = true, true
	}
}

// StartOver makes the next range supersede every stored range of the partition: the source topic was
// re-created, so its offsets start again and the old map means nothing.
func (t *Tracker) StartOver() { t.over = true }

// Forwarded counts a record handed to the producer.
func (t *Tracker) Forwarded() { t.pending++ }

// Dropped counts a forwarded record that will never be acknowledged (refused or failed, or written without a
// target offset). The source position given to ReadFrom no longer tells anything: a record of the source lies
// between it and the next acknowledged one.
func (t *Tracker) Dropped() { t.pending, t.from = max(t.pending-1, 0), -1 }

// ForwardedN counts n records handed to the producer (Forwarded n times).
func (t *Tracker) ForwardedN(n int) { t.pending += max(n, 0) }

// DroppedN counts n forwarded records that will never be acknowledged (Dropped n times).
func (t *Tracker) DroppedN(n int) { t.pending = max(t.pending-max(n, 0), 0) }

// Reset forgets what was in flight, for a pipeline that restarts from the acknowledged offsets.
func (t *Tracker) Reset() { t.pending, t.readTo, t.from = 0, 0, -1 }

// Unmapped records that source records after the current range were replicated at target offsets the map
// does not know: an acknowledgement without an offset, or a resume past the current range (the offsets of a
// committed transaction whose ranges were not persisted). The next range starts with UnmappedBefore.
func (t *Tracker) Unmapped() { t.unmapped = true }

// ReadFrom records that the consumer read the partition from source position from, and that the record about
// to be forwarded, at or after from, is the first it returned: no source record lies in between (an aborted
// transaction or markers at the start of the partition). If that record starts a new range, the range keeps the
// gap (GapBefore), so that a group positioned in it translates exactly even when no range precedes it.
func (t *Tracker) ReadFrom(from int64) { t.from = from }

// Acked records that the record at source offset u was written at target offset d.
func (t *Tracker) Acked(u, d int64) {
	t.pending = max(t.pending-1, 0)
	from := t.from
	t.from = -1
	if t.has && u == t.cur.SourceEnd+1 && d == t.cur.TargetEnd()+1 {
		t.cur.SourceEnd = u
		t.cur.SourceNext = max(t.cur.SourceNext, u+1)
	} else {
		rewind := t.over || t.has && (u <= t.cur.SourceEnd || d <= t.cur.TargetEnd())
		t.over = false
		if t.has && !rewind && !t.unmapped && u > t.cur.SourceNext {
			t.skipped(t.cur.SourceNext)
		}
		switch {
		case rewind:
			// Everything before is superseded; the store deletes it when it stores this range.
			t.closed = t.closed[:0]
		case t.has && t.dirty:
			t.closed = append(t.closed, seqRange{t.cur, t.curSeq})
		}
		t.seq++
		t.cur, t.curSeq, t.has = Range{SourceStart: u, SourceEnd: u, TargetStart: d, SourceNext: u + 1, Rewind: rewind, Uncommitted: t.uncommitted}, t.seq, true
		if from >= 0 && from < u {
			t.cur.GapBefore = u - from
		}
		t.cur.UnmappedBefore, t.unmapped = t.unmapped, false
	}
	t.dirty = true
	t.applyReadTo()
}

// AckedRun records that the n records at source offsets u..u+n-1 were written at target offsets d..d+n-1:
// Acked for each of them in order, in one step.
func (t *Tracker) AckedRun(u, d int64, n int) {
	if n <= 0 {
		return
	}
	t.Acked(u, d)
	if n == 1 {
		return
	}
	// The rest continues the range Acked has just extended or begun.
	last := u + int64(n) - 1
	t.pending = max(t.pending-(n-1), 0)
	t.cur.SourceEnd = last
	t.cur.SourceNext = max(t.cur.SourceNext, last+1)
	t.applyReadTo()
}

// ReadThrough records that every source record below next has been handed to the producer (the consumer's
// position while it has nothing more to return). Once they are all acknowledged the current range's
// SourceNext moves to next: a group committed there (past a transaction marker) translates exactly.
func (t *Tracker) ReadThrough(next int64) {
	t.readTo = max(t.readTo, next)
	t.applyReadTo()
}

func (t *Tracker) applyReadTo() {
	// Records replicated at unknown target offsets (Unmapped) lie past the current range: it must not claim to
	// have read through them, or a group positioned after them would translate as exact to before their copies.
	if t.pending == 0 && t.has && !t.unmapped && t.readTo > t.cur.SourceNext {
		if t.readTo > t.cur.SourceEnd+1 {
			t.skipped(t.cur.SourceEnd + 1)
		}
		t.cur.SourceNext = t.readTo
		t.dirty = true
	}
}

// Take returns the ranges changed since they were last persisted, oldest first.
func (t *Tracker) Take() Snapshot {
	var s Snapshot
	for _, r := range t.closed {
		s.Ranges = append(s.Ranges, r.Range)
		s.closed = r.seq
	}
	if t.dirty {
		s.Ranges = append(s.Ranges, t.cur)
		s.cur = t.curSeq
	}
	return s
}

// Last returns the current range, if any.
func (t *Tracker) Last() (Range, bool) { return t.cur, t.has }

// Persisted records that a snapshot was stored; what changed since stays to be persisted.
func (t *Tracker) Persisted(s Snapshot) {
	for len(t.closed) > 0 && t.closed[0].seq <= s.closed {
		t.closed = t.closed[1:]
	}
	if s.cur == 0 || s.cur != t.curSeq {
		return
	}
	t.cur.Rewind = false // its supersession is done
	if taken := s.Ranges[len(s.Ranges)-1]; taken.SourceEnd == t.cur.SourceEnd && taken.SourceNext == t.cur.SourceNext && taken.Uncommitted == t.cur.Uncommitted {
		t.dirty = false
	}
}
