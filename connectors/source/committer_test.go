package source

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/lograte"
)

// commitRecorder is a commitEnv that keeps what it was given and fails each call whose error is set.
type commitRecorder struct {
	offsets                        [][]kmtype.Offset
	ranges                         [][]kmtype.OffsetRange
	topics                         [][]string
	reports                        [][]kmtype.Notice
	prunes                         []kmtype.RangeKey
	commitErr, topicsErr, pruneErr error
}

func (e *commitRecorder) CommitProgress(_ context.Context, offsets []kmtype.Offset, ranges []kmtype.OffsetRange) error {
	if e.commitErr != nil {
		return e.commitErr
	}
	e.offsets, e.ranges = append(e.offsets, offsets), append(e.ranges, ranges)
	return nil
}

func (e *commitRecorder) RecordTopics(_ context.Context, topics []string) error {
	if e.topicsErr != nil {
		return e.topicsErr
	}
	e.topics = append(e.topics, topics)
	return nil
}

func (e *commitRecorder) Report(_ context.Context, ns []kmtype.Notice) error {
	e.reports = append(e.reports, ns)
	return nil
}

func (e *commitRecorder) PruneOffsetRanges(_ context.Context, key kmtype.RangeKey, _ int64, _ int) error {
	if e.pruneErr != nil {
		return e.pruneErr
	}
	e.prunes = append(e.prunes, key)
	return nil
}

func testCommitter(env commitEnv, parts ...*sourcePartition) *committer {
	return &committer{env: env, parts: parts, sourceAlias: "A", targetAlias: "B", notices: &noticeBoard{},
		log: slog.New(slog.DiscardHandler), limit: lograte.New(time.Minute)}
}

// startedPartition is a partition whose pipeline assigned it at offset 0 of the source topic with id "id-1".
func startedPartition(topic string) *sourcePartition {
	p := newSourcePartition(mirror.TopicPartition{Topic: topic, Partition: 0}, "A."+topic, -1, "id-1")
	p.fresh, p.startAt = true, 0
	return p
}

func committedOffsets(t *testing.T, offsets []kmtype.Offset) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, o := range offsets {
		off, ok := jsonInt(o.Offset["offset"])
		require.True(t, ok)
		out[o.Partition["topic"].(string)] = off
	}
	return out
}

// The committer stores offsets only over records the target acknowledged, with the ranges behind them in the
// same call, and moves a partition's committed offset only once that call succeeded.
func TestCommitterCommitsOnlyAcknowledgedProgress(t *testing.T) {
	ctx := context.Background()
	env := &commitRecorder{}
	p, idle := startedPartition("t"), startedPartition("idle")
	c := testCommitter(env, p, idle)

	for off := int64(0); off < 3; off++ {
		p.forwarded(off, 1000+off, 10, 5)
	}
	require.NoError(t, c.commit(ctx))
	require.Empty(t, env.offsets, "nothing acknowledged, nothing committed")

	p.ack(100)
	p.ack(101)
	require.NoError(t, c.commit(ctx))
	require.Len(t, env.offsets, 1)
	require.Equal(t, map[string]int64{"t": 1}, committedOffsets(t, env.offsets[0]), "offset 2 is still in flight")
	require.Equal(t, "id-1", env.offsets[0][0].SourceID)
	require.NotEmpty(t, env.ranges[0], "the offset map's ranges go with the offsets")
	for _, rg := range env.ranges[0] {
		require.LessOrEqual(t, rg.SourceEnd, int64(1), "a range covers acknowledged records only: %+v", rg)
		require.Equal(t, "B", rg.TargetAlias)
	}
	require.Equal(t, [][]string{{"A.t"}}, env.topics, "the remote topic is active once a record arrived")
	require.Equal(t, int64(1), p.committed)

	require.NoError(t, c.commit(ctx))
	require.Len(t, env.offsets, 1, "no progress, no call")
	require.Len(t, env.topics, 1, "an active topic is recorded once")

	p.ack(102)
	env.commitErr = errors.New("database down")
	require.Error(t, c.commit(ctx))
	require.Equal(t, int64(1), p.committed, "a failed commit moves nothing")
	env.commitErr = nil
	require.NoError(t, c.commit(ctx))
	require.Equal(t, map[string]int64{"t": 2}, committedOffsets(t, env.offsets[1]))
	require.Equal(t, int64(2), p.committed)
	require.Equal(t, int64(-1), idle.committed)
}

// A new source identity is stored even when the offset did not move.
func TestCommitterStoresANewIdentity(t *testing.T) {
	env := &commitRecorder{}
	p := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 0}, "A.t", 7, "id-1")
	p.idDirty = true
	c := testCommitter(env, p)
	require.NoError(t, c.commit(context.Background()))
	require.Len(t, env.offsets, 1)
	require.Equal(t, map[string]int64{"t": 7}, committedOffsets(t, env.offsets[0]))
	_, dirty := p.identity()
	require.False(t, dirty)
}

// The committer publishes the notices with a commit when they changed, and a fenced commit ends its work.
func TestCommitterPublishesNoticesAndStopsWhenFenced(t *testing.T) {
	ctx := context.Background()
	env := &commitRecorder{}
	p := startedPartition("t")
	c := testCommitter(env, p)
	c.notices.notice("target", kmtype.Notice{Kind: NoticeTargetUnreachable, Message: "no acknowledgement"})
	require.NoError(t, c.commit(ctx))
	require.NoError(t, c.commit(ctx))
	require.Len(t, env.reports, 1)

	p.forwarded(0, 1000, 10, 5)
	p.ack(100)
	env.topicsErr = kmtype.ErrFenced
	c.notices.clearNotice("target")
	require.ErrorIs(t, c.commit(ctx), kmtype.ErrFenced)
	require.Len(t, env.reports, 1, "nothing more after a fenced call")
	require.False(t, p.tracked)
}

// Pruning runs only for partitions whose stored ranges changed or whose log start moved, and a failed prune is
// tried again.
func TestCommitterPrunesOnlyWhatCanChange(t *testing.T) {
	ctx := context.Background()
	env := &commitRecorder{}
	p := startedPartition("t")
	c := testCommitter(env, p)
	c.prune(ctx)
	require.Empty(t, env.prunes, "no stored ranges, nothing to prune")

	p.forwarded(0, 1000, 10, 5)
	p.ack(100)
	require.NoError(t, c.commit(ctx))
	env.pruneErr = errors.New("database down")
	c.prune(ctx)
	env.pruneErr = nil
	c.prune(ctx)
	require.Equal(t, []kmtype.RangeKey{{SourceAlias: "A", TargetAlias: "B", Topic: "t", Partition: 0}}, env.prunes)
	c.prune(ctx)
	require.Len(t, env.prunes, 1, "nothing changed since")

	p.logStart = 1
	c.prune(ctx)
	require.Len(t, env.prunes, 2, "the log start moved")
}
