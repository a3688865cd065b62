package connectors

import (
	"errors"
	"fmt"
	"maps"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/configprovider"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/fileaccess"
)

func TestPlannedFromTellsTaskConfigsOfAnEarlierConfig(t *testing.T) {
	config := map[string]string{"name": "m", "connector.class": mirrorconfig.SourceConnectorClass,
		"source.cluster.alias": "A", "source.cluster.bootstrap.servers": "a:9092"}
	tps := []mirror.TopicPartition{{Topic: "t", Partition: 0}}
	task := sourceTaskConfigs(config, tps, 1, AssignTopics, nil)[0]
	require.True(t, PlannedFrom(task, config), "the task config of the config")

	changed := maps.Clone(config)
	changed["source.cluster.bootstrap.servers"] = "127.0.0.1:1"
	require.False(t, PlannedFrom(task, changed), "a changed value")
	added := maps.Clone(config)
	added["topics"] = "x"
	require.False(t, PlannedFrom(task, added), "an added key")
	removed := maps.Clone(config)
	delete(removed, "source.cluster.bootstrap.servers")
	require.False(t, PlannedFrom(task, removed), "a removed key")
}

// The failure of a connector job names the cluster and its address as the operator wrote it: a config provider
// reference stays one, and the resolved servers never appear, not even where the client's error quotes them.
func TestClusterFailureNamesTheAddressAsWritten(t *testing.T) {
	paths, err := fileaccess.New("--config-provider-allowed-paths", []string{t.TempDir()}, false)
	require.NoError(t, err)
	providers, err := configprovider.New(configprovider.Config{Enabled: configprovider.Names, AllowedPaths: paths,
		LookupEnv: func(k string) (string, bool) { return "secret-host.internal:9093", k == "SRC_SERVERS" }})
	require.NoError(t, err)
	p, ok := mirrorconfig.LookupPlugin(mirrorconfig.SourceConnectorClass)
	require.True(t, ok)
	raw := map[string]string{"name": "m", "connector.class": mirrorconfig.SourceConnectorClass,
		"source.cluster.alias": "A", "target.cluster.alias": "B",
		"source.cluster.bootstrap.servers": "${env:SRC_SERVERS}", "target.cluster.bootstrap.servers": "b:9092"}
	cfg, err := parseConfig(p, raw, clientconfig.Options{Providers: providers})
	require.NoError(t, err)

	cause := errors.New("secret-host.internal:9093/bootstrap: Connect failed: context deadline exceeded")
	failure := cfg.clusterFailure("m", fmt.Errorf("list topics on source cluster A: %w", cause))
	require.Equal(t, "list topics on source cluster A: ${env:SRC_SERVERS}/bootstrap: Connect failed: context deadline exceeded"+
		" (cluster A at bootstrap.servers=${env:SRC_SERVERS})", failure.Error())
	require.Nil(t, errors.Unwrap(failure), "the causes quote the resolved address")

	failure = cfg.clusterFailure("m", fmt.Errorf("create remote topics on target cluster B: %w", cause))
	require.Contains(t, failure.Error(), "(cluster B at bootstrap.servers=b:9092)")
	require.ErrorIs(t, failure, cause, "without a reference the causes stay")
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
