package tasks_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/store/storetest"
	"github.com/kmirror/kmirror/tasks"
)

// txnRegistry runs connectors whose tasks fence a changed task set before they "initialize transactions", as
// the exactly-once source tasks do, and which write offsets outside PostgreSQL. It records what happened, in
// order.
type txnRegistry struct {
	mu     sync.Mutex
	events []string
	writes []string
}

func (r *txnRegistry) event(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf(format, args...))
}

func (r *txnRegistry) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

func (r *txnRegistry) NewConnector(name string, config map[string]string) (tasks.Connector, error) {
	return fakeConnector{config: config}, nil
}

func (r *txnRegistry) NewTask(id tasks.TaskID, config map[string]string) (tasks.Task, error) {
	return txnTask{id: id, gen: config["gen"], reg: r}, nil
}

func (r *txnRegistry) WritesOffsets(config map[string]string) bool {
	return config["offsets"] == "kafka"
}

func (r *txnRegistry) WriteOffsets(ctx context.Context, env tasks.OffsetsEnv, connector string, config map[string]string, offsets []kmtype.Offset, reset bool) error {
	if err := env.FenceTaskSet(ctx, func(ctx context.Context, ids []int) error {
		r.event("offsets writer fenced %v", ids)
		return nil
	}); err != nil {
		return err
	}
	if msg := config["offsets.fail"]; msg != "" {
		return errors.New(msg)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, fmt.Sprintf("%s %d reset=%v", connector, len(offsets), reset))
	return nil
}

type txnTask struct {
	id  tasks.TaskID
	gen string // of the task set (the connector's "gen")
	reg *txnRegistry
}

func (t txnTask) Run(ctx context.Context, env tasks.TaskEnv) error {
	if err := env.FenceTaskSet(ctx, func(ctx context.Context, ids []int) error {
		t.reg.event("%s fenced %v", t.id, ids)
		return nil
	}); err != nil {
		return err
	}
	t.reg.event("%s initialized gen=%s", t.id, t.gen)
	if err := env.Running(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

func startTxnWorker(t *testing.T, s *store.Store, reg *txnRegistry) {
	ctx, cancel := context.WithCancel(context.Background())
	rt := tasks.New(tasks.Config{WorkerID: "w1", URL: "http://w1", Store: s, Registry: reg, Logger: testLogger(t),
		PollInterval: 500 * time.Millisecond, HeartbeatInterval: 200 * time.Millisecond, WorkerTTL: 2 * time.Second, StopTimeout: 5 * time.Second})
	done := make(chan struct{})
	go func() {
		defer close(done)
		require.NoError(t, rt.Run(ctx))
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// TestTaskSetFence: a first task set owes no fence; when it changes, exactly one run fences the task ids of the
// former set whose config changed or that went away, and no run of the new set gets past FenceTaskSet before
// that; a STOPPED connector's offsets writer fences what is owed before it writes, and its outcome decides
// whether PostgreSQL changes.
func TestTaskSetFence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	reg := &txnRegistry{}
	startTxnWorker(t, s, reg)
	c := &cluster{t: t, store: s}

	_, err := s.CreateConnector(ctx, "x", map[string]string{"name": "x", "connector.class": "Fake", "tasks.max": "2"}, store.TargetStarted)
	require.NoError(t, err)
	c.awaitStates("x", "RUNNING RUNNING RUNNING")
	require.ElementsMatch(t, []string{"x-0 initialized gen=", "x-1 initialized gen="}, reg.seen(), "a first task set owes no fence")

	// Three tasks of a new config: the former tasks 0 and 1 are fenced once, before any task of the new set
	// initializes. (A former task may restart under the new connector config before the new set is
	// published; it initializes as a task of the former set.)
	_, err = s.UpdateConnector(ctx, "x", func(cn *store.Connector) error {
		cn.Config["tasks.max"], cn.Config["gen"] = "3", "2"
		return nil
	})
	require.NoError(t, err)
	c.awaitStates("x", "RUNNING RUNNING RUNNING RUNNING")
	newSet := func() int { // the tasks of the new set that initialized; fails the test if one came before the fence
		fenceAt, initialized := -1, 0
		for i, e := range reg.seen() {
			switch {
			case regexp.MustCompile(`^x-\d fenced \[0 1\]$`).MatchString(e):
				require.Equal(t, -1, fenceAt, "one fence: %v", reg.seen())
				fenceAt = i
			case strings.HasSuffix(e, "initialized gen=2"):
				require.NotEqual(t, -1, fenceAt, "a task of the new set initialized before the fence: %v", reg.seen())
				initialized++
			}
		}
		return initialized
	}
	require.Eventually(t, func() bool { return newSet() == 3 }, 10*time.Second, 20*time.Millisecond, "%v", reg.seen())

	// One task less, with the same configs: tasks 0 and 1 carry on, task 2 owes a fence (done by a restarted
	// task, or later by whoever finds it owed).
	before := len(reg.seen())
	_, err = s.UpdateConnector(ctx, "x", func(cn *store.Connector) error {
		cn.Config["tasks.max"] = "2"
		return nil
	})
	require.NoError(t, err)
	c.awaitStates("x", "RUNNING RUNNING RUNNING")

	// Stopped: the offsets writer fences what is owed (task 2, removed earlier, and tasks 0 and 1) before it
	// writes; the API's request then reaches PostgreSQL.
	require.NoError(t, s.SetTargetState(ctx, "x", store.TargetStopped))
	c.awaitStates("x", "STOPPED")
	_, err = s.UpdateConnector(ctx, "x", func(cn *store.Connector) error {
		cn.Config["offsets"] = "kafka"
		return nil
	})
	require.NoError(t, err)
	offsets := []kmtype.Offset{{Partition: map[string]any{"p": 0}, Offset: map[string]any{"offset": 7}}}
	id, err := s.RequestOffsets(ctx, "x", offsets, false)
	require.NoError(t, err)
	awaitOutcome(t, s, id, store.OffsetRequestDone)
	since := reg.seen()[before:]
	require.Regexp(t, `^offsets writer fenced \[0 1( 2)?\]$`, since[len(since)-1], "the stop removed tasks 0 and 1: %v", since)
	fenced2 := regexp.MustCompile(`fenced \[(.* )?2\]$`)
	require.True(t, slices.ContainsFunc(since, fenced2.MatchString), "task 2 was fenced: %v", since)
	got, err := s.Offsets(ctx, "x")
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, []string{"x 1 reset=false"}, reg.writes)

	// A writer that fails leaves PostgreSQL as it was and the request failed with its text.
	_, err = s.UpdateConnector(ctx, "x", func(cn *store.Connector) error {
		cn.Config["offsets.fail"] = "the target cluster B does not answer"
		return nil
	})
	require.NoError(t, err)
	id, err = s.RequestOffsets(ctx, "x", nil, true)
	require.NoError(t, err)
	failure := awaitOutcome(t, s, id, store.OffsetRequestFailed)
	require.Equal(t, "the target cluster B does not answer", failure)
	got, err = s.Offsets(ctx, "x")
	require.NoError(t, err)
	require.Len(t, got, 1, "nothing changed")
}

func awaitOutcome(t *testing.T, s *store.Store, id int64, want string) (failure string) {
	t.Helper()
	var state string
	require.Eventually(t, func() bool {
		var err error
		state, failure, err = s.OffsetRequestOutcome(context.Background(), id)
		require.NoError(t, err)
		return state == want
	}, 20*time.Second, 20*time.Millisecond, "offset request %d: last state %q (%s)", id, state, failure)
	return failure
}
