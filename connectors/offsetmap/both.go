package offsetmap

// Two flows that keep a topic's name (IdentityReplicationPolicy, active-active) make each cluster's partition
// an interleaving of two origins: the cluster's own records and the copies the opposite flow wrote. A group
// positioned at c on cluster A has read A's own records below c and the copies of B's records below c; on B it
// must resume before the first of either it has not read. The A→B map answers for A's records ([Translate]);
// the B→A map, read from its target side ([TranslateBack]), answers for B's own. The two answers point at
// different records, so [Combine] takes the smaller one, which skips neither origin, and says whether the
// records between them are all unread (exact) or may include records the group has read (it re-reads them).

// TranslateBack maps a position x on a flow's target (the next record a group reads there) back to the flow's
// source: the source offset of the first record the flow replicated at a target offset ≥ x, so that resuming
// there on the source reads every record of this flow's origin the group has not read on the target. prev is
// the last range whose TargetStart ≤ x and next the range after it (nil when none). ok is false without any
// range: nothing is known of the flow.
//
// Exact says no source record at or after Offset was replicated below x. Past the last range it is exact only
// at the target offset right after it: records replicated since the map was last stored may lie before x.
func TranslateBack(prev, next *Range, x int64) (a Answer, ok bool) {
	switch {
	case prev == nil && next == nil:
		return Answer{}, false
	case prev == nil:
		// x is before every mapped record: none of this origin was read below x. Records before the first
		// range were never replicated by the flow (or lie below the source's log start).
		return Answer{Offset: next.SourceStart - next.GapBefore, Exact: !next.Uncommitted}, true
	case x <= prev.TargetEnd():
		return Answer{Offset: prev.SourceStart + (x - prev.TargetStart), Exact: !prev.Uncommitted}, true
	case next != nil && next.UnmappedBefore:
		// Records after prev were replicated at offsets the map does not know: resume right after prev.
		return Answer{Offset: prev.SourceEnd + 1}, true
	case next != nil:
		// x lies in a gap of the flow's target (records of other origins): the source offsets between the two
		// ranges hold nothing the flow replicated.
		return Answer{Offset: next.SourceStart, Exact: !prev.Uncommitted && !next.Uncommitted}, true
	default:
		return Answer{Offset: prev.SourceNext, Exact: x == prev.TargetEnd()+1 && !prev.Uncommitted}, true
	}
}

// LastBefore returns the target offset of the last record the flow replicated from a source offset below c,
// from the ranges [Translate] takes; known is false when the map cannot tell (the record lies in an earlier
// range), and last is -1 when there is none.
func LastBefore(prev, next *Range, c int64) (last int64, known bool) {
	switch {
	case prev == nil || prev.SourceStart > c:
		if next != nil && c < next.SourceStart && c >= next.SourceStart-next.GapBefore && next.GapBefore == next.SourceStart {
			return -1, true // the flow read the partition from its start and found nothing before next
		}
		return 0, false
	case c == prev.SourceStart:
		return 0, false
	case c <= prev.SourceEnd:
		return prev.TargetStart + (c - 1 - prev.SourceStart), true
	default:
		return prev.TargetEnd(), true
	}
}

// LastBackBefore returns the source offset of the last record the flow replicated at a target offset below x,
// from the ranges [TranslateBack] takes; known and -1 as for [LastBefore].
func LastBackBefore(prev, next *Range, x int64) (last int64, known bool) {
	switch {
	case prev == nil:
		if next != nil && next.GapBefore == next.SourceStart {
			return -1, true
		}
		return 0, false
	case x == prev.TargetStart:
		return 0, false
	case x <= prev.TargetEnd():
		return prev.SourceStart + (x - 1 - prev.TargetStart), true
	default:
		return prev.SourceEnd, true
	}
}

// Side is one origin's answer on the cluster a group moves to: where to resume for that origin's records, and
// the offset of the last of them before that position (Last, -1 none; LastKnown false when unknown).
type Side struct {
	Answer
	Last      int64
	LastKnown bool
}

// Combine merges the answers of the two origins of an interleaved partition, both in the offsets of the
// cluster the group moves to. The smaller position skips no record of either origin; it is exact when both
// answers are and no record of the other origin lies between the two positions (those the group has read and
// would read again). The group re-reads at most the records between the two positions.
func Combine(a, b Side) Answer {
	if a.Offset > b.Offset {
		a, b = b, a
	}
	exact := a.Exact && b.Exact
	if a.Offset < b.Offset {
		// b's origin has records below b.Offset that the group has read: any at or after a.Offset is read again.
		exact = exact && b.LastKnown && b.Last < a.Offset
	}
	return Answer{Offset: a.Offset, Exact: exact}
}

// Opposite is the opposite flow's side of c in an interleaved partition: its answer ([TranslateBack]) and its
// last record before it ([LastBackBefore]), from that flow's ranges around c read from its target side. ok is
// false when those ranges do not place c.
func Opposite(backPrev, backNext *Range, c int64) (s Side, ok bool) {
	s.Answer, ok = TranslateBack(backPrev, backNext, c)
	if ok {
		s.Last, s.LastKnown = LastBackBefore(backPrev, backNext, c)
	}
	return s, ok
}

// WithOpposite completes own, this flow's answer for c in an interleaved partition ([Translate] over ownPrev
// and ownNext), with the opposite flow's records ([Opposite] over backPrev and backNext). Without them own
// stands as it is.
func WithOpposite(own Answer, ownPrev, ownNext, backPrev, backNext *Range, c int64) Answer {
	theirs, ok := Opposite(backPrev, backNext, c)
	if !ok {
		return own
	}
	mine := Side{Answer: own}
	mine.Last, mine.LastKnown = LastBefore(ownPrev, ownNext, c)
	return Combine(mine, theirs)
}
