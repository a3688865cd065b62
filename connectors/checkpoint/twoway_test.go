package checkpoint

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/kmtype"
)

// TestMergeOppositeResumesBeforeTheTargetsOwnRecords: "orders" on A holds a0 a1 b0' a2 b1' a3 (b' are copies of
// B's own records) and on B b0 a0' a1' b1 b2 a2' (a' copies of A's). A group at 5 on A has read a0..a2, b0 and
// b1. The map A→B puts it at 6 (after a2'); B's own b2 (offset 4), which it never read, comes first, and a2'
// is read again.
func TestMergeOppositeResumesBeforeTheTargetsOwnRecords(t *testing.T) {
	r := &checkpointRun{sourceAlias: "A", targetAlias: "B"}
	aToB := kmtype.RangeKey{SourceAlias: "A", TargetAlias: "B", Topic: "orders"}
	bToA := kmtype.RangeKey{SourceAlias: "B", TargetAlias: "A", Topic: "orders"}
	// A→B: a2 (A 3) at B 5, read through A 5. B→A: b1 (B 3) at A 4, read through B 4.
	own := kmtype.RangesAround{Prev: &kmtype.OffsetRange{RangeKey: aToB, SourceStart: 3, SourceEnd: 3, TargetStart: 5, SourceNext: 5}}
	opposite := kmtype.RangesAround{Prev: &kmtype.OffsetRange{RangeKey: bToA, SourceStart: 3, SourceEnd: 3, TargetStart: 4, SourceNext: 4}}
	row := kmtype.GroupOffset{Group: "g", Topic: "orders", DownstreamTopic: "orders", UpstreamOffset: 5}
	r.translate(&row, own)
	require.Equal(t, int64(6), *row.DownstreamOffset)
	require.True(t, row.Exact)
	mergeOpposite(&row, own, opposite)
	require.Equal(t, int64(4), *row.DownstreamOffset, "resume at b2, the first of B's own records the group has not read")
	require.False(t, row.Exact, "a2' at 5 was read on A and is read again")
}

// TestMergeOppositeExactWhenNothingLiesBetween: A holds a0 a1 b0', B holds a0' a1' b0. A group at 2 on A (a0, a1
// read) resumes at b0 on B whichever map is asked: exact.
func TestMergeOppositeExactWhenNothingLiesBetween(t *testing.T) {
	r := &checkpointRun{sourceAlias: "A", targetAlias: "B"}
	own := kmtype.RangesAround{Prev: &kmtype.OffsetRange{SourceStart: 0, SourceEnd: 1, TargetStart: 0, SourceNext: 3}}
	opposite := kmtype.RangesAround{Prev: &kmtype.OffsetRange{SourceStart: 2, SourceEnd: 2, TargetStart: 2, SourceNext: 3}}
	row := kmtype.GroupOffset{Group: "g", Topic: "orders", DownstreamTopic: "orders", UpstreamOffset: 2}
	r.translate(&row, own)
	mergeOpposite(&row, own, opposite)
	require.Equal(t, int64(2), *row.DownstreamOffset)
	require.True(t, row.Exact)
}

// TestOppositeQueriesOnlyForTopicsThatKeepTheirName: a topic renamed on the target (A.orders) holds none of the
// target's own records, so the opposite flow's map is not asked.
func TestOppositeQueriesOnlyForTopicsThatKeepTheirName(t *testing.T) {
	r := &checkpointRun{sourceAlias: "A", targetAlias: "B"}
	rows := []kmtype.GroupOffset{
		{Group: "g", Topic: "orders", DownstreamTopic: "A.orders", Partition: 0, UpstreamOffset: 5},
		{Group: "g", Topic: "orders", DownstreamTopic: "orders", Partition: 1, UpstreamOffset: 7},
		{Group: "h", Topic: "orders", DownstreamTopic: "orders", Partition: 1, UpstreamOffset: 7},
	}
	queries, lookup := r.oppositeQueries(rows)
	require.Equal(t, []int{-1, 0, 0}, lookup)
	require.Equal(t, []kmtype.RangeQuery{{Offset: 7, RangeKey: kmtype.RangeKey{SourceAlias: "B", TargetAlias: "A", Topic: "orders", Partition: 1}}}, queries)
}
