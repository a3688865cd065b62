package clientconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValidateValidConfig(t *testing.T) {
	cfg := baseConnector()
	cfg["consumer.poll.timeout.ms"] = "500"
	cfg["source.cluster.foo"] = "not a client setting, not an error"
	cfg["source.consumer.fetch.max.wait.ms"] = "100"
	cfg["producer.override.compression.type"] = "zstd"
	cfg["target.producer.batch.num.messages"] = "100000"
	cfg["target.consumer.isolation.level"] = "read_committed" // read by no client of a source connector
	require.Empty(t, Validate(cfg, mm2Keys))
}

func TestValidateNamesTheConnectorKey(t *testing.T) {
	cfg := baseConnector()
	cfg["source.consumer.fetch.max.wiat.ms"] = "100"
	cfg["producer.override.acks"] = "2"
	cfg["consumer.interceptor.classes"] = "com.acme.I"
	cfg["admin.linger.ms"] = "5"

	got := Validate(cfg, mm2Keys)
	require.Equal(t, map[string][]string{
		"source.consumer.fetch.max.wiat.ms": {"source.consumer.fetch.max.wiat.ms: unknown consumer setting: " +
			"neither a Kafka client config nor a librdkafka property; did you mean fetch.max.wait.ms?"},
		"producer.override.acks":       {"producer.override.acks: invalid value \"2\": must be one of all, -1, 0, 1"},
		"consumer.interceptor.classes": {"consumer.interceptor.classes: Java interceptors cannot run in librdkafka"},
		"admin.linger.ms":              {"admin.linger.ms: not an admin setting (Java defines it for producers only)"},
	}, got)
}

func TestValidateMissingAndClusterKeys(t *testing.T) {
	cfg := baseConnector()
	delete(cfg, "source.cluster.bootstrap.servers")
	cfg["source.cluster.security.protocol"] = "SASL_SSL"
	cfg["source.cluster.sasl.mechanism"] = "PLAIN"

	got := Validate(cfg, mm2Keys)
	require.Equal(t, []string{"source.cluster.bootstrap.servers: missing: every client needs the brokers to bootstrap from"},
		got["source.cluster.bootstrap.servers"], "reported once for all the source clients")
	require.Len(t, got["source.cluster.sasl.jaas.config"], 1)
	require.Contains(t, got["source.cluster.sasl.jaas.config"][0], "missing")
	require.Len(t, got, 2)
}

func TestValidateUnreadPrefixesByName(t *testing.T) {
	cfg := baseConnector()
	cfg["target.consumer.fetch.min.byte"] = "1" // no target consumer in a source connector, still a typo
	cfg["source.admin.acks"] = "all"            // a producer key under an admin prefix
	cfg["consumer.override.fetch.min.bytes"] = "1"
	cfg["target.cluster.ssl.truststore.locaton"] = "/x"

	got := Validate(cfg, mm2Keys)
	require.Contains(t, got, "target.consumer.fetch.min.byte")
	require.Contains(t, got, "source.admin.acks")
	require.Contains(t, got["consumer.override.fetch.min.bytes"][0], "has no effect")
	require.Contains(t, got["target.cluster.ssl.truststore.locaton"][0], "did you mean ssl.truststore.location?")
}

func TestValidatePerConnectorClass(t *testing.T) {
	heartbeat := map[string]string{
		"connector.class":                  "MirrorHeartbeatConnector",
		"source.cluster.alias":             "A",
		"target.cluster.bootstrap.servers": "b:9092",
	}
	require.Empty(t, Validate(heartbeat, mm2Keys), "a heartbeat connector needs no source cluster")

	checkpoint := baseConnector()
	checkpoint["connector.class"] = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
	checkpoint["offset-syncs.topic.location"] = "target"
	checkpoint["target.consumer.auto.offset.reset"] = "sometimes"
	got := Validate(checkpoint, mm2Keys)
	require.Equal(t, []string{`target.consumer.auto.offset.reset: invalid value "sometimes": must be earliest, latest or none`},
		got["target.consumer.auto.offset.reset"], "offset-syncs and checkpoints consumers report it once")

	source := baseConnector()
	source["emit.offset-syncs.enabled"] = "false"
	delete(source, "source.cluster.bootstrap.servers")
	require.Contains(t, Validate(source, mm2Keys), "source.cluster.bootstrap.servers")

	require.Empty(t, Validate(map[string]string{"connector.class": "com.acme.Other", "consumer.bogus": "1"}, mm2Keys))
}
