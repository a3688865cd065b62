package mirrorconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseExactlyOnceSourceSupport(t *testing.T) {
	for in, want := range map[string]ExactlyOnceSourceSupport{"": ExactlyOnceSourceDisabled, "disabled": ExactlyOnceSourceDisabled,
		" Preparing ": ExactlyOnceSourcePreparing, "ENABLED": ExactlyOnceSourceEnabled} {
		got, err := ParseExactlyOnceSourceSupport(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := ParseExactlyOnceSourceSupport("on")
	require.ErrorContains(t, err, "must be one of disabled, preparing, enabled")
	require.True(t, ExactlyOnceSourceEnabled.Enabled())
	require.False(t, ExactlyOnceSourcePreparing.Enabled(), "preparing leaves source tasks as they are, as in Connect")
}

// The distributed herder's preflight checks depend on the worker: with exactly-once source support enabled,
// "required" passes when MirrorSourceConnector answers SUPPORTED (read_committed source consumer), and fails
// otherwise with the connector's own message (its validate() result replaces the herder's value of the key, as
// in Connect); "preparing" is a disabled worker.
func TestValidateExactlyOnceOnWorker(t *testing.T) {
	readUncommittedMsg := "MirrorSourceConnector can only provide exactly-once guarantees when its source consumer is configured with isolation.level set to 'read_committed'; otherwise, records from aborted and uncommitted transactions will be replicated from the source cluster to the target cluster."
	enabled := Worker{ExactlyOnceSource: ExactlyOnceSourceEnabled}
	preparing := Worker{ExactlyOnceSource: ExactlyOnceSourcePreparing}
	tests := []struct {
		name       string
		worker     Worker
		class      string
		props      map[string]*string
		key        string
		wantErrors []string
	}{
		{"required, read_committed, enabled worker", enabled, SourceConnectorClass,
			map[string]*string{"exactly.once.support": ptr("required"), "source.consumer.isolation.level": ptr("read_committed")}, "exactly.once.support", nil},
		{"required via consumer. prefix", enabled, SourceConnectorClass,
			map[string]*string{"exactly.once.support": ptr("Required"), "consumer.isolation.level": ptr("read_committed"), "transaction.boundary": ptr("interval"), "transaction.boundary.interval.ms": ptr("250")}, "exactly.once.support", nil},
		{"source.consumer overrides consumer", enabled, SourceConnectorClass,
			map[string]*string{"exactly.once.support": ptr("required"), "consumer.isolation.level": ptr("read_committed"), "source.consumer.isolation.level": ptr("read_uncommitted")},
			"exactly.once.support", []string{readUncommittedMsg}},
		{"required without read_committed, enabled worker", enabled, SourceConnectorClass,
			map[string]*string{"exactly.once.support": ptr("required")}, "exactly.once.support", []string{readUncommittedMsg}},
		{"required, read_committed, preparing worker", preparing, SourceConnectorClass,
			map[string]*string{"exactly.once.support": ptr("required"), "source.consumer.isolation.level": ptr("read_committed")}, "exactly.once.support", []string{eosNotEnabledMessage}},
		{"required, heartbeat connector, enabled worker", enabled, HeartbeatConnectorClass,
			map[string]*string{"exactly.once.support": ptr("required")}, "exactly.once.support", []string{eosNoPreflightMessage}},
		{"requested without read_committed, enabled worker", enabled, SourceConnectorClass,
			map[string]*string{"exactly.once.support": ptr("requested")}, "exactly.once.support", nil},
		{"connector boundaries, enabled worker", enabled, SourceConnectorClass,
			map[string]*string{"transaction.boundary": ptr("CONNECTOR")}, "transaction.boundary", []string{connectorBoundariesMessage}},
		{"bad boundary", enabled, SourceConnectorClass,
			map[string]*string{"transaction.boundary": ptr("batch")}, "transaction.boundary",
			[]string{"Invalid value batch for configuration transaction.boundary: String must be one of (case insensitive): INTERVAL, POLL, CONNECTOR"}},
		{"negative interval", enabled, SourceConnectorClass,
			map[string]*string{"transaction.boundary.interval.ms": ptr("-1")}, "transaction.boundary.interval.ms",
			[]string{"Invalid value -1 for configuration transaction.boundary.interval.ms: Value must be at least 0"}},
		{"transactional.id override, disabled worker", Worker{}, SourceConnectorClass,
			map[string]*string{"producer.override.transactional.id": ptr("mine")}, "producer.override.transactional.id",
			[]string{"Invalid value mine for configuration producer.override.transactional.id: " + transactionalIDMessage}},
		{"transactional.id on target.producer, enabled worker", enabled, SourceConnectorClass,
			map[string]*string{"target.producer.transactional.id": ptr("mine")}, "target.producer.transactional.id",
			[]string{"Invalid value mine for configuration target.producer.transactional.id: " + transactionalIDMessage}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ValidateOn(tc.worker, mustPlugin(t, tc.class), config(tc.class, tc.props), nil)
			e := entry(got, tc.key)
			if len(tc.wantErrors) == 0 {
				require.Empty(t, e.Value.Errors)
			} else {
				require.Equal(t, tc.wantErrors, e.Value.Errors)
			}
			require.Equal(t, len(tc.wantErrors), got.ErrorCount, "no other errors expected: %s", ErrorMessage(got))
		})
	}
}

func TestConsumerUsesReadCommitted(t *testing.T) {
	require.False(t, ConsumerUsesReadCommitted(map[string]string{}))
	require.True(t, ConsumerUsesReadCommitted(map[string]string{"consumer.isolation.level": "read_committed"}))
	require.False(t, ConsumerUsesReadCommitted(map[string]string{"consumer.isolation.level": "read_committed", "source.consumer.isolation.level": "read_uncommitted"}))
	require.True(t, ConsumerUsesReadCommitted(map[string]string{"source.consumer.isolation.level": "read_committed"}))
}
