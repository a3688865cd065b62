package offsetmap_test

import (
	"sort"
	"testing"

	"pgregory.net/rapid"

	"github.com/kmirror/kmirror/connectors/offsetmap"
)

// rec is a record of an interleaved partition: its origin ('A' or 'B') and its index among that origin's own
// records.
type rec struct {
	origin byte
	i      int
}

// interleave merges own records 0..own-1 of origin with copies 0..copies-1 of the other origin's records in a
// random order that keeps each origin's order, as a partition receiving its producers' records and a flow's
// copies does.
func interleave(t *rapid.T, label string, origin, other byte, own, copies int) []rec {
	var log []rec
	i, j := 0, 0
	for i < own || j < copies {
		if j == copies || i < own && rapid.Bool().Draw(t, label) {
			log = append(log, rec{origin, i})
			i++
		} else {
			log = append(log, rec{other, j})
			j++
		}
	}
	return log
}

// around returns the ranges around source offset c (Translate's arguments); aroundTarget those around target
// offset x (TranslateBack's).
func around(rs []offsetmap.Range, c int64) (prev, next *offsetmap.Range) {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].SourceStart > c })
	if i > 0 {
		prev = &rs[i-1]
	}
	if i < len(rs) {
		next = &rs[i]
	}
	return prev, next
}

func aroundTarget(rs []offsetmap.Range, x int64) (prev, next *offsetmap.Range) {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].TargetStart > x })
	if i > 0 {
		prev = &rs[i-1]
	}
	if i < len(rs) {
		next = &rs[i]
	}
	return prev, next
}

// TestTranslateBothOriginsNeverSkips: two clusters A and B each hold their own records and a prefix of the
// other's, copied by the flows A→B and B→A in random interleavings. A group positioned anywhere on A,
// translated to B with both maps, resumes at or before every record of either origin it has not read on A;
// when the answer says exact, it reads nothing again.
func TestTranslateBothOriginsNeverSkips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nA := rapid.IntRange(0, 30).Draw(t, "a_own")
		nB := rapid.IntRange(0, 30).Draw(t, "b_own")
		// Most records are copied by the time a group moves; the draws lean that way (rapid favours small values).
		kA := nA - rapid.IntRange(0, nA).Draw(t, "a_not_copied")
		// The reverse map must know the partition for B's records to be accounted for (docs/active-active.md).
		kB := nB - rapid.IntRange(0, max(nB-1, 0)).Draw(t, "b_not_copied")
		logA := interleave(t, "a_own_next", 'A', 'B', nA, kB)
		logB := interleave(t, "b_own_next", 'B', 'A', nB, kA)

		aToB := drawFlow(logA, logB, 'A', t, "a_read_to")
		bToA := drawFlow(logB, logA, 'B', t, "b_read_to")

		read := map[rec]bool{}
		x := rapid.IntRange(0, len(logA)).Draw(t, "group_at")
		for _, r := range logA[:x] {
			read[r] = true
		}

		prevA, nextA := around(aToB, int64(x))
		prevB, nextB := aroundTarget(bToA, int64(x))
		var ans offsetmap.Answer
		if own, ok := offsetmap.Translate(prevA, nextA, int64(x)); ok {
			ans = offsetmap.WithOpposite(own, prevA, nextA, prevB, nextB, int64(x))
		} else if back, ok := offsetmap.TranslateBack(prevB, nextB, int64(x)); ok {
			// Neither this flow's map nor its syncs know the position: only the opposite origin counts, never exact.
			ans = offsetmap.Answer{Offset: back.Offset}
		} else {
			return
		}
		for d, r := range logB {
			if int64(d) < ans.Offset && !read[r] {
				t.Fatalf("group at %d on A resumes at %d on B and skips %c%d at %d", x, ans.Offset, r.origin, r.i, d)
			}
			if ans.Exact && int64(d) >= ans.Offset && read[r] {
				t.Fatalf("group at %d on A resumes at %d on B, said exact, and re-reads %c%d at %d", x, ans.Offset, r.origin, r.i, d)
			}
		}
	})
}

// drawFlow draws how far the flow from src has read (past its last copied record, not past its first
// uncopied one) and builds its map.
func drawFlow(src, dst []rec, origin byte, t *rapid.T, label string) []offsetmap.Range {
	copied := map[rec]bool{}
	for _, r := range dst {
		copied[r] = true
	}
	lo, hi := 0, len(src)
	for u, r := range src {
		if r.origin != origin {
			continue
		}
		if copied[r] {
			lo = u + 1
		} else {
			hi = u
			break
		}
	}
	readTo := rapid.IntRange(lo, max(lo, hi)).Draw(t, label)
	return flowRangesOf(src, dst, origin, readTo)
}

// flowRangesOf builds the offset map of the flow of origin's records from src to dst as its tracker does: it
// reads src from the start, skips the copies that came from dst (the cycle guard), acknowledges each copied
// record at the offset its copy has in dst, then reads through readTo.
func flowRangesOf(src, dst []rec, origin byte, readTo int) []offsetmap.Range {
	at := map[rec]int64{}
	for d, r := range dst {
		at[r] = int64(d)
	}
	tr := offsetmap.NewTracker(nil)
	tr.ReadFrom(0)
	for u, r := range src {
		d, copied := at[r]
		if r.origin != origin || !copied {
			continue // a copy from the target (the cycle guard skips it), or not replicated yet
		}
		tr.Forwarded()
		tr.Acked(int64(u), d)
	}
	tr.ReadThrough(int64(readTo))
	return tr.Take().Ranges
}
