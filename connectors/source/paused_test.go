package source

import (
	"context"
	"log/slog"
	"maps"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/tasks"
)

// pausedTestEnv is the TaskEnv of a paused run as the runtime gives it: stored offsets to read, partition
// stats and notices to publish, a lease that is never valid; every other write fails the test.
type pausedTestEnv struct {
	tasks.TaskEnv // nil: what the paused run must not call panics
	t             *testing.T
	offsets       []kmtype.Offset
	log           *slog.Logger
	revoked       chan struct{}
	stop          context.Context

	mu        sync.Mutex
	published [][]kmtype.PartitionStat
	at        []time.Time
}

func (e *pausedTestEnv) ReadOffsets(context.Context) ([]kmtype.Offset, error) { return e.offsets, nil }
func (e *pausedTestEnv) PartitionStats(context.Context) ([]kmtype.PartitionStat, error) {
	return nil, nil
}
func (e *pausedTestEnv) LastOffsetRanges(context.Context, []kmtype.RangeKey) (map[kmtype.RangeKey]kmtype.OffsetRange, error) {
	return nil, nil
}
func (e *pausedTestEnv) PublishPartitionStats(_ context.Context, stats []kmtype.PartitionStat) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.published = append(e.published, stats)
	e.at = append(e.at, time.Now())
	return nil
}
func (e *pausedTestEnv) Report(context.Context, []kmtype.Notice) error { return nil }
func (e *pausedTestEnv) CommitOffsets(context.Context, []kmtype.Offset) error {
	e.t.Error("a paused run committed offsets")
	return tasks.ErrPausedWrite
}
func (e *pausedTestEnv) CommitProgress(context.Context, []kmtype.Offset, []kmtype.OffsetRange) error {
	e.t.Error("a paused run committed progress")
	return tasks.ErrPausedWrite
}
func (e *pausedTestEnv) Lease() tasks.Lease           { return pausedTestLease{e.revoked} }
func (e *pausedTestEnv) StopContext() context.Context { return e.stop }
func (e *pausedTestEnv) Logger() *slog.Logger         { return e.log }

// latest returns the newest stats of each partition published so far, and when the last publication was.
func (e *pausedTestEnv) latest() (map[int32]kmtype.PartitionStat, []time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[int32]kmtype.PartitionStat{}
	for _, pub := range e.published {
		for _, s := range pub {
			out[s.Partition] = s
		}
	}
	return out, append([]time.Time(nil), e.at...)
}

type pausedTestLease struct{ revoked chan struct{} }

func (pausedTestLease) Valid() bool                { return false }
func (pausedTestLease) ValidFor() time.Duration    { return 0 }
func (l pausedTestLease) Revoked() <-chan struct{} { return l.revoked }
func (pausedTestLease) Settle() time.Duration      { return 10 * time.Second }

// TestPausedSourceTaskWatchesManyPartitions runs a source task's paused mode over 300 partitions with stored
// offsets in three shapes — caught up, one record behind, never replicated (auto.offset.reset earliest) — and
// checks what it publishes against what was produced: each partition's replicated offset, end, lag in records,
// and lag in seconds from the timestamp of its first unreplicated record. The time the first look takes, with
// every first unreplicated record to read, is the cost figure for many partitions.
func TestPausedSourceTaskWatchesManyPartitions(t *testing.T) {
	t.Parallel()
	const partitions = 300
	topic := kafkatest.TopicName(t, "paused")
	kafkatest.CreateTopic(t, "A", topic, partitions, nil)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var recs []kafkatest.Record
	for p := range int32(partitions) {
		for i := range 2 {
			recs = append(recs, kafkatest.Record{Topic: topic, Partition: p, Value: []byte("v"),
				Timestamp: base.Add(time.Duration(int(p)*10+i) * time.Millisecond)})
		}
	}
	kafkatest.Produce(t, "A", recs)

	// Partition p % 3: 0 caught up (offset 1 stored), 1 one behind (offset 0), 2 never replicated (none).
	var offsets []kmtype.Offset
	var tps []mirror.TopicPartition
	for p := range int32(partitions) {
		tps = append(tps, mirror.TopicPartition{Topic: topic, Partition: p})
		if p%3 == 2 {
			continue
		}
		offsets = append(offsets, kmtype.Offset{Partition: map[string]any{"cluster": "A", "topic": topic, "partition": p},
			Offset: map[string]any{"offset": int64(1 - p%3)}})
	}
	cfg := maps.Clone(plannerConfig(t, topic))
	cfg[connectors.TaskClassKey] = connectors.SourceTaskClass
	cfg[mirror.TaskAssignedPartitionsConfig] = mirror.EncodeAssignedPartitions(tps)
	cfg[mirror.TaskIndexConfig] = "0"
	log := slog.New(slog.DiscardHandler)
	task, err := testRegistry(log).NewTask(tasks.TaskID{Connector: cfg["name"], Task: 0}, cfg)
	require.NoError(t, err)
	paused, ok := task.(tasks.PausedTask)
	require.True(t, ok, "the source task has a paused mode")

	stopCtx, hardStop := context.WithCancel(context.Background())
	defer hardStop()
	env := &pausedTestEnv{t: t, offsets: offsets, log: log, revoked: make(chan struct{}), stop: stopCtx}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	started := time.Now()
	go func() { done <- paused.RunPaused(ctx, env) }()

	var why string
	require.Eventually(t, func() bool {
		stats, _ := env.latest()
		if len(stats) != partitions {
			why = strconv.Itoa(len(stats)) + " partitions published"
			return false
		}
		now := time.Now()
		for p := range int32(partitions) {
			s := stats[p]
			wantPos, wantLag := int64(2), int64(0)
			switch p % 3 {
			case 1:
				wantPos, wantLag = 1, 1
			case 2:
				wantPos, wantLag = 0, 2
			}
			switch {
			case s.Status != statusPaused || s.RecordsPerSecond != 0:
				why = "partition " + strconv.Itoa(int(p)) + ": status " + s.Status
				return false
			case s.ReplicatedOffset != wantPos || s.EndOffset == nil || *s.EndOffset != 2 || s.LagRecords == nil || *s.LagRecords != wantLag:
				why = "partition " + strconv.Itoa(int(p)) + ": position " + strconv.FormatInt(s.ReplicatedOffset, 10)
				return false
			case s.LagSeconds == nil:
				why = "partition " + strconv.Itoa(int(p)) + ": lag in seconds unknown"
				return false
			}
			// The age of the first unreplicated record: the one at wantPos.
			wantSecs := 0.0
			if wantLag > 0 {
				wantSecs = now.Sub(base.Add(time.Duration(int(p)*10+int(wantPos)) * time.Millisecond)).Seconds()
			}
			if d := *s.LagSeconds - wantSecs; d > 0.1 || d < -pausedStatsInterval.Seconds()-1 {
				why = "partition " + strconv.Itoa(int(p)) + ": lag " + strconv.FormatFloat(*s.LagSeconds, 'f', 3, 64) + " s, want " +
					strconv.FormatFloat(wantSecs, 'f', 3, 64)
				return false
			}
		}
		return true
	}, 30*time.Second, 50*time.Millisecond, "the paused task publishes every partition's backlog: %s", lazyString(func() string { return why }))
	_, at := env.latest()
	t.Logf("%d partitions: first look published %.0f ms after the start (prepare, two ListOffsets, %d of %d first records read); "+
		"every lag in seconds known after %.1f s", partitions, at[0].Sub(started).Seconds()*1000, min(pausedHeadReads, 2*partitions/3),
		2*partitions/3, time.Since(started).Seconds())

	// The next looks read nothing again: two ListOffsets requests and a publication each. A caught-up partition,
	// unchanged, is republished every other look, so its report never gets older than the endpoint's 10 s.
	require.Eventually(t, func() bool { _, at = env.latest(); return len(at) >= 4 }, 30*time.Second, 50*time.Millisecond)
	env.mu.Lock()
	in := make([]bool, 4) // publication i has partition 0
	for i, pub := range env.published[:4] {
		for _, s := range pub {
			in[i] = in[i] || s.Partition == 0
		}
	}
	env.mu.Unlock()
	for i := range 3 {
		require.True(t, in[i] || in[i+1], "the caught-up partition 0 is in one of every two publications: %v", in)
	}
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("RunPaused did not return within 10 s of its soft stop")
	}
	final, _ := env.latest()
	require.Equal(t, statusStop, final[0].Status, "the run leaves its partitions marked stop")
}

// lazyString is a failure message computed when it is printed.
type lazyString func() string

func (l lazyString) String() string { return l() }
