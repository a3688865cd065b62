package source

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestEndSightingsDateRecordsWithoutTimestamps(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var s endSightings

	require.Equal(t, at(0), s.oldestUnreplicated(0, 10, time.Time{}, at(0)), "a backlog found at the first look dates from it")
	require.Equal(t, at(0), s.oldestUnreplicated(5, 20, time.Time{}, at(1)), "offset 5 was seen at 0")
	require.Equal(t, at(1), s.oldestUnreplicated(10, 20, time.Time{}, at(2)), "offsets 10-19 were first seen at 1")
	require.Equal(t, at(-7), s.oldestUnreplicated(10, 20, at(-7), at(3)), "a known timestamp wins")
	require.True(t, s.oldestUnreplicated(20, 20, time.Time{}, at(4)).IsZero(), "caught up: nothing to date")
	require.True(t, s.oldestUnreplicated(0, -1, time.Time{}, at(4)).IsZero(), "end unknown")
	require.Equal(t, at(5), s.oldestUnreplicated(20, 25, time.Time{}, at(5)))

	// A truncated or re-created log forgets what was seen.
	require.Equal(t, at(6), s.oldestUnreplicated(0, 3, time.Time{}, at(6)))

	// Bounded: a growing backlog merges marks, never dating a record later than it was seen.
	var b endSightings
	for i := range 1000 {
		b.observe(int64(i+1)*10, at(i))
	}
	require.LessOrEqual(t, len(b.marks), endSightingsMax)
	for _, pos := range []int64{0, 9, 10, 4999, 9000, 9999} {
		seen := b.firstSeen(pos)
		require.False(t, seen.After(at(int(pos/10))), "offset %d was seen at %v, dated %v", pos, at(int(pos/10)), seen)
	}
}
