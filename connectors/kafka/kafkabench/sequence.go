package kafkabench

import (
	"context"
	"encoding/binary"
	"fmt"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// Sequences numbers the records of each partition written by ProduceSequenced, from 0, across calls: a
// load whose shape changes midway continues every partition's sequence.
type Sequences struct{ next map[TP]int64 }

// NewSequences starts every partition at 0.
func NewSequences() *Sequences { return &Sequences{next: map[TP]int64{}} }

// Written is how many records of each partition were written and acknowledged.
func (s *Sequences) Written() map[TP]int64 {
	out := make(map[TP]int64, len(s.next))
	for tp, n := range s.next {
		out[tp] = n
	}
	return out
}

// ProduceSequenced offers cfg.Rate records per second for cfg.Duration (or until ctx ends), dealt
// round-robin over cfg.Partitions (a partition listed k times gets k shares). Every value starts with the
// record's sequence number in its partition (8 bytes, big endian), so that a read of the target tells
// missing, duplicated and reordered records apart. The producer is idempotent: the sequences land in order.
func ProduceSequenced(ctx context.Context, cfg RateConfig, seq *Sequences) (int64, error) {
	// Every queued record is flushed even when ctx ends: the sequences counted as written must be on A.
	return producePaced(ctx, context.WithoutCancel(ctx), cfg, func(_ int64, tp TP, m *ckafka.Message) {
		binary.BigEndian.PutUint64(m.Value, uint64(seq.next[tp]))
		seq.next[tp]++
	})
}

// ReadSequences reads every partition of ends from its beginning up to its end offset and returns the
// sequence numbers (the first 8 bytes of each value) in the order read. A value shorter than 8 bytes reads
// as -1.
func ReadSequences(ctx context.Context, bootstrap string, ends map[TP]int64) (map[TP][]int64, error) {
	c, err := ckafka.NewConsumer(&ckafka.ConfigMap{
		"bootstrap.servers": bootstrap, "group.id": "kmirror-bench-audit", "enable.auto.commit": false,
		"enable.auto.offset.store": false, "auto.offset.reset": "earliest", "log_level": 3,
		"enable.partition.eof": true,
	})
	if err != nil {
		return nil, fmt.Errorf("audit consumer: %w", err)
	}
	defer c.Close()
	out := map[TP][]int64{}
	var tps []ckafka.TopicPartition
	left := 0
	for tp, end := range ends {
		out[tp] = nil
		if end <= 0 {
			continue
		}
		t := tp.Topic
		tps = append(tps, ckafka.TopicPartition{Topic: &t, Partition: tp.Partition, Offset: ckafka.OffsetBeginning})
		left++
	}
	if err := c.Assign(tps); err != nil {
		return nil, fmt.Errorf("audit consumer: %w", err)
	}
	done := map[TP]bool{}
	for left > 0 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		switch ev := c.Poll(100).(type) {
		case *ckafka.Message:
			tp := TP{Topic: *ev.TopicPartition.Topic, Partition: ev.TopicPartition.Partition}
			if ev.TopicPartition.Error != nil {
				return nil, fmt.Errorf("audit read %s: %w", tp, ev.TopicPartition.Error)
			}
			if int64(ev.TopicPartition.Offset) >= ends[tp] {
				continue
			}
			s := int64(-1)
			if len(ev.Value) >= 8 {
				s = int64(binary.BigEndian.Uint64(ev.Value))
			}
			out[tp] = append(out[tp], s)
			if int64(ev.TopicPartition.Offset) == ends[tp]-1 && !done[tp] {
				done[tp] = true
				left--
			}
		case ckafka.Error:
			if ev.IsFatal() {
				return nil, fmt.Errorf("audit consumer: %w", ev)
			}
		}
	}
	return out, nil
}
