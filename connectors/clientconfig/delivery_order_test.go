package clientconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
)

const reorderAdvice = "can reorder deliveries, so kmirror could commit past a record the target never acknowledged; " +
	"set enable.idempotence=true or max.in.flight.requests.per.connection=1"

func TestReplicationProducerInFlightWithoutIdempotence(t *testing.T) {
	const flight = "max.in.flight.requests.per.connection"
	runTranslateCases(t, []translateCase{
		{name: "idempotence off with 5 in flight", role: ReplicationProducer,
			in:     map[string]string{"enable.idempotence": "false", flight: "5"},
			errKey: flight, errMsg: flight + "=5 with enable.idempotence=false " + reorderAdvice},
		{name: "librdkafka's name for in flight", role: ReplicationProducer,
			in:     map[string]string{"enable.idempotence": "false", "max.in.flight": "2"},
			errKey: "max.in.flight", errMsg: "max.in.flight=2 with enable.idempotence=false " + reorderAdvice},
		// librdkafka retries stale-leader and unsent batches without counting
		// them against retries, so retries=0 does not keep the order.
		{name: "retries 0 does not prevent reordering", role: ReplicationProducer,
			in:     map[string]string{"enable.idempotence": "false", "retries": "0", flight: "5"},
			errKey: flight, errMsg: reorderAdvice},
		{name: "librdkafka retries 0 neither", role: ReplicationProducer,
			in:     map[string]string{"enable.idempotence": "false", "message.send.max.retries": "0", "max.in.flight": "5"},
			errKey: "max.in.flight", errMsg: reorderAdvice},
		{name: "acks 1 turns idempotence off", role: ReplicationProducer,
			in:     map[string]string{"acks": "1", flight: "5"},
			errKey: flight, errMsg: flight + "=5 with idempotence off (acks=1 turns it off) " + reorderAdvice},
		{name: "retries 0 turns idempotence off", role: ReplicationProducer,
			in:     map[string]string{"retries": "0", flight: "3"},
			errKey: flight, errMsg: "idempotence off (retries=0 turns it off) " + reorderAdvice},
		{name: "more than 5 in flight turn idempotence off", role: ReplicationProducer,
			in:     map[string]string{flight: "6"},
			errKey: flight, errMsg: "idempotence off (more than 5 requests in flight turn it off) " + reorderAdvice},

		{name: "idempotence off keeps one request in flight", role: ReplicationProducer,
			in:   map[string]string{"enable.idempotence": "false"},
			want: map[string]string{"enable.idempotence": "false", flight: "1"}},
		{name: "idempotence off with one in flight", role: ReplicationProducer,
			in:   map[string]string{"enable.idempotence": "false", "max.in.flight": "1", "retries": "10"},
			want: map[string]string{"enable.idempotence": "false", flight: "1", "retries": "10"}},
		{name: "idempotent with 5 in flight", role: ReplicationProducer,
			in:   map[string]string{"enable.idempotence": "true", flight: "5"},
			want: map[string]string{"enable.idempotence": "true", flight: "5"}},
		// Only the replication producer matches delivery reports to records by
		// position.
		{name: "offset-syncs producer may reorder", role: OffsetSyncsProducer,
			in:   map[string]string{"enable.idempotence": "false", flight: "5"},
			want: map[string]string{"enable.idempotence": "false", flight: "5"}},
		{name: "heartbeats producer may reorder", role: HeartbeatsProducer,
			in:   map[string]string{"enable.idempotence": "false", flight: "5"},
			want: map[string]string{"enable.idempotence": "false", flight: "5"}},
	})
}

func TestValidateInFlightWithoutIdempotenceNamesTheConnectorKey(t *testing.T) {
	// The entry is the connector key the operator wrote; the message speaks of
	// the client settings, by their Java (or librdkafka) names.
	msg := func(key, setting, idem string) string {
		return key + ": " + setting + " with " + idem + " " + reorderAdvice
	}
	tests := []struct {
		name  string
		extra map[string]string
		want  map[string][]string
	}{
		{"producer.override", map[string]string{
			"producer.override.enable.idempotence":                    "false",
			"producer.override.max.in.flight.requests.per.connection": "5",
		}, map[string][]string{"producer.override.max.in.flight.requests.per.connection": {msg(
			"producer.override.max.in.flight.requests.per.connection", "max.in.flight.requests.per.connection=5", "enable.idempotence=false")}}},
		{"settings from two layers", map[string]string{
			"target.producer.enable.idempotence": "false",
			"producer.override.max.in.flight":    "4",
		}, map[string][]string{"producer.override.max.in.flight": {msg(
			"producer.override.max.in.flight", "max.in.flight=4", "enable.idempotence=false")}}},
		{"generic producer prefix", map[string]string{
			"producer.enable.idempotence":                    "false",
			"producer.max.in.flight.requests.per.connection": "2",
		}, map[string][]string{"producer.max.in.flight.requests.per.connection": {msg(
			"producer.max.in.flight.requests.per.connection", "max.in.flight.requests.per.connection=2", "enable.idempotence=false")}}},
		{"a later layer restores order", map[string]string{
			"producer.enable.idempotence":                             "false",
			"producer.max.in.flight.requests.per.connection":          "5",
			"producer.override.max.in.flight.requests.per.connection": "1",
		}, map[string][]string{}},
		{"target.cluster keys are connection keys only", map[string]string{
			"target.cluster.enable.idempotence": "false",
			"target.cluster.max.in.flight":      "5",
		}, map[string][]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConnector()
			for k, v := range tc.extra {
				cfg[k] = v
			}
			require.Equal(t, tc.want, Validate(cfg, mm2Keys))
		})
	}

	heartbeat := map[string]string{
		"connector.class":                      "MirrorHeartbeatConnector",
		"source.cluster.alias":                 "A",
		"target.cluster.bootstrap.servers":     "b:9092",
		"producer.override.enable.idempotence": "false",
		"producer.override.max.in.flight":      "5",
	}
	require.Empty(t, Validate(heartbeat, mm2Keys), "heartbeats are not matched to records by position")
}
