package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/store/storetest"
)

// TestTaskStats: a task's pipeline figures round-trip; a shrunk task set drops the removed task's row, and a run
// of the superseded set cannot bring it back.
func TestTaskStats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	conn, runs := claimedTaskSet(t, s, []map[string]string{{"p": "t-0"}, {"p": "t-1"}})
	stat := kmtype.PipelineStat{IntervalSeconds: 2, WaitTargetFraction: 0.7, BusyFraction: 0.3, BatchSizeBytes: 1000000,
		CompressionType: "none", Producer: &kmtype.ClientFigures{BatchAvgBytes: 1024, Batches: 3, RTTAvgMs: 1.5}}
	for _, run := range runs {
		require.NoError(t, s.PutTaskStat(ctx, run, "w1", stat))
	}
	got, err := s.ConnectorTaskStats(ctx, "c")
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, []int{0, 1}, []int{got[0].Task, got[1].Task})
	require.Equal(t, "w1", got[1].WorkerID)
	require.Equal(t, stat, got[1].Pipeline)
	require.False(t, got[1].UpdatedAt.IsZero())

	_, err = s.ReplaceTaskConfigs(ctx, conn, []map[string]string{{"p": "t-0,t-1"}})
	require.NoError(t, err)
	require.NoError(t, s.PutTaskStat(ctx, runs[1], "w1", stat), "the old run still holds its unit")
	got, err = s.ConnectorTaskStats(ctx, "c")
	require.NoError(t, err)
	require.Len(t, got, 1, "the removed task's row is gone and its superseded run stored nothing")
	require.Equal(t, 0, got[0].Task)

	_, err = s.ConnectorTaskStats(ctx, "nope")
	require.ErrorIs(t, err, store.ErrNotFound)
}
