package source

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mirror"
)

// TestOffsetSyncsOutliveAMissingTopic: syncs a task sends before the offset-syncs topic exists (the task can start
// before its connector created the topic) are not lost: once the topic exists, the newest sync of each partition
// arrives, and no older one after it.
func TestOffsetSyncsOutliveAMissingTopic(t *testing.T) {
	t.Parallel()
	topic := kafkatest.TopicName(t, "mm2-offset-syncs.missing")
	props := map[string]string{
		"bootstrap.servers": kafkatest.Bootstrap(t, "B"), "enable.idempotence": "true",
		// Fail fast on the missing topic instead of after librdkafka's 30 s default.
		"topic.metadata.propagation.max.ms": "200", "message.timeout.ms": "3000",
	}
	log := slog.New(slog.DiscardHandler)
	s, err := newOffsetSyncer(newProducerPool(log), props, topic, log)
	require.NoError(t, err)
	defer s.close()

	s.send(mirror.OffsetSync{Topic: "orders", Partition: 0, UpstreamOffset: 10, DownstreamOffset: 7})
	s.send(mirror.OffsetSync{Topic: "orders", Partition: 1, UpstreamOffset: 20, DownstreamOffset: 17})
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.failing
	}, 30*time.Second, 20*time.Millisecond, "the syncs fail while the topic is missing")
	// A newer sync of partition 0 while failing: it replaces the retried one.
	s.send(mirror.OffsetSync{Topic: "orders", Partition: 0, UpstreamOffset: 30, DownstreamOffset: 27})

	kafkatest.CreateTopic(t, "B", topic, 1, nil)
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		s.flush(t.Context())
	}()
	select {
	case <-flushed:
	case <-time.After(60 * time.Second):
		t.Fatal("the syncs were never delivered once the topic existed")
	}

	var got []mirror.OffsetSync
	for _, r := range kafkatest.ReadAll(t, "B", topic, 0) {
		sync, err := mirror.DecodeOffsetSync(r.Key, r.Value)
		require.NoError(t, err)
		got = append(got, sync)
	}
	last := map[int32]int64{}
	for _, sync := range got {
		require.Greater(t, sync.UpstreamOffset, last[sync.Partition]-1, "partition %d's syncs in increasing order: %v", sync.Partition, got)
		last[sync.Partition] = sync.UpstreamOffset
	}
	require.Equal(t, map[int32]int64{0: 30, 1: 20}, last, "the newest sync of each partition arrived: %v", got)
}

// TestEverySyncArrivesInOrderThroughTheGate: three tasks of one worker share the offset-sync producer and its
// gate, and send syncs far faster than batches of 50 make the round trip (so most wait in their syncer); every
// sync arrives, in order per partition, none coalesced while fewer than maxQueuedOffsetSyncs wait.
func TestEverySyncArrivesInOrderThroughTheGate(t *testing.T) {
	t.Parallel()
	topic := kafkatest.TopicName(t, "mm2-offset-syncs.gate")
	kafkatest.CreateTopic(t, "B", topic, 1, nil)
	props := map[string]string{"bootstrap.servers": kafkatest.Bootstrap(t, "B"), "enable.idempotence": "true",
		"linger.ms": "5", "batch.num.messages": "50"}
	log := slog.New(slog.DiscardHandler)
	pool := newProducerPool(log)
	const perPartition = 300
	var syncers []*offsetSyncer
	for range 3 {
		s, err := newOffsetSyncer(pool, props, topic, log)
		require.NoError(t, err)
		defer s.close()
		syncers = append(syncers, s)
	}
	// What the three syncers have handed to librdkafka and not yet had reported: never more than one batch.
	inFlight := func() int {
		n := 0
		for _, s := range syncers {
			s.mu.Lock()
			n += s.inflight
			s.mu.Unlock()
		}
		return n
	}
	most := 0
	for i := range perPartition {
		for task, s := range syncers {
			for p := range 2 {
				// Partitions 0-5, two per task; upstream offsets 100 apart, as MM2's rule spaces them.
				s.send(mirror.OffsetSync{Topic: "orders", Partition: int32(2*task + p), UpstreamOffset: int64(100 * i), DownstreamOffset: int64(100*i + 7)})
				most = max(most, inFlight())
			}
		}
	}
	require.LessOrEqual(t, most, 50, "one batch of batch.num.messages at a time, whichever syncer sent it")
	require.Greater(t, most, 1, "syncs go out in batches")
	for _, s := range syncers {
		s.flush(t.Context())
	}

	got := map[int32][]int64{}
	for _, r := range kafkatest.ReadAll(t, "B", topic, 0) {
		sync, err := mirror.DecodeOffsetSync(r.Key, r.Value)
		require.NoError(t, err)
		require.Equal(t, sync.UpstreamOffset+7, sync.DownstreamOffset)
		got[sync.Partition] = append(got[sync.Partition], sync.UpstreamOffset)
	}
	want := make([]int64, perPartition)
	for i := range want {
		want[i] = int64(100 * i)
	}
	for p := range int32(6) {
		require.Equal(t, want, got[p], "partition %d: every sync, once, in order", p)
	}
}
