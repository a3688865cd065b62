package offsetmap

// Answer is a translated position.
type Answer struct {
	// Offset is the target offset to resume from.
	Offset int64
	// Exact says the consumer resuming at Offset reads every later replicated record once and nothing it had
	// read on the source; otherwise Offset is behind the true position (the consumer re-reads some records).
	Exact bool
}

// Translate maps a group's committed source offset c (the next record it reads) to the target, from prev, the
// last range starting at or before c, and next, the first range starting after it (nil when there is none).
// ok is false when the map cannot answer: there is no range at or before c, and c is not in the gap next
// knows to precede it (GapBefore).
//
// A translation that rests on an Uncommitted range is never exact: the target may hold copies of aborted
// source records there, which the group never saw on the source.
func Translate(prev, next *Range, c int64) (a Answer, ok bool) {
	a, ok = translate(prev, next, c)
	if prev != nil && prev.Uncommitted || next != nil && next.Uncommitted {
		a.Exact = false
	}
	return a, ok
}

func translate(prev, next *Range, c int64) (a Answer, ok bool) {
	if prev == nil || prev.SourceStart > c {
		if next != nil && c < next.SourceStart && c >= next.SourceStart-next.GapBefore {
			// Before the first range, where the task read from: no source record lies in between.
			return Answer{Offset: next.TargetStart, Exact: true}, true
		}
		return Answer{}, false
	}
	switch {
	case c <= prev.SourceEnd:
		return Answer{Offset: prev.TargetStart + (c - prev.SourceStart), Exact: true}, true
	case next != nil && next.UnmappedBefore && c < next.SourceStart-next.GapBefore:
		// Records before next were replicated where the map does not know: resuming after prev re-reads some
		// of them rather than skip any.
		return Answer{Offset: prev.TargetEnd() + 1}, true
	case next != nil:
		// c is in a gap of the source (or at its edge): the first record at or after c is next's first.
		return Answer{Offset: next.TargetStart, Exact: true}, true
	default:
		// Past the last replicated record: exact while c is within what the task had read through.
		return Answer{Offset: prev.TargetEnd() + 1, Exact: c <= prev.SourceNext}, true
	}
}
