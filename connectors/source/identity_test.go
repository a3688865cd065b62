package source

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
)

// TestRecreatedTopicReportsWhatTheEndedPipelineHadRead covers a source topic deleted while its pipeline was
// restarting: the records the ended pipeline had read past the acknowledged offset are reported lost (with the
// end offset the watch saw, whichever reaches further) with the never-seen tail after them; a deletion found
// when a pipeline starts with no end offset ever seen is reported as a re-creation whose tail cannot be known;
// and a pipeline (running or starting) that had everything it read or saw acknowledged reports nothing.
func TestRecreatedTopicReportsWhatTheEndedPipelineHadRead(t *testing.T) {
	recreated := func(acked, next, seenEnd int64) (*sourcePartition, *identityWatch) {
		p := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 3}, "A.t", acked, "old-id")
		p.next, p.seenEnd, p.newID = next, seenEnd, "new-id"
		r := &identityWatch{log: slog.New(slog.DiscardHandler), sourceAlias: "A", targetAlias: "B", notices: &noticeBoard{}}
		return p, r
	}
	only := func(t *testing.T, r *identityWatch) kmtype.Notice {
		t.Helper()
		require.Len(t, r.notices.notices, 1)
		for _, n := range r.notices.notices {
			return n
		}
		panic("unreachable")
	}

	t.Run("read past the acknowledged offset", func(t *testing.T) {
		p, r := recreated(141, 247, 0)
		r.restartRecreated([]*sourcePartition{p}, true)
		n := only(t, r)
		require.Equal(t, NoticeDataNotReplicated, n.Kind)
		require.Equal(t, int64(142), *n.FirstOffset)
		require.Equal(t, int64(246), *n.LastOffset)
		require.Contains(t, n.Message, "records 142 to 246 of the deleted topic were not confirmed by the target")
		require.Contains(t, n.Message, "records 142 to 246 had been read and were in flight")
		require.Contains(t, n.Message, "nor can any it held from offset 247 on, which was never seen")
		require.Equal(t, int64(-1), p.next, "the position in the deleted topic is forgotten")
		require.Equal(t, "new-id", p.sourceID)
	})
	t.Run("read by a pipeline before the current one", func(t *testing.T) {
		p, r := recreated(141, 247, 0)
		require.Equal(t, int64(141), p.reset(), "the next pipeline starts after the acknowledged offset")
		r.restartRecreated([]*sourcePartition{p}, false)
		n := only(t, r)
		require.Equal(t, int64(142), *n.FirstOffset)
		require.Equal(t, int64(246), *n.LastOffset)
		require.Equal(t, int64(-1), p.readEnd)
	})
	t.Run("the watch saw further than the pipeline read", func(t *testing.T) {
		p, r := recreated(141, 200, 300)
		r.restartRecreated([]*sourcePartition{p}, true)
		n := only(t, r)
		require.Equal(t, int64(142), *n.FirstOffset)
		require.Equal(t, int64(299), *n.LastOffset)
		require.Contains(t, n.Message, "records 142 to 199 had been read and were in flight")
	})
	t.Run("never read past the acknowledged offset while seen", func(t *testing.T) {
		p, r := recreated(141, -1, 300)
		r.restartRecreated([]*sourcePartition{p}, false)
		n := only(t, r)
		require.Equal(t, int64(299), *n.LastOffset)
		require.NotContains(t, n.Message, "in flight")
	})
	t.Run("everything read was acknowledged", func(t *testing.T) {
		p, r := recreated(141, 142, 100)
		r.restartRecreated([]*sourcePartition{p}, false)
		require.Empty(t, r.notices.notices, "a running pipeline read the topic up to its deletion: nothing to report")
	})
	t.Run("found at start after everything read was acknowledged", func(t *testing.T) {
		p, r := recreated(141, 142, 100)
		r.restartRecreated([]*sourcePartition{p}, true)
		require.Empty(t, r.notices.notices, "the pipeline before read the topic up to its end as last seen: no lasting alarm")
	})
	t.Run("found at start, judged on the end offset last published", func(t *testing.T) {
		p, r := recreated(141, -1, 142)
		r.restartRecreated([]*sourcePartition{p}, true)
		require.Empty(t, r.notices.notices, "a paused run saw the end at 142 before the deletion: nothing was lost")
		p, r = recreated(141, -1, 150)
		r.restartRecreated([]*sourcePartition{p}, true)
		n := only(t, r)
		require.Equal(t, NoticeDataNotReplicated, n.Kind)
		require.Equal(t, int64(142), *n.FirstOffset)
		require.Equal(t, int64(149), *n.LastOffset)
	})
	t.Run("nothing known: a task that never read it", func(t *testing.T) {
		p, r := recreated(141, -1, 0)
		r.restartRecreated([]*sourcePartition{p}, true)
		n := only(t, r)
		require.Equal(t, NoticeSourceTopicRecreated, n.Kind)
		require.Nil(t, n.LastOffset, "no end is known")
		require.Contains(t, n.Message, "the deletion was found when a pipeline of this task started, and no end offset of the deleted topic had been seen since offset 141 was replicated")
		require.NotContains(t, n.Message, "not running", "whether a task was running when it was deleted is not known here")
	})
}

// remoteIDs is a target whose remote topics have the ids it holds (none: the topic does not exist).
type remoteIDs map[string]string

func (ids remoteIDs) TopicIDs(_ context.Context, topics []string) (map[string]string, error) {
	out := map[string]string{}
	for _, t := range topics {
		if id, ok := ids[t]; ok {
			out[t] = id
		}
	}
	return out, nil
}

// The watch says when a remote topic it saw was deleted (until it exists again) and when it was re-created
// (for the rest of the run): what was replicated to it is gone from the target.
func TestRemoteTopicDeletedOrRecreatedIsReported(t *testing.T) {
	ctx := context.Background()
	w := &identityWatch{log: slog.New(slog.DiscardHandler), sourceAlias: "A", targetAlias: "B", notices: &noticeBoard{},
		byRemote: map[string][]*sourcePartition{"A.t": nil}, remoteIDs: map[string]string{}}
	target := remoteIDs{}
	require.NoError(t, w.checkRemotes(ctx, target))
	require.Empty(t, w.noticeKinds(), "a remote topic never seen is created by the connector, not reported")

	target["A.t"] = "id-1"
	require.NoError(t, w.checkRemotes(ctx, target))
	require.Empty(t, w.noticeKinds())

	delete(target, "A.t")
	require.NoError(t, w.checkRemotes(ctx, target))
	require.Equal(t, []string{NoticeRemoteTopicMissing}, w.noticeKinds())

	target["A.t"] = "id-2"
	require.NoError(t, w.checkRemotes(ctx, target))
	require.Equal(t, []string{NoticeRemoteTopicRecreated}, w.noticeKinds(), "the missing notice gives way to the re-creation")
	require.NoError(t, w.checkRemotes(ctx, target))
	require.Equal(t, []string{NoticeRemoteTopicRecreated}, w.noticeKinds(), "reported once, and kept")
}

func (w *identityWatch) noticeKinds() []string { return kinds(w.notices.noticeList()) }
