package source

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafkafake"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/lograte"
	"github.com/kmirror/kmirror/tasks"
)

// pausedRun is a paused run over parts of the source's topics, watching them through a fresh pausedWatch.
func pausedRun(t *testing.T, src *fakeSource, parts ...*sourcePartition) (*sourceRun, *pausedWatch, *pausedTestEnv) {
	log := slog.New(slog.DiscardHandler)
	env := &pausedTestEnv{t: t, log: log, revoked: make(chan struct{}), stop: context.Background()}
	r := &sourceRun{env: env, log: log, sourceAlias: "A", targetAlias: "B", resetPolicy: "earliest", parts: parts,
		bySource: map[string][]*sourcePartition{}, limit: lograte.New(time.Minute)}
	w := &pausedWatch{consumer: fakeHeads{src.log.NewConsumer(kafkafake.ConsumerOptions{})}, admin: src,
		heads: map[*sourcePartition]*pausedHead{}, starts: map[kafka.PartitionID]int64{}}
	for _, p := range parts {
		r.bySource[p.tp.Topic] = append(r.bySource[p.tp.Topic], p)
		w.ids = append(w.ids, kafka.PartitionID{Topic: p.tp.Topic, Partition: p.tp.Partition})
		w.heads[p] = &pausedHead{pos: -1, end: -1, ts: noTimestamp}
	}
	return r, w, env
}

// A paused task replicates nothing and commits nothing, yet shows each partition's backlog against the source's
// end: the replicated offset stays, the end and the lag in records and in seconds (the age of the first
// unreplicated record) grow; retention deleting the backlog shows at once, with the offsets lost.
func TestPausedTaskShowsTheBacklogAndItsLoss(t *testing.T) {
	ctx := context.Background()
	src := newFakeSource()
	id, err := src.log.CreateTopic("t", 3)
	require.NoError(t, err)
	old := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for p := range int32(3) {
		_, err := src.log.Append("t", p, kafkafake.Message{Value: []byte("a"), Timestamp: old}, kafkafake.Message{Value: []byte("b"), Timestamp: old.Add(time.Second)})
		require.NoError(t, err)
	}
	caughtUp := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 0}, "A.t", 1, id)
	behind := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 1}, "A.t", 0, id)
	never := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 2}, "A.t", -1, id)
	r, w, env := pausedRun(t, src, caughtUp, behind, never)

	require.NoError(t, r.pausedTick(ctx, w))
	got, _ := env.latest()
	require.Len(t, got, 3)
	for p, want := range map[int32]struct{ pos, lag int64 }{0: {2, 0}, 1: {1, 1}, 2: {0, 2}} {
		st := got[p]
		require.Equal(t, statusPaused, st.Status, "partition %d", p)
		require.Equal(t, want.pos, st.ReplicatedOffset, "partition %d", p)
		require.Equal(t, int64(2), *st.EndOffset, "partition %d", p)
		require.Equal(t, want.lag, *st.LagRecords, "partition %d", p)
	}
	require.InDelta(t, time.Since(old.Add(time.Second)).Seconds(), *got[1].LagSeconds, 5, "the age of partition 1's first unreplicated record")
	require.InDelta(t, time.Since(old).Seconds(), *got[2].LagSeconds, 5)
	require.Equal(t, float64(0), *got[0].LagSeconds, "caught up")
	require.Empty(t, r.noticeList())

	// The backlog grows; retention deletes partition 1's unreplicated record. Log starts are asked every
	// pausedStartsEvery looks: the loss shows at the next look that asks.
	_, err = src.log.AppendValues("t", 1, "c", "d")
	require.NoError(t, err)
	require.NoError(t, src.log.DeleteRecordsBefore("t", 1, 3))
	for range pausedStartsEvery {
		require.NoError(t, r.pausedTick(ctx, w))
	}
	got, _ = env.latest()
	require.Equal(t, statusTruncated, got[1].Status)
	require.Equal(t, int64(4), *got[1].EndOffset, "the end grows while paused")
	require.Equal(t, int64(1), got[1].ReplicatedOffset, "a paused run moves no offset")
	ns := r.noticeList()
	require.Len(t, ns, 1, "the loss is reported once, however many looks see it")
	require.Equal(t, NoticeDataNotReplicated, ns[0].Kind)
	require.Equal(t, []int64{1, 2}, []int64{*ns[0].FirstOffset, *ns[0].LastOffset})
	require.NoError(t, r.pausedTick(ctx, w))
	require.Len(t, r.noticeList(), 1, "and at the next look, still once")

	// An unreachable source is a notice, not an error; its partitions' reports go stale meanwhile.
	src.failing(errors.New("all brokers down"))
	require.NoError(t, r.pausedTick(ctx, w))
	require.Contains(t, kinds(r.noticeList()), NoticeSourceUnreachable)
	src.failing(nil)
	require.NoError(t, r.pausedTick(ctx, w))
	require.NotContains(t, kinds(r.noticeList()), NoticeSourceUnreachable)

	// Deleted while paused: the partitions keep the end last seen of the topic they replicated, and the
	// re-created topic's offsets are not taken for theirs.
	require.NoError(t, src.log.DeleteTopic("t"))
	_, err = src.log.CreateTopic("t", 1)
	require.NoError(t, err)
	_, err = src.log.AppendValues("t", 0, "x", "y", "z", "w", "v", "u", "s")
	require.NoError(t, err)
	require.Empty(t, r.liveIDs(ctx, w), "neither the gone partitions nor another incarnation's")
	require.NoError(t, r.pausedTick(ctx, w))
	got, _ = env.latest()
	require.Equal(t, int64(2), *got[0].EndOffset, "the end last seen of the deleted topic, not the new topic's 7")

	// The run's end leaves the positions marked stop, unless the lease was revoked.
	r.endPaused(nil)
	got, _ = env.latest()
	for p, st := range got {
		require.Equal(t, statusStop, st.Status, "partition %d", p)
	}
	n := len(env.published)
	close(env.revoked)
	r.endPaused(nil)
	require.Len(t, env.published, n, "a revoked lease publishes nothing more")
}

// A fenced publication ends the paused run; other failures are retried at the next look.
func TestPausedTaskEndsOnlyWhenFenced(t *testing.T) {
	src := newFakeSource()
	_, err := src.log.CreateTopic("t", 1)
	require.NoError(t, err)
	p := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 0}, "A.t", -1, "")
	r, w, _ := pausedRun(t, src, p)
	env := &failingStatsEnv{pausedTestEnv: r.env.(*pausedTestEnv), err: errors.New("database down")}
	r.env = env
	require.NoError(t, r.pausedTick(context.Background(), w))
	env.err = kmtype.ErrFenced
	require.ErrorIs(t, r.pausedTick(context.Background(), w), kmtype.ErrFenced)

	// The notices too: a source that does not answer is shown, unless the run lost its task.
	env.err = nil
	src.failing(errors.New("all brokers down"))
	env.reportErr = errors.New("database down")
	require.NoError(t, r.pausedTick(context.Background(), w))
	env.reportErr = kmtype.ErrFenced
	r.notice("other", kmtype.Notice{Kind: NoticeSourceUnreachable, Message: "changed"})
	require.ErrorIs(t, r.pausedTick(context.Background(), w), kmtype.ErrFenced)
}

type failingStatsEnv struct {
	*pausedTestEnv
	err, reportErr error
}

func (e *failingStatsEnv) PublishPartitionStats(context.Context, []kmtype.PartitionStat) error {
	return e.err
}

func (e *failingStatsEnv) Report(context.Context, []kmtype.Notice) error { return e.reportErr }

// A paused task whose source does not answer publishes nothing it does not know and commits nothing; stopped,
// it ends cleanly and leaves its partitions' positions marked stop.
func TestPausedTaskOverAnUnreachableSourceStopsCleanly(t *testing.T) {
	cfg := fakePlannerConfig("t")
	cfg[connectors.TaskClassKey] = connectors.SourceTaskClass
	cfg[mirror.TaskAssignedPartitionsConfig] = mirror.EncodeAssignedPartitions([]mirror.TopicPartition{{Topic: "t", Partition: 0}})
	cfg[mirror.TaskIndexConfig] = "0"
	logs := &plannerLogs{}
	log := slog.New(logs)
	task, err := testRegistry(log).NewTask(tasks.TaskID{Connector: "mm2", Task: 0}, cfg)
	require.NoError(t, err)
	paused, ok := task.(tasks.PausedTask)
	require.True(t, ok)
	env := &pausedTestEnv{t: t, log: log, revoked: make(chan struct{}), stop: context.Background(),
		offsets: []kmtype.Offset{committedOffset("A", "t", 0, 41, "")}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- paused.RunPaused(ctx, env) }()
	awaitPlanner(t, "the watch started", func() bool { return logs.count(slog.LevelInfo, "paused: watching the partitions' backlog") > 0 })
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("RunPaused did not return after its stop")
	}
	final, _ := env.latest()
	require.Equal(t, statusStop, final[0].Status, "the run leaves its partition marked stop")
	require.Equal(t, int64(42), final[0].ReplicatedOffset, "at its committed position")
}
