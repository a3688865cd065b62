package tasks_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
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

// fakeRegistry runs connectors that publish tasks.max tasks and tasks that run until stopped, or fail when
// their config says so. It stands in for the MM2 plugins so the runtime's state machine is tested alone.
type fakeRegistry struct {
	mu      sync.Mutex
	started map[string]int // task id -> runs started
	live    map[string]int // task id -> runs inside Run right now
	overlap []string       // task ids seen with two runs at once
}

// enter and exit track the runs inside Task.Run, to catch two runs of one task at once.
func (r *fakeRegistry) enter(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live == nil {
		r.live = map[string]int{}
	}
	r.live[id]++
	if r.live[id] > 1 {
		r.overlap = append(r.overlap, id)
	}
}

func (r *fakeRegistry) exit(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live[id]--
}

func (r *fakeRegistry) NewConnector(name string, config map[string]string) (tasks.Connector, error) {
	if config["connector.class"] == "Broken" {
		return nil, errors.New("no such plugin: Broken")
	}
	return fakeConnector{config: config}, nil
}

func (r *fakeRegistry) NewTask(id tasks.TaskID, config map[string]string) (tasks.Task, error) {
	r.mu.Lock()
	if r.started == nil {
		r.started = map[string]int{}
	}
	r.started[id.String()]++
	r.mu.Unlock()
	if config["monitor"] != "" {
		return monitoringTask{fakeTask{config: config, id: id, reg: r}}, nil
	}
	return fakeTask{config: config, id: id, reg: r}, nil
}

func (r *fakeRegistry) runs(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started[id]
}

type fakeConnector struct{ config map[string]string }

func (c fakeConnector) Run(ctx context.Context, env tasks.ConnectorEnv) error {
	if err := env.Running(ctx); err != nil {
		return err
	}
	n, _ := strconv.Atoi(c.config["tasks.max"])
	var cfgs []map[string]string
	for i := range n {
		cfgs = append(cfgs, map[string]string{"index": strconv.Itoa(i), "fail": c.config["fail.task"], "gen": c.config["gen"], "drain": c.config["drain"],
			"notice": c.config["notice.task"], "monitor": c.config["monitor"], "fenced": c.config["fenced"]})
	}
	if err := env.SetTaskConfigs(ctx, cfgs); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

type fakeTask struct {
	config map[string]string
	id     tasks.TaskID
	reg    *fakeRegistry
}

func (t fakeTask) Run(ctx context.Context, env tasks.TaskEnv) error {
	t.reg.enter(t.id.String())
	defer t.reg.exit(t.id.String())
	if d, err := time.ParseDuration(t.config["drain"]); err == nil {
		// A slow soft stop, as a task flushing a full producer queue: the next owner must wait for it.
		defer func() {
			select {
			case <-time.After(d):
			case <-env.StopContext().Done():
			}
		}()
	}
	if t.config["fail"] == t.config["index"] {
		return fmt.Errorf("replicate: %w", errors.New("broker said no"))
	}
	if err := env.Running(ctx); err != nil {
		return err
	}
	if t.config["fenced"] == "first" && t.reg.runs(t.id.String()) == 1 {
		// As a write refused because the claim was lost while the assignment stayed the same.
		return fmt.Errorf("commit offsets: %w", kmtype.ErrFenced)
	}
	err := env.CommitOffsets(ctx, []kmtype.Offset{{Partition: map[string]any{"task": t.id.Task}, Offset: map[string]any{"offset": 1}}})
	if err != nil {
		return err
	}
	if t.config["notice"] == t.config["index"] {
		if err := env.Report(ctx, []kmtype.Notice{{Kind: "source_unreachable", Message: "the source does not answer"}}); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return nil
}

type cluster struct {
	t     *testing.T
	store *store.Store
	reg   *fakeRegistry
}

func newCluster(t *testing.T) *cluster {
	return &cluster{t: t, store: storetest.New(t), reg: &fakeRegistry{}}
}

// startWorker runs a Runtime until the returned stop function is called (or the test ends); opts change its
// config.
func (c *cluster) startWorker(id string, opts ...func(*tasks.Config)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	cfg := tasks.Config{
		WorkerID: id, URL: "http://" + id, Store: c.store, Registry: c.reg,
		Logger:       testLogger(c.t),
		PollInterval: 500 * time.Millisecond, HeartbeatInterval: 200 * time.Millisecond,
		WorkerTTL: 2 * time.Second, LeaseTTL: 2 * time.Second, StopTimeout: 5 * time.Second,
	}
	for _, o := range opts {
		o(&cfg)
	}
	rt := tasks.New(cfg)
	done := make(chan struct{})
	go func() {
		defer close(done)
		require.NoError(c.t, rt.Run(ctx))
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	c.t.Cleanup(stop)
	return stop
}

// statesOf returns "connector-state task0-state task1-state ..." or "" when there is no status.
func (c *cluster) statesOf(name string) string {
	conn, tasksSt, err := c.store.ConnectorStatus(context.Background(), name)
	if err != nil {
		return ""
	}
	s := conn.State
	for _, t := range tasksSt {
		s += " " + t.State
	}
	return s
}

func (c *cluster) awaitStates(name, want string) {
	c.t.Helper()
	require.Eventually(c.t, func() bool { return c.statesOf(name) == want }, 20*time.Second, 20*time.Millisecond,
		"connector %s never reached %q (last: %q)", name, want, c.statesOf(name))
}

func TestLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newCluster(t)
	c.startWorker("w1")

	_, err := c.store.CreateConnector(ctx, "c", map[string]string{"name": "c", "connector.class": "Fake", "tasks.max": "2"}, store.TargetStarted)
	require.NoError(t, err)
	c.awaitStates("c", "RUNNING RUNNING RUNNING")

	require.NoError(t, c.store.SetTargetState(ctx, "c", store.TargetPaused))
	c.awaitStates("c", "PAUSED PAUSED PAUSED")
	require.NoError(t, c.store.SetTargetState(ctx, "c", store.TargetStarted))
	c.awaitStates("c", "RUNNING RUNNING RUNNING")

	// Reconfiguration: a changed task set restarts the tasks with the new configs.
	before := c.reg.runs("c-0")
	_, err = c.store.UpdateConnector(ctx, "c", func(cn *store.Connector) error {
		cn.Config["tasks.max"] = "3"
		cn.Config["gen"] = "2"
		return nil
	})
	require.NoError(t, err)
	c.awaitStates("c", "RUNNING RUNNING RUNNING RUNNING")
	require.Eventually(t, func() bool { return c.reg.runs("c-0") > before }, 10*time.Second, 20*time.Millisecond)

	require.NoError(t, c.store.SetTargetState(ctx, "c", store.TargetStopped))
	c.awaitStates("c", "STOPPED")
	tcs, err := c.store.TaskConfigs(ctx, "c")
	require.NoError(t, err)
	require.Empty(t, tcs, "STOPPED removes the tasks")

	require.NoError(t, c.store.SetTargetState(ctx, "c", store.TargetStarted))
	c.awaitStates("c", "RUNNING RUNNING RUNNING RUNNING")

	require.NoError(t, c.store.DeleteConnector(ctx, "c"))
	c.awaitStates("c", "")
}

// A run whose claim or write the store refuses idles until the next intent; when the next intent is the same
// work (nothing moved the unit), the unit is claimed again rather than left idle for good.
func TestFencedRunWithUnchangedWorkRunsAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newCluster(t)
	c.startWorker("w1")

	_, err := c.store.CreateConnector(ctx, "fz", map[string]string{"name": "fz", "connector.class": "Fake", "tasks.max": "1", "fenced": "first"}, store.TargetStarted)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return c.reg.runs("fz-0") >= 2 }, 20*time.Second, 20*time.Millisecond,
		"the fenced task never ran again (runs: %d)", c.reg.runs("fz-0"))
	c.awaitStates("fz", "RUNNING RUNNING")
}

func TestFailureAndRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newCluster(t)
	c.startWorker("w1")

	_, err := c.store.CreateConnector(ctx, "f", map[string]string{"name": "f", "connector.class": "Fake", "tasks.max": "2", "fail.task": "1"}, store.TargetStarted)
	require.NoError(t, err)
	c.awaitStates("f", "RUNNING RUNNING FAILED")
	st, err := c.store.TaskStatus(ctx, "f", 1)
	require.NoError(t, err)
	require.Contains(t, st.Trace, "replicate: broker said no")
	require.True(t, strings.HasPrefix(st.Trace, "replicate: broker said no\n"), "the trace starts with the message: %s", st.Trace)
	require.Contains(t, st.Trace, "\nCaused by: broker said no\n", "a plain error's type says nothing")
	require.Equal(t, []kmtype.Notice{{Kind: tasks.NoticeFailed, Message: "replicate: broker said no"}}, st.Notices, "a failed task has a notice")
	require.Contains(t, st.Trace, `task f-1 of connector "f" on worker w1`)

	// A failed task stays failed across pause and resume.
	require.NoError(t, c.store.SetTargetState(ctx, "f", store.TargetPaused))
	c.awaitStates("f", "PAUSED PAUSED FAILED")
	require.NoError(t, c.store.SetTargetState(ctx, "f", store.TargetStarted))
	c.awaitStates("f", "RUNNING RUNNING FAILED")

	// Restarting only the failed task runs it again (and it fails again: the config still says so).
	runs := c.reg.runs("f-1")
	one := 1
	require.NoError(t, c.store.RequestRestart(ctx, store.RestartRequest{Connector: "f", Task: &one}))
	require.Eventually(t, func() bool { return c.reg.runs("f-1") > runs }, 10*time.Second, 20*time.Millisecond)
	c.awaitStates("f", "RUNNING RUNNING FAILED")

	// Fix the config: the reconfigured task set runs.
	_, err = c.store.UpdateConnector(ctx, "f", func(cn *store.Connector) error {
		delete(cn.Config, "fail.task")
		return nil
	})
	require.NoError(t, err)
	c.awaitStates("f", "RUNNING RUNNING RUNNING")

	_, err = c.store.CreateConnector(ctx, "broken", map[string]string{"name": "broken", "connector.class": "Broken"}, store.TargetStarted)
	require.NoError(t, err)
	c.awaitStates("broken", "FAILED")
	conn, _, err := c.store.ConnectorStatus(ctx, "broken")
	require.NoError(t, err)
	require.Contains(t, conn.Trace, "no such plugin: Broken")
}

func TestWorkSpreadsAndFailsOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newCluster(t)
	stop1 := c.startWorker("w1")
	c.startWorker("w2")

	_, err := c.store.CreateConnector(ctx, "s", map[string]string{"name": "s", "connector.class": "Fake", "tasks.max": "5"}, store.TargetStarted)
	require.NoError(t, err)
	c.awaitStates("s", "RUNNING RUNNING RUNNING RUNNING RUNNING RUNNING")

	owners := func() map[string]int {
		_, ts, err := c.store.ConnectorStatus(ctx, "s")
		require.NoError(t, err)
		out := map[string]int{}
		for _, st := range ts {
			out[st.WorkerID]++
		}
		return out
	}
	require.Eventually(t, func() bool {
		o := owners()
		return o["w1"] > 0 && o["w2"] > 0
	}, 20*time.Second, 50*time.Millisecond, "tasks spread over both workers: %v", owners())

	// A clean shutdown hands the work over.
	stop1()
	require.Eventually(t, func() bool {
		return c.statesOf("s") == "RUNNING RUNNING RUNNING RUNNING RUNNING RUNNING" && owners()["w2"] == 5
	}, 30*time.Second, 50*time.Millisecond, "all tasks on w2: %v %s", owners(), c.statesOf("s"))

	offsets, err := c.store.Offsets(ctx, "s")
	require.NoError(t, err)
	require.Len(t, offsets, 5)
}

// testLogger logs the runtime at debug level into memory and prints it when the test fails, so a failure
// that happens only under load (in CI) comes with the runtime's side of the story. KMIRROR_TEST_LOG=1 streams
// it to stderr instead.
func testLogger(t *testing.T) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelDebug}
	if os.Getenv("KMIRROR_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, opts))
	}
	buf := &syncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("runtime log:\n%s", buf.String())
		}
	})
	return slog.New(slog.NewTextHandler(buf, opts))
}

// syncBuffer is a bytes.Buffer for several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Moves between live workers are hand-overs: when a second worker joins and takes half of the tasks, each
// moved task starts there only after its run on the first worker has drained (here: 700 ms after its stop).
func TestMovesAreHandOvers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newCluster(t)
	c.startWorker("w1")
	_, err := c.store.CreateConnector(ctx, "h", map[string]string{"name": "h", "connector.class": "Fake", "tasks.max": "6", "drain": "700ms"}, store.TargetStarted)
	require.NoError(t, err)
	c.awaitStates("h", "RUNNING"+strings.Repeat(" RUNNING", 6))

	c.startWorker("w2")
	owners := func() map[string]int {
		_, ts, err := c.store.ConnectorStatus(ctx, "h")
		require.NoError(t, err)
		out := map[string]int{}
		for _, st := range ts {
			if st.State == store.StateRunning {
				out[st.WorkerID]++
			}
		}
		return out
	}
	require.Eventually(t, func() bool {
		o := owners()
		return o["w1"] == 3 && o["w2"] == 3
	}, 30*time.Second, 50*time.Millisecond, "three tasks each: %v", owners())
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	require.Empty(t, c.reg.overlap, "no task ran twice at once")
	moved := 0
	for id, n := range c.reg.started {
		if n > 1 {
			moved++
		}
		_ = id
	}
	require.GreaterOrEqual(t, moved, 3, "tasks moved to w2: %v", c.reg.started)
}
