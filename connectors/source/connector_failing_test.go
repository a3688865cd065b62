package source

import (
	"maps"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

func TestPlannedFromTellsTaskConfigsOfAnEarlierConfig(t *testing.T) {
	config := map[string]string{"name": "m", "connector.class": mirrorconfig.SourceConnectorClass,
		"source.cluster.alias": "A", "source.cluster.bootstrap.servers": "a:9092"}
	tps := []mirror.TopicPartition{{Topic: "t", Partition: 0}}
	task := sourceTaskConfigs(config, tps, 1, AssignTopics, nil)[0]
	require.True(t, connectors.PlannedFrom(task, config), "the task config of the config")

	changed := maps.Clone(config)
	changed["source.cluster.bootstrap.servers"] = "127.0.0.1:1"
	require.False(t, connectors.PlannedFrom(task, changed), "a changed value")
	added := maps.Clone(config)
	added["topics"] = "x"
	require.False(t, connectors.PlannedFrom(task, added), "an added key")
	removed := maps.Clone(config)
	delete(removed, "source.cluster.bootstrap.servers")
	require.False(t, connectors.PlannedFrom(task, removed), "a removed key")
}

// The checkpoint and heartbeat connectors show their failing jobs the same way as the source connector.
func TestCheckpointAndHeartbeatConnectorsShowFailedJobs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		class, cluster, want string
	}{
		{mirrorconfig.CheckpointConnectorClass, "source", "list the consumer groups of source cluster A"},
		{mirrorconfig.HeartbeatConnectorClass, "target", "create the heartbeats topic heartbeats on target cluster B"},
	} {
		t.Run(tc.class, func(t *testing.T) {
			t.Parallel()
			config := plannerConfig(t, ".*")
			config["connector.class"] = tc.class
			config[tc.cluster+".cluster.bootstrap.servers"] = unreachableAddress
			config["admin.timeout.ms"] = "300"
			config["checkpoints.topic.replication.factor"] = "1" // the harness clusters have one broker
			config["heartbeats.topic.replication.factor"] = "1"
			p := startPlanner(t, config)
			awaitPlanner(t, "FAILED", func() bool { return p.env.failed() != nil })
			failure := p.env.failed().Error()
			require.Contains(t, failure, tc.want)
			alias := map[string]string{"source": "A", "target": "B"}[tc.cluster]
			require.Contains(t, failure, "(cluster "+alias+" at bootstrap.servers="+unreachableAddress+")")
			require.NoError(t, p.stop())
		})
	}
}

// unreachableAddress is an address nothing listens on.
const unreachableAddress = "127.0.0.1:1"
