package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store/storetest"
)

// TestOppositeRanges: a flow B→A learns which offsets of B's partitions the A→B flow wrote, as target offsets,
// from the ranges ending at or after the offset asked; not its own ranges, not another partition's, and not
// those of a source topic the A→B connector wrote under another name.
func TestOppositeRanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	run := claimTask(t, s) // connector "c", the A→B flow
	ab := func(topic string, part int32, start, end, target int64) kmtype.OffsetRange {
		return kmtype.OffsetRange{RangeKey: kmtype.RangeKey{SourceAlias: "A", TargetAlias: "B", Topic: topic, Partition: part},
			SourceStart: start, SourceEnd: end, TargetStart: target, SourceNext: end + 1}
	}
	own := kmtype.OffsetRange{RangeKey: kmtype.RangeKey{SourceAlias: "B", TargetAlias: "A", Topic: "orders", Partition: 1},
		SourceStart: 0, SourceEnd: 100, TargetStart: 0, SourceNext: 101}
	// A's orders-1 records 0..4 at B 3..7 and 8..9 at B 20..21; orders-2 at B 0..9; "renamed" went to another topic.
	require.NoError(t, s.CommitProgress(ctx, run, nil, []kmtype.OffsetRange{
		ab("orders", 1, 0, 4, 3), ab("orders", 1, 8, 9, 20), ab("orders", 2, 0, 9, 0), ab("renamed", 1, 0, 9, 0), own,
	}))
	require.NoError(t, s.RecordTopics(ctx, "c", []string{"orders", "A.renamed"}))

	q := func(topic string, part int32, from int64) kmtype.RangeQuery {
		return kmtype.RangeQuery{RangeKey: kmtype.RangeKey{SourceAlias: "B", TargetAlias: "A", Topic: topic, Partition: part}, Offset: from}
	}
	got, err := s.OppositeRanges(ctx, []kmtype.RangeQuery{q("orders", 1, 0), q("renamed", 1, 0), q("orders", 3, 0)})
	require.NoError(t, err)
	require.Equal(t, []kmtype.TargetRange{{Topic: "orders", Partition: 1, Start: 3, End: 7}, {Topic: "orders", Partition: 1, Start: 20, End: 21}}, got)

	got, err = s.OppositeRanges(ctx, []kmtype.RangeQuery{q("orders", 2, 5), q("orders", 1, 8)})
	require.NoError(t, err)
	require.Equal(t, []kmtype.TargetRange{{Topic: "orders", Partition: 2, Start: 0, End: 9}, {Topic: "orders", Partition: 1, Start: 20, End: 21}}, got)

	got, err = s.OppositeRanges(ctx, nil)
	require.NoError(t, err)
	require.Empty(t, got)
}
