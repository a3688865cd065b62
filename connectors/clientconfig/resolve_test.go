package clientconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// mm2Keys stands in for the lead's connector-key predicate: a few real MM2 keys
// that start with client prefixes.
func mm2Keys(k string) bool {
	switch k {
	case "consumer.poll.timeout.ms", "admin.timeout.ms", "source.cluster.alias", "target.cluster.alias":
		return true
	}
	return false
}

func baseConnector() map[string]string {
	return map[string]string{
		"name":                             "mm2",
		"connector.class":                  "org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"source.cluster.alias":             "A",
		"target.cluster.alias":             "B",
		"source.cluster.bootstrap.servers": "a:9092",
		"target.cluster.bootstrap.servers": "b:9092",
	}
}

func TestResolvePrecedence(t *testing.T) {
	cfg := baseConnector()
	cfg["source.cluster.security.protocol"] = "SSL"
	cfg["consumer.security.protocol"] = "SASL_SSL"
	cfg["consumer.fetch.min.bytes"] = "1"
	cfg["source.consumer.fetch.min.bytes"] = "2"
	cfg["target.consumer.fetch.min.bytes"] = "3"
	cfg["producer.linger.ms"] = "10"
	cfg["target.producer.linger.ms"] = "20"
	cfg["producer.override.linger.ms"] = "30"
	cfg["source.producer.linger.ms"] = "40"

	c := Resolve(ReplicationConsumer, cfg, mm2Keys)
	require.Equal(t, "2", c["fetch.min.bytes"], "source.consumer. wins over consumer.")
	require.Equal(t, "SASL_SSL", c["security.protocol"], "consumer. wins over source.cluster.")
	require.Equal(t, "a:9092", c["bootstrap.servers"])

	require.Equal(t, "30", Resolve(ReplicationProducer, cfg, mm2Keys)["linger.ms"], "producer.override. wins for the data producer")
	require.Equal(t, "30", Resolve(HeartbeatsProducer, cfg, mm2Keys)["linger.ms"])
	require.Equal(t, "40", Resolve(OffsetSyncsProducer, cfg, mm2Keys)["linger.ms"],
		"offset syncs live on the source by default and ignore producer.override.")
	require.Equal(t, "3", Resolve(CheckpointsConsumer, cfg, mm2Keys)["fetch.min.bytes"])

	cfg["offset-syncs.topic.location"] = "target"
	require.Equal(t, "20", Resolve(OffsetSyncsProducer, cfg, mm2Keys)["linger.ms"])
	require.Equal(t, "b:9092", Resolve(OffsetSyncsProducer, cfg, mm2Keys)["bootstrap.servers"])
	require.Equal(t, "3", Resolve(OffsetSyncsConsumer, cfg, mm2Keys)["fetch.min.bytes"])
}

func TestResolveFiltersClusterKeysToConnectionKeys(t *testing.T) {
	cfg := baseConnector()
	cfg["source.cluster.foo"] = "x"
	cfg["source.cluster.fetch.min.bytes"] = "5"
	cfg["source.cluster.client.id"] = "ignored"
	cfg["source.cluster.ssl.truststore.location"] = "/ts"
	cfg["source.cluster.sasl.mechanism"] = "PLAIN"

	c := Resolve(ReplicationConsumer, cfg, mm2Keys)
	require.NotContains(t, c, "foo")
	require.NotContains(t, c, "fetch.min.bytes")
	require.NotContains(t, c, "alias")
	require.Equal(t, "/ts", c["ssl.truststore.location"])
	require.Equal(t, "PLAIN", c["sasl.mechanism"])
	require.NotContains(t, c, "client.id", "a cluster-level client.id is not a client setting")
}

func TestResolveSkipsConnectorKeys(t *testing.T) {
	cfg := baseConnector()
	cfg["consumer.poll.timeout.ms"] = "1000"
	cfg["admin.timeout.ms"] = "60000"

	require.NotContains(t, Resolve(ReplicationConsumer, cfg, mm2Keys), "poll.timeout.ms")
	require.NotContains(t, Resolve(SourceAdmin, cfg, mm2Keys), "timeout.ms")

	// Without the predicate the trap springs, as in Java.
	require.Equal(t, "1000", Resolve(ReplicationConsumer, cfg, nil)["poll.timeout.ms"])
}

func TestResolveProducerOverrideIsNotAProducerKey(t *testing.T) {
	cfg := baseConnector()
	cfg["producer.override.compression.type"] = "zstd"

	require.NotContains(t, Resolve(OffsetSyncsProducer, cfg, mm2Keys), "override.compression.type")
	require.Equal(t, "zstd", Resolve(ReplicationProducer, cfg, mm2Keys)["compression.type"])
}

func TestResolveClientIDIsTheUsers(t *testing.T) {
	cfg := baseConnector()
	cfg["source.cluster.client.id"] = "not a connection key"
	require.NotContains(t, Resolve(ReplicationConsumer, cfg, mm2Keys), "client.id")

	cfg["consumer.client.id"] = "team-x"
	user := Resolve(ReplicationConsumer, cfg, mm2Keys)["client.id"]
	require.Equal(t, "team-x", user)
	require.Equal(t, "team-x|A->B|mm2-2|replication-consumer",
		ClientID(user, "A", "B", "mm2", 2, Label(ReplicationConsumer, cfg)))

	cfg["producer.override.client.id"] = "mine"
	require.Equal(t, "mine", Resolve(ReplicationProducer, cfg, mm2Keys)["client.id"])
}

func TestClientID(t *testing.T) {
	require.Equal(t, "u|A->B|c-0|replication-consumer", ClientID("u", "A", "B", "c", 0, "replication-consumer"))
	require.Equal(t, "A->B|c|replication-source-admin", ClientID("", "A", "B", "c", -1, "replication-source-admin"))
	require.Equal(t, "A->B|c-7", ClientID("", "A", "B", "c", 7, ""))
}

func TestLabel(t *testing.T) {
	cfg := func(class, loc string) map[string]string {
		return map[string]string{"connector.class": class, "offset-syncs.topic.location": loc}
	}
	tests := []struct {
		role  Role
		class string
		loc   string
		want  string
	}{
		{ReplicationConsumer, "MirrorSourceConnector", "", "replication-consumer"},
		{SourceAdmin, "org.apache.kafka.connect.mirror.MirrorSourceConnector", "", "replication-source-admin"},
		{TargetAdmin, "MirrorSource", "", "replication-target-admin"},
		{SourceAdmin, "MirrorCheckpointConnector", "", "checkpoint-source-admin"},
		{TargetAdmin, "MirrorCheckpointConnector", "", "checkpoint-target-admin"},
		{TargetAdmin, "MirrorHeartbeatConnector", "", "heartbeats-target-admin"},
		{OffsetSyncsProducer, "MirrorSourceConnector", "", "offset-syncs-source-producer"},
		{OffsetSyncsProducer, "MirrorSourceConnector", "target", "offset-syncs-target-producer"},
		{OffsetSyncsAdmin, "MirrorSourceConnector", "target", "offset-syncs-target-admin"},
		{OffsetSyncsConsumer, "MirrorCheckpointConnector", "source", "offset-syncs-source-consumer"},
		{CheckpointsConsumer, "MirrorCheckpointConnector", "", "checkpoints-target-consumer"},
		{ReplicationProducer, "MirrorSourceConnector", "", ""},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, Label(tc.role, cfg(tc.class, tc.loc)), "%v %s %s", tc.role, tc.class, tc.loc)
	}
}
