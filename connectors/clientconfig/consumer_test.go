package clientconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTranslateConsumerKeys(t *testing.T) {
	runTranslateCases(t, []translateCase{
		{name: "fetch.min.bytes", role: ReplicationConsumer, in: map[string]string{"fetch.min.bytes": "65536"},
			want: map[string]string{"fetch.min.bytes": "65536"}},
		{name: "fetch.min.bytes 0 is librdkafka's 1", role: ReplicationConsumer, in: map[string]string{"fetch.min.bytes": "0"},
			want: map[string]string{"fetch.min.bytes": "1"}},
		{name: "fetch.max.wait.ms renamed", role: ReplicationConsumer, in: map[string]string{"fetch.max.wait.ms": "100"},
			want: map[string]string{"fetch.wait.max.ms": "100"}, absent: []string{"fetch.max.wait.ms"}},
		{name: "fetch.max.bytes", role: ReplicationConsumer, in: map[string]string{"fetch.max.bytes": "104857600"},
			want: map[string]string{"fetch.max.bytes": "104857600"}, absent: []string{"message.max.bytes"}},
		{name: "small fetch.max.bytes lowers message.max.bytes", role: ReplicationConsumer,
			in:   map[string]string{"fetch.max.bytes": "500000"},
			want: map[string]string{"fetch.max.bytes": "500000", "message.max.bytes": "500000"}},
		{name: "tiny fetch.max.bytes raised to librdkafka's floor", role: ReplicationConsumer,
			in:   map[string]string{"fetch.max.bytes": "10"},
			want: map[string]string{"fetch.max.bytes": "1000", "message.max.bytes": "1000"}, warn: "fetch.max.bytes"},
		{name: "max.partition.fetch.bytes", role: ReplicationConsumer, in: map[string]string{"max.partition.fetch.bytes": "0"},
			want: map[string]string{"max.partition.fetch.bytes": "1"}},
		{name: "isolation.level", role: ReplicationConsumer, in: map[string]string{"isolation.level": "READ_COMMITTED"},
			want: map[string]string{"isolation.level": "read_committed"}},
		{name: "auto.offset.reset latest", role: ReplicationConsumer, in: map[string]string{"auto.offset.reset": "latest"},
			want: map[string]string{"auto.offset.reset": "latest"}},
		{name: "auto.offset.reset none is librdkafka's error", role: ReplicationConsumer,
			in: map[string]string{"auto.offset.reset": "none"}, want: map[string]string{"auto.offset.reset": "error"}},
		{name: "auto.offset.reset by_duration", role: ReplicationConsumer,
			in: map[string]string{"auto.offset.reset": "by_duration:PT1H"}, errKey: "auto.offset.reset", errMsg: "by_duration"},
		{name: "auto.offset.reset invalid", role: ReplicationConsumer,
			in: map[string]string{"auto.offset.reset": "smallest"}, errKey: "auto.offset.reset", errMsg: "invalid value"},
		{name: "check.crcs", role: ReplicationConsumer, in: map[string]string{"check.crcs": "True"},
			want: map[string]string{"check.crcs": "true"}},
		{name: "check.crcs not a boolean", role: ReplicationConsumer, in: map[string]string{"check.crcs": "yes"},
			errKey: "check.crcs", errMsg: "expected true or false"},
		{name: "user group.id kept", role: ReplicationConsumer, in: map[string]string{"group.id": "g"},
			want: map[string]string{"group.id": "g"}},
		{name: "enable.auto.commit forced off", role: OffsetSyncsConsumer, in: map[string]string{"enable.auto.commit": "true"},
			want: map[string]string{"enable.auto.commit": "false"}, dropped: []string{"enable.auto.commit"}, warn: "enable.auto.commit"},
		{name: "session timeout above the poll interval", role: ReplicationConsumer,
			in:   map[string]string{"session.timeout.ms": "400000"},
			want: map[string]string{"session.timeout.ms": "400000", "max.poll.interval.ms": "400000"}},
		{name: "poll interval below session timeout raised", role: ReplicationConsumer,
			in:   map[string]string{"max.poll.interval.ms": "10000"},
			want: map[string]string{"max.poll.interval.ms": "45000"}, warn: "max.poll.interval.ms"},
		{name: "group.protocol consumer drops classic settings", role: ReplicationConsumer,
			in: map[string]string{"group.protocol": "consumer", "session.timeout.ms": "10000", "heartbeat.interval.ms": "1000",
				"partition.assignment.strategy": "org.apache.kafka.clients.consumer.RangeAssignor"},
			want:    map[string]string{"group.protocol": "consumer"},
			absent:  []string{"session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"},
			dropped: []string{"session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"}},
		{name: "Java's default assignor list", role: ReplicationConsumer,
			in: map[string]string{"partition.assignment.strategy": "org.apache.kafka.clients.consumer.RangeAssignor, " +
				"org.apache.kafka.clients.consumer.CooperativeStickyAssignor"},
			want: map[string]string{"partition.assignment.strategy": "range"}, warn: "partition.assignment.strategy"},
		{name: "eager sticky assignor", role: ReplicationConsumer,
			in:     map[string]string{"partition.assignment.strategy": "org.apache.kafka.clients.consumer.StickyAssignor"},
			errKey: "partition.assignment.strategy", errMsg: "StickyAssignor"},
		{name: "dropped consumer keys", role: ReplicationConsumer,
			in: map[string]string{"key.deserializer": "x", "value.deserializer": "x", "exclude.internal.topics": "true",
				"auto.commit.interval.ms": "1000", "internal.leave.group.on.close": "false"},
			dropped: []string{"key.deserializer", "value.deserializer", "exclude.internal.topics",
				"auto.commit.interval.ms", "internal.leave.group.on.close"}},
		{name: "producer key on a consumer", role: ReplicationConsumer, in: map[string]string{"acks": "all"},
			errKey: "acks", errMsg: "not a consumer setting (Java defines it for producers only)"},
		{name: "the consumer.poll.timeout.ms trap when Resolve is bypassed", role: ReplicationConsumer,
			in: map[string]string{"poll.timeout.ms": "1000"}, errKey: "poll.timeout.ms", errMsg: "unknown consumer setting"},
	})
}

func TestReplicationConsumerForcedSettings(t *testing.T) {
	cfg := mustTranslate(t, ReplicationConsumer, map[string]string{
		"bootstrap.servers": "a:1",
		"client.id":         "A->B|mm2-0|replication-consumer",
	})
	require.Equal(t, map[string]string{
		"bootstrap.servers":        "a:1",
		"client.id":                "A->B|mm2-0|replication-consumer",
		"group.id":                 "A->B|mm2-0|replication-consumer",
		"enable.auto.commit":       "false",
		"enable.auto.offset.store": "false",
		"enable.partition.eof":     "false",
		"auto.offset.reset":        "earliest",
		"isolation.level":          "read_committed", // not Java's default: aborted source records are never copied
		"connections.max.idle.ms":  "540000",
		"reconnect.backoff.ms":     "50",
		"reconnect.backoff.max.ms": "1000",
		"socket.keepalive.enable":  "true",
	}, cfg.Props)
	require.Equal(t, 500, cfg.MaxPollRecords)

	cfg = mustTranslate(t, ReplicationConsumer, map[string]string{"bootstrap.servers": "a:1", "max.poll.records": "2000"})
	require.Equal(t, 2000, cfg.MaxPollRecords)
	require.NotContains(t, cfg.Props, "max.poll.records")
	require.Equal(t, "kmirror-replication-consumer", cfg.Props["group.id"], "a group.id even without client.id")
}
