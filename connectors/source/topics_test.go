package source

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
)

func plannerAssigned(t *testing.T, configs []map[string]string) []string {
	t.Helper()
	out := make([]string, len(configs))
	for i, c := range configs {
		out[i] = c[mirror.TaskAssignedPartitionsConfig]
	}
	return out
}

// MirrorSourceConnectorTest.testMirrorSourceConnectorTaskConfig, with the first plan's order (sorted).
func TestSourceTaskConfigsRoundRobin(t *testing.T) {
	order := partitionOrder(nil, map[string]int{"t2": 2, "t0": 8, "t1": 2}, 0, AssignPartitions)
	raw := map[string]string{"name": "mm2", "source.cluster.alias": "A"}
	configs := sourceTaskConfigs(raw, order, 3, AssignPartitions, nil)
	require.Equal(t, []string{"t0-0,t0-3,t0-6,t1-1", "t0-1,t0-4,t0-7,t2-0", "t0-2,t0-5,t1-0,t2-1"},
		plannerAssigned(t, configs))
	for i, c := range configs {
		require.Equal(t, connectors.SourceTaskClass, c[connectors.TaskClassKey])
		require.Equal(t, []string{"0", "1", "2"}[i], c[mirror.TaskIndexConfig])
		require.Equal(t, "mm2", c["name"])
		require.Equal(t, "A", c["source.cluster.alias"])
	}
	require.NotContains(t, raw, mirror.TaskIndexConfig, "the connector config is not modified")

	require.Len(t, sourceTaskConfigs(raw, order, 20, AssignPartitions, nil), 12, "never more tasks than partitions")
	require.Empty(t, sourceTaskConfigs(raw, nil, 3, AssignPartitions, nil), "no partitions, no tasks")
}

func TestSourceStablePartitionOrder(t *testing.T) {
	tp := func(topic string, p int32) mirror.TopicPartition {
		return mirror.TopicPartition{Topic: topic, Partition: p}
	}
	first := partitionOrder(nil, map[string]int{"b": 2, "a": 2}, 0, AssignPartitions)
	require.Equal(t, []mirror.TopicPartition{tp("a", 0), tp("a", 1), tp("b", 0), tp("b", 1)}, first)

	// A new topic sorting before the others and a grown topic are both appended, in sorted order.
	grown := partitionOrder(first, map[string]int{"b": 3, "a": 2, "0": 1}, 0, AssignPartitions)
	require.Equal(t, []mirror.TopicPartition{tp("a", 0), tp("a", 1), tp("b", 0), tp("b", 1), tp("0", 0), tp("b", 2)}, grown)

	// A deleted topic drops out; the rest keep their relative order.
	shrunk := partitionOrder(grown, map[string]int{"b": 3, "0": 1}, 0, AssignPartitions)
	require.Equal(t, []mirror.TopicPartition{tp("b", 0), tp("b", 1), tp("0", 0), tp("b", 2)}, shrunk)

	require.Empty(t, partitionOrder(shrunk, nil, 0, AssignPartitions))
}

// The point of the stable order: new partitions change only the tasks that receive them.
func TestSourceNewPartitionsChangeOnlyReceivingTasks(t *testing.T) {
	raw := map[string]string{"name": "mm2"}
	order := partitionOrder(nil, map[string]int{"a": 4, "b": 2}, 0, AssignPartitions)
	before := sourceTaskConfigs(raw, order, 3, AssignPartitions, nil)
	require.Equal(t, []string{"a-0,a-3", "a-1,b-0", "a-2,b-1"}, plannerAssigned(t, before))

	order = partitionOrder(order, map[string]int{"a": 4, "b": 2, "c": 2}, 0, AssignPartitions)
	after := sourceTaskConfigs(raw, order, 3, AssignPartitions, nil)
	require.Equal(t, []string{"a-0,a-3,c-0", "a-1,b-0,c-1", "a-2,b-1"}, plannerAssigned(t, after))
	require.Equal(t, before[2], after[2])

	order = partitionOrder(order, map[string]int{"a": 4, "b": 4, "c": 2}, 0, AssignPartitions)
	grown := sourceTaskConfigs(raw, order, 3, AssignPartitions, nil)
	require.Equal(t, []string{"a-0,a-3,c-0,b-3", "a-1,b-0,c-1", "a-2,b-1,b-2"}, plannerAssigned(t, grown))
	require.Equal(t, after[1], grown[1])
}

func plannerConfigFilter(t *testing.T, props map[string]string) *mirror.ConfigPropertyFilter {
	t.Helper()
	f, err := mirror.NewConfigPropertyFilter(props)
	require.NoError(t, err)
	return f
}

func plannerConfigNames(entries []kafka.ConfigEntry) []string {
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	return names
}

// MirrorSourceConnectorTest.testConfigPropertyFiltering* and testNewTopicConfigs.
func TestSourceRemoteTopicConfig(t *testing.T) {
	entries := []kafka.ConfigEntry{
		{Name: "name-1", Value: "value-1", Source: kafka.SourceTopic},
		{Name: "name-2", Value: "value-2", Source: kafka.SourceDefault},
		{Name: "min.insync.replicas", Value: "2", Source: kafka.SourceTopic},
	}
	defaults := plannerConfigFilter(t, nil)
	require.Equal(t, []string{"name-1", "name-2"}, plannerConfigNames(remoteTopicConfig(entries, defaults, true)),
		"an incremental sync includes defaults (to reset them) but never excluded properties")
	require.Equal(t, []string{"name-1"}, plannerConfigNames(remoteTopicConfig(entries, defaults, false)),
		"a new topic leaves defaults to the target")
	fromSource := plannerConfigFilter(t, map[string]string{"use.defaults.from": "source"})
	require.Equal(t, []string{"name-1", "name-2"}, plannerConfigNames(remoteTopicConfig(entries, fromSource, false)),
		"use.defaults.from=source copies defaults as values")

	custom := plannerConfigFilter(t, map[string]string{"config.properties.exclude": `min\.insync\.replicas, exclude_param.*`})
	created := newRemoteTopicConfig([]kafka.ConfigEntry{
		{Name: "name-1", Value: "value-1", Source: kafka.SourceTopic},
		{Name: "exclude_param.param1", Value: "value-param1", Source: kafka.SourceTopic},
		{Name: "min.insync.replicas", Value: "2", Source: kafka.SourceTopic},
	}, custom)
	require.Equal(t, map[string]string{"name-1": "value-1"}, created)

	kinds := []kafka.ConfigEntry{
		{Name: "read.only", Value: "x", Source: kafka.SourceTopic, ReadOnly: true},
		{Name: "secret", Value: "x", Source: kafka.SourceTopic, Sensitive: true},
		{Name: "static", Value: "x", Source: kafka.SourceStaticBroker},
		{Name: "dynamic.broker", Value: "x", Source: kafka.SourceDynamicBroker},
		{Name: "dynamic.default.broker", Value: "x", Source: kafka.SourceDynamicDefaultBroker},
	}
	require.Equal(t, []string{"dynamic.broker", "dynamic.default.broker"}, plannerConfigNames(remoteTopicConfig(kinds, defaults, false)),
		"dynamic broker values are not defaults, so they become topic overrides")
}

func TestSourceTopicConfigOps(t *testing.T) {
	source := []kafka.ConfigEntry{
		{Name: "retention.ms", Value: "1000", Source: kafka.SourceTopic},
		{Name: "segment.ms", Value: "604800000", Source: kafka.SourceDefault},
		{Name: "cleanup.policy", Value: "compact", Source: kafka.SourceTopic},
		{Name: "min.insync.replicas", Value: "2", Source: kafka.SourceTopic},
	}
	defaults := plannerConfigFilter(t, nil)
	set := func(name, value string) kafka.ConfigOp { return kafka.ConfigOp{Name: name, Value: value} }
	reset := func(name string) kafka.ConfigOp { return kafka.ConfigOp{Name: name, Delete: true} }

	require.Equal(t, []kafka.ConfigOp{set("cleanup.policy", "compact"), set("retention.ms", "1000"), reset("segment.ms")},
		topicConfigOps(source, nil, defaults), "remote configs unknown: every operation, as MM2 sends")

	remote := []kafka.ConfigEntry{
		{Name: "retention.ms", Value: "1000", Source: kafka.SourceTopic},        // in step
		{Name: "segment.ms", Value: "5", Source: kafka.SourceTopic},             // overridden on the target: reset
		{Name: "cleanup.policy", Value: "compact", Source: kafka.SourceDefault}, // equal, but only by default
		{Name: "min.insync.replicas", Value: "1", Source: kafka.SourceTopic},    // excluded: left alone
	}
	require.Equal(t, []kafka.ConfigOp{set("cleanup.policy", "compact"), reset("segment.ms")},
		topicConfigOps(source, remote, defaults))

	remote[1] = kafka.ConfigEntry{Name: "segment.ms", Value: "604800000", Source: kafka.SourceDefault}
	remote[2].Source = kafka.SourceTopic
	require.Empty(t, topicConfigOps(source, remote, defaults), "nothing to change")

	fromSource := plannerConfigFilter(t, map[string]string{"use.defaults.from": "source"})
	require.Equal(t, []kafka.ConfigOp{set("segment.ms", "604800000")}, topicConfigOps(source, remote, fromSource),
		"use.defaults.from=source makes the source default explicit")
}
