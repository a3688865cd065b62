package mirror

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// RecordRun must send exactly the syncs, and leave exactly the state, of Record called record by record.
func TestRecordRunAgreesWithRecord(t *testing.T) {
	tp := TopicPartition{Topic: "t", Partition: 3}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		lag := int64(rng.IntN(5)) - 1 // -1..3, 0 and below: every record syncs
		if seed%3 == 0 {
			lag = int64(rng.IntN(200))
		}
		one, run := NewPartitionSyncs(tp, lag), NewPartitionSyncs(tp, lag)
		var want, got []OffsetSync
		up, down := int64(rng.IntN(10)), int64(rng.IntN(10))
		for range 30 {
			n := int64(1 + rng.IntN(300))
			for i := range n {
				if s, ok := one.Record(up+i, down+i); ok {
					want = append(want, s)
				}
			}
			run.RecordRun(up, down, n, func(s OffsetSync) { got = append(got, s) })
			require.Equal(t, want, got, "seed %d lag %d", seed, lag)
			require.Equal(t, one.state, run.state, "seed %d", seed)
			wd, wok := one.TakeDelayed()
			gd, gok := run.TakeDelayed()
			require.Equal(t, wok, gok)
			require.Equal(t, wd, gd)
			if rng.IntN(2) == 0 { // put the delayed syncs back as they were, or leave them taken in both
				if wok {
					one.delayed, one.hasDelayed = wd, true
					run.delayed, run.hasDelayed = gd, true
				}
			}
			// The next run starts after a gap, a rewind or right after.
			switch rng.IntN(4) {
			case 0:
				up, down = up+n+int64(rng.IntN(5)), down+n
			case 1:
				up, down = up+n, down+n+int64(rng.IntN(5))
			case 2:
				up, down = max(up-int64(rng.IntN(20)), 0), down+n
			default:
				up, down = up+n, down+n
			}
		}
	}
}
