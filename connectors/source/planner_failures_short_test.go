package source

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
)

// flakyPlannerEnv is a plannerEnv whose store fails the calls whose error is set.
type flakyPlannerEnv struct {
	*plannerEnv
	statsErr, lossErr, lossesErr, setErr, retainErr, reportErr error
}

func (e *flakyPlannerEnv) PartitionStats(ctx context.Context) ([]kmtype.PartitionStat, error) {
	if e.statsErr != nil {
		return nil, e.statsErr
	}
	return e.plannerEnv.PartitionStats(ctx)
}

func (e *flakyPlannerEnv) RecordLoss(ctx context.Context, loss kmtype.Loss, keep int) error {
	if e.lossErr != nil {
		return e.lossErr
	}
	return e.plannerEnv.RecordLoss(ctx, loss, keep)
}

func (e *flakyPlannerEnv) Losses(ctx context.Context) ([]kmtype.Loss, error) {
	if e.lossesErr != nil {
		return nil, e.lossesErr
	}
	return e.plannerEnv.Losses(ctx)
}

func (e *flakyPlannerEnv) SetTaskConfigs(ctx context.Context, configs []map[string]string) error {
	if e.setErr != nil {
		return e.setErr
	}
	return e.plannerEnv.SetTaskConfigs(ctx, configs)
}

func (e *flakyPlannerEnv) RetainPartitionStats(ctx context.Context, plan []kmtype.PartitionOwner) error {
	if e.retainErr != nil {
		return e.retainErr
	}
	return e.plannerEnv.RetainPartitionStats(ctx, plan)
}

func (e *flakyPlannerEnv) Report(ctx context.Context, notices []kmtype.Notice) error {
	if e.reportErr != nil {
		return e.reportErr
	}
	return e.plannerEnv.Report(ctx, notices)
}

// The plan round's failures: a cluster that cannot list or describe topics fails the round (retried); a store
// that cannot take the task set is retried whatever the cause; one that lost the connector's unit ends the run.
// Stats and loss notices that cannot be read or stored wait for the next round: replication does not depend on them.
func TestPlanRoundFailures(t *testing.T) {
	ctx := context.Background()
	source := newFakeCluster(map[string]int{"t": 1})
	target := newFakeCluster(map[string]int{})
	r, env, logs := fakePlanner(t, fakePlannerConfig("t"), source, target)
	flaky := &flakyPlannerEnv{plannerEnv: env}
	r.env = flaky

	target.set(func(c *fakeCluster) { c.listErr = errors.New("down") })
	require.ErrorContains(t, r.refreshPlan(ctx), "list topics on target cluster B")
	target.set(func(c *fakeCluster) { c.listErr = nil })
	source.set(func(c *fakeCluster) { c.configErr = errors.New("down") })
	require.ErrorContains(t, r.refreshPlan(ctx), "describe configs of new topics on source cluster A")
	source.set(func(c *fakeCluster) { c.configErr = nil })
	target.set(func(c *fakeCluster) { c.createAll = errors.New("down") })
	require.ErrorContains(t, r.refreshPlan(ctx), "create remote topics on target cluster B")
	target.set(func(c *fakeCluster) { c.createAll = nil })

	flaky.setErr = errors.New("database down")
	err := r.refreshPlan(ctx)
	require.ErrorContains(t, err, "publish task configs")
	require.True(t, plannerTransient(err), "retried even before the first plan")
	flaky.setErr = kmtype.ErrFenced
	require.ErrorIs(t, r.refreshPlan(ctx), kmtype.ErrFenced)
	flaky.setErr = nil

	flaky.statsErr = errors.New("database down")
	require.NoError(t, r.refreshPlan(ctx), "the stats of dropped partitions wait")
	require.Positive(t, logs.count(slog.LevelWarn, "cannot read the partitions' last stats"))
	flaky.statsErr = nil
	flaky.retainErr = errors.New("database down")
	require.NoError(t, r.refreshPlan(ctx))
	flaky.retainErr = kmtype.ErrFenced
	require.ErrorIs(t, r.refreshPlan(ctx), kmtype.ErrFenced)
	flaky.retainErr = nil

	// A deleted topic's loss notice that cannot be stored is kept for the next round.
	env.stats = []kmtype.PartitionStat{{Topic: "t", Partition: 0, ReplicatedOffset: 3, EndOffset: i64(9), Status: statusDeleted}}
	source.set(func(c *fakeCluster) { delete(c.topics, "t") })
	flaky.lossErr = errors.New("database down")
	require.NoError(t, r.refreshPlan(ctx))
	require.Len(t, r.unsaved, 1)
	require.Empty(t, env.losses)
	flaky.lossErr = kmtype.ErrFenced
	require.ErrorIs(t, r.saveLosses(ctx), kmtype.ErrFenced)
	flaky.lossErr = nil
	require.NoError(t, r.refreshPlan(ctx))
	require.Len(t, env.losses, 1, "stored once the store answers")
	require.Empty(t, r.unsaved)

	flaky.lossesErr = errors.New("database down")
	next, _, _ := fakePlanner(t, fakePlannerConfig("t"), source, target)
	next.env = flaky
	next.loadLosses(ctx)
	require.Empty(t, next.lossNotices(), "the log keeps them")
}

// A cluster without an authorizer is said once, at info, and the ACL sync goes on quietly.
func TestACLSyncWithoutAuthorizer(t *testing.T) {
	ctx := context.Background()
	const securityDisabled = 54
	source := newFakeCluster(map[string]int{"t": 1})
	source.aclErr = kafka.CodeError(securityDisabled, "no authorizer", false)
	target := newFakeCluster(map[string]int{})
	r, _, logs := fakePlanner(t, fakePlannerConfig("t"), source, target)
	for range 2 {
		require.NoError(t, r.syncTopicACLs(ctx))
	}
	require.Equal(t, 1, logs.count(slog.LevelInfo, "no ACL authorizer is configured on the source cluster"))

	source.set(func(c *fakeCluster) {
		c.aclErr = nil
		c.acls = []kafka.TopicACL{plannerACL("t", kafka.ACLOperationRead, kafka.ACLAllow)}
	})
	target.set(func(c *fakeCluster) {
		c.aclErr = errors.Join(kafka.CodeError(securityDisabled, "no authorizer", false), kafka.CodeError(securityDisabled, "no authorizer", false))
	})
	for range 2 {
		require.NoError(t, r.syncTopicACLs(ctx))
	}
	require.Equal(t, 1, logs.count(slog.LevelInfo, "no ACL authorizer is configured on the target cluster"))
	require.False(t, onlySecurityDisabled(errors.Join(kafka.CodeError(securityDisabled, "x", false), errors.New("refused"))))
}

// A transient failure to describe the remote topics' configs fails the sync (retried); a permanent one sends
// every operation instead, and a source that cannot describe its topics fails it.
func TestTopicConfigSyncWithoutRemoteConfigs(t *testing.T) {
	ctx := context.Background()
	r, source, target := configSyncPlanner(t)

	target.set(func(c *fakeCluster) { c.configErr = kafka.CodeError(codeAllBrokersDown, "down", false) })
	require.ErrorContains(t, r.syncTopicConfigs(ctx), "describe topic configs on target cluster B")
	target.set(func(c *fakeCluster) { c.configErr = errors.New("not allowed to describe") })
	require.NoError(t, r.syncTopicConfigs(ctx))
	require.Equal(t, []kafka.ConfigOp{{Name: "retention.ms", Value: "1000"}}, target.altered["A.t"], "every operation, unchanged ones too")
	source.set(func(c *fakeCluster) { c.configErr = errors.New("down") })
	require.ErrorContains(t, r.syncTopicConfigs(ctx), "describe topic configs on source cluster A")
}

// statusFailing is a plannerEnv whose store cannot write the connector's FAILED status while err is set.
type statusFailing struct {
	*plannerEnv
	err atomic.Pointer[error]
}

func (e *statusFailing) Failing(ctx context.Context, err error) error {
	if p := e.err.Load(); p != nil {
		return *p
	}
	return e.plannerEnv.Failing(ctx, err)
}

func (e *statusFailing) fail(err error) { e.err.Store(&err) }

// A status that cannot be written is written again later while the jobs go on; a run that lost the connector's
// unit ends.
func TestConnectorStatusNotWrittenIsRetriedUnlessFenced(t *testing.T) {
	source := newFakeCluster(map[string]int{"t": 1})
	source.listErr = kafka.CodeError(codeAllBrokersDown, "all brokers down", false)
	r, env, logs := fakePlanner(t, fakePlannerConfig("t"), source, newFakeCluster(map[string]int{}))
	status := &statusFailing{plannerEnv: env}
	status.fail(errors.New("database down"))
	r.env = status
	done := make(chan error, 1)
	go func() { done <- r.loop(context.Background()) }()
	awaitPlanner(t, "the unwritten status logged", func() bool {
		return logs.count(slog.LevelWarn, "could not show the connector's jobs in its status") > 0
	})
	status.fail(kmtype.ErrFenced)
	select {
	case err := <-done:
		require.ErrorIs(t, err, kmtype.ErrFenced)
	case <-time.After(30 * time.Second):
		t.Fatal("the run went on after it lost its unit")
	}
}

// allReports is a plannerEnv that keeps every report, the connector's own notices (without a topic) included.
type allReports struct {
	*plannerEnv
	mu      sync.Mutex
	reports [][]kmtype.Notice
}

func (e *allReports) Report(_ context.Context, notices []kmtype.Notice) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reports = append(e.reports, notices)
	return nil
}

func (e *allReports) all() [][]kmtype.Notice {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.reports)
}

// After a config change, until the first plan with the new config, the status says the tasks still run the
// previous config's task configs; the plan clears it.
func TestStatusSaysTasksRunThePreviousConfigUntilThePlan(t *testing.T) {
	source := newFakeCluster(map[string]int{"t": 1})
	config := fakePlannerConfig("t")
	r, env, _ := fakePlanner(t, config, source, newFakeCluster(map[string]int{}))
	old := maps.Clone(config)
	old["topics"] = "s"
	env.resumeAt = sourceTaskConfigs(old, []mirror.TopicPartition{{Topic: "s"}}, 1, AssignTopics, nil)
	reports := &allReports{plannerEnv: env}
	r.env = reports
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.loop(ctx) }()
	awaitPlanner(t, "the plan", func() bool { return len(env.taskSets()) > 0 })
	awaitPlanner(t, "the notice cleared", func() bool {
		all := reports.all()
		return len(all) >= 2 && len(all[len(all)-1]) == 0
	})
	cancel()
	require.NoError(t, <-done)
	first := reports.all()[0]
	require.Len(t, first, 1)
	require.Equal(t, connectors.NoticeTasksOnPreviousConfig, first[0].Kind)
	require.Equal(t, connectors.TasksOnPreviousConfigPending, first[0].Message)
}
