package mirror

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The vectors below come from Apache Kafka's OffsetSyncStoreTest
// (connect/mirror/src/test/java/org/apache/kafka/connect/mirror/OffsetSyncStoreTest.java, trunk as of
// KAFKA-15905). Java's FakeOffsetSyncStore feeds syncs inside backingStoreStart, i.e. after
// initializationMustReadToEnd is set and before readToEnd; here that is Add before ReadToEnd.

var storeTP = TopicPartition{Topic: "topic1", Partition: 2}

func addSync(s *OffsetSyncStore, tp TopicPartition, upstream, downstream int64) {
	s.Add(OffsetSync{Topic: tp.Topic, Partition: tp.Partition, UpstreamOffset: upstream, DownstreamOffset: downstream})
}

// slotsOf returns the published history of tp (the Java test's syncFor for every index).
func slotsOf(t *testing.T, s *OffsetSyncStore, tp TopicPartition) *offsetSyncSlots {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	slots := s.syncs[tp]
	require.NotNil(t, slots, "no syncs present for %v", tp)
	return slots
}

// distinctSyncs counts runs of identical pointers, as countDistinctStoredSyncs does.
func distinctSyncs(slots *offsetSyncSlots) int {
	count := 1
	for i := 1; i < offsetSyncsPerPartition; i++ {
		if slots[i-1] != slots[i] {
			count++
		}
	}
	return count
}

// checkSparseInvariants is assertSparseSyncInvariant: invariants B and C for every pair i < j with distinct
// upstream offsets, skipping bounds that wrapped negative, computed independently of the store's helpers.
func checkSparseInvariants(t *testing.T, slots *offsetSyncSlots) {
	t.Helper()
	for j := 0; j < offsetSyncsPerPartition; j++ {
		for i := 0; i < j; i++ {
			jUp, iUp := slots[j].UpstreamOffset, slots[i].UpstreamOffset
			if jUp == iUp {
				continue
			}
			exp := max(i-2, 0)
			lower := jUp + int64(1)<<exp
			if lower < 0 {
				continue
			}
			if iUp < lower {
				t.Fatalf("invariant C(%d,%d): upstream %d at %d should be at least %d (%d + 2^%d)", i, j, iUp, i, lower, jUp, exp)
			}
			upper := jUp + int64(1)<<j - int64(1)<<i
			if upper < 0 {
				continue
			}
			if iUp > upper {
				t.Fatalf("invariant B(%d,%d): upstream %d at %d should be at most %d (%d + 2^%d - 2^%d)", i, j, iUp, i, upper, jUp, j, i)
			}
		}
	}
}

func requireTranslation(t *testing.T, s *OffsetSyncStore, upstream, want int64) {
	t.Helper()
	got, ok := s.Translate(storeTP, upstream)
	require.True(t, ok, "translate(%d): no translation", upstream)
	require.Equal(t, want, got, "translate(%d)", upstream)
}

func requireNoTranslation(t *testing.T, s *OffsetSyncStore, upstream int64) {
	t.Helper()
	_, ok := s.Translate(storeTP, upstream)
	require.False(t, ok, "translate(%d)", upstream)
}

// requireSparseSync is assertSparseSync: a sync syncOffset→syncOffset is stored and the one before it is
// previousOffset (-1: none, translation just before the sync is -1).
func requireSparseSync(t *testing.T, s *OffsetSyncStore, syncOffset, previousOffset int64) {
	t.Helper()
	before := int64(-1)
	if previousOffset != -1 {
		before = previousOffset + 1
	}
	requireTranslation(t, s, syncOffset-1, before)
	requireTranslation(t, s, syncOffset, syncOffset)
	requireTranslation(t, s, syncOffset+1, syncOffset+1)
	requireTranslation(t, s, syncOffset+2, syncOffset+1)
}

// testOffsetTranslation.
func TestOffsetSyncStoreTranslation(t *testing.T) {
	s := NewOffsetSyncStoreReadToEnd(true)
	s.ReadToEnd()
	steps := []struct {
		name                 string
		add                  bool
		upstream, downstream int64 // the sync added first, if add
		translate, want      int64
	}{
		{"synced downstream offset without dead-reckoning", true, 100, 200, 150, 201},
		{"exact offset", true, 150, 251, 150, 251},
		{"offset before any sync", false, 0, 0, 5, -1},
		{"downstream offsets reset", true, 200, 10, 200, 10},
		{"upstream offsets reset", true, 20, 20, 20, 20},
	}
	for _, step := range steps {
		if step.add {
			addSync(s, storeTP, step.upstream, step.downstream)
		}
		got, ok := s.Translate(storeTP, step.translate)
		require.True(t, ok, step.name)
		require.Equal(t, step.want, got, step.name)
	}
}

// testNoTranslationIfStoreNotStarted.
func TestOffsetSyncStoreNoTranslationBeforeReadToEnd(t *testing.T) {
	s := NewOffsetSyncStoreReadToEnd(true)
	for _, u := range []int64{0, 100, 200} {
		requireNoTranslation(t, s, u)
	}
	addSync(s, storeTP, 100, 200) // read during start-up
	for _, u := range []int64{0, 100, 200} {
		requireNoTranslation(t, s, u)
	}
	s.ReadToEnd()
	requireTranslation(t, s, 0, -1)
	requireTranslation(t, s, 100, 200)
	requireTranslation(t, s, 200, 201)
}

// testNoTranslationIfNoOffsetSync, plus another partition's syncs not leaking into tp.
func TestOffsetSyncStoreNoTranslationWithoutSync(t *testing.T) {
	s := NewOffsetSyncStore()
	s.ReadToEnd()
	requireNoTranslation(t, s, 0)
	addSync(s, TopicPartition{Topic: "topic1", Partition: 3}, 0, 0)
	addSync(s, TopicPartition{Topic: "topic2", Partition: 2}, 0, 0)
	requireNoTranslation(t, s, 0)
}

// testPastOffsetTranslation and testPastOffsetTranslationWithoutInitializationReadToEnd: syncs every 10
// from 0 to 1000 during the initial read, then up to 10000 after it, then an upstream rewind to 1500.
func TestOffsetSyncStorePastOffsetTranslation(t *testing.T) {
	type sparse struct{ sync, previous int64 }
	cases := []struct {
		name          string
		mustReadToEnd bool
		// resumeFrom is the first sync after ReadToEnd: Java's WithoutInitializationReadToEnd variant
		// starts again at 1000, re-reading an equal-valued (but distinct) sync.
		resumeFrom   int64
		afterStartup []sparse
		afterTailing []sparse
	}{
		{
			name:          "initializationMustReadToEnd",
			mustReadToEnd: true,
			resumeFrom:    1010,
			// Only the latest start-up sync is usable.
			afterStartup: []sparse{{1000, -1}},
			// Still nothing before 1000 (invariant D); further on, precision grows towards the newest sync.
			afterTailing: []sparse{
				{1000, -1}, {4840, 1000}, {6760, 4840}, {8680, 6760}, {9160, 8680}, {9640, 9160},
				{9880, 9640}, {9940, 9880}, {9970, 9940}, {9990, 9970}, {10000, 9990},
			},
		},
		{
			name:          "without initializationMustReadToEnd",
			mustReadToEnd: false,
			resumeFrom:    1000,
			// The start-up history is kept.
			afterStartup: []sparse{{480, 0}, {720, 480}, {1000, 990}},
			// 1000 got expired: before 3840 only the first sync, 0, is left.
			afterTailing: []sparse{
				{3840, 0}, {7680, 3840}, {8640, 7680}, {9120, 8640}, {9600, 9120}, {9840, 9600},
				{9900, 9840}, {9960, 9900}, {9990, 9960}, {10000, 9990},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewOffsetSyncStoreReadToEnd(tc.mustReadToEnd)
			for offset := int64(0); offset <= 1000; offset += 10 {
				addSync(s, storeTP, offset, offset)
				checkSparseInvariants(t, slotsOf(t, s, storeTP))
			}
			s.ReadToEnd()
			for _, v := range tc.afterStartup {
				requireSparseSync(t, s, v.sync, v.previous)
			}
			for offset := tc.resumeFrom; offset <= 10000; offset += 10 {
				addSync(s, storeTP, offset, offset)
				checkSparseInvariants(t, slotsOf(t, s, storeTP))
			}
			for _, v := range tc.afterTailing {
				requireSparseSync(t, s, v.sync, v.previous)
			}

			// Rewinding upstream clears the history.
			addSync(s, storeTP, 1500, 11000)
			slots := slotsOf(t, s, storeTP)
			checkSparseInvariants(t, slots)
			require.Equal(t, 1, distinctSyncs(slots))
			requireTranslation(t, s, 1499, -1)
			requireTranslation(t, s, 1500, 11000)
			requireTranslation(t, s, 2000, 11001)
		})
	}
}

// layoutRun is a run of slots holding one sync: the first slot of the run and the sync's offsets.
type layoutRun struct {
	slot                 int
	upstream, downstream int64
}

func layoutOf(slots *offsetSyncSlots) []layoutRun {
	var runs []layoutRun
	for i, sync := range slots {
		if i == 0 || slots[i-1] != sync {
			runs = append(runs, layoutRun{i, sync.UpstreamOffset, sync.DownstreamOffset})
		}
	}
	return runs
}

// Exact slot layouts, pinning every keep/expire decision rather than only translations. The expected
// layouts are not in Java's test: they were produced by running Java's own updateSyncArray,
// invariantB/C and lookup code (Kafka trunk, KAFKA-15905) on the same sequences. The "past" cases are the
// two testPastOffsetTranslation* sequences; their layouts agree with the translations asserted there.
func TestOffsetSyncStoreSlotLayouts(t *testing.T) {
	cases := []struct {
		name          string
		mustReadToEnd bool
		// Syncs upstream→upstream/div at from, from+step, ..., to; initial ones are read before ReadToEnd.
		initialFrom, initialTo, tailFrom, tailTo, step, div int64
		afterInitial, afterTail                             []layoutRun
	}{
		{
			name: "every offset 0..99", mustReadToEnd: true,
			initialFrom: 0, initialTo: -1, tailFrom: 0, tailTo: 99, step: 1, div: 1,
			afterTail: []layoutRun{{0, 99, 99}, {1, 98, 98}, {2, 96, 96}, {3, 92, 92}, {4, 88, 88}, {5, 80, 80}, {6, 64, 64}, {7, 0, 0}},
		},
		{
			name: "every 1024 up to 65536, downstream contiguous", mustReadToEnd: true,
			initialFrom: 0, initialTo: -1, tailFrom: 0, tailTo: 65536, step: 1024, div: 1024,
			afterTail: []layoutRun{{0, 65536, 64}, {11, 64512, 63}, {12, 63488, 62}, {13, 61440, 60}, {14, 57344, 56}, {15, 49152, 48}, {16, 32768, 32}, {17, 0, 0}},
		},
		{
			name: "past, initializationMustReadToEnd", mustReadToEnd: true,
			initialFrom: 0, initialTo: 1000, tailFrom: 1010, tailTo: 10000, step: 10, div: 1,
			afterInitial: []layoutRun{{0, 1000, 1000}},
			afterTail: []layoutRun{
				{0, 10000, 10000}, {5, 9990, 9990}, {6, 9970, 9970}, {7, 9940, 9940}, {8, 9880, 9880}, {9, 9640, 9640},
				{10, 9160, 9160}, {11, 8680, 8680}, {12, 6760, 6760}, {13, 4840, 4840}, {14, 1000, 1000},
			},
		},
		{
			name: "past, without initializationMustReadToEnd", mustReadToEnd: false,
			initialFrom: 0, initialTo: 1000, tailFrom: 1000, tailTo: 10000, step: 10, div: 1,
			afterInitial: []layoutRun{{0, 1000, 1000}, {5, 990, 990}, {6, 960, 960}, {7, 900, 900}, {8, 840, 840}, {9, 720, 720}, {10, 480, 480}, {11, 0, 0}},
			afterTail: []layoutRun{
				{0, 10000, 10000}, {5, 9990, 9990}, {6, 9960, 9960}, {7, 9900, 9900}, {8, 9840, 9840}, {9, 9600, 9600},
				{10, 9120, 9120}, {11, 8640, 8640}, {12, 7680, 7680}, {13, 3840, 3840}, {14, 0, 0},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewOffsetSyncStoreReadToEnd(tc.mustReadToEnd)
			for u := tc.initialFrom; u <= tc.initialTo; u += tc.step {
				addSync(s, storeTP, u, u/tc.div)
			}
			if tc.afterInitial != nil {
				require.Equal(t, tc.afterInitial, layoutOf(slotsOf(t, s, storeTP)), "after the initial read")
			}
			s.ReadToEnd()
			for u := tc.tailFrom; u <= tc.tailTo; u += tc.step {
				addSync(s, storeTP, u, u/tc.div)
			}
			require.Equal(t, tc.afterTail, layoutOf(slotsOf(t, s, storeTP)), "after tailing")
		})
	}
}

// requireBoundedExpirations is assertSyncSpacingHasBoundedExpirations: after a sync at firstOffset, feed
// syncs spaced by steps and require that no single sync expires more than maxExpired distinct syncs, that
// slot 0 is the newest sync (invariant A) and slot 63 the first one (invariant D).
func requireBoundedExpirations(t *testing.T, firstOffset int64, steps []int64, maxExpired int) {
	t.Helper()
	s := NewOffsetSyncStoreReadToEnd(true)
	s.ReadToEnd()
	addSync(s, storeTP, firstOffset, firstOffset)
	offset, lastCount := firstOffset, 1
	for _, step := range steps {
		offset += step
		require.GreaterOrEqual(t, offset, int64(0), "test is invalid, offset overflowed")
		addSync(s, storeTP, offset, offset)
		slots := slotsOf(t, s, storeTP)
		require.Equal(t, offset, slots[0].UpstreamOffset, "invariant A")
		require.Equal(t, firstOffset, slots[offsetSyncsPerPartition-1].UpstreamOffset, "invariant D")
		count := distinctSyncs(slots)
		// One sync was added: an unchanged count means exactly one expired.
		if expired := lastCount - count + 1; expired > maxExpired {
			t.Fatalf("store expired %d > %d syncs after receiving offset %d (first %d)", expired, maxExpired, offset, firstOffset)
		}
		lastCount = count
	}
}

// testConsistentlySpacedSyncs: regularly spaced syncs expire at most one sync each.
func TestOffsetSyncStoreConsistentlySpacedSyncs(t *testing.T) {
	const iterations = 100
	for step := int64(1); step < math.MaxInt64/iterations; step = step*2 + 1 {
		steps := make([]int64, iterations)
		for i := range steps {
			steps[i] = step
		}
		for first := int64(0); first < 30; first++ {
			requireBoundedExpirations(t, first, steps, 1)
		}
	}
}

// testRandomlySpacedSyncs: steps with at most n bits of difference expire at most n+2 syncs at once, also
// above a minimum step (offset.lag.max). javaRandom reproduces Java's Random(0) sequence.
func TestOffsetSyncStoreRandomlySpacedSyncs(t *testing.T) {
	r := newJavaRandom(0)
	const iterationBits = 10
	const iterations = 1 << iterationBits
	for n := 1; n < 64-iterationBits; n++ {
		maxDifference := int64(1) << n
		maxExpired := n + 2
		requireBoundedExpirations(t, 0, r.longs(iterations, 0, maxDifference), maxExpired)
		const offsetLagMax = int64(1) << 16
		requireBoundedExpirations(t, 0, r.longs(iterations, offsetLagMax, offsetLagMax+maxDifference), maxExpired)
	}
}

// testDroppedSyncsSpacing: gaps of offset.lag.max, half of them doubled as if a sync was lost, expire at
// most two syncs at once.
func TestOffsetSyncStoreDroppedSyncsSpacing(t *testing.T) {
	r := newJavaRandom(0)
	const iterations, offsetLagMax = 10000, 100
	steps := make([]int64, iterations)
	for i := range steps {
		steps[i] = offsetLagMax
		if r.nextDouble() < 0.5 {
			steps[i] = 2 * offsetLagMax
		}
	}
	requireBoundedExpirations(t, 0, steps, 2)
}

// Slots compare by identity: an equal-valued sync read again is a new sync (Java's
// WithoutInitializationReadToEnd vector relies on this when it re-reads 1000).
func TestOffsetSyncStoreComparesSyncsByIdentity(t *testing.T) {
	s := NewOffsetSyncStore()
	s.ReadToEnd()
	addSync(s, storeTP, 0, 0)
	first := slotsOf(t, s, storeTP)
	require.Equal(t, 1, distinctSyncs(first))
	addSync(s, storeTP, 0, 0)
	second := slotsOf(t, s, storeTP)
	require.Equal(t, 2, distinctSyncs(second))
	require.NotSame(t, first[0], second[0])
	require.Same(t, first[0], second[1])
	require.Same(t, first[0], second[offsetSyncsPerPartition-1])
	// The published array of the first Add was not touched by the second.
	for i := range first {
		require.Same(t, first[0], first[i])
	}
}

// During the initial read with mustReadToEnd every sync resets the history; without it the history
// builds up as after the read.
func TestOffsetSyncStoreInitialRead(t *testing.T) {
	for _, mustReadToEnd := range []bool{true, false} {
		s := NewOffsetSyncStoreReadToEnd(mustReadToEnd)
		for offset := int64(0); offset <= 100; offset += 10 {
			addSync(s, storeTP, offset, offset+1000)
		}
		slots := slotsOf(t, s, storeTP)
		s.ReadToEnd()
		if mustReadToEnd {
			require.Equal(t, 1, distinctSyncs(slots))
			requireTranslation(t, s, 99, -1)
		} else {
			require.Greater(t, distinctSyncs(slots), 1)
			require.Equal(t, int64(0), slots[offsetSyncsPerPartition-1].UpstreamOffset)
			requireTranslation(t, s, 0, 1000)
			requireTranslation(t, s, 99, 1091)
		}
		requireTranslation(t, s, 100, 1100)
		requireTranslation(t, s, 101, 1101)
	}
	require.True(t, NewOffsetSyncStore().mustReadToEnd, "MM2's default is initializationMustReadToEnd=true")
}

// Offsets near math.MaxInt64: bounds wrap negative as Java's long does and the store still behaves.
func TestOffsetSyncStoreLargeOffsets(t *testing.T) {
	s := NewOffsetSyncStore()
	s.ReadToEnd()
	base := int64(math.MaxInt64) - 1<<40
	var prev int64 = -1
	for i := int64(0); i < 300; i++ {
		u := base + i*(1<<31)
		addSync(s, storeTP, u, i)
		slots := slotsOf(t, s, storeTP)
		checkSparseInvariants(t, slots)
		require.Equal(t, u, slots[0].UpstreamOffset)
		require.Equal(t, base, slots[offsetSyncsPerPartition-1].UpstreamOffset)
		prev = u
	}
	requireTranslation(t, s, prev, 299)
	requireTranslation(t, s, math.MaxInt64, 300)
	requireTranslation(t, s, base, 0)
	requireTranslation(t, s, base-1, -1)
}

// truth is a simulated replication: each upstream record at offsets base..base+len-1 is replicated to a
// downstream offset or dropped (filtered, compacted away, transaction marker); downstream offsets grow
// with gaps. position(g) is where a consumer that next reads upstream offset g really is downstream: the
// offset of the first replicated record at or after g, or the downstream end.
type truth struct {
	base       int64
	downstream []int64 // per upstream record; -1 when not replicated
	end        int64   // downstream log end offset
}

func newTruth(r *rand.Rand, base int64, records int) *truth {
	tr := &truth{base: base, downstream: make([]int64, records)}
	keep := 0.3 + 0.7*r.Float64()
	d := r.Int64N(1000)
	for i := range tr.downstream {
		if r.Float64() < keep {
			tr.downstream[i] = d
			d += 1 + r.Int64N(3)*int64(r.IntN(4)/3) // mostly contiguous, sometimes a gap
		} else {
			tr.downstream[i] = -1
		}
	}
	tr.end = d
	return tr
}

func (tr *truth) position(g int64) int64 {
	for i := max(g-tr.base, 0); i < int64(len(tr.downstream)); i++ {
		if d := tr.downstream[i]; d >= 0 {
			return d
		}
	}
	return tr.end
}

// For random monotone sync sequences over a simulated replication, a translation is never ahead of the
// consumer's true downstream position, is monotone in the upstream offset, and the store keeps its
// invariants; an exact sync translates exactly.
func TestOffsetSyncStoreNeverAhead(t *testing.T) {
	for seed := uint64(0); seed < 150; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0x6f7373))
			base := int64(0)
			if r.IntN(3) == 0 {
				base = r.Int64N(1 << 62)
			}
			tr := newTruth(r, base, 50+r.IntN(5000))
			var replicated []int
			for i, d := range tr.downstream {
				if d >= 0 {
					replicated = append(replicated, i)
				}
			}
			if len(replicated) == 0 {
				return
			}
			// Syncs on a random, ordered subset of replicated records; some repeated (a delayed sync
			// promoted after it was already sent).
			every := 1 + r.IntN(200)
			var syncs []OffsetSync
			for _, i := range replicated {
				if r.IntN(every) != 0 && len(syncs) > 0 {
					continue
				}
				sync := OffsetSync{Topic: storeTP.Topic, Partition: storeTP.Partition, UpstreamOffset: base + int64(i), DownstreamOffset: tr.downstream[i]}
				syncs = append(syncs, sync)
				if r.IntN(10) == 0 {
					syncs = append(syncs, sync)
				}
			}
			mustReadToEnd := r.IntN(2) == 0
			initial := r.IntN(len(syncs) + 1)
			s := NewOffsetSyncStoreReadToEnd(mustReadToEnd)

			probes := func(latest OffsetSync) {
				last := int64(math.MinInt64)
				hi := latest.UpstreamOffset + 3 + r.Int64N(50)
				for g := base; g <= hi; g += 1 + r.Int64N(int64(every)) {
					got, ok := s.Translate(storeTP, g)
					require.True(t, ok)
					require.GreaterOrEqual(t, got, int64(-1))
					if got >= 0 {
						require.LessOrEqual(t, got, tr.position(g), "translate(%d) is ahead", g)
					}
					require.GreaterOrEqual(t, got, last, "translate(%d) is not monotone", g)
					last = got
				}
				got, ok := s.Translate(storeTP, latest.UpstreamOffset)
				require.True(t, ok)
				require.Equal(t, latest.DownstreamOffset, got, "the newest sync translates exactly")
			}

			var earliest OffsetSync // the sync that last reset the history: invariant D
			for k, sync := range syncs {
				if k == initial {
					s.ReadToEnd()
					if k > 0 {
						probes(syncs[k-1])
					}
				}
				s.Add(sync)
				if k == 0 || (mustReadToEnd && k < initial) {
					earliest = sync
				}
				slots := slotsOf(t, s, storeTP)
				checkSparseInvariants(t, slots)
				require.Equal(t, sync, *slots[0], "invariant A")
				require.Equal(t, earliest, *slots[offsetSyncsPerPartition-1], "invariant D")
				if k < initial {
					_, ok := s.Translate(storeTP, sync.UpstreamOffset)
					require.False(t, ok, "translation before ReadToEnd")
				} else if r.IntN(20) == 0 {
					probes(sync)
				}
			}
			s.ReadToEnd()
			probes(syncs[len(syncs)-1])
		})
	}
}

// One writer and several translators at once; run with -race.
func TestOffsetSyncStoreConcurrentUse(t *testing.T) {
	s := NewOffsetSyncStoreReadToEnd(false)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for offset := int64(0); offset < 20000; offset += 7 {
			addSync(s, storeTP, offset, offset*2)
			if offset == 700 {
				s.ReadToEnd()
			}
		}
	}()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(0); i < 20000; i++ {
				if got, ok := s.Translate(storeTP, i); ok && got >= 0 {
					// The true position of offset i is 2*ceil(i/7)*7.
					if truePos := (i + 6) / 7 * 7 * 2; got > truePos {
						t.Errorf("translate(%d) = %d is ahead of %d", i, got, truePos)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	requireTranslation(t, s, 19999, 2*19999) // 19999 = 7*2857 is the last sync
	requireTranslation(t, s, 19998, 2*19992+1)
}

// javaRandom is java.util.Random (48-bit LCG), enough of it to replay the Java test's random streams.
type javaRandom struct{ seed int64 }

const (
	javaRandomMultiplier = 0x5DEECE66D
	javaRandomMask       = 1<<48 - 1
)

func newJavaRandom(seed int64) *javaRandom {
	return &javaRandom{seed: (seed ^ javaRandomMultiplier) & javaRandomMask}
}

func (r *javaRandom) next(bits uint) int32 {
	r.seed = (r.seed*javaRandomMultiplier + 0xB) & javaRandomMask
	return int32(uint64(r.seed) >> (48 - bits))
}

func (r *javaRandom) nextLong() int64 { return int64(r.next(32))<<32 + int64(r.next(32)) }

func (r *javaRandom) nextDouble() float64 {
	return float64(int64(r.next(26))<<27+int64(r.next(27))) * 0x1.0p-53
}

// longs is Random.longs(n, origin, bound) for a power-of-two bound-origin, the only case the test uses.
func (r *javaRandom) longs(n int, origin, bound int64) []int64 {
	m := bound - origin - 1
	if m&(m+1) != 0 {
		panic("javaRandom.longs: range is not a power of two")
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = r.nextLong()&m + origin
	}
	return out
}
