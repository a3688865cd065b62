package source

import "time"

// endSightings remembers when a partition's end offset was first seen to pass each value, so that the age of
// the oldest unreplicated record is known even when its own timestamp is not (the consumer has not fetched it
// yet, or nothing is in flight between two fetches): then it is as old as the moment kmirror first saw it
// exist. Without this the lag in seconds had holes exactly while there was lag, which resets the `for:` of
// any alert on it.
type endSightings struct {
	// marks hold, in increasing order of end, that every offset below end was seen by at.
	marks []endMark
}

type endMark struct {
	end int64
	at  time.Time
}

// endSightingsMax bounds the marks kept per partition: past it, neighbours merge, keeping the earlier time,
// so that an age is over- rather than under-stated.
const endSightingsMax = 64

// observe records that the partition's end offset was end at now (negative: unknown).
func (s *endSightings) observe(end int64, now time.Time) {
	if end < 0 {
		return
	}
	if n := len(s.marks); n > 0 {
		last := s.marks[n-1].end
		switch {
		case end == last:
			return
		case end < last:
			s.marks = s.marks[:0] // the log was truncated or re-created: what was seen before says nothing
		}
	}
	s.marks = append(s.marks, endMark{end: end, at: now})
	if len(s.marks) > endSightingsMax {
		merged := s.marks[:0]
		for i := 0; i < len(s.marks); i += 2 {
			m := s.marks[i]
			if i+1 < len(s.marks) {
				m.end = s.marks[i+1].end
			}
			merged = append(merged, m)
		}
		s.marks = merged
	}
}

// firstSeen returns when the record at offset pos was first seen to exist, forgetting what lies before pos
// (replicated); zero when pos was never seen below the end.
func (s *endSightings) firstSeen(pos int64) time.Time {
	i := 0
	for i < len(s.marks) && s.marks[i].end <= pos {
		i++
	}
	s.marks = s.marks[i:]
	if len(s.marks) == 0 {
		return time.Time{}
	}
	return s.marks[0].at
}

// oldestUnreplicated returns the time the lag in seconds is measured from at position pos against end: headTS,
// the source timestamp of the oldest record in flight, when known; else when kmirror first saw the record at
// pos; zero when nothing is unreplicated or nothing is known.
func (s *endSightings) oldestUnreplicated(pos, end int64, headTS time.Time, now time.Time) time.Time {
	s.observe(end, now)
	seen := s.firstSeen(pos)
	if end < 0 || pos >= end || !headTS.IsZero() {
		return headTS
	}
	return seen
}
