package source

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// fakeCluster is a cluster's admin client as the connector uses it: topics with partition counts and configs,
// topic ACLs, and the errors the test makes it answer.
type fakeCluster struct {
	mu         sync.Mutex
	topics     map[string]int
	configs    map[string][]kafka.ConfigEntry
	acls       []kafka.TopicACL
	listErr    error            // Topics fails with it
	createErr  map[string]error // CreateTopics fails these topics
	growErr    error            // CreatePartitions fails with it
	alterErr   error            // AlterTopicConfigs fails with it
	aclErr     error            // TopicACLs and CreateACLs fail with it
	configErr  error            // TopicConfigs fails with it
	createAll  error            // CreateTopics fails as a whole with it
	created    []kafka.NewTopic
	altered    map[string][]kafka.ConfigOp
	createdACL []kafka.TopicACL
	closed     bool
}

func newFakeCluster(topics map[string]int) *fakeCluster {
	return &fakeCluster{topics: topics, configs: map[string][]kafka.ConfigEntry{}, createErr: map[string]error{}, altered: map[string][]kafka.ConfigOp{}}
}

func (c *fakeCluster) Topics(context.Context) (map[string]int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.topics), c.listErr
}

func (c *fakeCluster) TopicConfigs(_ context.Context, topics []string) (map[string][]kafka.ConfigEntry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.configErr != nil {
		return nil, c.configErr
	}
	out := map[string][]kafka.ConfigEntry{}
	for _, t := range topics {
		if _, ok := c.topics[t]; ok {
			out[t] = slices.Clone(c.configs[t])
		}
	}
	return out, nil
}

func (c *fakeCluster) CreateTopics(_ context.Context, topics []kafka.NewTopic) (map[string]error, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.createAll != nil {
		return nil, c.createAll
	}
	out := map[string]error{}
	for _, nt := range topics {
		if err := c.createErr[nt.Name]; err != nil {
			out[nt.Name] = err
			continue
		}
		c.created = append(c.created, nt)
		c.topics[nt.Name] = nt.Partitions
		for k, v := range nt.Config {
			c.configs[nt.Name] = append(c.configs[nt.Name], kafka.ConfigEntry{Name: k, Value: v, Source: kafka.SourceTopic})
		}
	}
	return out, nil
}

func (c *fakeCluster) CreatePartitions(_ context.Context, topic string, total int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.growErr != nil {
		return c.growErr
	}
	c.topics[topic] = total
	return nil
}

func (c *fakeCluster) AlterTopicConfigs(_ context.Context, topic string, ops []kafka.ConfigOp) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.alterErr != nil {
		return c.alterErr
	}
	c.altered[topic] = append(c.altered[topic], ops...)
	for _, op := range ops {
		c.configs[topic] = slices.DeleteFunc(c.configs[topic], func(e kafka.ConfigEntry) bool { return e.Name == op.Name })
		if !op.Delete {
			c.configs[topic] = append(c.configs[topic], kafka.ConfigEntry{Name: op.Name, Value: op.Value, Source: kafka.SourceTopic})
		}
	}
	return nil
}

func (c *fakeCluster) TopicACLs(context.Context) ([]kafka.TopicACL, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.acls), c.aclErr
}

func (c *fakeCluster) CreateACLs(_ context.Context, acls []kafka.TopicACL) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aclErr != nil {
		return c.aclErr
	}
	c.createdACL = append(c.createdACL, acls...)
	return nil
}

func (c *fakeCluster) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

func (c *fakeCluster) set(f func(c *fakeCluster)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c)
}

// fakePlannerConfig is a source connector config from A to B replicating topics matching topicsRegex, with
// addresses nothing listens on: its admin clients are fakes.
func fakePlannerConfig(topicsRegex string) map[string]string {
	return map[string]string{
		"name":                                "mm2",
		"connector.class":                     mirrorconfig.SourceConnectorClass,
		"source.cluster.alias":                "A",
		"target.cluster.alias":                "B",
		"source.cluster.bootstrap.servers":    "127.0.0.1:1",
		"target.cluster.bootstrap.servers":    "127.0.0.1:1",
		"topics":                              topicsRegex,
		"tasks.max":                           "2",
		"replication.factor":                  "3",
		"emit.offset-syncs.enabled":           "false",
		"refresh.topics.interval.seconds":     "1",
		"sync.topic.configs.interval.seconds": "1",
		"sync.topic.acls.interval.seconds":    "1",
	}
}

// fakePlanner is a run of the connector built by the registry from config, over the fake clusters.
func fakePlanner(t *testing.T, config map[string]string, source, target *fakeCluster) (*sourcePlanner, *plannerEnv, *plannerLogs) {
	t.Helper()
	logs := &plannerLogs{}
	log := slog.New(logs)
	conn, err := testRegistry(log).NewConnector(config["name"], config)
	require.NoError(t, err)
	c, ok := conn.(*sourceConnector)
	require.True(t, ok, "%T", conn)
	env := &plannerEnv{log: log}
	r, err := c.newPlanner(env)
	require.NoError(t, err)
	r.source, r.target = source, target
	return r, env, logs
}

// A plan round creates the missing remote topics with the source's partition count, replication factor and
// synced configs, grows remote topics whose source grew (never shrinks one), and deals every replicated
// partition to the tasks; internal and unselected topics are left out.
func TestPlanCreatesAndGrowsRemoteTopicsAndDealsPartitions(t *testing.T) {
	ctx := context.Background()
	source := newFakeCluster(map[string]int{"orders": 3, "audit": 2, "other": 1, "__consumer_offsets": 50, "big": 1})
	source.configs["orders"] = []kafka.ConfigEntry{
		{Name: "retention.ms", Value: "1000", Source: kafka.SourceTopic},
		{Name: "segment.bytes", Value: "1", Source: kafka.SourceStaticBroker},
		{Name: "cleanup.policy", Value: "delete", Source: kafka.SourceDefault},
	}
	target := newFakeCluster(map[string]int{"A.audit": 1, "A.big": 4})
	r, env, _ := fakePlanner(t, fakePlannerConfig("orders|audit|big|__consumer_offsets"), source, target)

	require.NoError(t, r.refreshPlan(ctx))
	require.Equal(t, []kafka.NewTopic{{Name: "A.orders", Partitions: 3, ReplicationFactor: 3, Config: map[string]string{"retention.ms": "1000"}}},
		target.created, "only dynamic topic configs are copied at creation; the target's defaults apply otherwise")
	require.Equal(t, 2, target.topics["A.audit"], "grown to the source's count")
	require.Equal(t, 4, target.topics["A.big"], "a remote topic is never shrunk")
	sets := env.taskSets()
	require.Len(t, sets, 1)
	var dealt []mirror.TopicPartition
	for _, tps := range decodeTasks(t, sets[0]) {
		dealt = append(dealt, tps...)
	}
	require.ElementsMatch(t, []mirror.TopicPartition{tp("audit", 0), tp("audit", 1), tp("big", 0), tp("orders", 0), tp("orders", 1), tp("orders", 2)}, dealt)
	require.Len(t, sets[0], 2, "tasks.max")

	require.NoError(t, r.refreshPlan(ctx))
	require.Len(t, env.taskSets(), 1, "an unchanged plan is not published again")
	require.NotEmpty(t, env.lastRetained(), "every round retains the stats of the planned partitions")

	source.set(func(c *fakeCluster) { c.topics["orders"] = 4 })
	require.NoError(t, r.refreshPlan(ctx))
	require.Equal(t, 4, target.topics["A.orders"])
	require.Len(t, env.taskSets(), 2, "a grown topic's new partition is dealt")
}

// A remote topic the target refuses to create or grow shows in the connector's status until it exists with
// enough partitions; the other topics are replicated meanwhile.
func TestPlanReportsRemoteTopicsItCannotCreateOrGrow(t *testing.T) {
	ctx := context.Background()
	source := newFakeCluster(map[string]int{"a": 2, "b": 3})
	target := newFakeCluster(map[string]int{"A.b": 1})
	target.createErr["A.a"] = errors.New("replication factor 3 larger than the 1 available brokers")
	target.growErr = errors.New("not allowed")
	r, env, _ := fakePlanner(t, fakePlannerConfig("a|b"), source, target)

	require.NoError(t, r.refreshPlan(ctx))
	n := env.currentNotice()
	require.Contains(t, n, "remote topic A.a could not be created on B, so its records are not replicated: replication factor 3")
	require.Contains(t, n, "remote topic A.b on B could not grow to 3 partitions")

	target.set(func(c *fakeCluster) {
		delete(c.createErr, "A.a")
		c.growErr = nil
	})
	require.NoError(t, r.refreshPlan(ctx))
	require.Empty(t, env.currentNotice(), "both problems are gone")

	target.set(func(c *fakeCluster) { c.createErr["A.c"] = kafka.CodeError(36, "topic exists", false) })
	source.set(func(c *fakeCluster) { c.topics["c"] = 1 })
	require.NoError(t, r.refreshPlan(ctx))
	require.Empty(t, env.currentNotice(), "a topic created by someone else since the listing is no problem")
}

// Topic configs are synced incrementally: a changed source value is set, one back at its default is deleted,
// and an unchanged one is not sent again.
func TestTopicConfigSyncSendsOnlyChanges(t *testing.T) {
	ctx := context.Background()
	r, source, target := configSyncPlanner(t)
	require.NoError(t, r.syncTopicConfigs(ctx))
	require.Empty(t, target.altered, "created with the source's config: nothing to change")

	source.set(func(c *fakeCluster) {
		c.configs["t"] = []kafka.ConfigEntry{
			{Name: "retention.ms", Value: "2000", Source: kafka.SourceTopic},
			{Name: "max.message.bytes", Value: "100", Source: kafka.SourceTopic},
		}
	})
	require.NoError(t, r.syncTopicConfigs(ctx))
	require.Equal(t, map[string][]kafka.ConfigOp{"A.t": {{Name: "max.message.bytes", Value: "100"}, {Name: "retention.ms", Value: "2000"}}}, target.altered)

	source.set(func(c *fakeCluster) {
		c.configs["t"] = []kafka.ConfigEntry{
			{Name: "retention.ms", Value: "604800000", Source: kafka.SourceDefault},
			{Name: "max.message.bytes", Value: "100", Source: kafka.SourceTopic},
		}
	})
	target.set(func(c *fakeCluster) { c.altered = map[string][]kafka.ConfigOp{} })
	require.NoError(t, r.syncTopicConfigs(ctx))
	require.Equal(t, map[string][]kafka.ConfigOp{"A.t": {{Name: "retention.ms", Delete: true}}}, target.altered)

	target.set(func(c *fakeCluster) { c.alterErr = kafka.CodeError(codeAllBrokersDown, "all brokers down", false) })
	source.set(func(c *fakeCluster) { c.configs["t"][1].Value = "200" })
	require.ErrorContains(t, r.syncTopicConfigs(ctx), "sync configs of remote topic A.t", "a transient failure is retried with backoff")
	target.set(func(c *fakeCluster) { c.alterErr = errors.New("policy violation") })
	require.NoError(t, r.syncTopicConfigs(ctx), "a permanent one is logged and tried at the next interval")
}

// configSyncPlanner is a run that planned topic t, whose source config sets retention.ms, to B as A.t.
func configSyncPlanner(t *testing.T) (*sourcePlanner, *fakeCluster, *fakeCluster) {
	t.Helper()
	source := newFakeCluster(map[string]int{"t": 1})
	source.configs["t"] = []kafka.ConfigEntry{{Name: "retention.ms", Value: "1000", Source: kafka.SourceTopic}}
	target := newFakeCluster(map[string]int{})
	r, _, _ := fakePlanner(t, fakePlannerConfig("t"), source, target)
	require.NoError(t, r.refreshPlan(context.Background()))
	return r, source, target
}

// Topic ACLs are copied to the remote topics as MM2 does: WRITE is never granted on them, ALL becomes READ.
func TestTopicACLSyncGrantsNoWriteOnRemoteTopics(t *testing.T) {
	ctx := context.Background()
	source := newFakeCluster(map[string]int{"t": 1})
	source.acls = []kafka.TopicACL{
		plannerACL("t", kafka.ACLOperationWrite, kafka.ACLAllow),
		plannerACL("t", kafka.ACLOperationAll, kafka.ACLAllow),
		plannerACL("u", kafka.ACLOperationRead, kafka.ACLAllow), // not replicated
	}
	target := newFakeCluster(map[string]int{})
	r, _, logs := fakePlanner(t, fakePlannerConfig("t"), source, target)
	require.NoError(t, r.syncTopicACLs(ctx))
	require.Equal(t, []kafka.TopicACL{plannerACL("A.t", kafka.ACLOperationRead, kafka.ACLAllow)}, target.createdACL)

	target.set(func(c *fakeCluster) { c.aclErr = kafka.CodeError(codeAllBrokersDown, "down", false) })
	require.ErrorContains(t, r.syncTopicACLs(ctx), "create topic ACLs on target cluster B")
	target.set(func(c *fakeCluster) { c.aclErr = errors.New("refused") })
	require.NoError(t, r.syncTopicACLs(ctx))
	require.Equal(t, 1, logs.count(slog.LevelWarn, "could not sync some topic ACLs"))
	source.set(func(c *fakeCluster) { c.aclErr = errors.New("cannot describe") })
	require.ErrorContains(t, r.syncTopicACLs(ctx), "describe topic ACLs on source cluster A")
}

// The connector's jobs: a plan that fails for a reason that may pass shows the connector FAILED, naming the
// cluster, and is retried until it succeeds, when it is RUNNING again; one that will not pass by itself (an
// authorization failure) ends the run.
func TestConnectorJobsRetryTransientFailuresAndStopOnPermanentOnes(t *testing.T) {
	source := newFakeCluster(map[string]int{"t": 2})
	source.listErr = kafka.CodeError(codeAllBrokersDown, "all brokers down", false)
	target := newFakeCluster(map[string]int{})
	r, env, _ := fakePlanner(t, fakePlannerConfig("t"), source, target)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.loop(ctx) }()
	awaitPlanner(t, "the connector shows the failing plan", func() bool {
		err := env.failed()
		return err != nil && strings.Contains(err.Error(), "list topics on source cluster A")
	})
	source.set(func(c *fakeCluster) { c.listErr = nil })
	awaitPlanner(t, "a plan once the source answers", func() bool { return len(env.taskSets()) > 0 && env.failed() == nil })
	awaitPlanner(t, "the config and ACL syncs after the plan", func() bool {
		target.mu.Lock()
		defer target.mu.Unlock()
		return target.topics["A.t"] == 2
	})
	cancel()
	require.NoError(t, <-done)

	source = newFakeCluster(map[string]int{"t": 2})
	source.listErr = kafka.CodeError(codeTopicAuthz, "not authorized", false)
	r, _, _ = fakePlanner(t, fakePlannerConfig("t"), source, target)
	err := r.loop(context.Background())
	require.ErrorContains(t, err, "list topics on source cluster A")
	require.True(t, kafka.IsAuthorization(err))
}

// Disabled replication plans no task, and the connector runs until it is stopped.
func TestDisabledConnectorPlansNoTask(t *testing.T) {
	config := fakePlannerConfig("t")
	config["enabled"] = "false"
	p := startPlanner(t, config)
	awaitPlanner(t, "an empty task set", func() bool { return len(p.env.taskSets()) == 1 && p.env.isRunning() })
	require.Empty(t, p.env.taskSets()[0])
	require.NoError(t, p.stop())
}

// Run with replication enabled opens the connector's admin clients from its config and runs its jobs: against
// clusters that do not answer, the jobs fail for a reason that may pass, the connector shows FAILED naming
// what failed, and it runs until stopped.
func TestConnectorRunShowsUnreachableClustersUntilStopped(t *testing.T) {
	config := fakePlannerConfig("t")
	config["admin.timeout.ms"] = "200"
	config["emit.offset-syncs.enabled"] = "true"
	p := startPlanner(t, config)
	awaitPlanner(t, "the failing jobs in the status", func() bool {
		err := p.env.failed()
		return err != nil && strings.Contains(err.Error(), "offset-syncs topic") && strings.Contains(err.Error(), "list topics on source cluster A")
	})
	require.NoError(t, p.stop())

	config[mirrorconfig.TaskAssignmentConfig] = "sideways"
	conn, err := testRegistry(slog.New(slog.DiscardHandler)).NewConnector("mm2", config)
	if err == nil {
		err = conn.Run(context.Background(), p.env)
	}
	require.ErrorContains(t, err, mirrorconfig.TaskAssignmentConfig)
}
