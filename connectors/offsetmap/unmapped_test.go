package offsetmap

import "testing"

// A record acknowledged without a target offset lies past the current range: reading through it must not let
// a group positioned after it translate as exact to the offset after the range, which is before its copy.
func TestReadThroughStopsAtUnmappedRecords(t *testing.T) {
	tr := NewTracker(nil)
	tr.Forwarded()
	tr.Acked(0, 0)
	tr.Forwarded()
	tr.Dropped() // record 1: written, but its acknowledgement carried no offset
	tr.Unmapped()
	tr.ReadThrough(2)
	cur, _ := tr.Last()
	if cur.SourceNext != 1 {
		t.Fatalf("the range claims to have read through %d, past the unmapped record 1: %+v", cur.SourceNext, cur)
	}
	if a, ok := Translate(&cur, nil, 2); !ok || a.Exact {
		t.Fatalf("a group at 2 translates to %+v (ok %v): exact, though the copy of record 1 may lie after it", a, ok)
	}
	tr.Forwarded()
	tr.Acked(2, 2)
	if r, _ := tr.Last(); !r.UnmappedBefore || r.SourceStart != 2 {
		t.Fatalf("the next range does not say records before it are unmapped: %+v", r)
	}
}
