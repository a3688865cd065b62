package source

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
)

func deletedPlanner(env *plannerEnv) *sourcePlanner {
	return &sourcePlanner{env: env, log: slog.New(slog.DiscardHandler), sourceAlias: "A", targetAlias: "B", planned: true}
}

func tp(topic string, p int32) mirror.TopicPartition {
	return mirror.TopicPartition{Topic: topic, Partition: p}
}

func i64(v int64) *int64 { return &v }

// A gone partition stays planned while its task drains it, and leaves the plan once the task says it has
// replicated what the source served, once nobody reads it, or once its position stood still for goneDrainIdle.
func TestGonePartitionsDrainBeforeTheyLeaveThePlan(t *testing.T) {
	r := deletedPlanner(&plannerEnv{})
	order := []mirror.TopicPartition{tp("kept", 0), tp("del", 0), tp("del", 1), tp("small", 0), tp("small", 1)}
	all := map[string]int{"kept": 1, "small": 1}
	gone := goneFromPlan(order, all)
	require.Equal(t, []mirror.TopicPartition{tp("del", 0), tp("del", 1), tp("small", 1)}, gone)

	topics := map[string]int{"kept": 1, "small": 1}
	stats := map[mirror.TopicPartition]kmtype.PartitionStat{
		tp("del", 0):   {Topic: "del", Partition: 0, ReplicatedOffset: 10, Status: statusOK},
		tp("del", 1):   {Topic: "del", Partition: 1, ReplicatedOffset: 7, Status: statusDeleted},
		tp("small", 1): {Topic: "small", Partition: 1, ReplicatedOffset: 3, Status: statusWarn},
	}
	planned := r.withDraining(gone, topics, stats, true)
	require.Equal(t, map[string]int{"kept": 1, "del": 1, "small": 2}, planned, "del-1 is drained; del-0 and small-1 are not")
	require.Equal(t, map[string]int{"kept": 1, "small": 1}, topics, "the listing itself is left alone")

	// The task moved del-0 on and then said it was done; small-1 stands still past the idle bound.
	stats[tp("del", 0)] = kmtype.PartitionStat{Topic: "del", Partition: 0, ReplicatedOffset: 20, Status: statusDeleted}
	r.draining[tp("small", 1)].movedAt = time.Now().Add(-goneDrainIdle)
	planned = r.withDraining(gone, topics, stats, true)
	require.Equal(t, topics, planned)
	require.Empty(t, r.draining)

	// Stats that cannot be read keep a partition until it has been idle for goneDrainIdle.
	r.draining = nil
	planned = r.withDraining(gone[:1], topics, nil, false)
	require.Equal(t, 1, planned["del"])
	planned = r.withDraining(nil, topics, nil, true)
	require.Equal(t, topics, planned)
	require.Nil(t, r.draining)
}

// A dropped partition of a deleted topic is reported with exactly the offsets between the committed one and the
// end last seen; nothing is shown when nothing was lost, or for a topic that is only no longer selected.
func TestDroppedPartitionsReportWhatTheyTook(t *testing.T) {
	env := &plannerEnv{offsets: []kmtype.Offset{
		{Partition: map[string]any{"cluster": "A", "topic": "del", "partition": 0}, Offset: map[string]any{"offset": int64(49)}},
		{Partition: map[string]any{"cluster": "A", "topic": "del", "partition": 1}, Offset: map[string]any{"offset": int64(99)}},
		{Partition: map[string]any{"cluster": "other", "topic": "del", "partition": 2}, Offset: map[string]any{"offset": int64(1000)}},
	}}
	r := deletedPlanner(env)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	stats := map[mirror.TopicPartition]kmtype.PartitionStat{
		// committed 49 beats the published 40: records 50..99 are lost
		tp("del", 0): {Topic: "del", Partition: 0, Task: 2, ReplicatedOffset: 40, EndOffset: i64(100), Status: statusDeleted, UpdatedAt: at},
		// caught up: nothing lost
		tp("del", 1): {Topic: "del", Partition: 1, Task: 0, ReplicatedOffset: 100, EndOffset: i64(100), Status: statusDeleted, UpdatedAt: at},
		// never saw an end: unknown
		tp("del", 2): {Topic: "del", Partition: 2, Task: 1, ReplicatedOffset: 5, Status: statusStop, UpdatedAt: at},
		// re-created with one partition: partition 1 went, seen by a paused task
		tp("small", 1): {Topic: "small", Partition: 1, Task: 1, ReplicatedOffset: 8, EndOffset: i64(12), Status: statusPaused, UpdatedAt: at},
		// no longer selected, still on the source: not lost
		tp("desel", 0): {Topic: "desel", Partition: 0, ReplicatedOffset: 1, EndOffset: i64(50), Status: statusOK, UpdatedAt: at},
		// still planned
		tp("kept", 0): {Topic: "kept", Partition: 0, ReplicatedOffset: 1, EndOffset: i64(50), Status: statusOK, UpdatedAt: at},
	}
	all := map[string]int{"small": 1, "desel": 1, "kept": 1}
	require.True(t, r.judgeDropped(t.Context(), all, []mirror.TopicPartition{tp("kept", 0)}, stats))

	got := r.lossNotices()
	require.Len(t, got, 3)
	byKey := map[string]kmtype.Notice{}
	for _, n := range got {
		byKey[n.Topic+"-"+string(rune('0'+*n.Partition))] = n
	}
	n := byKey["del-0"]
	require.Equal(t, NoticeDataNotReplicated, n.Kind)
	require.Equal(t, int64(50), *n.FirstOffset)
	require.Equal(t, int64(99), *n.LastOffset)
	require.Contains(t, n.Message, "A topic del partition 0 was deleted before records 50 to 99 were confirmed replicated to B")
	require.Contains(t, n.Message, "task 2 replicated it until the source served no more of it")

	n = byKey["del-2"]
	require.Equal(t, NoticeSourceTopicDeleted, n.Kind)
	require.Nil(t, n.LastOffset)
	require.Contains(t, n.Message, "no end offset of it was ever seen")

	n = byKey["small-1"]
	require.Equal(t, NoticeDataNotReplicated, n.Kind)
	require.Equal(t, int64(8), *n.FirstOffset)
	require.Equal(t, int64(11), *n.LastOffset)
	require.Contains(t, n.Message, "re-created with 1 partitions, without this one")
	require.Contains(t, n.Message, "the connector was paused; its task 1 last saw the end at offset 12 at 2026-01-02T03:04:05Z")

	// The connector's status shows them beside its other notices, and judging again adds nothing.
	require.NoError(t, r.reportProblems(t.Context(), map[string]int{}))
	require.Len(t, env.notices, 3)
	r.judgeDropped(t.Context(), all, []mirror.TopicPartition{tp("kept", 0)}, stats)
	require.Len(t, r.lossNotices(), 3)
	require.Equal(t, 2, strings.Count(env.currentNotice(), "DATA NOT REPLICATED"))

	// They outlive the run: the connector's next run shows them again.
	require.NoError(t, r.saveLosses(t.Context()))
	require.Len(t, env.losses, 3)
	next := deletedPlanner(env)
	next.loadLosses(t.Context())
	require.Equal(t, r.lossNotices(), next.lossNotices())
}

// A task shows a gone partition as deleted, with what it took, once the partition's position has stood still
// over goneStillSamples samples with nothing in flight and everything acknowledged committed.
func TestGonePartitionIsDeletedOnceDrained(t *testing.T) {
	p := newSourcePartition(tp("del", 1), "A.del", 49, "id")
	p.gone, p.seenEnd, p.readEnd = true, 100, 60
	r := &sourceRun{env: &statsEnv{}, log: slog.New(slog.DiscardHandler), sourceAlias: "A", targetAlias: "B",
		parts: []*sourcePartition{p}}
	now := time.Now()
	for i := range goneStillSamples - 1 {
		r.sampleStats(nil, now.Add(time.Duration(i)*time.Second))
		require.NotEqual(t, statusDeleted, p.stats.last.Status, "sample %d: not drained yet", i)
	}
	r.sampleStats(nil, now.Add(goneStillSamples*time.Second))
	require.Equal(t, statusDeleted, p.stats.last.Status)
	require.Equal(t, int64(100), *p.stats.last.EndOffset, "the end last seen stands for the gone topic's")
	require.Len(t, r.notices, 1)
	for _, n := range r.notices {
		require.Equal(t, NoticeDataNotReplicated, n.Kind)
		require.Equal(t, int64(50), *n.FirstOffset)
		require.Equal(t, int64(99), *n.LastOffset)
		require.Contains(t, n.Message, "records 50 to 59 had been read and were in flight when a pipeline restarted")
	}

	// Records in flight keep it draining.
	q := newSourcePartition(tp("del", 2), "A.del", 10, "id")
	q.gone, q.seenEnd = true, 20
	q.forwarded(11, noTimestamp, 10, 5)
	r = &sourceRun{env: &statsEnv{}, log: slog.New(slog.DiscardHandler), parts: []*sourcePartition{q}}
	for i := range goneStillSamples + 1 {
		r.sampleStats(nil, now.Add(time.Duration(i)*time.Second))
	}
	require.NotEqual(t, statusDeleted, q.stats.last.Status)
	require.Empty(t, r.notices)
}
