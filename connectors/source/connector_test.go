package source

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/tasks"
)

// plannerEnv is a tasks.ConnectorEnv that records what the connector tells the runtime.
type plannerEnv struct {
	log *slog.Logger

	mu       sync.Mutex
	running  bool
	failure  error // what Failing showed last; nil once Running or Report showed RUNNING again
	sets     [][]map[string]string
	notice   string
	retained [][]kmtype.PartitionOwner     // every plan handed to RetainPartitionStats
	stats    []kmtype.PartitionStat        // what PartitionStats answers
	offsets  []kmtype.Offset               // what ReadOffsets answers
	notices  []kmtype.Notice               // the notices last reported
	rates    func() []kmtype.PartitionRate // what PartitionRates returns; nil: nothing reported
	resumeAt []map[string]string           // the task set TaskConfigs returns before the run publishes one
	losses   []kmtype.Loss                 // what RecordLoss kept
}

func (e *plannerEnv) PartitionStats(context.Context) ([]kmtype.PartitionStat, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.stats), nil
}

func (e *plannerEnv) ReadOffsets(context.Context) ([]kmtype.Offset, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.offsets), nil
}

func (e *plannerEnv) Running(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.running, e.failure = true, nil
	return nil
}

func (e *plannerEnv) Failing(_ context.Context, err error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failure = err
	return nil
}

func (e *plannerEnv) failed() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.failure
}

func (e *plannerEnv) SetTaskConfigs(_ context.Context, configs []map[string]string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	set := make([]map[string]string, len(configs))
	for i, c := range configs {
		set[i] = maps.Clone(c)
	}
	e.sets = append(e.sets, set)
	return nil
}

func (e *plannerEnv) RecordLoss(_ context.Context, loss kmtype.Loss, keep int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.losses = slices.DeleteFunc(e.losses, func(l kmtype.Loss) bool { return l.Key == loss.Key })
	e.losses = append(e.losses, loss)
	if len(e.losses) > keep {
		e.losses = e.losses[len(e.losses)-keep:]
	}
	return nil
}

func (e *plannerEnv) Losses(context.Context) ([]kmtype.Loss, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.losses), nil
}

func (e *plannerEnv) RetainPartitionStats(_ context.Context, plan []kmtype.PartitionOwner) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.retained = append(e.retained, slices.Clone(plan))
	return nil
}

// lastRetained returns the plan last handed to RetainPartitionStats, as "topic-partition@task", sorted.
func (e *plannerEnv) lastRetained() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.retained) == 0 {
		return nil
	}
	var out []string
	for _, o := range e.retained[len(e.retained)-1] {
		out = append(out, fmt.Sprintf("%s-%d@%d", o.Topic, o.Partition, o.Task))
	}
	slices.Sort(out)
	return out
}

func (e *plannerEnv) Report(_ context.Context, notices []kmtype.Notice) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var msgs []string
	for _, n := range notices {
		if n.Kind == "" || n.Topic == "" {
			return fmt.Errorf("untyped notice %+v", n)
		}
		msgs = append(msgs, n.Message)
	}
	e.notice, e.failure = strings.Join(msgs, "\n"), nil
	e.notices = slices.Clone(notices)
	return nil
}

func (e *plannerEnv) currentNotice() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.notice
}

func (e *plannerEnv) Logger() *slog.Logger { return e.log }

func (e *plannerEnv) isRunning() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.running
}

func (e *plannerEnv) taskSets() [][]map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.sets)
}

// plannerLogs records log messages so tests can see what the connector reported.
type plannerLogs struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *plannerLogs) Enabled(context.Context, slog.Level) bool { return true }
func (l *plannerLogs) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r.Clone())
	return nil
}
func (l *plannerLogs) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *plannerLogs) WithGroup(string) slog.Handler      { return l }

func (l *plannerLogs) count(level slog.Level, substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.recs {
		if r.Level == level && strings.Contains(r.Message, substr) {
			n++
		}
	}
	return n
}

// plannerRunning is a source connector running in the background of a test.
type plannerRunning struct {
	env  *plannerEnv
	logs *plannerLogs
	stop func() error // cancels the run and returns its error; safe to call twice
}

func plannerRandom() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// plannerConfig is a source connector config from A to B that replicates the topics matching topicsRegex,
// on a single-broker-friendly footing, refreshing every second.
func plannerConfig(t *testing.T, topicsRegex string) map[string]string {
	return map[string]string{
		"name":                                  "mm2-" + plannerRandom(),
		"connector.class":                       mirrorconfig.SourceConnectorClass,
		"source.cluster.alias":                  "A",
		"target.cluster.alias":                  "B",
		"source.cluster.bootstrap.servers":      kafkatest.Bootstrap(t, "A"),
		"target.cluster.bootstrap.servers":      kafkatest.Bootstrap(t, "B"),
		"topics":                                topicsRegex,
		"tasks.max":                             "3",
		"replication.factor":                    "1",
		"offset-syncs.topic.replication.factor": "1",
		"sync.topic.acls.enabled":               "false",
		"refresh.topics.interval.seconds":       "1",
		"sync.topic.configs.interval.seconds":   "1",
		"admin.timeout.ms":                      "20000",
	}
}

// startPlanner runs a source connector built by the registry, as the runtime would, until the test ends.
func startPlanner(t *testing.T, config map[string]string) *plannerRunning {
	t.Helper()
	logs := &plannerLogs{}
	log := slog.New(logs)
	conn, err := testRegistry(log).NewConnector(config["name"], config)
	require.NoError(t, err)
	env := &plannerEnv{log: log}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- conn.Run(ctx, env) }()
	var once sync.Once
	var result error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case result = <-done:
			case <-time.After(15 * time.Second):
				result = fmt.Errorf("Run did not return within 15s of cancellation")
			}
		})
		return result
	}
	t.Cleanup(func() { require.NoError(t, stop()) })
	return &plannerRunning{env: env, logs: logs, stop: stop}
}

// plannerTopics creates topics on A named base-<suffix> with the given partition counts, and deletes them
// and their remote topics on B when the test ends.
func plannerTopics(t *testing.T, base string, remote func(string) string, partitions map[string]int, configs map[string]map[string]string) map[string]string {
	t.Helper()
	names := make(map[string]string, len(partitions))
	for suffix, n := range partitions {
		names[suffix] = base + "-" + suffix
		kafkatest.CreateTopic(t, "A", names[suffix], n, configs[suffix])
	}
	plannerCleanup(t, base, remote)
	return names
}

// plannerCleanup deletes, when the test ends, the topics under base on A and their remote topics on B.
func plannerCleanup(t *testing.T, base string, remote func(string) string) {
	t.Cleanup(func() {
		ctx := context.Background()
		a, b := kafkatest.Admin(t, "A"), kafkatest.Admin(t, "B")
		topics, err := a.Topics(ctx)
		if err != nil {
			return
		}
		var source, target []string
		for name := range topics {
			if strings.HasPrefix(name, base) {
				source = append(source, name)
				target = append(target, remote(name))
			}
		}
		_ = a.DeleteTopics(ctx, source)
		_ = b.DeleteTopics(ctx, target)
	})
}

func prefixA(topic string) string { return "A." + topic }

// awaitTaskSet waits until the latest published task set satisfies ok, and returns it.
func (p *plannerRunning) awaitTaskSet(t *testing.T, what string, ok func([]map[string]string) bool) []map[string]string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		sets := p.env.taskSets()
		if len(sets) > 0 && ok(sets[len(sets)-1]) {
			return sets[len(sets)-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no task set with %s within 20s; %d sets published, last: %v", what, len(sets), plannerLast(sets))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// onlyHeartbeats tells whether a task set assigns nothing but partitions of heartbeats topics.
func onlyHeartbeats(set []map[string]string) bool {
	for _, c := range set {
		for _, tp := range strings.Split(c[mirror.TaskAssignedPartitionsConfig], ",") {
			topic := tp[:max(strings.LastIndexByte(tp, '-'), 0)]
			if topic != "heartbeats" && !strings.HasSuffix(topic, ".heartbeats") {
				return false
			}
		}
	}
	return true
}

func plannerLast(sets [][]map[string]string) []string {
	if len(sets) == 0 {
		return nil
	}
	out := make([]string, 0, len(sets[len(sets)-1]))
	for _, c := range sets[len(sets)-1] {
		out = append(out, c[mirror.TaskAssignedPartitionsConfig])
	}
	return out
}

func plannerPartitionCount(configs []map[string]string) int {
	n := 0
	for _, c := range configs {
		n += strings.Count(c[mirror.TaskAssignedPartitionsConfig], ",") + 1
	}
	return n
}

// awaitPlanner polls cond until it holds or the deadline passes.
func awaitPlanner(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// plannerTopicConfig returns a topic's config entry on the cluster, if the topic exists.
func plannerTopicConfig(t *testing.T, cluster, topic, name string) (kafka.ConfigEntry, bool) {
	t.Helper()
	configs, err := kafkatest.Admin(t, cluster).TopicConfigs(context.Background(), []string{topic})
	require.NoError(t, err)
	for _, e := range configs[topic] {
		if e.Name == name {
			return e, true
		}
	}
	return kafka.ConfigEntry{}, false
}

func TestSourceConnectorPlansRoundRobinAndCreatesRemoteTopics(t *testing.T) {
	t.Parallel()
	base := kafkatest.TopicName(t, "kmsrc")
	topics := plannerTopics(t, base, prefixA, map[string]int{"a": 8, "b": 2, "c": 2}, map[string]map[string]string{
		"a": {"retention.ms": "7200000", "cleanup.policy": "compact", "min.insync.replicas": "1"},
	})
	config := plannerConfig(t, regexp.QuoteMeta(base)+"-.*")
	config[mirrorconfig.TaskAssignmentConfig] = mirrorconfig.TaskAssignmentPartitions // MM2's spread, pinned per connector
	p := startPlanner(t, config)

	set := p.awaitTaskSet(t, "12 partitions", func(s []map[string]string) bool { return plannerPartitionCount(s) == 12 })
	a, b, c := topics["a"], topics["b"], topics["c"]
	want := []string{
		fmt.Sprintf("%[1]s-0,%[1]s-3,%[1]s-6,%[2]s-1", a, b),
		fmt.Sprintf("%[1]s-1,%[1]s-4,%[1]s-7,%[2]s-0", a, c),
		fmt.Sprintf("%[1]s-2,%[1]s-5,%[2]s-0,%[3]s-1", a, b, c),
	}
	require.Len(t, set, 3)
	for i, task := range set {
		require.Equal(t, want[i], task[mirror.TaskAssignedPartitionsConfig], "task %d", i)
		require.Equal(t, connectors.SourceTaskClass, task[connectors.TaskClassKey])
		require.Equal(t, fmt.Sprint(i), task[mirror.TaskIndexConfig])
		for k, v := range config {
			require.Equal(t, v, task[k], "task %d carries the connector config", i)
		}
	}

	for suffix, n := range map[string]int{"a": 8, "b": 2, "c": 2} {
		kafkatest.AwaitPartitions(t, "B", prefixA(topics[suffix]), n)
		got, err := kafkatest.Admin(t, "B").PartitionCount(context.Background(), prefixA(topics[suffix]))
		require.NoError(t, err)
		require.Equal(t, n, got, "remote topic of %s has the source's partition count", suffix)
	}
	for name, value := range map[string]string{"retention.ms": "7200000", "cleanup.policy": "compact"} {
		e, ok := plannerTopicConfig(t, "B", prefixA(a), name)
		require.True(t, ok, name)
		require.Equal(t, value, e.Value, name)
		require.Equal(t, kafka.SourceTopic, e.Source, name)
	}
	e, _ := plannerTopicConfig(t, "B", prefixA(a), "min.insync.replicas")
	require.NotEqual(t, kafka.SourceTopic, e.Source, "min.insync.replicas is excluded from config sync by default")

	awaitPlanner(t, "two more refreshes", func() bool { return p.logs.count(slog.LevelDebug, "task set unchanged") >= 2 })
	require.Len(t, p.env.taskSets(), 1, "an unchanged plan is not published again")
}

func TestSourceConnectorTasksMaxAbovePartitions(t *testing.T) {
	t.Parallel()
	base := kafkatest.TopicName(t, "kmsrc")
	plannerTopics(t, base, prefixA, map[string]int{"a": 8, "b": 2, "c": 2}, nil)
	config := plannerConfig(t, regexp.QuoteMeta(base)+"-.*")
	config["tasks.max"] = "20"
	p := startPlanner(t, config)
	set := p.awaitTaskSet(t, "12 partitions", func(s []map[string]string) bool { return plannerPartitionCount(s) == 12 })
	require.Len(t, set, 12, "never more tasks than partitions")
	for _, task := range set {
		require.NotContains(t, task[mirror.TaskAssignedPartitionsConfig], ",", "one partition per task")
	}
}

func TestSourceConnectorRefreshChangesOnlyReceivingTasks(t *testing.T) {
	t.Parallel()
	base := kafkatest.TopicName(t, "kmsrc")
	topics := plannerTopics(t, base, prefixA, map[string]int{"a": 4, "b": 2}, nil)
	config := plannerConfig(t, regexp.QuoteMeta(base)+"-.*")
	config[mirrorconfig.TaskAssignmentConfig] = mirrorconfig.TaskAssignmentPartitions // the spread's order is asserted
	p := startPlanner(t, config)
	first := p.awaitTaskSet(t, "6 partitions", func(s []map[string]string) bool { return plannerPartitionCount(s) == 6 })
	require.Len(t, first, 3)

	// A new topic: its two partitions go to the next tasks in turn, 0 and 1; task 2 is untouched.
	c := base + "-c"
	kafkatest.CreateTopic(t, "A", c, 2, nil)
	t.Cleanup(func() { _ = kafkatest.Admin(t, "B").DeleteTopics(context.Background(), []string{prefixA(c)}) }) // deleted on A below
	withC := p.awaitTaskSet(t, "the new topic", func(s []map[string]string) bool { return plannerPartitionCount(s) == 8 })
	require.Equal(t, first[0][mirror.TaskAssignedPartitionsConfig]+","+c+"-0", withC[0][mirror.TaskAssignedPartitionsConfig])
	require.Equal(t, first[1][mirror.TaskAssignedPartitionsConfig]+","+c+"-1", withC[1][mirror.TaskAssignedPartitionsConfig])
	require.Equal(t, first[2], withC[2], "a task that receives nothing keeps its config, so it is not restarted")
	kafkatest.AwaitPartitions(t, "B", prefixA(c), 2)

	// A grown topic: b-2 goes to task 2 and b-3 to task 0; task 1 is untouched.
	b := topics["b"]
	require.NoError(t, kafkatest.Admin(t, "A").CreatePartitions(context.Background(), b, 4))
	grown := p.awaitTaskSet(t, "the grown topic", func(s []map[string]string) bool { return plannerPartitionCount(s) == 10 })
	require.Equal(t, withC[0][mirror.TaskAssignedPartitionsConfig]+","+b+"-3", grown[0][mirror.TaskAssignedPartitionsConfig])
	require.Equal(t, withC[1], grown[1])
	require.Equal(t, withC[2][mirror.TaskAssignedPartitionsConfig]+","+b+"-2", grown[2][mirror.TaskAssignedPartitionsConfig])
	kafkatest.AwaitPartitions(t, "B", prefixA(b), 4)

	// A deleted topic drops out of the plan; its remote topic stays.
	require.NoError(t, kafkatest.Admin(t, "A").DeleteTopics(context.Background(), []string{c}))
	deleted := p.awaitTaskSet(t, "the topic deleted", func(s []map[string]string) bool { return plannerPartitionCount(s) == 8 })
	for _, task := range deleted {
		require.NotContains(t, task[mirror.TaskAssignedPartitionsConfig], c)
	}
	// The stats kept are those of the published plan, each partition with its task: the deleted topic's rows
	// go (the store deletes what the plan does not name).
	var want []string
	for i, task := range deleted {
		for _, tp := range strings.Split(task[mirror.TaskAssignedPartitionsConfig], ",") {
			want = append(want, fmt.Sprintf("%s@%d", tp, i))
		}
	}
	slices.Sort(want)
	awaitPlanner(t, "stats retained for the new plan", func() bool { return slices.Equal(p.env.lastRetained(), want) })
	onB, err := kafkatest.Admin(t, "B").Topics(context.Background())
	require.NoError(t, err)
	require.Contains(t, onB, prefixA(c), "remote topics are never deleted")
}

func TestSourceConnectorSyncsTopicConfigChanges(t *testing.T) {
	t.Parallel()
	base := kafkatest.TopicName(t, "kmsrc")
	topics := plannerTopics(t, base, prefixA, map[string]int{"a": 1}, map[string]map[string]string{
		"a": {"retention.ms": "1111111"},
	})
	p := startPlanner(t, plannerConfig(t, regexp.QuoteMeta(base)+"-.*"))
	p.awaitTaskSet(t, "1 partition", func(s []map[string]string) bool { return plannerPartitionCount(s) == 1 })
	remote := prefixA(topics["a"])
	retention := func() kafka.ConfigEntry {
		e, _ := plannerTopicConfig(t, "B", remote, "retention.ms")
		return e
	}
	awaitPlanner(t, "remote topic created with retention.ms", func() bool { return retention().Value == "1111111" })

	source := kafkatest.Admin(t, "A")
	require.NoError(t, source.AlterTopicConfigs(context.Background(), topics["a"], []kafka.ConfigOp{{Name: "retention.ms", Value: "2222222"}}))
	awaitPlanner(t, "retention.ms change synced", func() bool { return retention().Value == "2222222" })

	// Back to the default on the source: the remote override is deleted, so the target's default applies.
	require.NoError(t, source.AlterTopicConfigs(context.Background(), topics["a"], []kafka.ConfigOp{{Name: "retention.ms", Delete: true}}))
	awaitPlanner(t, "retention.ms reset synced", func() bool { return retention().Source != kafka.SourceTopic })
	require.Zero(t, p.logs.count(slog.LevelWarn, "could not"), "no sync failed")
}

func TestSourceConnectorIdentityPolicyKeepsNames(t *testing.T) {
	t.Parallel()
	base := kafkatest.TopicName(t, "kmsrc")
	identity := func(topic string) string { return topic }
	topics := plannerTopics(t, base, identity, map[string]int{"a": 3}, nil)
	config := plannerConfig(t, regexp.QuoteMeta(base)+"-.*")
	config["replication.policy.class"] = mirror.IdentityReplicationPolicyClass
	p := startPlanner(t, config)
	p.awaitTaskSet(t, "3 partitions", func(s []map[string]string) bool { return plannerPartitionCount(s) == 3 })
	kafkatest.AwaitPartitions(t, "B", topics["a"], 3)
	remote, err := kafkatest.Admin(t, "B").Topics(context.Background())
	require.NoError(t, err)
	require.NotContains(t, remote, prefixA(topics["a"]))
}

func TestSourceConnectorNeverPlansInternalTopics(t *testing.T) {
	t.Parallel()
	base := kafkatest.TopicName(t, "kmsrc")
	topics := plannerTopics(t, base, prefixA, map[string]int{"a": 1}, nil)
	// The filter accepts the internal topics, so only the internal-topic rule can keep them out.
	config := plannerConfig(t, `__consumer_offsets, mm2-offset-syncs\..*, `+regexp.QuoteMeta(base)+"-.*")
	config["topics.exclude"] = ""
	p := startPlanner(t, config)
	set := p.awaitTaskSet(t, "the topic", func(s []map[string]string) bool { return plannerPartitionCount(s) >= 1 })
	require.Equal(t, []string{topics["a"] + "-0"}, plannerLast([][]map[string]string{set}))

	onA, err := kafkatest.Admin(t, "A").Topics(context.Background())
	require.NoError(t, err)
	require.Contains(t, onA, "mm2-offset-syncs.B.internal", "the connector created its offset-syncs topic on the source")
	onB, err := kafkatest.Admin(t, "B").Topics(context.Background())
	require.NoError(t, err)
	for name := range onB {
		require.False(t, strings.HasPrefix(name, "A.__") || strings.HasPrefix(name, "A.mm2-offset-syncs"), "replicated %s", name)
	}
}

func TestSourceConnectorOffsetSyncsTopicLocation(t *testing.T) {
	t.Parallel()
	for _, location := range []string{"source", "target"} {
		t.Run(location, func(t *testing.T) {
			t.Parallel()
			// Aliases of their own, so the topic cannot have been created by another test.
			src, tgt := "src"+plannerRandom(), "tgt"+plannerRandom()
			config := plannerConfig(t, "kmirror-matches-nothing")
			config["source.cluster.alias"], config["target.cluster.alias"] = src, tgt
			config["offset-syncs.topic.location"] = location
			topic, on, notOn := "mm2-offset-syncs."+tgt+".internal", "A", "B"
			if location == "target" {
				topic, on, notOn = "mm2-offset-syncs."+src+".internal", "B", "A"
			}
			t.Cleanup(func() { _ = kafkatest.Admin(t, on).DeleteTopics(context.Background(), []string{topic}) })
			p := startPlanner(t, config)

			// Heartbeats topics are replicated whatever the filter says (as MM2 does), and other tests' flows may
			// have left some on the shared clusters: the plan holds nothing else.
			p.awaitTaskSet(t, "no tasks but heartbeats", onlyHeartbeats)
			kafkatest.AwaitPartitions(t, on, topic, 1)
			n, err := kafkatest.Admin(t, on).PartitionCount(context.Background(), topic)
			require.NoError(t, err)
			require.Equal(t, 1, n)
			policy, ok := plannerTopicConfig(t, on, topic, "cleanup.policy")
			require.True(t, ok)
			require.Equal(t, "compact", policy.Value)
			other, err := kafkatest.Admin(t, notOn).Topics(context.Background())
			require.NoError(t, err)
			require.NotContains(t, other, topic)
			require.NotContains(t, other, "mm2-offset-syncs."+src+".internal")
			require.NotContains(t, other, "mm2-offset-syncs."+tgt+".internal")
		})
	}
}

func TestSourceConnectorDisabledPlansNothing(t *testing.T) {
	t.Parallel()
	tgt := "tgt" + plannerRandom()
	config := plannerConfig(t, ".*")
	config["enabled"] = "false"
	config["target.cluster.alias"] = tgt
	p := startPlanner(t, config)
	p.awaitTaskSet(t, "no tasks", func(s []map[string]string) bool { return len(s) == 0 })
	require.True(t, p.env.isRunning())
	onA, err := kafkatest.Admin(t, "A").Topics(context.Background())
	require.NoError(t, err)
	require.NotContains(t, onA, "mm2-offset-syncs."+tgt+".internal", "a disabled connector creates nothing")
}

// An unreachable source is no healthy-looking connector without tasks: it shows FAILED with the job, the
// cluster and its address, and keeps retrying.
func TestSourceConnectorUnreachableSourceShowsFailed(t *testing.T) {
	t.Parallel()
	config := plannerConfig(t, ".*")
	config["source.cluster.bootstrap.servers"] = unreachableAddress
	config["admin.timeout.ms"] = "300"
	p := startPlanner(t, config)
	awaitPlanner(t, "planning retried", func() bool {
		return p.logs.count(slog.LevelWarn, "will retry") >= 3
	})
	failure := p.env.failed()
	require.Error(t, failure, "the connector shows FAILED while it retries")
	require.Contains(t, failure.Error(), "create the offset-syncs topic on cluster A")
	require.Contains(t, failure.Error(), "cluster A at bootstrap.servers="+unreachableAddress)
	require.Empty(t, p.env.taskSets(), "nothing is planned without the source")
	began := time.Now()
	require.NoError(t, p.stop())
	require.Less(t, time.Since(began), 3*time.Second, "cancellation is prompt")
}

func TestSourceConnectorFailsOnPermanentStartError(t *testing.T) {
	t.Parallel()
	tgt := "tgt" + plannerRandom()
	config := plannerConfig(t, "kmirror-matches-nothing")
	config["target.cluster.alias"] = tgt
	config["offset-syncs.topic.replication.factor"] = "3" // the harness clusters have one broker
	t.Cleanup(func() {
		_ = kafkatest.Admin(t, "A").DeleteTopics(context.Background(), []string{"mm2-offset-syncs." + tgt + ".internal"})
	})
	logs := &plannerLogs{}
	conn, err := testRegistry(slog.New(logs)).NewConnector(config["name"], config)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = conn.Run(ctx, &plannerEnv{log: slog.New(logs)})
	t.Log(err)
	require.ErrorContains(t, err, "create the offset-syncs topic on cluster A: create topic mm2-offset-syncs."+tgt+".internal")
	require.NoError(t, ctx.Err(), "the error ends the run; it is not retried forever")
}

// The harness clusters have no authorizer. librdkafka describes their ACLs as none rather than failing, so the
// sync runs every interval, finds nothing to copy, and must neither fail nor complain.
func TestSourceConnectorACLSyncWithoutAuthorizer(t *testing.T) {
	t.Parallel()
	config := plannerConfig(t, "kmirror-matches-nothing")
	config["sync.topic.acls.enabled"] = "true"
	config["sync.topic.acls.interval.seconds"] = "1"
	p := startPlanner(t, config)
	awaitPlanner(t, "two ACL sync rounds", func() bool { return p.logs.count(slog.LevelDebug, "synced topic ACLs") >= 2 })
	require.Zero(t, p.logs.count(slog.LevelWarn, ""))
	require.Zero(t, p.logs.count(slog.LevelError, ""))
}

// StopContext never ends: the tests stop planners softly.
func (e *plannerEnv) StopContext() context.Context { return context.Background() }

var _ tasks.ConnectorEnv = (*plannerEnv)(nil)

// A remote topic the target refuses to create is not a silent warning: the connector's status says which
// topic cannot be replicated and why, until the problem is gone.
func TestSourceConnectorReportsRemoteTopicItCannotCreate(t *testing.T) {
	t.Parallel()
	base := "kmsrc-" + plannerRandom()
	config := plannerConfig(t, base+".*")
	config["replication.factor"] = "3" // the harness clusters have one broker
	topics := plannerTopics(t, base, func(s string) string { return "A." + s }, map[string]int{"a": 2}, nil)
	p := startPlanner(t, config)
	remote := "A." + topics["a"]
	awaitPlanner(t, "a notice about the remote topic", func() bool {
		n := p.env.currentNotice()
		return strings.Contains(n, "remote topic "+remote+" could not be created on B") && strings.Contains(n, "replication factor")
	})
}
