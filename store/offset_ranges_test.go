package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/store/storetest"
)

// claimTask gives task 0 of a new connector c a run on worker w1 and returns its claim.
func claimTask(t *testing.T, s *store.Store) store.Claim {
	t.Helper()
	ctx := context.Background()
	w1, err := s.RegisterWorker(ctx, "w1", "http://w1")
	require.NoError(t, err)
	_, err = s.CreateConnector(ctx, "c", map[string]string{"name": "c"}, store.TargetStarted)
	require.NoError(t, err)
	assignAll(t, s, "w1")
	connUnit := store.Unit{Connector: "c", Task: store.ConnectorUnit}
	conn, err := s.ClaimUnit(ctx, workOf(t, s, "w1", connUnit), w1)
	require.NoError(t, err)
	_, err = s.ReplaceTaskConfigs(ctx, conn, []map[string]string{{"a": "1"}})
	require.NoError(t, err)
	assignAll(t, s, "w1")
	run, err := s.ClaimUnit(ctx, workOf(t, s, "w1", store.Unit{Connector: "c", Task: 0}), w1)
	require.NoError(t, err)
	return run
}

func TestOffsetRangesStoreSupersedeAndPrune(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	run := claimTask(t, s)
	k := kmtype.RangeKey{SourceAlias: "A", TargetAlias: "B", Topic: "t", Partition: 3}
	rg := func(start, end, target int64) kmtype.OffsetRange {
		return kmtype.OffsetRange{RangeKey: k, SourceID: "id1", SourceStart: start, SourceEnd: end, TargetStart: target, SourceNext: end + 1}
	}
	around := func(c int64) kmtype.RangesAround {
		got, err := s.OffsetRangesAround(ctx, []kmtype.RangeQuery{{RangeKey: k, Offset: c}})
		require.NoError(t, err)
		require.Len(t, got, 1)
		return got[0]
	}

	require.NoError(t, s.CommitProgress(ctx, run, nil, []kmtype.OffsetRange{rg(0, 9, 0), rg(12, 20, 10)}))
	require.ErrorIs(t, s.CommitProgress(ctx, store.Claim{Unit: run.Unit, Epoch: run.Epoch + 1}, nil, []kmtype.OffsetRange{rg(30, 31, 19)}), kmtype.ErrFenced)
	a := around(11)
	require.NotNil(t, a.Prev)
	require.NotNil(t, a.Next)
	require.Equal(t, int64(0), a.Prev.SourceStart)
	require.Equal(t, int64(12), a.Next.SourceStart)
	require.Nil(t, around(25).Next)

	require.Zero(t, a.Next.GapBefore, "a range claims no gap before it unless told")

	// The current range grows in place, and keeps the gap it knows to precede it.
	grown := rg(12, 40, 10)
	grown.GapBefore = 2
	require.NoError(t, s.CommitProgress(ctx, run, nil, []kmtype.OffsetRange{grown}))
	require.Equal(t, int64(40), around(25).Prev.SourceEnd)
	require.Equal(t, int64(2), around(11).Next.GapBefore)
	require.Equal(t, int64(2), around(25).Prev.GapBefore)
	last, err := s.LastOffsetRanges(ctx, []kmtype.RangeKey{k, {SourceAlias: "A", TargetAlias: "B", Topic: "other"}})
	require.NoError(t, err)
	require.Len(t, last, 1)
	require.Equal(t, int64(12), last[k].SourceStart)
	require.Equal(t, int64(2), last[k].GapBefore)
	require.False(t, last[k].UnmappedBefore)

	// A range after records the map does not know says so, and the store keeps it.
	unmapped := rg(45, 50, 60)
	unmapped.UnmappedBefore = true
	require.NoError(t, s.CommitProgress(ctx, run, nil, []kmtype.OffsetRange{unmapped}))
	require.True(t, around(42).Next.UnmappedBefore)
	require.False(t, around(42).Prev.UnmappedBefore)
	last, err = s.LastOffsetRanges(ctx, []kmtype.RangeKey{k})
	require.NoError(t, err)
	require.True(t, last[k].UnmappedBefore)

	// An offset rewind to 5 supersedes what follows and cuts the range it falls in.
	rewind := rg(5, 6, 31)
	rewind.Rewind = true
	require.NoError(t, s.CommitProgress(ctx, run, nil, []kmtype.OffsetRange{rewind}))
	a = around(4)
	require.Equal(t, int64(4), a.Prev.SourceEnd, "the range the rewind falls in is cut")
	require.Equal(t, int64(5), a.Next.SourceStart)
	require.Nil(t, around(12).Next, "ranges after the rewind are gone")
	require.Equal(t, int64(5), around(12).Prev.SourceStart)

	// A re-created remote topic (target offsets start over) supersedes everything before.
	recreated := rg(7, 8, 0)
	recreated.Rewind = true
	require.NoError(t, s.CommitProgress(ctx, run, nil, []kmtype.OffsetRange{recreated}))
	require.Nil(t, around(6).Prev, "ranges ending at or after the new target start are gone")

	// Pruning keeps the newest range even below the log start, and at most keep ranges.
	require.NoError(t, s.CommitProgress(ctx, run, nil, []kmtype.OffsetRange{rg(10, 10, 2), rg(12, 12, 3), rg(14, 14, 4)}))
	n, err := s.PruneOffsetRanges(ctx, k, 11, 10)
	require.NoError(t, err)
	require.Equal(t, int64(2), n, "ranges ending below the log start go")
	n, err = s.PruneOffsetRanges(ctx, k, 0, 1)
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "only the newest range is kept")
	require.Equal(t, int64(14), around(100).Prev.SourceStart)
}

func TestGroupOffsetsReplacedPerGroup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	run := claimTask(t, s)
	d := int64(7)
	g := func(group, topic string, p int32) kmtype.GroupOffset {
		return kmtype.GroupOffset{Group: group, Topic: topic, Partition: p, UpstreamOffset: 9, DownstreamTopic: "A." + topic,
			DownstreamOffset: &d, Exact: true, Basis: kmtype.BasisOffsetMap}
	}
	require.NoError(t, s.PutGroupOffsets(ctx, run, []string{"g1", "g2"}, []kmtype.GroupOffset{g("g1", "t", 0), g("g1", "t", 1), g("g2", "t", 0)}))
	require.NoError(t, s.PutGroupOffsets(ctx, run, []string{"g1"}, []kmtype.GroupOffset{g("g1", "t", 1)}))
	got, err := s.ConnectorGroupOffsets(ctx, "c", "g1")
	require.NoError(t, err)
	require.Len(t, got, 1, "a partition the group no longer has is dropped")
	groups, err := s.ConnectorGroups(ctx, "c")
	require.NoError(t, err)
	require.Len(t, groups, 2)
	_, err = s.ConnectorGroupOffsets(ctx, "c", "nope")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.ConnectorGroups(ctx, "missing")
	require.ErrorIs(t, err, store.ErrNotFound)
	require.ErrorIs(t, s.PutGroupOffsets(ctx, store.Claim{Unit: run.Unit, Epoch: run.Epoch + 1}, []string{"g1"}, nil), kmtype.ErrFenced)

	// Commit metadata is any bytes and comes back unchanged; a group id that text cannot hold is refused by name.
	meta := "abc\x00\xff" + strings.Repeat("\x00ü", 2048)
	m := g("g3", "t", 0)
	m.Metadata = meta
	require.NoError(t, s.PutGroupOffsets(ctx, run, []string{"g3"}, []kmtype.GroupOffset{m}))
	got, err = s.ConnectorGroupOffsets(ctx, "c", "g3")
	require.NoError(t, err)
	require.Equal(t, meta, got[0].Metadata)
	bad := g("g\x00", "t", 0)
	require.ErrorIs(t, s.PutGroupOffsets(ctx, run, []string{"g\x00"}, []kmtype.GroupOffset{bad}), store.ErrUnstorableText)
}
