package store_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/store/storetest"
)

// A database that answers late (here: a lock held by another transaction; in production a stall of PostgreSQL)
// makes every heartbeat look old, though the workers only waited as long as the leader. DropDeadWorkers then
// drops nobody and says so.
func TestDropDeadWorkersRefusesToJudgeWhenTheDatabaseIsSlow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.NewURL(t)
	s, err := store.Open(ctx, url, slog.New(slog.DiscardHandler), store.OpenOptions{})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	_, err = s.RegisterWorker(ctx, "leader", "http://l")
	require.NoError(t, err)
	_, err = s.RegisterWorker(ctx, "w2", "http://w2")
	require.NoError(t, err)

	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "LOCK TABLE workers IN EXCLUSIVE MODE")
	require.NoError(t, err)
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(500 * time.Millisecond) // the stall itself: what the test is about, not a wait for a condition
		_ = tx.Rollback(context.Background())
	}()

	_, dropped, err := s.DropDeadWorkers(ctx, 0, "leader", 200*time.Millisecond)
	<-released
	require.ErrorIs(t, err, store.ErrTooSlow)
	require.Empty(t, dropped)
	workers, err := s.Workers(ctx)
	require.NoError(t, err)
	require.Len(t, workers, 2, "nobody was dropped")

	_, dropped, err = s.DropDeadWorkers(ctx, 0, "leader", time.Second)
	require.NoError(t, err, "a prompt answer judges")
	require.Len(t, dropped, 1)
}
