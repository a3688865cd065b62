package clientconfig

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTranslateProducerKeys(t *testing.T) {
	runTranslateCases(t, []translateCase{
		{name: "acks all", role: OffsetSyncsProducer, in: map[string]string{"acks": "-1"},
			want: map[string]string{"acks": "all"}},
		{name: "acks 1 turns default idempotence off", role: OffsetSyncsProducer, in: map[string]string{"acks": "1"},
			want: map[string]string{"acks": "1", "enable.idempotence": "false", "max.in.flight.requests.per.connection": "5"}},
		{name: "acks 1 on the data producer keeps order with one request in flight", role: ReplicationProducer,
			in:   map[string]string{"acks": "1"},
			want: map[string]string{"enable.idempotence": "false", "max.in.flight.requests.per.connection": "1"}},
		{name: "acks invalid", role: OffsetSyncsProducer, in: map[string]string{"acks": "2"},
			errKey: "acks", errMsg: "must be one of all, -1, 0, 1"},
		{name: "idempotence explicit with acks 0", role: OffsetSyncsProducer,
			in:     map[string]string{"enable.idempotence": "true", "acks": "0"},
			errKey: "enable.idempotence", errMsg: "Must set acks to all in order to use the idempotent producer."},
		{name: "idempotence explicit with retries 0", role: OffsetSyncsProducer,
			in:     map[string]string{"enable.idempotence": "true", "retries": "0"},
			errKey: "enable.idempotence", errMsg: "Must set retries to non-zero when using the idempotent producer."},
		{name: "idempotence explicit with 6 in flight", role: OffsetSyncsProducer,
			in:     map[string]string{"enable.idempotence": "true", "max.in.flight.requests.per.connection": "6"},
			errKey: "enable.idempotence", errMsg: "Must set max.in.flight.requests.per.connection to at most 5"},
		{name: "6 in flight turns default idempotence off", role: OffsetSyncsProducer,
			in:   map[string]string{"max.in.flight.requests.per.connection": "6"},
			want: map[string]string{"enable.idempotence": "false", "max.in.flight.requests.per.connection": "6"}},
		{name: "transactional.id without idempotence", role: ReplicationProducer,
			in:     map[string]string{"transactional.id": "t", "enable.idempotence": "false"},
			errKey: "transactional.id", errMsg: "Cannot set a transactional.id without also enabling idempotence."},
		{name: "batch.size same name", role: ReplicationProducer, in: map[string]string{"batch.size": "1000000"},
			want: map[string]string{"batch.size": "1000000"}},
		{name: "batch.size 0 means no batching", role: ReplicationProducer, in: map[string]string{"batch.size": "0"},
			want: map[string]string{"batch.num.messages": "1"}, absent: []string{"batch.size"}},
		{name: "buffer.memory", role: ReplicationProducer, in: map[string]string{"buffer.memory": "33554433"},
			want:   map[string]string{"queue.buffering.max.kbytes": "32769", "queue.buffering.max.messages": "0"},
			absent: []string{"buffer.memory"}},
		{name: "linger.ms clamped", role: ReplicationProducer, in: map[string]string{"linger.ms": "1000000"},
			want: map[string]string{"linger.ms": "900000"}, warn: "linger.ms"},
		{name: "compression.type", role: ReplicationProducer, in: map[string]string{"compression.type": "LZ4"},
			want: map[string]string{"compression.type": "lz4"}},
		{name: "compression.type invalid", role: ReplicationProducer, in: map[string]string{"compression.type": "brotli"},
			errKey: "compression.type", errMsg: "must be one of"},
		{name: "gzip level for gzip", role: ReplicationProducer,
			in:      map[string]string{"compression.type": "gzip", "compression.gzip.level": "9", "compression.zstd.level": "5"},
			want:    map[string]string{"compression.level": "9"},
			dropped: []string{"compression.zstd.level"}},
		{name: "gzip level 0 is invalid in Java", role: ReplicationProducer,
			in: map[string]string{"compression.gzip.level": "0"}, errKey: "compression.gzip.level", errMsg: "-1 or between 1 and 9"},
		{name: "lz4 default level is the fast compressor", role: ReplicationProducer,
			in: map[string]string{"compression.type": "lz4", "compression.lz4.level": "9"}, want: map[string]string{"compression.level": "-1"}},
		{name: "lz4 HC level capped", role: ReplicationProducer,
			in:   map[string]string{"compression.type": "lz4", "compression.lz4.level": "17"},
			want: map[string]string{"compression.level": "12"}, warn: "compression.lz4.level"},
		{name: "zstd level above 12 clamped", role: ReplicationProducer,
			in:   map[string]string{"compression.type": "zstd", "compression.zstd.level": "19"},
			want: map[string]string{"compression.level": "12"}, warn: "compression.zstd.level"},
		{name: "zstd negative level", role: ReplicationProducer,
			in:   map[string]string{"compression.type": "zstd", "compression.zstd.level": "-5"},
			want: map[string]string{"compression.level": "-1"}, warn: "compression.zstd.level"},
		{name: "zstd level beyond Java's range", role: ReplicationProducer,
			in: map[string]string{"compression.zstd.level": "23"}, errKey: "compression.zstd.level", errMsg: "at most 22"},
		{name: "max.request.size", role: OffsetSyncsProducer, in: map[string]string{"max.request.size": "2097152"},
			want: map[string]string{"message.max.bytes": "2097152"}, absent: []string{"max.request.size"}},
		{name: "max.request.size below librdkafka's minimum", role: OffsetSyncsProducer,
			in: map[string]string{"max.request.size": "999"}, errKey: "max.request.size", errMsg: "at least 1000"},
		{name: "delivery.timeout.ms", role: OffsetSyncsProducer, in: map[string]string{"delivery.timeout.ms": "300000"},
			want: map[string]string{"message.timeout.ms": "300000"}, absent: []string{"delivery.timeout.ms"}},
		{name: "delivery.timeout.ms 0 is not infinite in Java", role: OffsetSyncsProducer,
			in:     map[string]string{"delivery.timeout.ms": "0"},
			errKey: "delivery.timeout.ms", errMsg: "should be equal to or larger than linger.ms + request.timeout.ms"},
		{name: "default delivery timeout grows with linger and request timeouts", role: OffsetSyncsProducer,
			in:   map[string]string{"linger.ms": "100000", "request.timeout.ms": "60000"},
			want: map[string]string{"message.timeout.ms": "160000"}},
		{name: "transactional delivery timeout clamped", role: ReplicationProducer,
			in:   map[string]string{"transactional.id": "t", "transaction.timeout.ms": "30000", "delivery.timeout.ms": "2147483647"},
			want: map[string]string{"message.timeout.ms": "30000", "transactional.id": "t", "enable.idempotence": "true"},
			warn: "delivery.timeout.ms"},
		{name: "transactional socket timeout clamped", role: ReplicationProducer,
			in:   map[string]string{"transactional.id": "t", "transaction.timeout.ms": "10000", "request.timeout.ms": "20000"},
			want: map[string]string{"socket.timeout.ms": "10100"}, absent: []string{"message.timeout.ms"}},
		{name: "transaction.timeout.ms below librdkafka's minimum", role: ReplicationProducer,
			in: map[string]string{"transaction.timeout.ms": "500"}, errKey: "transaction.timeout.ms", errMsg: "at least 1000"},
		{name: "default partitioner", role: OffsetSyncsProducer, in: map[string]string{},
			want: map[string]string{"partitioner": "murmur2_random"}},
		{name: "uniform sticky partitioner", role: OffsetSyncsProducer,
			in:   map[string]string{"partitioner.class": "org.apache.kafka.clients.producer.UniformStickyPartitioner"},
			want: map[string]string{"partitioner": "random"}},
		{name: "partitioner.ignore.keys", role: OffsetSyncsProducer,
			in: map[string]string{"partitioner.ignore.keys": "true"}, want: map[string]string{"partitioner": "random"}},
		{name: "custom partitioner", role: OffsetSyncsProducer, in: map[string]string{"partitioner.class": "com.acme.P"},
			errKey: "partitioner.class", errMsg: "custom partitioner"},
		{name: "dropped producer keys", role: ReplicationProducer,
			in: map[string]string{"key.serializer": "x", "value.serializer": "x", "metadata.max.idle.ms": "1",
				"partitioner.adaptive.partitioning.enable": "false", "partitioner.availability.timeout.ms": "1",
				"interceptor.classes": "", "transaction.two.phase.commit.enable": "false"},
			dropped: []string{"key.serializer", "value.serializer", "metadata.max.idle.ms",
				"partitioner.adaptive.partitioning.enable", "partitioner.availability.timeout.ms",
				"interceptor.classes", "transaction.two.phase.commit.enable"}},
		{name: "interceptors", role: ReplicationProducer, in: map[string]string{"interceptor.classes": "com.acme.I"},
			errKey: "interceptor.classes", errMsg: "interceptors"},
		{name: "two-phase commit", role: ReplicationProducer, in: map[string]string{"transaction.two.phase.commit.enable": "true"},
			errKey: "transaction.two.phase.commit.enable", errMsg: "KIP-939"},
		{name: "consumer key on a producer", role: ReplicationProducer, in: map[string]string{"isolation.level": "read_committed"},
			errKey: "isolation.level", errMsg: "not a producer setting"},
	})
}

func TestProducerDefaults(t *testing.T) {
	data := mustTranslate(t, ReplicationProducer, map[string]string{"bootstrap.servers": "b:1"})
	require.Equal(t, map[string]string{
		"bootstrap.servers":                     "b:1",
		"acks":                                  "all",
		"enable.idempotence":                    "true",
		"max.in.flight.requests.per.connection": "5",
		"message.timeout.ms":                    "0",
		"message.max.bytes":                     "1048576",
		"partitioner":                           "murmur2_random",
		"connections.max.idle.ms":               "540000",
		"reconnect.backoff.ms":                  "50",
		"reconnect.backoff.max.ms":              "1000",
		"socket.keepalive.enable":               "true",
	}, data.Props)
	require.Equal(t, NoLimit, data.MaxBlock)

	syncs := mustTranslate(t, OffsetSyncsProducer, map[string]string{"bootstrap.servers": "b:1"})
	require.Equal(t, "120000", syncs.Props["message.timeout.ms"])
	require.Equal(t, "true", syncs.Props["enable.idempotence"])
	require.Equal(t, 60*time.Second, syncs.MaxBlock)
	require.Equal(t, "50", syncs.Props["linger.ms"], "offset syncs linger so that none queues behind a request in flight")
	require.NotContains(t, data.Props, "linger.ms", "the data producer keeps librdkafka's linger unless set")
	lingered := mustTranslate(t, OffsetSyncsProducer, map[string]string{"bootstrap.servers": "b:1", "linger.ms": "0"})
	require.Equal(t, "0", lingered.Props["linger.ms"], "a configured linger.ms wins")

	blocked := mustTranslate(t, OffsetSyncsProducer, map[string]string{"bootstrap.servers": "b:1", "max.block.ms": "1500"})
	require.Equal(t, 1500*time.Millisecond, blocked.MaxBlock)
	require.NotContains(t, blocked.Props, "max.block.ms")
}
