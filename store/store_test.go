package store_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/store/storetest"
)

func TestMigrateFreshDatabaseThenIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openEmpty(t)
	st, err := s.MigrationStatus(ctx)
	require.NoError(t, err)
	require.Equal(t, int32(0), st.Current)
	require.NotEmpty(t, st.Pending)
	require.Error(t, s.CheckSchema(ctx), "an unmigrated database must not pass the schema check")

	applied, err := s.Migrate(ctx)
	require.NoError(t, err)
	require.Equal(t, len(st.Pending), applied)
	require.NoError(t, s.CheckSchema(ctx))

	applied, err = s.Migrate(ctx)
	require.NoError(t, err)
	require.Zero(t, applied, "a second migrate applies nothing")

	id, err := s.ClusterID(ctx)
	require.NoError(t, err)
	require.Len(t, id, 22, "cluster id is a Kafka-style Uuid string")
}

func TestMigrateRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := storetest.NewURL(t)
	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "UPDATE kmirror_schema_version SET version = 999")
	require.NoError(t, err)

	s, err := store.Open(ctx, dbURL, slog.New(slog.DiscardHandler), store.OpenOptions{})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Migrate(ctx)
	require.ErrorIs(t, err, store.ErrSchemaTooNew)
	require.ErrorContains(t, err, "version 999")
	require.ErrorIs(t, s.CheckSchema(ctx), store.ErrSchemaTooNew)
}

func TestOpenBadURLs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	_, err := store.Open(ctx, "", log, store.OpenOptions{})
	require.ErrorContains(t, err, "KMIRROR_DATABASE_URL")

	_, err = store.Open(ctx, "postgres://%zz", log, store.OpenOptions{})
	require.ErrorContains(t, err, "parse database URL")

	start := time.Now()
	_, err = store.Open(ctx, "postgres://postgres@127.0.0.1:1/x?connect_timeout=1", log, store.OpenOptions{ConnectTimeout: 2 * time.Second})
	require.ErrorContains(t, err, "connect to PostgreSQL at 127.0.0.1:1/x")
	require.Less(t, time.Since(start), 20*time.Second, "gives up after its retry budget")
}

func TestConnectorLifecycleAndHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)

	cfg := map[string]string{"name": "c1", "connector.class": "X", "tasks.max": "1"}
	c, err := s.CreateConnector(ctx, "c1", cfg, store.TargetPaused)
	require.NoError(t, err)
	require.Equal(t, store.TargetPaused, c.TargetState)
	require.Equal(t, cfg, c.Config)

	_, err = s.CreateConnector(ctx, "c1", cfg, store.TargetStarted)
	require.ErrorIs(t, err, store.ErrAlreadyExists)

	cfg2 := map[string]string{"name": "c1", "connector.class": "X", "tasks.max": "2"}
	c, created, err := s.PutConnector(ctx, "c1", cfg2)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, store.TargetPaused, c.TargetState, "PUT keeps the target state")
	require.Equal(t, cfg2, c.Config)

	_, created, err = s.PutConnector(ctx, "c2", map[string]string{"name": "c2"})
	require.NoError(t, err)
	require.True(t, created)

	names, err := s.ListConnectorNames(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"c1", "c2"}, names)

	boom := errors.New("validation failed")
	_, err = s.UpdateConnector(ctx, "c1", func(c *store.Connector) error {
		c.Config["tasks.max"] = "9"
		return boom
	})
	require.ErrorIs(t, err, boom)
	got, err := s.GetConnector(ctx, "c1")
	require.NoError(t, err)
	require.Equal(t, "2", got.Config["tasks.max"], "a rejected update leaves no trace")

	require.NoError(t, s.SetTargetState(ctx, "c1", store.TargetStopped))
	require.ErrorIs(t, s.SetTargetState(ctx, "nope", store.TargetStopped), store.ErrNotFound)

	require.NoError(t, s.DeleteConnector(ctx, "c1"))
	_, err = s.GetConnector(ctx, "c1")
	require.ErrorIs(t, err, store.ErrNotFound)
	require.ErrorIs(t, s.DeleteConnector(ctx, "c1"), store.ErrNotFound)

	h, err := s.ConnectorHistory(ctx, "c1")
	require.NoError(t, err)
	var events []string
	for _, e := range h {
		events = append(events, e.Event)
	}
	require.Equal(t, []string{"created", "config", "target_state", "deleted"}, events)
}

// assignAll makes worker w the owner of every unit, as the leader would.
func assignAll(t *testing.T, s *store.Store, w string) {
	t.Helper()
	ctx := context.Background()
	epoch, ok, err := s.AcquireLeadership(ctx, w, time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	plan, err := s.LoadPlan(ctx)
	require.NoError(t, err)
	var changes []store.Reassignment
	for _, u := range plan.Units {
		changes = append(changes, store.Reassignment{Unit: u, WorkerID: w})
	}
	require.NoError(t, s.ApplyReassignments(ctx, w, epoch, changes, nil))
}

func TestTaskConfigsStatusesAndFencing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	require.NoError(t, s.HeartbeatWorker(ctx, "w1", "http://w1"))
	_, err := s.CreateConnector(ctx, "c", map[string]string{"name": "c"}, store.TargetStarted)
	require.NoError(t, err)
	assignAll(t, s, "w1")

	work, err := s.WorkerWork(ctx, "w1")
	require.NoError(t, err)
	require.Len(t, work, 1)
	connEpoch := work[0].Epoch

	_, err = s.ReplaceTaskConfigs(ctx, "c", connEpoch+100, []map[string]string{{"a": "1"}})
	require.ErrorIs(t, err, store.ErrFenced)

	changed, err := s.ReplaceTaskConfigs(ctx, "c", connEpoch, []map[string]string{{"a": "1"}, {"a": "2"}})
	require.NoError(t, err)
	require.True(t, changed)
	changed, err = s.ReplaceTaskConfigs(ctx, "c", connEpoch, []map[string]string{{"a": "1"}, {"a": "2"}})
	require.NoError(t, err)
	require.False(t, changed, "an identical task set is not rewritten")

	_, tasks, err := s.ConnectorStatus(ctx, "c")
	require.ErrorIs(t, err, store.ErrNotFound, "no connector status until the instance reports one")
	require.Nil(t, tasks)
	st, err := s.TaskStatus(ctx, "c", 1)
	require.NoError(t, err)
	require.Equal(t, store.StateUnassigned, st.State)

	assignAll(t, s, "w1")
	work, err = s.WorkerWork(ctx, "w1")
	require.NoError(t, err)
	require.Len(t, work, 3)
	connEpoch = work[0].Epoch
	task0 := work[1]
	require.Equal(t, map[string]string{"a": "1"}, task0.TaskConfig)

	require.NoError(t, s.PutStatus(ctx, store.Status{Unit: task0.Unit, State: store.StateRunning, WorkerID: "w1", Epoch: task0.Epoch}))
	err = s.PutStatus(ctx, store.Status{Unit: task0.Unit, State: store.StateFailed, WorkerID: "w1", Epoch: task0.Epoch - 1})
	require.ErrorIs(t, err, store.ErrFenced, "a stale owner cannot overwrite the status")
	st, err = s.TaskStatus(ctx, "c", 0)
	require.NoError(t, err)
	require.Equal(t, store.StateRunning, st.State)

	off := []store.Offset{{Partition: map[string]any{"cluster": "A", "topic": "t", "partition": 0}, Offset: map[string]any{"offset": int64(1) << 60}}}
	require.NoError(t, s.ActivateEpoch(ctx, task0.Unit, "w1", task0.Epoch))
	require.ErrorIs(t, s.ActivateEpoch(ctx, task0.Unit, "w2", task0.Epoch), store.ErrFenced, "only the owner activates")
	require.NoError(t, s.CommitOffsets(ctx, "c", 0, task0.Epoch, off))
	require.ErrorIs(t, s.CommitOffsets(ctx, "c", 0, task0.Epoch+7, off), store.ErrFenced)

	// A restart gives the task a new epoch. The old run may still commit while it stops; once the new run is
	// active, the old run is fenced.
	assignAll(t, s, "w1")
	work, err = s.WorkerWork(ctx, "w1")
	require.NoError(t, err)
	connEpoch = work[0].Epoch
	restarted := work[1]
	require.Greater(t, restarted.Epoch, task0.Epoch)
	require.NoError(t, s.CommitOffsets(ctx, "c", 0, task0.Epoch, off), "the stopping run commits what it has")
	require.NoError(t, s.ActivateEpoch(ctx, restarted.Unit, "w1", restarted.Epoch))
	require.ErrorIs(t, s.CommitOffsets(ctx, "c", 0, task0.Epoch, off), store.ErrFenced, "replaced runs cannot commit")
	require.NoError(t, s.CommitOffsets(ctx, "c", 0, restarted.Epoch, off))
	task0 = restarted
	got, err := s.Offsets(ctx, "c")
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "1152921504606846976", got[0].Offset["offset"].(interface{ String() string }).String(), "64-bit offsets keep every digit")

	err = s.AlterOffsets(ctx, "c", off, false)
	require.ErrorIs(t, err, store.ErrNotStopped)

	// Shrinking the task set removes the statuses and assignments of the removed tasks.
	_, err = s.ReplaceTaskConfigs(ctx, "c", connEpoch, []map[string]string{{"a": "1"}})
	require.NoError(t, err)
	_, err = s.TaskStatus(ctx, "c", 1)
	require.ErrorIs(t, err, store.ErrNotFound)
}

func TestAlterOffsetsWhenStopped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	_, err := s.CreateConnector(ctx, "c", map[string]string{"name": "c"}, store.TargetStopped)
	require.NoError(t, err)
	p0 := map[string]any{"cluster": "A", "topic": "t", "partition": 0}
	p1 := map[string]any{"cluster": "A", "topic": "t", "partition": 1}
	require.NoError(t, s.AlterOffsets(ctx, "c", []store.Offset{
		{Partition: p0, Offset: map[string]any{"offset": 5}},
		{Partition: p1, Offset: map[string]any{"offset": 7}},
	}, false))
	require.NoError(t, s.AlterOffsets(ctx, "c", []store.Offset{{Partition: p0}}, false))
	got, err := s.Offsets(ctx, "c")
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "1", got[0].Partition["partition"].(interface{ String() string }).String())

	require.ErrorIs(t, s.AlterOffsets(ctx, "nope", nil, true), store.ErrNotFound)
	require.NoError(t, s.AlterOffsets(ctx, "c", nil, true))
	got, err = s.Offsets(ctx, "c")
	require.NoError(t, err)
	require.Empty(t, got)

	// Offsets outlive the connector, as in Connect.
	require.NoError(t, s.AlterOffsets(ctx, "c", []store.Offset{{Partition: p0, Offset: map[string]any{"offset": 5}}}, false))
	require.NoError(t, s.DeleteConnector(ctx, "c"))
	got, err = s.Offsets(ctx, "c")
	require.NoError(t, err)
	require.Len(t, got, 1)
}

func TestLeadershipLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	e1, ok, err := s.AcquireLeadership(ctx, "w1", time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	_, ok, err = s.AcquireLeadership(ctx, "w2", time.Minute)
	require.NoError(t, err)
	require.False(t, ok, "a held lease is not taken")
	again, ok, err := s.AcquireLeadership(ctx, "w1", time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, e1, again, "renewal keeps the epoch")

	require.NoError(t, s.ReleaseLeadership(ctx, "w1"))
	e2, ok, err := s.AcquireLeadership(ctx, "w2", time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	require.Greater(t, e2, e1)
	require.ErrorIs(t, s.ApplyReassignments(ctx, "w1", e1, []store.Reassignment{{Unit: store.Unit{Connector: "x", Task: -1}, WorkerID: "w1"}}, nil), store.ErrFenced)
}

func openEmpty(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), storetest.NewEmptyURL(t), slog.New(slog.DiscardHandler), store.OpenOptions{})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}
