package offsetmap

import (
	"math/rand/v2"
	"testing"
)

// replicate feeds a tracker the acknowledgements of records at the given source offsets, written to the target
// from target offset base on, and returns the ranges it would persist.
func replicate(t *testing.T, tr *Tracker, base int64, sources ...int64) []Range {
	t.Helper()
	for i, u := range sources {
		tr.Forwarded()
		tr.Acked(u, base+int64(i))
	}
	return tr.Take().Ranges
}

func TestTrackerStartsARangeOnlyAtGaps(t *testing.T) {
	tr := NewTracker(nil)
	got := replicate(t, tr, 0, 0, 1, 2, 5, 6, 9)
	want := []Range{
		{SourceStart: 0, SourceEnd: 2, TargetStart: 0, SourceNext: 3},
		{SourceStart: 5, SourceEnd: 6, TargetStart: 3, SourceNext: 7},
		{SourceStart: 9, SourceEnd: 9, TargetStart: 5, SourceNext: 10},
	}
	if len(got) != len(want) {
		t.Fatalf("ranges: got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("range %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestTrackerContinuesTheStoredRangeAfterARestart(t *testing.T) {
	last := Range{SourceStart: 0, SourceEnd: 9, TargetStart: 100, SourceNext: 10}
	tr := NewTracker(&last)
	got := replicate(t, tr, 110, 10, 11)
	if len(got) != 1 || got[0] != (Range{SourceStart: 0, SourceEnd: 11, TargetStart: 100, SourceNext: 12}) {
		t.Fatalf("a contiguous restart must extend the stored range: %+v", got)
	}
	// Records re-sent after a crash land at new target offsets: a new range, not a rewind.
	tr = NewTracker(&last)
	got = replicate(t, tr, 115, 10)
	if len(got) != 1 || got[0].SourceStart != 10 || got[0].TargetStart != 115 || got[0].Rewind {
		t.Fatalf("re-sent records start a new range: %+v", got)
	}
}

func TestTrackerMarksRewinds(t *testing.T) {
	tr := NewTracker(nil)
	replicate(t, tr, 0, 0, 1, 2, 3)
	got := replicate(t, tr, 4, 1) // the offsets API moved the source offset back
	if len(got) != 1 || !got[0].Rewind || got[0].SourceStart != 1 {
		t.Fatalf("a source rewind supersedes the earlier ranges: %+v", got)
	}
	tr = NewTracker(nil)
	replicate(t, tr, 50, 0, 1)
	got = replicate(t, tr, 0, 2) // the remote topic was re-created
	if len(got) != 1 || !got[0].Rewind {
		t.Fatalf("a target rewind supersedes the earlier ranges: %+v", got)
	}
}

func TestTrackerPersistedKeepsWhatChangedSince(t *testing.T) {
	tr := NewTracker(nil)
	replicate(t, tr, 0, 0, 1)
	snap := tr.Take()
	replicate(t, tr, 2, 2, 7) // extends the taken range, then closes it and starts another
	tr.Persisted(snap)
	got := tr.Take().Ranges
	if len(got) != 2 || got[0].SourceEnd != 2 || got[1].SourceStart != 7 {
		t.Fatalf("changes after the snapshot must stay unpersisted: %+v", got)
	}
	tr.Persisted(tr.Take())
	if got := tr.Take().Ranges; len(got) != 0 {
		t.Fatalf("nothing left to persist: %+v", got)
	}
}

func TestReadThroughWaitsForAcknowledgements(t *testing.T) {
	tr := NewTracker(nil)
	tr.Forwarded()
	tr.Forwarded()
	tr.Acked(0, 0)
	tr.ReadThrough(3) // offset 2 is a transaction marker
	if r, _ := tr.Last(); r.SourceNext != 1 {
		t.Fatalf("read-through applied with a record in flight: %+v", r)
	}
	tr.Acked(1, 1)
	if r, _ := tr.Last(); r.SourceNext != 3 {
		t.Fatalf("read-through not applied once everything was acknowledged: %+v", r)
	}
}

func TestTranslate(t *testing.T) {
	a := Range{SourceStart: 10, SourceEnd: 19, TargetStart: 100, SourceNext: 20}
	b := Range{SourceStart: 25, SourceEnd: 29, TargetStart: 110, SourceNext: 32}
	first := a
	first.GapBefore = 8 // read from 2: offsets 2..9 hold no record (an aborted transaction and its marker)
	cases := []struct {
		name       string
		prev, next *Range
		c          int64
		want       Answer
		ok         bool
	}{
		{"before every range", nil, &a, 5, Answer{}, false},
		{"in the known gap before the first range", nil, &first, 3, Answer{100, true}, true},
		{"at the start of the known gap", nil, &first, 2, Answer{100, true}, true},
		{"before the known gap", nil, &first, 1, Answer{}, false},
		{"first record", &a, &b, 10, Answer{100, true}, true},
		{"inside", &a, &b, 15, Answer{105, true}, true},
		{"end of a range", &a, &b, 20, Answer{110, true}, true},
		{"in a gap", &a, &b, 23, Answer{110, true}, true},
		{"at the tail", &b, nil, 30, Answer{115, true}, true},
		{"past a trailing marker", &b, nil, 32, Answer{115, true}, true},
		{"ahead of replication", &b, nil, 40, Answer{115, false}, true},
	}
	for _, tc := range cases {
		got, ok := Translate(tc.prev, tc.next, tc.c)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s: Translate(%d) = %+v, %v; want %+v, %v", tc.name, tc.c, got, ok, tc.want, tc.ok)
		}
	}
}

// TestTranslationIsExactOnRandomLogs replays random source logs with gaps through a tracker and checks every
// position against the truth: the target offset of the first record at or after it.
func TestTranslationIsExactOnRandomLogs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 200 {
		var sources []int64
		off := int64(rng.IntN(5))
		for range 1 + rng.IntN(200) {
			sources = append(sources, off)
			off += 1 + int64(rng.IntN(3)/2*rng.IntN(4))
		}
		// The task read the partition from its start, before the first record: the offsets in between hold
		// aborted records and markers.
		from := int64(rng.IntN(int(sources[0]) + 1))
		tr := NewTracker(nil)
		tr.ReadFrom(from)
		ranges := replicate(t, tr, 7, sources...)
		logEnd := sources[len(sources)-1] + 1
		for c := from; c <= logEnd; c++ {
			var prev, next *Range
			for i := range ranges {
				if ranges[i].SourceStart <= c {
					prev = &ranges[i]
				} else if next == nil {
					next = &ranges[i]
				}
			}
			got, ok := Translate(prev, next, c)
			want := int64(7 + len(sources))
			for i, u := range sources {
				if u >= c {
					want = 7 + int64(i)
					break
				}
			}
			if !ok || !got.Exact || got.Offset != want {
				t.Fatalf("iteration %d: log %v, position %d: got %+v %v, want %d exact", iter, sources, c, got, ok, want)
			}
		}
	}
}

func TestReadFromKeepsTheGapBeforeANewRangeOnly(t *testing.T) {
	tr := NewTracker(nil)
	tr.ReadFrom(0)
	got := replicate(t, tr, 0, 4, 5) // offsets 0..3: an aborted transaction and its marker
	if len(got) != 1 || got[0].GapBefore != 4 {
		t.Fatalf("the first range must keep the gap it was read from: %+v", got)
	}
	// A pipeline that restarts and continues the range claims nothing new.
	last := got[0]
	tr = NewTracker(&last)
	tr.ReadFrom(6)
	if got := replicate(t, tr, 2, 6); len(got) != 1 || got[0].GapBefore != 4 || got[0].SourceEnd != 6 {
		t.Fatalf("a continued range keeps its own gap: %+v", got)
	}
	// A record dropped between the read start and the first acknowledgement voids the claim.
	tr = NewTracker(nil)
	tr.ReadFrom(0)
	tr.Forwarded()
	tr.Dropped()
	if got := replicate(t, tr, 0, 3); len(got) != 1 || got[0].GapBefore != 0 {
		t.Fatalf("a dropped record must void the gap: %+v", got)
	}
	// The claim is for the first acknowledged record only; Reset forgets it.
	tr = NewTracker(nil)
	tr.ReadFrom(0)
	tr.Reset()
	if got := replicate(t, tr, 0, 3); len(got) != 1 || got[0].GapBefore != 0 {
		t.Fatalf("Reset must forget the read start: %+v", got)
	}
}

// Records replicated where the map does not know (a resume past the stored map, an acknowledgement without an
// offset): a group among them translates from the range before, approximately and never ahead of where they
// are; past them, exactly again.
func TestUnmappedRecordsTranslateFromTheRangeBefore(t *testing.T) {
	tr := NewTracker(nil)
	replicate(t, tr, 0, 0, 1, 2, 3)
	tr.Unmapped() // source 4..9 were committed at target 4..11 (with markers) and their range was lost
	tr.ReadFrom(10)
	got := replicate(t, tr, 12, 11, 12) // 10 is a marker
	if len(got) != 2 {
		t.Fatalf("ranges %+v", got)
	}
	prev, next := got[0], got[1]
	if prev.UnmappedBefore || !next.UnmappedBefore || next.GapBefore != 1 {
		t.Fatalf("only the range after the unmapped records says so: %+v", got)
	}
	for c := int64(4); c <= 9; c++ {
		if a, ok := Translate(&prev, &next, c); !ok || a.Exact || a.Offset != 4 {
			t.Errorf("position %d among unmapped records: %+v %v, want 4, approximate", c, a, ok)
		}
	}
	for _, c := range []int64{10, 11} {
		if a, ok := Translate(&prev, &next, c); !ok || !a.Exact || a.Offset != 12 {
			t.Errorf("position %d past the unmapped records: %+v %v, want 12, exact", c, a, ok)
		}
	}
	// Later ranges claim nothing.
	if more := replicate(t, tr, 20, 15); more[len(more)-1].SourceStart != 15 || more[len(more)-1].UnmappedBefore {
		t.Fatalf("a later range must not inherit the flag: %+v", more)
	}
}

func TestFlagSkipsMarksRangesFromTheFirstSkipOn(t *testing.T) {
	tr := NewTracker(nil)
	tr.FlagSkips()
	replicate(t, tr, 0, 0, 1, 2)
	if _, ok := tr.Skipped(); ok {
		t.Fatalf("nothing skipped yet")
	}
	got := replicate(t, tr, 3, 4, 5) // offset 3 skipped (a transaction marker)
	if at, ok := tr.Skipped(); !ok || at != 3 {
		t.Fatalf("skipped: got %d %v, want 3", at, ok)
	}
	if len(got) != 2 || !got[0].Uncommitted || !got[1].Uncommitted {
		t.Fatalf("the range before the skip and the one after are uncommitted: %+v", got)
	}
	tr.ReadThrough(9) // a trailing marker at 6..8 read through
	if a, _ := Translate(&got[0], &got[1], 1); a.Exact {
		t.Errorf("a translation into an uncommitted range is not exact: %+v", a)
	}

	// Without FlagSkips, or with skips explained by unmapped acknowledgements, nothing is marked.
	plain := NewTracker(nil)
	if r := replicate(t, plain, 0, 0, 1, 5); r[0].Uncommitted || r[1].Uncommitted {
		t.Errorf("not flagged: %+v", r)
	}
	un := NewTracker(nil)
	un.FlagSkips()
	replicate(t, un, 0, 0, 1)
	un.Unmapped()
	if r := replicate(t, un, 5, 5); r[len(r)-1].Uncommitted {
		t.Errorf("records acknowledged without offsets are no skip: %+v", r)
	}
}
