package clientconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTranslatePassThrough(t *testing.T) {
	runTranslateCases(t, []translateCase{
		{name: "consumer librdkafka knob", role: ReplicationConsumer,
			in:   map[string]string{"queued.max.messages.kbytes": "262144", "fetch.queue.backoff.ms": "50"},
			want: map[string]string{"queued.max.messages.kbytes": "262144", "fetch.queue.backoff.ms": "50"}},
		{name: "producer librdkafka knob", role: ReplicationProducer, in: map[string]string{"batch.num.messages": "100000"},
			want: map[string]string{"batch.num.messages": "100000"}},
		{name: "common knob on an admin", role: TargetAdmin, in: map[string]string{"statistics.interval.ms": "30000"},
			want: map[string]string{"statistics.interval.ms": "30000"}},
		{name: "librdkafka overrides a kmirror default", role: ReplicationConsumer,
			in: map[string]string{"socket.keepalive.enable": "false"}, want: map[string]string{"socket.keepalive.enable": "false"}},
		{name: "librdkafka message.timeout.ms replaces the default", role: ReplicationProducer,
			in:   map[string]string{"message.timeout.ms": "60000"},
			want: map[string]string{"message.timeout.ms": "60000"}},
		{name: "alias of a Java name", role: ReplicationProducer,
			in:   map[string]string{"queue.buffering.max.ms": "20"},
			want: map[string]string{"linger.ms": "20"}, absent: []string{"queue.buffering.max.ms"}},
		{name: "conflict with the Java key for the same property", role: ReplicationProducer,
			in:     map[string]string{"linger.ms": "10", "queue.buffering.max.ms": "20"},
			errKey: "queue.buffering.max.ms", errMsg: "conflicts with linger.ms"},
		{name: "conflict with a renamed Java key", role: ReplicationConsumer,
			in:     map[string]string{"fetch.max.wait.ms": "10", "fetch.wait.max.ms": "20"},
			errKey: "fetch.wait.max.ms", errMsg: "conflicts with fetch.max.wait.ms"},
		{name: "forced setting cannot be passed through", role: ReplicationConsumer,
			in:      map[string]string{"enable.partition.eof": "true", "auto.commit.enable": "true"},
			want:    map[string]string{"enable.partition.eof": "false", "enable.auto.commit": "false"},
			dropped: []string{"enable.partition.eof", "auto.commit.enable"}, warn: "enable.partition.eof"},
		{name: "librdkafka in-flight breaks idempotence", role: OffsetSyncsProducer, in: map[string]string{"max.in.flight": "10"},
			errKey: "max.in.flight", errMsg: "at most 5 when enable.idempotence is true"},
		{name: "librdkafka message.max.bytes above fetch.max.bytes", role: ReplicationConsumer,
			in:     map[string]string{"fetch.max.bytes": "1500000", "message.max.bytes": "2000000"},
			errKey: "fetch.max.bytes", errMsg: "must be >= message.max.bytes (2000000)"},
		{name: "consumer property on a producer", role: ReplicationProducer, in: map[string]string{"queued.min.messages": "10"},
			errKey: "queued.min.messages", errMsg: "librdkafka consumer property, not valid for a producer"},
		{name: "producer property on an admin", role: SourceAdmin, in: map[string]string{"batch.num.messages": "10"},
			errKey: "batch.num.messages", errMsg: "not valid for an admin"},
		{name: "out of librdkafka's range", role: ReplicationConsumer, in: map[string]string{"queued.max.messages.kbytes": "0"},
			errKey: "queued.max.messages.kbytes", errMsg: "outside librdkafka's range 1..2097151"},
		{name: "bad enum", role: ReplicationConsumer, in: map[string]string{"broker.address.family": "v5"},
			errKey: "broker.address.family", errMsg: "must be one of any, v4, v6"},
		{name: "bad boolean", role: ReplicationConsumer, in: map[string]string{"socket.nagle.disable": "maybe"},
			errKey: "socket.nagle.disable", errMsg: "expected true or false"},
		{name: "go.* settings", role: ReplicationProducer, in: map[string]string{"go.batch.producer": "true"},
			errKey: "go.batch.producer", errMsg: "chosen by kmirror"},
		{name: "native plugins", role: ReplicationProducer, in: map[string]string{"plugin.library.paths": "/x.so"},
			errKey: "plugin.library.paths", errMsg: "native plugins"},
		{name: "an OpenSSL engine", role: ReplicationConsumer,
			in:     map[string]string{"security.protocol": "SSL", "ssl.engine.location": "/tmp/evil.so"},
			errKey: "ssl.engine.location", errMsg: "it loads an OpenSSL engine, a shared library, into kmirror's process"},
		{name: "an OpenSSL engine by id", role: ReplicationProducer,
			in:     map[string]string{"security.protocol": "SSL", "ssl.engine.id": "dynamic"},
			errKey: "ssl.engine.id", errMsg: "it selects an OpenSSL engine"},
		{name: "OpenSSL providers", role: ReplicationProducer,
			in:     map[string]string{"security.protocol": "SSL", "ssl.providers": "legacy,default"},
			errKey: "ssl.providers", errMsg: "it loads OpenSSL providers"},
		{name: "an OpenSSL engine without SSL", role: ReplicationConsumer, in: map[string]string{"ssl.engine.location": "/tmp/evil.so"},
			errKey: "ssl.engine.location", errMsg: "it loads an OpenSSL engine"},
		{name: "misspelt key with a suggestion", role: ReplicationConsumer,
			in: map[string]string{"fetch.max.wiat.ms": "100"}, errKey: "fetch.max.wiat.ms",
			errMsg: "unknown consumer setting: neither a Kafka client config nor a librdkafka property; did you mean fetch.max.wait.ms?"},
		{name: "unknown without a near name", role: ReplicationConsumer, in: map[string]string{"completely.made.up": "1"},
			errKey: "completely.made.up", errMsg: "unknown consumer setting"},
	})
}

func TestTranslateReportsEveryError(t *testing.T) {
	_, err := Translate(ReplicationConsumer, map[string]string{
		"fetch.min.bytes": "x",
		"acks":            "all",
		"bogus.key":       "1",
	})
	errs := keyErrors(t, err)
	var keys []string
	for _, e := range errs {
		keys = append(keys, e.Key)
	}
	require.Equal(t, []string{"acks", "bogus.key", "bootstrap.servers", "fetch.min.bytes"}, keys)
	require.ErrorContains(t, err, "bogus.key: unknown consumer setting")
}

func TestLibPropertiesTable(t *testing.T) {
	// Spot checks of the table taken from librdkafka v2.11.1's CONFIGURATION.md.
	require.Equal(t, libProperty{role: libConsumer, kind: libEnum, values: []string{"read_uncommitted", "read_committed"}},
		libProperties["isolation.level"])
	require.Equal(t, libProperty{role: libProducer, kind: libFloat, min: 0, max: 900000}, libProperties["linger.ms"])
	require.Equal(t, libProperty{role: libBoth, kind: libInt, min: 1000, max: 1000000000}, libProperties["message.max.bytes"])
	require.NotContains(t, libProperties, "dr_msg_cb", "callbacks cannot come from a config")
	require.NotContains(t, libProperties, "max.poll.records", "not a librdkafka 2.11 property")
}
