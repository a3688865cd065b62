package source

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
)

// reports records what publishNotices hands on, and fails while failing is set.
type reports struct {
	got     [][]kmtype.Notice
	failing bool
}

func (r *reports) report(_ context.Context, ns []kmtype.Notice) error {
	if r.failing {
		return errors.New("status not written")
	}
	r.got = append(r.got, ns)
	return nil
}

func TestNoticeBoardPublishesOnlyChanges(t *testing.T) {
	var b noticeBoard
	var out reports
	ctx := context.Background()
	require.NoError(t, b.publishNotices(ctx, out.report))
	require.Empty(t, out.got, "an empty board that never changed publishes nothing")

	b.notice("b", kmtype.Notice{Kind: NoticeSourceUnreachable, Message: "unreachable"})
	b.notice("a", kmtype.Notice{Kind: NoticeTargetUnreachable, Message: "unreachable"})
	require.True(t, b.hasNotice("a"))
	require.NoError(t, b.publishNotices(ctx, out.report))
	require.Len(t, out.got, 1)
	require.Equal(t, []string{NoticeTargetUnreachable, NoticeSourceUnreachable}, kinds(out.got[0]), "in the order of their keys")

	b.notice("a", kmtype.Notice{Kind: NoticeTargetUnreachable, Message: "unreachable"})
	require.NoError(t, b.publishNotices(ctx, out.report))
	require.Len(t, out.got, 1, "the same notice again is no change")

	b.clearNotice("a")
	b.clearNotice("never set")
	require.False(t, b.hasNotice("a"))
	out.failing = true
	require.Error(t, b.publishNotices(ctx, out.report))
	out.failing = false
	require.NoError(t, b.publishNotices(ctx, out.report))
	require.Len(t, out.got, 2, "a failed publication is tried again")
	require.Equal(t, []string{NoticeSourceUnreachable}, kinds(out.got[1]))
	require.NoError(t, b.publishNotices(ctx, out.report))
	require.Len(t, out.got, 2)
}

func TestNoticeBoardDropsTheOldestBeyondItsBound(t *testing.T) {
	var b noticeBoard
	for i := range maxNotices + 5 {
		b.notice(fmt.Sprintf("loss-%02d", i), kmtype.Notice{Kind: NoticeDataNotReplicated, Message: fmt.Sprint(i)})
	}
	list := b.noticeList()
	require.Len(t, list, maxNotices)
	require.False(t, b.hasNotice("loss-04"), "the oldest went first")
	require.True(t, b.hasNotice("loss-05"))
	require.True(t, b.hasNotice(fmt.Sprintf("loss-%02d", maxNotices+4)))
}

func TestNoticeBoardLossPartitions(t *testing.T) {
	var b noticeBoard
	require.Nil(t, b.lossPartitions())
	b.notice("gap", partitionNotice(NoticeDataNotReplicated, "gone", "t", 1, 5, 9))
	b.notice("trunc", partitionNotice(NoticeSourceTruncated, "truncated", "t", 2, 1, 0))
	b.notice("other", partitionNotice(NoticeRemoteTopicMissing, "missing", "t", 3, 1, 0))
	b.notice("task", kmtype.Notice{Kind: NoticeDataNotReplicated, Message: "no partition"})
	require.Equal(t, map[mirror.TopicPartition]bool{{Topic: "t", Partition: 1}: true, {Topic: "t", Partition: 2}: true}, b.lossPartitions())
}

func kinds(ns []kmtype.Notice) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Kind
	}
	return out
}
