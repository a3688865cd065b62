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

// TestDeleteConnectorSurvivesADeadlock makes the deadlock CI met: another transaction holds a row that the
// DELETE's cascade must remove (a task config here, an assignment there) and then updates the connector row
// the DELETE already locked. PostgreSQL ends the DELETE to break the cycle; the store runs it again, and the
// connector is gone once the other transaction is over, instead of the REST DELETE answering 500.
func TestDeleteConnectorSurvivesADeadlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.NewURL(t)
	other, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer other.Close(ctx)
	// PostgreSQL looks for a deadlock once, deadlock_timeout after a backend began to wait, and ends the backend
	// that finds it. The store's sessions look after 5 s and the other transaction's never: the DELETE, which
	// waits first, is the victim as long as the cycle forms within 5 s (with the default 1 s, a loaded CI
	// machine once formed it later, and the other transaction found it instead).
	var db string
	require.NoError(t, other.QueryRow(ctx, "SELECT current_database()").Scan(&db))
	_, err = other.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{db}.Sanitize()+" SET deadlock_timeout = '5s'")
	require.NoError(t, err)
	_, err = other.Exec(ctx, "SET deadlock_timeout = '10min'")
	require.NoError(t, err)
	s, err := store.Open(ctx, url, slog.New(slog.DiscardHandler), store.OpenOptions{})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	_, err = s.CreateConnector(ctx, "c", map[string]string{"name": "c"}, store.TargetStarted)
	require.NoError(t, err)

	_, err = other.Exec(ctx, `INSERT INTO task_configs (connector_name, task_id, config) VALUES ('c', 0, '{}')`)
	require.NoError(t, err)
	tx, err := other.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "SELECT 1 FROM task_configs WHERE connector_name = 'c' FOR SHARE")
	require.NoError(t, err)

	deleted := make(chan error, 1)
	go func() { deleted <- s.DeleteConnector(ctx, "c") }()
	watch, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer watch.Close(ctx)
	require.Eventually(t, func() bool {
		var waiting int
		err := watch.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()").Scan(&waiting)
		return err == nil && waiting > 0
	}, 10*time.Second, 10*time.Millisecond, "the DELETE waits for the task config the other transaction holds")

	// Now the other transaction waits for the DELETE's lock on the connector row: a cycle, which the DELETE's
	// deadlock check finds.
	_, err = tx.Exec(ctx, "UPDATE connectors SET version = version WHERE name = 'c'")
	require.NoError(t, err, "the DELETE was the deadlock's victim, so this update went through")
	require.NoError(t, tx.Commit(ctx))

	select {
	case err := <-deleted:
		require.NoError(t, err, "the DELETE ran again after the deadlock")
	case <-time.After(30 * time.Second):
		t.Fatal("the DELETE did not return")
	}
	_, err = s.GetConnector(ctx, "c")
	require.ErrorIs(t, err, store.ErrNotFound)
}
