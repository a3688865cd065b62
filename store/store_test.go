package store_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/kmtype"
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
	require.Empty(t, h, "the history, which holds every config's secrets, goes with the connector")
}

// TestConnectorHistoryIsBounded: the history keeps the last HistoryKeep changes of a connector, configs with
// their secrets included, and no more.
func TestConnectorHistoryIsBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := store.Open(ctx, storetest.NewURL(t), slog.New(slog.DiscardHandler), store.OpenOptions{HistoryKeep: 3})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	_, err = s.CreateConnector(ctx, "c", map[string]string{"name": "c", "v": "0"}, store.TargetStarted)
	require.NoError(t, err)
	events := func() []string {
		t.Helper()
		h, err := s.ConnectorHistory(ctx, "c")
		require.NoError(t, err)
		var out []string
		for _, e := range h {
			out = append(out, e.Event+":"+e.Config["v"])
		}
		return out
	}
	require.Equal(t, []string{"created:0"}, events())
	for i := 1; i <= 4; i++ {
		_, err := s.UpdateConnector(ctx, "c", func(c *store.Connector) error {
			c.Config["v"] = strconv.Itoa(i)
			return nil
		})
		require.NoError(t, err)
	}
	require.Equal(t, []string{"config:2", "config:3", "config:4"}, events(), "the newest 3 changes")
	require.NoError(t, s.SetTargetState(ctx, "c", store.TargetPaused))
	require.Equal(t, []string{"config:3", "config:4", "target_state:"}, events())
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

// startedConnector registers worker w1, creates the STARTED connector c, assigns every unit to w1 and claims
// the connector's unit: the start of the tests of a connector's task sets. It returns w1's session and the claim.
func startedConnector(t *testing.T, s *store.Store) (int64, store.Claim) {
	t.Helper()
	ctx := context.Background()
	w1, err := s.RegisterWorker(ctx, "w1", "http://w1")
	require.NoError(t, err)
	_, err = s.CreateConnector(ctx, "c", map[string]string{"name": "c"}, store.TargetStarted)
	require.NoError(t, err)
	assignAll(t, s, "w1")
	conn, err := s.ClaimUnit(ctx, workOf(t, s, "w1", store.Unit{Connector: "c", Task: store.ConnectorUnit}), w1)
	require.NoError(t, err)
	return w1, conn
}

// claimedTaskSet starts connector c (startedConnector) with the task set configs, assigns its tasks to w1 and
// claims each; it returns the connector's claim and the tasks' runs, by task id.
func claimedTaskSet(t *testing.T, s *store.Store, configs []map[string]string) (store.Claim, []store.Claim) {
	t.Helper()
	ctx := context.Background()
	w1, conn := startedConnector(t, s)
	_, err := s.ReplaceTaskConfigs(ctx, conn, configs)
	require.NoError(t, err)
	assignAll(t, s, "w1")
	runs := make([]store.Claim, len(configs))
	for i := range runs {
		runs[i], err = s.ClaimUnit(ctx, workOf(t, s, "w1", store.Unit{Connector: "c", Task: i}), w1)
		require.NoError(t, err)
	}
	return conn, runs
}

// workOf returns the worker's work for one unit.
func workOf(t *testing.T, s *store.Store, worker string, u store.Unit) store.Work {
	t.Helper()
	work, err := s.WorkerWork(context.Background(), worker)
	require.NoError(t, err)
	for _, w := range work {
		if w.Unit == u {
			return w
		}
	}
	t.Fatalf("worker %s has no work %v (has %v)", worker, u, work)
	return store.Work{}
}

func TestTaskConfigsStatusesAndFencing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	w1, conn := startedConnector(t, s)
	connUnit := conn.Unit

	_, err := s.ReplaceTaskConfigs(ctx, store.Claim{Unit: connUnit, Epoch: conn.Epoch + 100}, []map[string]string{{"a": "1"}})
	require.ErrorIs(t, err, kmtype.ErrFenced, "only the holder of the connector unit publishes tasks")
	changed, err := s.ReplaceTaskConfigs(ctx, conn, []map[string]string{{"a": "1"}, {"a": "2"}})
	require.NoError(t, err)
	require.True(t, changed)
	changed, err = s.ReplaceTaskConfigs(ctx, conn, []map[string]string{{"a": "1"}, {"a": "2"}})
	require.NoError(t, err)
	require.False(t, changed, "an identical task set is not rewritten")

	_, tasks, err := s.ConnectorStatus(ctx, "c")
	require.ErrorIs(t, err, store.ErrNotFound, "no connector status until the instance reports one")
	require.Nil(t, tasks)
	st, err := s.TaskStatus(ctx, "c", 1)
	require.NoError(t, err)
	require.Equal(t, store.StateUnassigned, st.State)

	assignAll(t, s, "w1")
	task0 := workOf(t, s, "w1", store.Unit{Connector: "c", Task: 0})
	require.Equal(t, map[string]string{"a": "1"}, task0.TaskConfig)
	run0, err := s.ClaimUnit(ctx, task0, w1)
	require.NoError(t, err)

	require.NoError(t, s.PutStatus(ctx, store.Status{Unit: task0.Unit, State: store.StateRunning, WorkerID: "w1", Epoch: run0.Epoch}))
	err = s.PutStatus(ctx, store.Status{Unit: task0.Unit, State: store.StateFailed, WorkerID: "w1", Epoch: run0.Epoch - 1})
	require.ErrorIs(t, err, kmtype.ErrFenced, "a run that does not hold the unit cannot overwrite the status")
	st, err = s.TaskStatus(ctx, "c", 0)
	require.NoError(t, err)
	require.Equal(t, store.StateRunning, st.State)

	part := map[string]any{"cluster": "A", "topic": "t", "partition": 0}
	at := func(n int64, id string) []kmtype.Offset {
		return []kmtype.Offset{{Partition: part, Offset: map[string]any{"offset": n}, SourceID: id}}
	}
	stored := func() (string, string) {
		got, err := s.Offsets(ctx, "c")
		require.NoError(t, err)
		require.Len(t, got, 1)
		return got[0].Offset["offset"].(interface{ String() string }).String(), got[0].SourceID
	}
	require.NoError(t, s.CommitOffsets(ctx, run0, at(1<<60, "id1")))
	off, id := stored()
	require.Equal(t, "1152921504606846976", off, "64-bit offsets keep every digit")
	require.Equal(t, "id1", id)
	require.ErrorIs(t, s.CommitOffsets(ctx, store.Claim{Unit: task0.Unit, Epoch: run0.Epoch + 7}, at(1, "id1")), kmtype.ErrFenced)
	require.NoError(t, s.CommitOffsets(ctx, run0, at(5, "id1")))
	off, _ = stored()
	require.Equal(t, "1152921504606846976", off, "a commit never moves an offset backwards")
	require.NoError(t, s.CommitOffsets(ctx, run0, at(5, "id2")))
	off, id = stored()
	require.Equal(t, "5", off, "a new source incarnation (re-created topic) starts over")
	require.Equal(t, "id2", id)

	// A restart gives the task a new epoch on the same worker. The old run holds the unit (and may commit)
	// until it releases; this worker's next run may take over the hold of its own session.
	assignAll(t, s, "w1")
	restarted := workOf(t, s, "w1", task0.Unit)
	require.Greater(t, restarted.Epoch, task0.Epoch)
	require.NoError(t, s.CommitOffsets(ctx, run0, at(6, "id2")), "the stopping run commits what it has")
	run1, err := s.ClaimUnit(ctx, restarted, w1)
	require.NoError(t, err)
	require.ErrorIs(t, s.CommitOffsets(ctx, run0, at(7, "id2")), kmtype.ErrFenced, "replaced runs cannot commit")
	require.NoError(t, s.CommitOffsets(ctx, run1, at(7, "id2")))

	err = s.AlterOffsets(ctx, "c", at(1, ""), false)
	require.ErrorIs(t, err, store.ErrNotStopped)

	// Shrinking the task set removes the statuses of the removed tasks; a removed task that still runs keeps
	// its assignment (and may commit) until it releases.
	task1 := workOf(t, s, "w1", store.Unit{Connector: "c", Task: 1})
	run1b, err := s.ClaimUnit(ctx, task1, w1)
	require.NoError(t, err)
	_, err = s.ReplaceTaskConfigs(ctx, conn, []map[string]string{{"a": "1"}})
	require.NoError(t, err)
	_, err = s.TaskStatus(ctx, "c", 1)
	require.ErrorIs(t, err, store.ErrNotFound)
	require.NoError(t, s.CommitOffsets(ctx, run1b, []kmtype.Offset{{Partition: map[string]any{"p": 1}, Offset: map[string]any{"offset": 1}}}))
	require.ErrorIs(t, s.PutStatus(ctx, store.Status{Unit: task1.Unit, State: store.StateRunning, WorkerID: "w1", Epoch: run1b.Epoch}), store.ErrNotFound,
		"a removed task gets no status back")
	require.NoError(t, s.ReleaseUnit(ctx, run1b, &store.Status{State: store.StateUnassigned, WorkerID: "w1"}))
	_, err = s.TaskStatus(ctx, "c", 1)
	require.ErrorIs(t, err, store.ErrNotFound, "the release of a removed task leaves no status")
	ps, err := s.Placements(ctx)
	require.NoError(t, err)
	for _, p := range ps {
		require.NotEqual(t, 1, p.Task, "the released removed task has no assignment any more")
	}
}

// TestRestartInPlaceStatus: a restart in place keeps the unit's status unless the restart shows RESTARTING (a
// restart plan's units, as Connect's onRestart writes it).
func TestRestartInPlaceStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	w1, err := s.RegisterWorker(ctx, "w1", "http://w1")
	require.NoError(t, err)
	_, err = s.CreateConnector(ctx, "c", map[string]string{"name": "c"}, store.TargetStarted)
	require.NoError(t, err)
	assignAll(t, s, "w1")
	unit := store.Unit{Connector: "c", Task: store.ConnectorUnit}
	run, err := s.ClaimUnit(ctx, workOf(t, s, "w1", unit), w1)
	require.NoError(t, err)
	require.NoError(t, s.PutStatus(ctx, store.Status{Unit: unit, State: store.StateFailed, WorkerID: "w1", Trace: "boom", Epoch: run.Epoch}))

	restart := func(show bool) {
		epoch, ok, err := s.AcquireLeadership(ctx, "w1", time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, s.ApplyReassignments(ctx, "w1", epoch,
			[]store.Reassignment{{Unit: unit, WorkerID: "w1", Restarting: true, ShowRestarting: show}}, nil))
	}
	before := workOf(t, s, "w1", unit).Epoch
	restart(false)
	require.Greater(t, workOf(t, s, "w1", unit).Epoch, before, "the unit restarts under a new epoch")
	st, _, err := s.ConnectorStatus(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, store.StateFailed, st.State, "a plain restart leaves the status to the new run")
	require.Equal(t, "boom", st.Trace)

	restart(true)
	st, _, err = s.ConnectorStatus(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, store.StateRestarting, st.State)
	require.Empty(t, st.Trace)
}

// A unit moved between live workers is handed over: the new owner claims it only after the old run released
// it, or once the old session was declared dead.
func TestClaimHandOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	w1, err := s.RegisterWorker(ctx, "w1", "http://w1")
	require.NoError(t, err)
	w2, err := s.RegisterWorker(ctx, "w2", "http://w2")
	require.NoError(t, err)
	_, err = s.CreateConnector(ctx, "c", map[string]string{"name": "c"}, store.TargetStarted)
	require.NoError(t, err)
	u := store.Unit{Connector: "c", Task: store.ConnectorUnit}
	move := func(to string) {
		epoch, ok, err := s.AcquireLeadership(ctx, "w1", time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, s.ApplyReassignments(ctx, "w1", epoch, []store.Reassignment{{Unit: u, WorkerID: to}}, nil))
	}
	move("w1")
	old, err := s.ClaimUnit(ctx, workOf(t, s, "w1", u), w1)
	require.NoError(t, err)

	move("w2")
	onW2 := workOf(t, s, "w2", u)
	_, err = s.ClaimUnit(ctx, onW2, w2)
	require.ErrorIs(t, err, store.ErrUnitBusy, "the old run still holds the unit")
	_, err = s.ClaimUnit(ctx, store.Work{Assignment: store.Assignment{Unit: u, WorkerID: "w1", Epoch: old.Epoch}}, w1)
	require.ErrorIs(t, err, kmtype.ErrFenced, "the old worker cannot claim again under its old assignment")
	require.NoError(t, s.PutStatus(ctx, store.Status{Unit: u, State: store.StateRunning, WorkerID: "w1", Epoch: old.Epoch}),
		"the draining run may still report")
	require.NoError(t, s.ReleaseUnit(ctx, old, &store.Status{State: store.StateUnassigned, WorkerID: "w1"}))
	next, err := s.ClaimUnit(ctx, onW2, w2)
	require.NoError(t, err)
	st, _, err := s.ConnectorStatus(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, store.StateUnassigned, st.State)

	// w2 dies: after its session is deleted, w1 may claim even though w2 never released.
	move("w1")
	onW1 := workOf(t, s, "w1", u)
	_, err = s.ClaimUnit(ctx, onW1, w1)
	require.ErrorIs(t, err, store.ErrUnitBusy)
	require.NoError(t, s.HeartbeatWorker(ctx, "w2", w2))
	_, dropped, err := s.DropDeadWorkers(ctx, 0, "w1", 0)
	require.NoError(t, err)
	require.Len(t, dropped, 1)
	require.ErrorIs(t, s.HeartbeatWorker(ctx, "w2", w2), kmtype.ErrFenced, "a dead session cannot heartbeat")
	_, err = s.ClaimUnit(ctx, onW1, w1)
	require.NoError(t, err)
	require.ErrorIs(t, s.PutStatus(ctx, store.Status{Unit: u, State: store.StateRunning, WorkerID: "w2", Epoch: next.Epoch}), kmtype.ErrFenced,
		"the dead worker's run is fenced")
}

func TestAlterOffsetsWhenStopped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	_, err := s.CreateConnector(ctx, "c", map[string]string{"name": "c"}, store.TargetStopped)
	require.NoError(t, err)
	p0 := map[string]any{"cluster": "A", "topic": "t", "partition": 0}
	p1 := map[string]any{"cluster": "A", "topic": "t", "partition": 1}
	require.NoError(t, s.AlterOffsets(ctx, "c", []kmtype.Offset{
		{Partition: p0, Offset: map[string]any{"offset": 5}},
		{Partition: p1, Offset: map[string]any{"offset": 7}},
	}, false))
	require.NoError(t, s.AlterOffsets(ctx, "c", []kmtype.Offset{{Partition: p0}}, false))
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
	require.NoError(t, s.AlterOffsets(ctx, "c", []kmtype.Offset{{Partition: p0, Offset: map[string]any{"offset": 5}}}, false))
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
	require.ErrorIs(t, s.ApplyReassignments(ctx, "w1", e1, []store.Reassignment{{Unit: store.Unit{Connector: "x", Task: -1}, WorkerID: "w1"}}, nil), kmtype.ErrFenced)
}

func openEmpty(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), storetest.NewEmptyURL(t), slog.New(slog.DiscardHandler), store.OpenOptions{})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

// TestStatusesHideValues: with OpenOptions.Hide, neither a trace nor a notice is stored with a hidden value.
func TestStatusesHideValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := store.Open(ctx, storetest.NewURL(t), slog.New(slog.DiscardHandler), store.OpenOptions{
		Hide: func(v string) string { return strings.ReplaceAll(v, "s3cret-host", "[hidden]") }})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	w1, err := s.RegisterWorker(ctx, "w1", "http://w1")
	require.NoError(t, err)
	_, err = s.CreateConnector(ctx, "c", map[string]string{"name": "c"}, store.TargetStarted)
	require.NoError(t, err)
	assignAll(t, s, "w1")
	unit := store.Unit{Connector: "c", Task: store.ConnectorUnit}
	run, err := s.ClaimUnit(ctx, workOf(t, s, "w1", unit), w1)
	require.NoError(t, err)
	require.NoError(t, s.PutStatus(ctx, store.Status{Unit: unit, State: store.StateFailed, WorkerID: "w1", Epoch: run.Epoch,
		Trace: "connect to s3cret-host:9092 failed", Notices: []kmtype.Notice{{Kind: "source_unreachable", Message: "s3cret-host: down"}}}))
	st, _, err := s.ConnectorStatus(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, "connect to [hidden]:9092 failed", st.Trace)
	require.Equal(t, "[hidden]: down", st.Notices[0].Message)

	require.NoError(t, s.ReleaseUnit(ctx, run, &store.Status{State: store.StateFailed, WorkerID: "w1", Trace: "s3cret-host again"}))
	st, _, err = s.ConnectorStatus(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, "[hidden] again", st.Trace, "a final status too")
}
