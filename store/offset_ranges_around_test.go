package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store/storetest"
)

// TestOffsetRangesAroundTarget: a lookup by target offset answers with the last range starting at or before it
// in the target and the range after that one, in the order asked.
func TestOffsetRangesAroundTarget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	run := claimTask(t, s)
	k := kmtype.RangeKey{SourceAlias: "B", TargetAlias: "A", Topic: "orders", Partition: 1}
	rg := func(start, end, target int64) kmtype.OffsetRange {
		return kmtype.OffsetRange{RangeKey: k, SourceID: "id1", SourceStart: start, SourceEnd: end, TargetStart: target, SourceNext: end + 1}
	}
	// B's own records 0..4 at A 3..7, 8..9 at A 20..21, 15..15 at A 30.
	require.NoError(t, s.CommitProgress(ctx, run, nil, []kmtype.OffsetRange{rg(0, 4, 3), rg(8, 9, 20), rg(15, 15, 30)}))
	other := kmtype.RangeKey{SourceAlias: "B", TargetAlias: "A", Topic: "orders", Partition: 2}
	got, err := s.OffsetRangesAroundTarget(ctx, []kmtype.RangeQuery{
		{RangeKey: k, Offset: 0}, {RangeKey: k, Offset: 7}, {RangeKey: k, Offset: 12}, {RangeKey: k, Offset: 40}, {RangeKey: other, Offset: 5},
	})
	require.NoError(t, err)
	require.Len(t, got, 5)
	require.Nil(t, got[0].Prev)
	require.Equal(t, int64(0), got[0].Next.SourceStart)
	require.Equal(t, int64(0), got[1].Prev.SourceStart)
	require.Equal(t, int64(8), got[1].Next.SourceStart)
	require.Equal(t, int64(0), got[2].Prev.SourceStart)
	require.Equal(t, int64(20), got[2].Next.TargetStart)
	require.Equal(t, int64(15), got[3].Prev.SourceStart)
	require.Nil(t, got[3].Next)
	require.Nil(t, got[4].Prev)
	require.Nil(t, got[4].Next)
}
