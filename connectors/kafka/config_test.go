package kafka

import (
	"log/slog"
	"testing"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/stretchr/testify/require"
)

// TestClientErrorsDropValues: librdkafka quotes a rejected value, which may be a secret; kmirror's error
// keeps the property's name only.
func TestClientErrorsDropValues(t *testing.T) {
	const secret = "s3cret-from-a-provider"
	props := map[string]string{"bootstrap.servers": "127.0.0.1:1", "ssl.endpoint.identification.algorithm": secret}
	_, err := NewProducer(props, nil, func(Delivery) {})
	require.ErrorContains(t, err, `create producer: Invalid value for configuration property "ssl.endpoint.identification.algorithm"`)
	require.NotContains(t, err.Error(), secret)
	_, err = NewConsumer(map[string]string{"bootstrap.servers": "127.0.0.1:1", "group.id": "g", "debug": secret}, nil)
	require.ErrorContains(t, err, `Invalid value for configuration property "debug"`)
	require.NotContains(t, err.Error(), secret)
	_, err = NewAdmin(props, slog.New(slog.DiscardHandler))
	require.NotContains(t, err.Error(), secret)
}

// TestLogLevelQuietsOnlyWhatKmirrorAskedFor: the warning about the experimental property kmirror sets and the
// gap-less producer's stop after the task's own purge are debug; a gap-less stop for any other failure, and
// every other line, keep librdkafka's level.
func TestLogLevelQuietsOnlyWhatKmirrorAskedFor(t *testing.T) {
	const purged = "Fatal error: Local: Gap-less ordering would not be guaranteed if proceeding: ProduceRequest for t [2] with 2 message(s) failed: Local: Purged in flight (broker 1 PID{Id:2046,Epoch:0}, base seq 147): unable to satisfy gap-less guarantee"
	const refused = "Fatal error: Local: Gap-less ordering would not be guaranteed if proceeding: ProduceRequest for t [2] with 2 message(s) failed: Broker: Topic authorization failed (broker 1 PID{Id:2046,Epoch:0}, base seq 147): unable to satisfy gap-less guarantee"
	for _, c := range []struct {
		level     int
		tag, msg  string
		want      slog.Level
		fatalWant slog.Level
	}{
		{4, "CONFWARN", "Configuration property enable.gapless.guarantee is experimental: ...", slog.LevelDebug, slog.LevelError},
		{4, "CONFWARN", "Configuration property foo is deprecated", slog.LevelWarn, slog.LevelError},
		{0, "FATAL", purged, slog.LevelDebug, slog.LevelDebug},
		{0, "FATAL", refused, slog.LevelError, slog.LevelError},
		{6, "REQTMOUT", "Timed out 1 in-flight request", slog.LevelInfo, slog.LevelError},
		{7, "MSG", "anything", slog.LevelDebug, slog.LevelError},
	} {
		if got := LogLevel(c.level, c.tag, c.msg); got != c.want {
			t.Errorf("LogLevel(%d, %s, %.40q) = %v, want %v", c.level, c.tag, c.msg, got, c.want)
		}
		err := ckafka.NewError(ckafka.ErrGaplessGuarantee, c.msg, true)
		if got := FatalLevel(err); got != c.fatalWant {
			t.Errorf("FatalLevel(gap-less %.40q) = %v, want %v", c.msg, got, c.fatalWant)
		}
	}
}
