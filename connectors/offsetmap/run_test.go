package offsetmap

import (
	"math/rand/v2"
	"testing"
)

// AckedRun, ForwardedN and DroppedN must leave a tracker exactly as their one-record forms would.
func TestRunsAgreeWithRecordByRecord(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 11))
		one, run := NewTracker(nil), NewTracker(nil)
		if seed%2 == 0 {
			last := Range{SourceStart: 0, SourceEnd: 9, TargetStart: 100, SourceNext: 10}
			one, run = NewTracker(&last), NewTracker(&last)
		}
		u, d := int64(10), int64(110)
		for range 40 {
			n := 1 + rng.IntN(50)
			for range n {
				one.Forwarded()
			}
			run.ForwardedN(n)
			switch rng.IntN(5) {
			case 0:
				k := rng.IntN(n + 1)
				for range k {
					one.Dropped()
				}
				run.DroppedN(k)
			case 1:
				next := u + int64(rng.IntN(3))
				one.ReadThrough(next)
				run.ReadThrough(next)
			case 2:
				s := one.Take()
				one.Persisted(s)
				run.Persisted(run.Take())
			}
			for i := range int64(n) {
				one.Acked(u+i, d+i)
			}
			run.AckedRun(u, d, n)
			if one.cur != run.cur || one.pending != run.pending || one.has != run.has || len(one.closed) != len(run.closed) ||
				one.dirty != run.dirty || one.readTo != run.readTo {
				t.Fatalf("seed %d: record by record %+v, run %+v", seed, one, run)
			}
			u, d = u+int64(n), d+int64(n)
			switch rng.IntN(4) {
			case 0:
				u += int64(1 + rng.IntN(3))
			case 1:
				d += int64(1 + rng.IntN(3))
			case 2:
				u -= int64(rng.IntN(5))
			}
		}
	}
}
