package kafka

import (
	"fmt"
	"log/slog"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kmirror/kmirror/kmtype"
)

// Special start positions for Assign.
const (
	OffsetBeginning = int64(ckafka.OffsetBeginning)
	OffsetEnd       = int64(ckafka.OffsetEnd)
)

// Start is where a partition's consumption starts: an absolute offset, OffsetBeginning or OffsetEnd.
type Start struct {
	Topic     string
	Partition int32
	Offset    int64
}

// Consumer is an assign-only consumer: no group membership, no offset commits to the cluster. MM2's
// replication consumer works this way, and so do kmirror's readers of internal topics.
type Consumer struct {
	c      *ckafka.Consumer
	closed chan struct{}
	stats  *statsMailbox // WithStats; fed by Poll
}

// NewConsumer creates a consumer from librdkafka properties (which must carry a group.id, even though it is
// never used for membership).
func NewConsumer(props map[string]string, log *slog.Logger, opts ...Option) (*Consumer, error) {
	o := applyOptions(opts)
	logs := make(chan ckafka.LogEvent, 64)
	c, err := ckafka.NewConsumer(o.apply(configMap(props, logs)))
	if err != nil {
		return nil, fmt.Errorf("create consumer: %w", withoutValues(err))
	}
	closed := make(chan struct{})
	go forwardLogs(logs, closed, log)
	return &Consumer{c: c, closed: closed, stats: newStatsMailbox(o.onStats)}, nil
}

// Assign replaces the assignment with starts.
func (c *Consumer) Assign(starts []Start) error {
	tps := make([]ckafka.TopicPartition, len(starts))
	for i, s := range starts {
		topic := s.Topic
		tps[i] = ckafka.TopicPartition{Topic: &topic, Partition: s.Partition, Offset: ckafka.Offset(s.Offset)}
	}
	if err := c.c.Assign(tps); err != nil {
		return fmt.Errorf("assign partitions: %w", err)
	}
	return nil
}

// Seek moves one assigned partition to offset. A partition whose fetch stopped on an error (an offset out of
// range with auto.offset.reset=error) refuses a seek, so it is assigned again at offset instead.
func (c *Consumer) Seek(topic string, partition int32, offset int64) error {
	tp := ckafka.TopicPartition{Topic: &topic, Partition: partition, Offset: ckafka.Offset(offset)}
	err := c.c.Seek(tp, 0)
	if hasCode(err, ckafka.ErrState) {
		if err = c.c.IncrementalUnassign([]ckafka.TopicPartition{tp}); err == nil {
			err = c.c.IncrementalAssign([]ckafka.TopicPartition{tp})
		}
	}
	if err != nil {
		return fmt.Errorf("seek %s [%d] to %d: %w", topic, partition, offset, err)
	}
	return nil
}

// Watermarks returns the low (log start) and high (log end) offsets of a partition, asking the broker.
func (c *Consumer) Watermarks(topic string, partition int32, timeout time.Duration) (low, high int64, err error) {
	low, high, err = c.c.QueryWatermarkOffsets(topic, partition, int(timeout.Milliseconds()))
	if err != nil {
		return 0, 0, fmt.Errorf("query watermarks of %s [%d]: %w", topic, partition, err)
	}
	return low, high, nil
}

// CachedWatermarks returns the watermarks librdkafka learned from its last fetch, without a request.
func (c *Consumer) CachedWatermarks(topic string, partition int32) (low, high int64, err error) {
	return c.c.GetWatermarkOffsets(topic, partition)
}

// Position returns, per assigned partition, the offset of the next record the application will receive (past
// any transaction markers librdkafka skipped); partitions without a known position are left out.
func (c *Consumer) Position(starts []Start) (map[Start]int64, error) {
	tps := make([]ckafka.TopicPartition, len(starts))
	for i, s := range starts {
		topic := s.Topic
		tps[i] = ckafka.TopicPartition{Topic: &topic, Partition: s.Partition}
	}
	got, err := c.c.Position(tps)
	if err != nil {
		return nil, fmt.Errorf("read consumer positions: %w", err)
	}
	out := make(map[Start]int64, len(got))
	for _, tp := range got {
		if tp.Topic != nil && tp.Error == nil && tp.Offset >= 0 {
			out[Start{Topic: *tp.Topic, Partition: tp.Partition}] = int64(tp.Offset)
		}
	}
	return out, nil
}

// Record is one consumed record. It owns its bytes; Producer.Forward takes it over.
type Record struct{ m *ckafka.Message }

// Topic returns the record's topic.
func (r Record) Topic() string { return *r.m.TopicPartition.Topic }

// Partition returns the record's partition.
func (r Record) Partition() int32 { return r.m.TopicPartition.Partition }

// Offset returns the record's offset.
func (r Record) Offset() int64 { return int64(r.m.TopicPartition.Offset) }

// Key returns the key (nil for a null key).
func (r Record) Key() []byte { return r.m.Key }

// Value returns the value (nil for a tombstone).
func (r Record) Value() []byte { return r.m.Value }

// Timestamp returns the record timestamp, or the zero time when the record has none.
func (r Record) Timestamp() time.Time { return r.m.Timestamp }

// Size returns the bytes of the record's key, value and headers (their keys and values).
func (r Record) Size() int {
	n := len(r.m.Key) + len(r.m.Value)
	for _, h := range r.m.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return n
}

// Headers returns the headers in order (duplicates and null values kept).
func (r Record) Headers() []Header {
	if len(r.m.Headers) == 0 {
		return nil
	}
	hs := make([]Header, len(r.m.Headers))
	for i, h := range r.m.Headers {
		hs[i] = Header{Key: h.Key, Value: h.Value}
	}
	return hs
}

// PartitionError is a consumer error about one partition, e.g. an offset out of range.
type PartitionError = kmtype.PartitionError

// IsOffsetOutOfRange tells whether err says a fetch position is outside the partition's log (retention
// deleted the data, or the topic was re-created or truncated).
func IsOffsetOutOfRange(err error) bool {
	return hasCode(err, ckafka.ErrAutoOffsetReset) || hasCode(err, ckafka.ErrOffsetOutOfRange)
}

// Poll waits up to timeout for the next record. It returns (Record{}, false, nil) when nothing arrived, a
// *PartitionError for per-partition problems, and other errors for client-wide ones (check IsRetriable).
// Statistics (WithStats) go to their handler's mailbox, and Poll then returns as if nothing arrived.
func (c *Consumer) Poll(timeout time.Duration) (Record, bool, error) {
	ev := c.c.Poll(int(timeout.Milliseconds()))
	switch e := ev.(type) {
	case *ckafka.Message:
		if e.TopicPartition.Error != nil {
			pe := &PartitionError{Partition: e.TopicPartition.Partition, Offset: int64(e.TopicPartition.Offset), Err: e.TopicPartition.Error}
			if e.TopicPartition.Topic != nil {
				pe.Topic = *e.TopicPartition.Topic
			}
			return Record{}, false, pe
		}
		return Record{m: e}, true, nil
	case ckafka.Error:
		return Record{}, false, e
	case *ckafka.Stats:
		c.stats.put(e.String())
	}
	return Record{}, false, nil
}

// Close leaves nothing behind: assign-only consumers have no group to leave.
func (c *Consumer) Close() error {
	err := c.c.Close()
	c.stats.close()
	close(c.closed)
	if err != nil {
		return fmt.Errorf("close consumer: %w", err)
	}
	return nil
}

// Forward produces a consumed record to the same partition of topic, with its key, value, headers and
// timestamp as they are, without copying them. r must not be used afterwards.
func (p *Producer) Forward(r Record, topic *string) error {
	m := r.m
	m.TopicPartition = ckafka.TopicPartition{Topic: topic, Partition: m.TopicPartition.Partition}
	m.Opaque = nil
	m.LeaderEpoch = nil
	return p.produce(m)
}
