package failover

import (
	"testing"

	"github.com/kmirror/kmirror/kmtype"
)

// TestSourceOffsetOf checks the backward translation of a position on the target: inside a range one to one,
// right after it at the source's next offset (past a gap of the source), and further on behind what the map
// knows (approximate: records are read again, none skipped).
func TestSourceOffsetOf(t *testing.T) {
	// Source offsets 100..149 were written at target offsets 10..59; the source's next record is at 160
	// (offsets 150..159 hold no record: a transaction marker, compacted records).
	r := &kmtype.OffsetRange{SourceStart: 100, SourceEnd: 149, TargetStart: 10, SourceNext: 160}
	for _, c := range []struct {
		target int64
		want   int64
		exact  bool
	}{
		{10, 100, true},
		{35, 125, true},
		{59, 149, true},
		{60, 160, true},  // everything of the range read: resume at the next record of the source
		{75, 160, false}, // beyond what the map knows: re-read rather than skip
	} {
		got, exact := sourceOffsetOf(r, c.target)
		if got != c.want || exact != c.exact {
			t.Errorf("target %d: source %d exact %v, want %d exact %v", c.target, got, exact, c.want, c.exact)
		}
	}
	r.Uncommitted = true
	if _, exact := sourceOffsetOf(r, 35); exact {
		t.Error("a range that may hold aborted records translates exactly")
	}
}
