package tasks_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/tasks"
)

// recordingObserver keeps what the runtime told it.
type recordingObserver struct {
	mu          sync.Mutex
	units       map[string]string   // "connector/task" -> state
	notices     map[string][]string // "connector/task" -> notice kinds
	leader      bool
	assigned    [2]int // connectors, tasks
	worker      string
	rebalancing bool
	changes     []bool // every Rebalancing call, in order
	database    []bool // every Database call, in order
}

func (o *recordingObserver) UnitNotices(connector string, task int, kinds []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := fmt.Sprintf("%s/%d", connector, task)
	if len(kinds) == 0 {
		delete(o.notices, k)
		return
	}
	o.notices[k] = kinds
}

func (o *recordingObserver) noticeSnapshot() map[string][]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.notices)
}

func (o *recordingObserver) UnitState(connector string, task int, state string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.units[fmt.Sprintf("%s/%d", connector, task)] = state
}

func (o *recordingObserver) UnitGone(connector string, task int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.units, fmt.Sprintf("%s/%d", connector, task))
	delete(o.notices, fmt.Sprintf("%s/%d", connector, task))
}

func (o *recordingObserver) Leader(leader bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.leader = leader
}

func (o *recordingObserver) Assignment(worker string, connectors, tasks int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.worker, o.assigned = worker, [2]int{connectors, tasks}
}

func (o *recordingObserver) Rebalancing(rebalancing bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.rebalancing = rebalancing
	o.changes = append(o.changes, rebalancing)
}

func (o *recordingObserver) Database(reachable bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.database = append(o.database, reachable)
}

// rebalanceState returns the last assignment, whether a rebalance is under way, and every change so far.
func (o *recordingObserver) rebalanceState() (assigned [2]int, rebalancing bool, changes []bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.assigned, o.rebalancing, slices.Clone(o.changes)
}

func (o *recordingObserver) snapshot() (map[string]string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.units), o.leader
}

// TestObserverSeesUnitStates: the observer follows the statuses the worker writes, the units it is given and
// loses, and its leadership.
func TestObserverSeesUnitStates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newCluster(t)
	obs := &recordingObserver{units: map[string]string{}, notices: map[string][]string{}}
	rctx, cancel := context.WithCancel(ctx)
	rt := tasks.New(tasks.Config{
		WorkerID: "w1", URL: "http://w1", Store: c.store, Registry: c.reg, Logger: testLogger(t), Observer: obs,
		PollInterval: 500 * time.Millisecond, HeartbeatInterval: 200 * time.Millisecond,
		WorkerTTL: 2 * time.Second, LeaseTTL: 2 * time.Second, StopTimeout: 5 * time.Second,
	})
	done := make(chan error, 1)
	go func() { done <- rt.Run(rctx) }()
	var stopErr error
	stop := sync.OnceFunc(func() { cancel(); stopErr = <-done })
	t.Cleanup(stop)

	await := func(want map[string]string, leader bool) {
		t.Helper()
		require.Eventually(t, func() bool {
			got, l := obs.snapshot()
			return maps.Equal(got, want) && l == leader
		}, 20*time.Second, 20*time.Millisecond, "observer never saw %v (leader %v)", want, leader)
	}
	_, err := c.store.CreateConnector(ctx, "c", map[string]string{"name": "c", "connector.class": "Fake", "tasks.max": "2", "fail.task": "1",
		"notice.task": "0"}, store.TargetStarted)
	require.NoError(t, err)
	await(map[string]string{"c/-1": "RUNNING", "c/0": "RUNNING", "c/1": "FAILED"}, true)
	require.Eventually(t, func() bool {
		return maps.EqualFunc(obs.noticeSnapshot(), map[string][]string{"c/0": {"source_unreachable"}, "c/1": {tasks.NoticeFailed}}, slices.Equal)
	}, 20*time.Second, 20*time.Millisecond, "the observer sees the notice task 0 reports, and the failure of task 1")
	// Taking up the connector and its two tasks was an assignment change; it is over once all three claimed.
	awaitAssignment := func(want [2]int) {
		t.Helper()
		require.Eventually(t, func() bool {
			got, rebalancing, _ := obs.rebalanceState()
			return got == want && !rebalancing
		}, 20*time.Second, 20*time.Millisecond, "observer never saw %v assigned and the change over", want)
	}
	awaitAssignment([2]int{1, 2})
	_, _, changes := obs.rebalanceState()
	require.GreaterOrEqual(t, len(changes), 2, "the arrival of units must be a rebalance that starts and ends")
	require.True(t, changes[0])
	obs.mu.Lock()
	require.Equal(t, "w1", obs.worker)
	obs.mu.Unlock()
	require.Eventually(t, func() bool {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		return len(obs.database) >= 2 && !slices.Contains(obs.database, false)
	}, 20*time.Second, 20*time.Millisecond, "the join and every heartbeat since tell that PostgreSQL was reached")

	// A new task set (the tasks' configs change) is one too: the tasks drain and restart once every run of the
	// old set has released.
	before := len(changes)
	_, err = c.store.UpdateConnector(ctx, "c", func(cn *store.Connector) error {
		cn.Config["gen"] = "2"
		return nil
	})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, _, changes := obs.rebalanceState()
		return slices.Contains(changes[before:], true)
	}, 20*time.Second, 20*time.Millisecond, "a reconfiguration of the tasks is a rebalance")
	awaitAssignment([2]int{1, 2})
	await(map[string]string{"c/-1": "RUNNING", "c/0": "RUNNING", "c/1": "FAILED"}, true)

	require.NoError(t, c.store.SetTargetState(ctx, "c", store.TargetPaused))
	await(map[string]string{"c/-1": "PAUSED", "c/0": "PAUSED", "c/1": "FAILED"}, true)
	require.Eventually(t, func() bool {
		return maps.EqualFunc(obs.noticeSnapshot(), map[string][]string{"c/1": {tasks.NoticeFailed}}, slices.Equal)
	}, 20*time.Second, 20*time.Millisecond, "a status written without notices clears them; the failed task keeps its own")

	_, _, changes = obs.rebalanceState()
	before = len(changes)
	require.NoError(t, c.store.DeleteConnector(ctx, "c"))
	await(map[string]string{}, true)
	// Handing the deleted units back was one too: it started, and it ended once their runs had stopped.
	awaitAssignment([2]int{0, 0})
	_, _, changes = obs.rebalanceState()
	require.Greater(t, len(changes), before, "the departure of units must be a rebalance")
	require.True(t, slices.Contains(changes[before:], true))

	stop()
	require.NoError(t, stopErr)
	got, leader := obs.snapshot()
	require.Empty(t, slices.Collect(maps.Keys(got)))
	require.False(t, leader, "a stopped worker is no longer leader")
}
