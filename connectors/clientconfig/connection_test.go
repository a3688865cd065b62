package clientconfig

import "testing"

func TestTranslateConnectionKeys(t *testing.T) {
	runTranslateCases(t, []translateCase{
		// same name
		{name: "bootstrap list trimmed", role: SourceAdmin,
			in:   map[string]string{"bootstrap.servers": " a:9092 , b:9092,, "},
			want: map[string]string{"bootstrap.servers": "a:9092,b:9092"}},
		{name: "bootstrap missing", role: SourceAdmin, in: map[string]string{"bootstrap.servers": " "},
			errKey: "bootstrap.servers", errMsg: "missing"},
		{name: "client.id", role: ReplicationProducer, in: map[string]string{"client.id": "x|y"},
			want: map[string]string{"client.id": "x|y"}},
		{name: "security.protocol any case", role: SourceAdmin, in: map[string]string{"security.protocol": "Plaintext"},
			want: map[string]string{"security.protocol": "plaintext"}},
		{name: "security.protocol invalid", role: SourceAdmin, in: map[string]string{"security.protocol": "TLS"},
			errKey: "security.protocol", errMsg: "invalid value"},
		{name: "client.dns.lookup", role: SourceAdmin, in: map[string]string{"client.dns.lookup": "USE_ALL_DNS_IPS"},
			want: map[string]string{"client.dns.lookup": "use_all_dns_ips"}},
		{name: "client.rack on a consumer", role: ReplicationConsumer, in: map[string]string{"client.rack": "az1"},
			want: map[string]string{"client.rack": "az1"}},
		{name: "client.rack dropped on a producer", role: ReplicationProducer, in: map[string]string{"client.rack": "az1"},
			absent: []string{"client.rack"}, dropped: []string{"client.rack"}},

		// renamed
		{name: "send.buffer.bytes", role: ReplicationProducer, in: map[string]string{"send.buffer.bytes": "262144"},
			want: map[string]string{"socket.send.buffer.bytes": "262144"}, absent: []string{"send.buffer.bytes"}},
		{name: "receive.buffer.bytes -1 is the OS default", role: ReplicationConsumer, in: map[string]string{"receive.buffer.bytes": "-1"},
			want: map[string]string{"socket.receive.buffer.bytes": "0"}},
		{name: "receive.buffer.bytes clamped", role: ReplicationConsumer, in: map[string]string{"receive.buffer.bytes": "200000000"},
			want: map[string]string{"socket.receive.buffer.bytes": "100000000"}, warn: "receive.buffer.bytes"},
		{name: "receive.buffer.bytes below Java's minimum", role: ReplicationConsumer, in: map[string]string{"receive.buffer.bytes": "-2"},
			errKey: "receive.buffer.bytes", errMsg: "at least -1"},
		{name: "metadata.max.age.ms is the refresh interval", role: SourceAdmin, in: map[string]string{"metadata.max.age.ms": "60000"},
			want: map[string]string{"topic.metadata.refresh.interval.ms": "60000"}, absent: []string{"metadata.max.age.ms"}},
		{name: "metadata.max.age.ms clamped", role: SourceAdmin, in: map[string]string{"metadata.max.age.ms": "7200000"},
			want: map[string]string{"topic.metadata.refresh.interval.ms": "3600000"}, warn: "metadata.max.age.ms"},
		{name: "socket.connection.setup.timeout.max.ms", role: SourceAdmin,
			in:      map[string]string{"socket.connection.setup.timeout.max.ms": "20000", "socket.connection.setup.timeout.ms": "5000"},
			want:    map[string]string{"socket.connection.setup.timeout.ms": "20000"},
			dropped: []string{"socket.connection.setup.timeout.ms"}},

		// converted
		{name: "request.timeout.ms on a producer sets both timeouts", role: ReplicationProducer,
			in:   map[string]string{"request.timeout.ms": "45000"},
			want: map[string]string{"request.timeout.ms": "45000", "socket.timeout.ms": "45000"}},
		{name: "request.timeout.ms on a consumer is the socket timeout", role: ReplicationConsumer,
			in:   map[string]string{"request.timeout.ms": "45000"},
			want: map[string]string{"socket.timeout.ms": "45000"}, absent: []string{"request.timeout.ms"}},
		{name: "request.timeout.ms clamped to librdkafka's socket range", role: SourceAdmin,
			in:   map[string]string{"request.timeout.ms": "600000"},
			want: map[string]string{"socket.timeout.ms": "300000"}, warn: "request.timeout.ms"},
		{name: "reconnect.backoff.ms alone makes the backoff static", role: SourceAdmin,
			in:   map[string]string{"reconnect.backoff.ms": "20000"},
			want: map[string]string{"reconnect.backoff.ms": "20000", "reconnect.backoff.max.ms": "20000"}},
		{name: "reconnect.backoff.max.ms below the base is raised", role: SourceAdmin,
			in:   map[string]string{"reconnect.backoff.ms": "500", "reconnect.backoff.max.ms": "100"},
			want: map[string]string{"reconnect.backoff.ms": "500", "reconnect.backoff.max.ms": "500"}, warn: "reconnect.backoff.max.ms"},
		{name: "reconnect.backoff.max.ms below Java's default base", role: SourceAdmin,
			in:   map[string]string{"reconnect.backoff.max.ms": "10"},
			want: map[string]string{"reconnect.backoff.ms": "50", "reconnect.backoff.max.ms": "50"}},
		{name: "retry.backoff.ms 0 is librdkafka's minimum 1", role: SourceAdmin,
			in: map[string]string{"retry.backoff.ms": "0"}, want: map[string]string{"retry.backoff.ms": "1"}},
		{name: "connections.max.idle.ms negative disables", role: ReplicationConsumer,
			in: map[string]string{"connections.max.idle.ms": "-1"}, want: map[string]string{"connections.max.idle.ms": "0"}},
		{name: "not a number", role: SourceAdmin, in: map[string]string{"retry.backoff.ms": "fast"},
			errKey: "retry.backoff.ms", errMsg: "not an integer"},

		// dropped
		{name: "metrics keys", role: ReplicationConsumer,
			in: map[string]string{"metric.reporters": "x.Y", "metrics.num.samples": "3", "metrics.context.team": "a",
				"auto.include.jmx.reporter": "false", "metrics.recording.level": "DEBUG", "metrics.sample.window.ms": "1"},
			dropped: []string{"metric.reporters", "metrics.num.samples", "metrics.context.team",
				"auto.include.jmx.reporter", "metrics.recording.level", "metrics.sample.window.ms"}},
		{name: "empty security.providers", role: SourceAdmin, in: map[string]string{"security.providers": ""},
			dropped: []string{"security.providers"}},

		// rejected
		{name: "security.providers", role: SourceAdmin, in: map[string]string{"security.providers": "com.x.FipsProviderCreator"},
			errKey: "security.providers", errMsg: "JCA"},
	})
}

func TestTranslateAdminKeys(t *testing.T) {
	runTranslateCases(t, []translateCase{
		{name: "retries dropped", role: TargetAdmin, in: map[string]string{"retries": "3"}, dropped: []string{"retries"}},
		{name: "empty bootstrap.controllers", role: TargetAdmin, in: map[string]string{"bootstrap.controllers": ""},
			dropped: []string{"bootstrap.controllers"}},
		{name: "bootstrap.controllers", role: TargetAdmin, in: map[string]string{"bootstrap.controllers": "c:9093"},
			errKey: "bootstrap.controllers", errMsg: "not supported"},
		{name: "enable.metrics.push", role: TargetAdmin, in: map[string]string{"enable.metrics.push": "TRUE"},
			want: map[string]string{"enable.metrics.push": "true"}},
		{name: "producer key on an admin", role: TargetAdmin, in: map[string]string{"linger.ms": "5"},
			errKey: "linger.ms", errMsg: "not an admin setting (Java defines it for producers only)"},
	})

	cfg := mustTranslate(t, OffsetSyncsAdmin, map[string]string{"bootstrap.servers": "b:1", "default.api.timeout.ms": "5000"})
	if cfg.DefaultAPITimeout.Milliseconds() != 5000 {
		t.Fatalf("DefaultAPITimeout = %v", cfg.DefaultAPITimeout)
	}
}
