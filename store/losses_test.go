package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/store/storetest"
)

// A connector's lasting loss notices outlive its runs, keep the newest few, are written only by the holder of
// its unit, and go with an explicit restart of the connector.
func TestLossesLastUntilRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	conn, _ := claimedTaskSet(t, s, []map[string]string{{"p": "t-0"}})
	loss := func(key string) kmtype.Loss {
		p, first, last := int32(0), int64(1), int64(9)
		return kmtype.Loss{Key: key, Notice: kmtype.Notice{Kind: "data_not_replicated", Message: "lost " + key, Topic: "t",
			Partition: &p, FirstOffset: &first, LastOffset: &last}}
	}
	for _, k := range []string{"a", "b", "c", "b"} {
		require.NoError(t, s.PutLoss(ctx, conn, loss(k), 2))
	}
	got, err := s.Losses(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, []kmtype.Loss{loss("b"), loss("c")}, got, "only the newest are kept, oldest first")

	require.ErrorIs(t, s.PutLoss(ctx, store.Claim{Unit: conn.Unit, Epoch: conn.Epoch + 100}, loss("d"), 2), kmtype.ErrFenced)

	task := 0
	require.NoError(t, s.RequestRestart(ctx, store.RestartRequest{Connector: "c", Task: &task}))
	got, err = s.Losses(ctx, "c")
	require.NoError(t, err)
	require.Len(t, got, 2, "restarting a task leaves them")
	require.NoError(t, s.RequestRestart(ctx, store.RestartRequest{Connector: "c", OnlyFailed: true}))
	got, err = s.Losses(ctx, "c")
	require.NoError(t, err)
	require.Len(t, got, 2, "restarting only failed units leaves them")
	require.NoError(t, s.RequestRestart(ctx, store.RestartRequest{Connector: "c"}))
	got, err = s.Losses(ctx, "c")
	require.NoError(t, err)
	require.Empty(t, got, "restarting the connector clears them")
}
