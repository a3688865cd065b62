package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/store/storetest"
)

// TestTaskFence: a changed task set owes a fence of the task ids that changed or went away; one run at a time
// holds it, only once no run of an older generation holds a unit; a change while it is held makes the holder
// fence again.
func TestTaskFence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	w1, conn := startedConnector(t, s)
	connUnit := conn.Unit
	publish := func(configs ...map[string]string) {
		t.Helper()
		changed, err := s.ReplaceTaskConfigs(ctx, conn, configs)
		require.NoError(t, err)
		require.True(t, changed)
	}
	claimTask := func(task int) store.Claim {
		t.Helper()
		assignAll(t, s, "w1")
		c, err := s.ClaimUnit(ctx, workOf(t, s, "w1", store.Unit{Connector: "c", Task: task}), w1)
		require.NoError(t, err)
		return c
	}

	publish(map[string]string{"a": "1"}, map[string]string{"a": "2"})
	run0, run1 := claimTask(0), claimTask(1)
	f, err := s.ClaimTaskFence(ctx, run0)
	require.NoError(t, err)
	require.Nil(t, f.TaskIDs, "a first task set owes nothing: its tasks' own InitTransactions fence their ids")

	// Task 1 goes away; task 0 carries on.
	publish(map[string]string{"a": "1"})
	_, err = s.ClaimTaskFence(ctx, run0)
	require.ErrorIs(t, err, store.ErrFencePending, "the removed task still holds its unit: it drains first")
	require.NoError(t, s.ReleaseUnit(ctx, run1, nil))
	f, err = s.ClaimTaskFence(ctx, run0)
	require.NoError(t, err)
	require.Equal(t, []int{1}, f.TaskIDs)
	_, err = s.ClaimTaskFence(ctx, conn)
	require.ErrorIs(t, err, store.ErrFencePending, "another run holds the fence")
	require.NoError(t, s.CompleteTaskFence(ctx, run0, f))
	f, err = s.ClaimTaskFence(ctx, conn)
	require.NoError(t, err)
	require.Nil(t, f.TaskIDs, "fenced")

	// Task 0 changes; the set changes again while the fence is held: the holder must fence again.
	publish(map[string]string{"a": "3"})
	_, err = s.ClaimTaskFence(ctx, conn)
	require.ErrorIs(t, err, store.ErrFencePending, "task 0's run of the former set still holds its unit")
	require.NoError(t, s.ReleaseUnit(ctx, run0, nil))
	f, err = s.ClaimTaskFence(ctx, conn)
	require.NoError(t, err)
	require.Equal(t, []int{0}, f.TaskIDs)
	publish() // stopped
	require.ErrorIs(t, s.CompleteTaskFence(ctx, conn, f), store.ErrFencePending)
	f, err = s.ClaimTaskFence(ctx, conn)
	require.NoError(t, err)
	require.Equal(t, []int{0}, f.TaskIDs)
	require.NoError(t, s.CompleteTaskFence(ctx, conn, f))
	f, err = s.ClaimTaskFence(ctx, conn)
	require.NoError(t, err)
	require.Nil(t, f.TaskIDs)

	_, err = s.ClaimTaskFence(ctx, store.Claim{Unit: connUnit, Epoch: conn.Epoch + 100})
	require.ErrorIs(t, err, kmtype.ErrFenced, "only a run holding its unit")
}

// TestAClaimWithAnOlderTaskSetsWorkIsRefused: a worker that read its work before the task set changed, and
// claims after, must not hold the unit as a run of the older generation. A task whose config did not change
// carries on under the new generation (SameWork), so such a claim would stay "older" for as long as the run
// lives: every new task of another id would wait for it to release (ClaimUnit) and so would the fence
// (ClaimTaskFence), the run's own included — a deadlock that TestTaskSetFence hit now and then.
func TestAClaimWithAnOlderTaskSetsWorkIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	w1, conn := startedConnector(t, s)
	_, err := s.ReplaceTaskConfigs(ctx, conn, []map[string]string{{"a": "1"}, {"a": "2"}})
	require.NoError(t, err)
	assignAll(t, s, "w1")
	task0, task1 := store.Unit{Connector: "c", Task: 0}, store.Unit{Connector: "c", Task: 1}
	stale := workOf(t, s, "w1", task0)

	// Task 0 keeps its config, task 1 gets a new one.
	_, err = s.ReplaceTaskConfigs(ctx, conn, []map[string]string{{"a": "1"}, {"a": "3"}})
	require.NoError(t, err)
	_, err = s.ClaimUnit(ctx, stale, w1)
	require.ErrorIs(t, err, kmtype.ErrFenced, "the work was read before the task set changed")

	fresh := workOf(t, s, "w1", task0)
	require.Greater(t, fresh.Generation, stale.Generation)
	run0, err := s.ClaimUnit(ctx, fresh, w1)
	require.NoError(t, err, "claimed again with the work read now")
	run1, err := s.ClaimUnit(ctx, workOf(t, s, "w1", task1), w1)
	require.NoError(t, err, "no run of the older task set holds a unit")
	f, err := s.ClaimTaskFence(ctx, run1)
	require.NoError(t, err)
	require.Equal(t, []int{1}, f.TaskIDs)
	require.NoError(t, s.CompleteTaskFence(ctx, run1, f))
	f, err = s.ClaimTaskFence(ctx, run0)
	require.NoError(t, err)
	require.Nil(t, f.TaskIDs, "fenced")
}

// TestOffsetRequests: a filed offsets change is taken by the run holding the STOPPED connector and applied to
// PostgreSQL only when it finishes without failure; one nobody took can be withdrawn.
func TestOffsetRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	w1, err := s.RegisterWorker(ctx, "w1", "http://w1")
	require.NoError(t, err)
	_, err = s.CreateConnector(ctx, "c", map[string]string{"name": "c"}, store.TargetStopped)
	require.NoError(t, err)
	_, err = s.CreateConnector(ctx, "running", map[string]string{"name": "running"}, store.TargetStarted)
	require.NoError(t, err)
	assignAll(t, s, "w1")
	conn, err := s.ClaimUnit(ctx, workOf(t, s, "w1", store.Unit{Connector: "c", Task: store.ConnectorUnit}), w1)
	require.NoError(t, err)
	p0 := map[string]any{"cluster": "A", "topic": "t", "partition": 0}
	offsets := []kmtype.Offset{{Partition: p0, Offset: map[string]any{"offset": 5}}}

	_, err = s.RequestOffsets(ctx, "running", offsets, false)
	require.ErrorIs(t, err, store.ErrNotStopped)
	_, err = s.RequestOffsets(ctx, "nope", offsets, false)
	require.ErrorIs(t, err, store.ErrNotFound)

	id, err := s.RequestOffsets(ctx, "c", offsets, false)
	require.NoError(t, err)
	req, err := s.TakeOffsetRequest(ctx, conn)
	require.NoError(t, err)
	require.Equal(t, id, req.ID)
	require.Len(t, req.Offsets, 1)
	require.Equal(t, "5", req.Offsets[0].Offset["offset"].(interface{ String() string }).String())
	again, err := s.TakeOffsetRequest(ctx, conn)
	require.NoError(t, err)
	require.Nil(t, again, "a request is taken once")
	got, err := s.Offsets(ctx, "c")
	require.NoError(t, err)
	require.Empty(t, got, "nothing in PostgreSQL before the request finishes")
	require.NoError(t, s.FinishOffsetRequest(ctx, conn, req, nil))
	state, _, err := s.OffsetRequestOutcome(ctx, id)
	require.NoError(t, err)
	require.Equal(t, store.OffsetRequestDone, state)
	got, err = s.Offsets(ctx, "c")
	require.NoError(t, err)
	require.Len(t, got, 1)

	id, err = s.RequestOffsets(ctx, "c", nil, true)
	require.NoError(t, err)
	req, err = s.TakeOffsetRequest(ctx, conn)
	require.NoError(t, err)
	require.True(t, req.Reset)
	require.NoError(t, s.FinishOffsetRequest(ctx, conn, req, errors.New("target unreachable")))
	state, failure, err := s.OffsetRequestOutcome(ctx, id)
	require.NoError(t, err)
	require.Equal(t, store.OffsetRequestFailed, state)
	require.Equal(t, "target unreachable", failure)
	got, err = s.Offsets(ctx, "c")
	require.NoError(t, err)
	require.Len(t, got, 1, "a failed request changes nothing")

	id, err = s.RequestOffsets(ctx, "c", nil, true)
	require.NoError(t, err)
	state, err = s.ExpireOffsetRequest(ctx, id)
	require.NoError(t, err)
	require.Equal(t, store.OffsetRequestExpired, state)
	req, err = s.TakeOffsetRequest(ctx, conn)
	require.NoError(t, err)
	require.Nil(t, req, "a withdrawn request is never applied")
}
