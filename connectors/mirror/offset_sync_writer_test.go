package mirror

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

var tp0 = TopicPartition{Topic: "topic", Partition: 0}

// MirrorSourceTaskTest.testOffsetSync, step for step; reset is what the writer does after a sync.
func TestPartitionStateUpstreamVectors(t *testing.T) {
	s := newPartitionState(50)
	require.True(t, s.update(0, 100), "always emit offset sync on first update")
	require.True(t, s.shouldSync)
	s.reset()
	require.False(t, s.shouldSync)
	require.True(t, s.update(2, 102), "upstream offset skipped -> resync")
	s.reset()
	require.False(t, s.update(3, 152), "no sync")
	s.reset()
	require.True(t, s.update(4, 153), "one past target offset")
	s.reset()
	require.False(t, s.update(5, 154), "no sync")
	s.reset()
	require.False(t, s.update(6, 203), "no sync")
	s.reset()
	require.True(t, s.update(7, 204), "one past target offset")
	s.reset()
	require.True(t, s.update(2, 206), "upstream reset")
	s.reset()
	require.False(t, s.update(3, 207), "no sync")
	s.reset()
	require.True(t, s.update(4, 3), "downstream reset")
	s.reset()
	require.False(t, s.update(5, 4), "no sync")
	require.True(t, s.update(7, 6), "sync")
	require.True(t, s.update(7, 6), "sync")
	require.True(t, s.update(8, 7), "sync")
	require.True(t, s.update(10, 57), "sync")
	s.reset()
	require.False(t, s.update(11, 58), "no sync")
	require.False(t, s.shouldSync)
}

// MirrorSourceTaskTest.testZeroOffsetSync: offset.lag.max=0 syncs every record.
func TestPartitionStateZeroLagVectors(t *testing.T) {
	s := newPartitionState(0)
	require.True(t, s.update(0, 100))
	require.True(t, s.shouldSync)
	s.reset()
	require.False(t, s.shouldSync)
	for _, step := range [][2]int64{{2, 102}, {3, 153}, {4, 154}, {5, 155}, {6, 207}, {2, 208}, {3, 209}, {4, 3}} {
		require.True(t, s.update(step[0], step[1]), "%v", step)
		s.reset()
	}
	require.True(t, s.update(5, 4))
	require.True(t, s.update(7, 6))
	require.True(t, s.update(7, 6))
	require.True(t, s.update(8, 7))
	require.True(t, s.update(10, 57))
	s.reset()
	require.True(t, s.update(11, 58))
}

// OffsetSyncWriterTest.testMaybeQueueOffsetSyncs.
func TestOffsetSyncWriterQueues(t *testing.T) {
	w := NewOffsetSyncWriter(2)
	w.Record(tp0, 0, 1)
	require.Equal(t, 0, w.delayed.len())
	require.Equal(t, 1, w.pending.len())
	require.Equal(t, int64(1), w.partitions[tp0].lastSyncDownstream)

	w.Record(tp0, 1, 2)
	require.Equal(t, 1, w.delayed.len())
	require.Equal(t, int64(1), w.partitions[tp0].lastSyncDownstream)
}

// OffsetSyncWriterTest.testFirePendingOffsetSyncs, without the producer: what is taken is sent.
func TestOffsetSyncWriterTakePending(t *testing.T) {
	w := NewOffsetSyncWriter(1)
	w.Record(tp0, 0, 100)
	require.Equal(t, int64(100), w.partitions[tp0].lastSyncDownstream)
	require.Equal(t, []OffsetSync{{"topic", 0, 0, 100}}, w.TakePending(10))
	require.Empty(t, w.TakePending(10))

	w.Record(tp0, 2, 102)
	require.Equal(t, int64(102), w.partitions[tp0].lastSyncDownstream)
	require.Equal(t, 1, w.Pending())
	require.Nil(t, w.TakePending(0))
	require.Equal(t, 1, w.Pending())
}

// OffsetSyncWriterTest.testPromoteDelayedOffsetSyncs.
func TestOffsetSyncWriterPromoteDelayed(t *testing.T) {
	w := NewOffsetSyncWriter(50)
	w.Record(tp0, 0, 100)
	w.Record(tp0, 1, 101)
	w.PromoteDelayed()
	require.Equal(t, 0, w.delayed.len())
	require.Equal(t, []OffsetSync{{"topic", 0, 1, 101}}, w.TakePending(10))
}

// The four emission conditions, each on its own.
func TestOffsetSyncWriterEmissionConditions(t *testing.T) {
	for _, tc := range []struct {
		name      string
		records   [][2]int64
		wantSyncs []OffsetSync
	}{
		{"first record of the lifetime", [][2]int64{{41, 7}},
			[]OffsetSync{{"topic", 0, 41, 7}}},
		{"translation lag reaches offset.lag.max", [][2]int64{{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 4}},
			// 3-(0+1) < 3, 4-(0+1) >= 3
			[]OffsetSync{{"topic", 0, 0, 0}, {"topic", 0, 4, 4}}},
		{"upstream gap", [][2]int64{{0, 0}, {5, 1}},
			[]OffsetSync{{"topic", 0, 0, 0}, {"topic", 0, 5, 1}}},
		{"upstream rewind", [][2]int64{{5, 0}, {3, 1}},
			[]OffsetSync{{"topic", 0, 5, 0}, {"topic", 0, 3, 1}}},
		{"downstream truncated", [][2]int64{{0, 10}, {1, 2}},
			[]OffsetSync{{"topic", 0, 0, 10}, {"topic", 0, 1, 2}}},
		{"contiguous and fresh", [][2]int64{{0, 0}, {1, 1}, {2, 2}},
			[]OffsetSync{{"topic", 0, 0, 0}}},
	} {
		w := NewOffsetSyncWriter(3)
		var got []OffsetSync
		for _, r := range tc.records {
			w.Record(tp0, r[0], r[1])
			got = append(got, w.TakePending(10)...)
		}
		require.Equal(t, tc.wantSyncs, got, tc.name)
	}
}

// With contiguous offsets and offset.lag.max=100: the first record, then every 101st.
func TestOffsetSyncWriterDefaultLagCadence(t *testing.T) {
	w := NewOffsetSyncWriter(100)
	var syncedAt []int64
	for offset := int64(0); offset < 1000; offset++ {
		w.Record(tp0, offset, offset+5000)
		for _, s := range w.TakePending(10) {
			syncedAt = append(syncedAt, s.UpstreamOffset)
		}
	}
	require.Equal(t, []int64{0, 101, 202, 303, 404, 505, 606, 707, 808, 909}, syncedAt)

	w.PromoteDelayed()
	require.Equal(t, []OffsetSync{{"topic", 0, 999, 5999}}, w.TakePending(10), "the last record after a commit")
}

// Promotion sends the latest position but does not count as a sync for the lag rule.
func TestOffsetSyncWriterPromotionKeepsLagBaseline(t *testing.T) {
	w := NewOffsetSyncWriter(10)
	w.Record(tp0, 0, 0)
	w.TakePending(10)
	for offset := int64(1); offset <= 5; offset++ {
		w.Record(tp0, offset, offset)
	}
	w.PromoteDelayed()
	require.Equal(t, []OffsetSync{{"topic", 0, 5, 5}}, w.TakePending(10))
	for offset := int64(6); offset <= 10; offset++ {
		w.Record(tp0, offset, offset)
	}
	require.Empty(t, w.TakePending(10))
	w.Record(tp0, 11, 11)
	require.Equal(t, []OffsetSync{{"topic", 0, 11, 11}}, w.TakePending(10), "11-(0+1) >= 10")
}

func TestOffsetSyncWriterQueueOrder(t *testing.T) {
	a, b, c := TopicPartition{"a", 0}, TopicPartition{"b", 0}, TopicPartition{"c", 0}
	w := NewOffsetSyncWriter(100)
	w.Record(a, 0, 0)
	w.Record(b, 0, 0)
	w.Record(c, 0, 0)
	w.Record(a, 5, 1) // gap: replaces a's pending sync in place
	require.Equal(t, 3, w.Pending())
	require.Equal(t, []OffsetSync{{"a", 0, 5, 1}, {"b", 0, 0, 0}}, w.TakePending(2))
	require.Equal(t, []OffsetSync{{"c", 0, 0, 0}}, w.TakePending(2))

	// Delayed syncs are promoted behind what is already pending, in their own order; a pending
	// partition keeps its place and takes the newer delayed value.
	w.Record(c, 1, 1)  // delayed
	w.Record(b, 1, 1)  // delayed
	w.Record(a, 9, 2)  // gap: pending
	w.Record(a, 10, 3) // delayed, newer than the pending one
	w.PromoteDelayed()
	require.Equal(t, []OffsetSync{{"a", 0, 10, 3}, {"c", 0, 1, 1}, {"b", 0, 1, 1}}, w.TakePending(10))
}

// A sync that must go now drops the partition's delayed one, which it supersedes.
func TestOffsetSyncWriterImmediateSyncDropsDelayed(t *testing.T) {
	w := NewOffsetSyncWriter(100)
	w.Record(tp0, 0, 0)
	w.TakePending(10)
	w.Record(tp0, 1, 1)
	require.Equal(t, 1, w.delayed.len())
	w.Record(tp0, 3, 2)
	require.Equal(t, 0, w.delayed.len())
	w.PromoteDelayed()
	require.Equal(t, []OffsetSync{{"topic", 0, 3, 2}}, w.TakePending(10))
}

func TestOffsetSyncWriterForget(t *testing.T) {
	other := TopicPartition{"other", 1}
	w := NewOffsetSyncWriter(100)
	w.Record(tp0, 0, 0)
	w.Record(other, 0, 0)
	w.TakePending(10)
	w.Record(tp0, 1, 1) // delayed
	w.Record(tp0, 5, 2) // pending
	w.Record(other, 1, 1)

	w.Forget(tp0)
	require.Equal(t, 0, w.Pending())
	w.PromoteDelayed()
	require.Equal(t, []OffsetSync{{"other", 1, 1, 1}}, w.TakePending(10))

	w.Record(tp0, 6, 3)
	require.Equal(t, []OffsetSync{{"topic", 0, 6, 3}}, w.TakePending(10), "first record again after Forget")
}

// Records from several goroutines interleaved with commits: every partition's last record still ends
// up in a sync.
func TestOffsetSyncWriterConcurrentUse(t *testing.T) {
	w := NewOffsetSyncWriter(10)
	var taken []OffsetSync
	var wg sync.WaitGroup
	for p := range int32(4) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tp := TopicPartition{"t", p}
			for offset := range int64(1000) {
				w.Record(tp, offset, offset)
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			w.PromoteDelayed()
			taken = append(taken, w.TakePending(10)...)
		}
	}()
	wg.Wait()
	<-done
	w.PromoteDelayed()
	taken = append(taken, w.TakePending(1<<20)...)

	last := make(map[TopicPartition]int64)
	for _, s := range taken {
		last[s.TopicPartition()] = max(last[s.TopicPartition()], s.UpstreamOffset)
	}
	for p := range int32(4) {
		require.Equal(t, int64(999), last[TopicPartition{"t", p}])
	}
}

// PartitionSyncs must decide exactly as OffsetSyncWriter does for one partition.
func TestPartitionSyncsAgreesWithWriter(t *testing.T) {
	tp := TopicPartition{Topic: "t", Partition: 3}
	w := NewOffsetSyncWriter(10)
	p := NewPartitionSyncs(tp, 10)
	steps := [][2]int64{{0, 0}, {1, 1}, {2, 2}, {5, 3}, {6, 4}, {7, 20}, {8, 21}, {9, 22}, {10, 2}, {11, 3}}
	for i := int64(12); i < 60; i++ {
		steps = append(steps, [2]int64{i, i})
	}
	for i, s := range steps {
		w.Record(tp, s[0], s[1])
		wantNow := w.TakePending(1)
		got, now := p.Record(s[0], s[1])
		require.Equal(t, len(wantNow) == 1, now, "step %d %v", i, s)
		if now {
			require.Equal(t, wantNow[0], got, "step %d", i)
		}
		if i%7 == 6 {
			w.PromoteDelayed()
			wantDelayed := w.TakePending(1)
			gotDelayed, ok := p.TakeDelayed()
			require.Equal(t, len(wantDelayed) == 1, ok, "promotion at step %d", i)
			if ok {
				require.Equal(t, wantDelayed[0], gotDelayed)
			}
		}
	}
}
