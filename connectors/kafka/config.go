package kafka

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// configMap turns translated librdkafka properties into a ConfigMap and routes the client's logs into log.
func configMap(props map[string]string, logs chan ckafka.LogEvent) *ckafka.ConfigMap {
	cm := make(ckafka.ConfigMap, len(props)+2)
	for k, v := range props {
		cm[k] = v
	}
	if logs != nil {
		cm["go.logs.channel.enable"] = true
		cm["go.logs.channel"] = logs
	}
	return &cm
}

// forwardLogs copies librdkafka's log lines into slog until done is closed. librdkafka levels are syslog's.
// The logs channel itself is never closed: librdkafka may still be writing to it while the client shuts down.
func forwardLogs(logs chan ckafka.LogEvent, done <-chan struct{}, log *slog.Logger) {
	for {
		var ev ckafka.LogEvent
		select {
		case <-done:
			return
		case ev = <-logs:
		}
		log.Log(context.Background(), LogLevel(ev.Level, ev.Tag, ev.Message), ev.Message, "client", ev.Name, "tag", ev.Tag)
	}
}

// LogLevel is the slog level of a librdkafka log line of syslog level, facility tag and text. librdkafka warns
// about every experimental property it is given: the replication producer's enable.gapless.guarantee is set
// by kmirror on purpose (connectors' requireGapless), so that warning is debug, and so is the fatal error such
// a producer logs when kmirror purges its records in flight.
func LogLevel(level int, tag, msg string) slog.Level {
	switch {
	case tag == "CONFWARN" && strings.Contains(msg, "enable.gapless.guarantee is experimental"), purgedGapless(msg):
		return slog.LevelDebug
	case level <= 3:
		return slog.LevelError
	case level == 4:
		return slog.LevelWarn
	case level <= 6:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// purgedGapless tells whether msg is the fatal error a gap-less producer raises when the task purges its
// requests (librdkafka fails them as "Purged in flight" or "Purged in queue", permanent errors): the producer
// stops as the task asked.
func purgedGapless(msg string) bool {
	return strings.Contains(msg, "unable to satisfy gap-less guarantee") &&
		(strings.Contains(msg, "Purged in flight") || strings.Contains(msg, "Purged in queue"))
}

// invalidValue matches librdkafka's rejection of a property value, which quotes the value.
var invalidValue = regexp.MustCompile(`Invalid value ".*?" for configuration property`)

// RedactValues drops the quoted value from librdkafka's "Invalid value "..." for configuration property"
// message, as withoutValues does for errors (the C data path's clients report configuration errors as text).
func RedactValues(msg string) string {
	return invalidValue.ReplaceAllLiteralString(msg, "Invalid value for configuration property")
}

// withoutValues drops the quoted value from librdkafka's "Invalid value "..." for configuration property"
// error: the value may be a password or come from a config provider, and this error reaches task traces and
// the log. The property name stays, which is what an operator needs. The result keeps the kafka.Error code
// but not the original error, which would still carry the value when a trace walks the chain.
func withoutValues(err error) error {
	var kerr ckafka.Error
	if err == nil || !invalidValue.MatchString(err.Error()) {
		return err
	}
	msg := invalidValue.ReplaceAllLiteralString(err.Error(), "Invalid value for configuration property")
	if errors.As(err, &kerr) {
		return ckafka.NewError(kerr.Code(), msg, kerr.IsFatal())
	}
	return errors.New(msg)
}
