package kafka

import (
	"context"
	"log/slog"

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
		level := slog.LevelDebug
		switch {
		case ev.Level <= 3:
			level = slog.LevelError
		case ev.Level == 4:
			level = slog.LevelWarn
		case ev.Level <= 6:
			level = slog.LevelInfo
		}
		log.Log(context.Background(), level, ev.Message, "client", ev.Name, "tag", ev.Tag)
	}
}
