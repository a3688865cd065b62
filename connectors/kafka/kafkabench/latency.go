package kafkabench

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// LatencyReader reads replicated records written by ProduceAtRate and measures, for each, the time from its
// send to its arrival here.
type LatencyReader struct {
	c *ckafka.Consumer
}

// NewLatencyReader assigns every partition in parts from the beginning (the topic must be empty or new). It
// reads read_committed, as a downstream consumer of exactly-once replication does: a record counts as
// arrived when it is visible to such a consumer, i.e. when its transaction committed (without transactions
// the same moment as read_uncommitted).
func NewLatencyReader(bootstrap string, parts []TP) (*LatencyReader, error) {
	c, err := ckafka.NewConsumer(&ckafka.ConfigMap{
		"bootstrap.servers": bootstrap, "group.id": "kmirror-bench-latency", "enable.auto.commit": false,
		"enable.auto.offset.store": false, "auto.offset.reset": "earliest", "isolation.level": "read_committed",
		"fetch.wait.max.ms": 100, "fetch.error.backoff.ms": 10, "fetch.queue.backoff.ms": 10, "log_level": 3,
		"topic.metadata.refresh.interval.ms": 1000,
	})
	if err != nil {
		return nil, fmt.Errorf("latency consumer: %w", err)
	}
	tps := make([]ckafka.TopicPartition, len(parts))
	for i, p := range parts {
		t := p.Topic
		tps[i] = ckafka.TopicPartition{Topic: &t, Partition: p.Partition, Offset: ckafka.OffsetBeginning}
	}
	if err := c.Assign(tps); err != nil {
		c.Close()
		return nil, fmt.Errorf("latency consumer: %w", err)
	}
	return &LatencyReader{c: c}, nil
}

// Arrival is one record read back: when it was sent, and how long it took to arrive.
type Arrival struct {
	Sent    time.Time
	Latency time.Duration
}

// Read collects arrivals until want records arrived (want < 0: until ctx ends) or ctx ends.
func (l *LatencyReader) Read(ctx context.Context, want func() int64) []Arrival {
	var out []Arrival
	for ctx.Err() == nil {
		if w := want(); w >= 0 && int64(len(out)) >= w {
			break
		}
		ev := l.c.Poll(50)
		m, ok := ev.(*ckafka.Message)
		if !ok || m.TopicPartition.Error != nil || len(m.Value) < 8 {
			continue
		}
		sent := int64(binary.BigEndian.Uint64(m.Value))
		out = append(out, Arrival{Sent: time.Unix(0, sent), Latency: time.Duration(time.Now().UnixNano() - sent)})
	}
	return out
}

// Close closes the consumer.
func (l *LatencyReader) Close() { _ = l.c.Close() }
