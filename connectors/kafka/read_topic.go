package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// TopicRead says what ReadTopic read.
type TopicRead struct {
	Partitions int // partitions of the topic
	Records    int // records handed to the callback
}

// ReadTopic reads every partition of topic, each from its log start up to the end offset it had when
// ReadTopic began, as Connect's KafkaBasedLog reads its internal topics to the end at start-up. fn receives
// the records in offset order within each partition (partitions interleave); an error from fn stops the read.
// Records appended after the start are not read. ReadTopic fails when ctx ends before every partition reached
// its end: bound it with a deadline.
//
// props are librdkafka consumer properties (translated by package clientconfig); the consumer is assign-only
// and never commits. Use isolation.level=read_committed for a topic written with transactions (Connect's
// offsets topic under exactly-once source support): records of aborted transactions are then skipped, and the
// end offsets are the last stable offsets, so a transaction still open at the start is left out rather than
// waited for.
func ReadTopic(ctx context.Context, props map[string]string, topic string, log *slog.Logger, fn func(Record) error) (TopicRead, error) {
	return readTopic(ctx, props, topic, nil, log, fn)
}

// ReadTopicPartitions is ReadTopic over only the given partitions of topic (those that exist), for a reader
// that knows where its keys are: a Connect offsets topic is partitioned by key, so a task that resumes needs
// only the partitions of its own keys, not all 25.
func ReadTopicPartitions(ctx context.Context, props map[string]string, topic string, partitions []int32, log *slog.Logger, fn func(Record) error) (TopicRead, error) {
	if partitions == nil {
		partitions = []int32{}
	}
	return readTopic(ctx, props, topic, partitions, log, fn)
}

// readTopic reads only partitions, or every partition when it is nil.
func readTopic(ctx context.Context, props map[string]string, topic string, only []int32, log *slog.Logger, fn func(Record) error) (TopicRead, error) {
	var read TopicRead
	props = maps.Clone(props)
	// The end of a partition is told by an EOF event or a record at or past the end: its last offset may hold
	// no record (a transaction marker), so waiting for the record at end-1 is not enough.
	props["enable.partition.eof"] = "true"
	props["enable.auto.commit"] = "false"
	props["enable.auto.offset.store"] = "false"
	if props["group.id"] == "" {
		props["group.id"] = "kmirror-read-topic" // required by the client, never joined
	}
	c, err := NewConsumer(props, log)
	if err != nil {
		return read, err
	}
	defer c.Close()

	n, err := partitionCount(ctx, c, topic)
	if err != nil {
		return read, err
	}
	read.Partitions = n
	ends := map[int32]int64{} // partitions still to read -> their end offset
	var starts []Start
	for p := range int32(n) {
		if only != nil && !slices.Contains(only, p) {
			continue
		}
		low, high, err := watermarks(ctx, c, topic, p)
		if err != nil {
			return read, err
		}
		if high > low {
			ends[p] = high
			// From the log start as it is when fetching begins: retention may move it meanwhile.
			starts = append(starts, Start{Topic: topic, Partition: p, Offset: OffsetBeginning})
		}
	}
	if len(starts) == 0 {
		return read, nil
	}
	if err := c.Assign(starts); err != nil {
		return read, err
	}
	reached := map[int32]int64{} // the next offset to read, per partition, for the error message
	for len(ends) > 0 {
		if err := ctx.Err(); err != nil {
			return read, fmt.Errorf("read %s: %d of %d partitions did not reach their end offset in time (%s): %w",
				topic, len(ends), n, progress(ends, reached), err)
		}
		switch ev := c.c.Poll(100).(type) {
		case *ckafka.Message:
			p := ev.TopicPartition.Partition
			if ev.TopicPartition.Error != nil {
				err := ev.TopicPartition.Error
				if IsRetriable(err) {
					continue
				}
				return read, &PartitionError{Topic: topic, Partition: p, Offset: int64(ev.TopicPartition.Offset), Err: err}
			}
			end, ok := ends[p]
			off := int64(ev.TopicPartition.Offset)
			if !ok {
				continue // done already
			}
			if off >= end {
				// Appended after the start, and proof that every offset below the end has been read (the last
				// of them may hold no record: a transaction marker). A read_committed consumer needs it: while
				// other producers keep committing transactions to the partition, it never fetches at the last
				// stable offset, and librdkafka reports no EOF.
				delete(ends, p)
				continue
			}
			reached[p] = off + 1
			read.Records++
			if err := fn(Record{m: ev}); err != nil {
				return read, err
			}
			if off+1 >= end {
				delete(ends, p)
			}
		case ckafka.PartitionEOF:
			// At the end of the partition, past any trailing transaction marker.
			if end, ok := ends[ev.Partition]; ok && int64(ev.Offset) >= end {
				delete(ends, ev.Partition)
			}
		case ckafka.Error:
			if IsRetriable(ev) {
				log.Debug("reading topic: transient error", "topic", topic, "error", ev)
				continue
			}
			return read, fmt.Errorf("read %s: %w", topic, ev)
		}
	}
	return read, nil
}

// partitionCount asks the cluster how many partitions topic has, through the consumer's connections.
func partitionCount(ctx context.Context, c *Consumer, topic string) (int, error) {
	a, err := c.Admin()
	if err != nil {
		return 0, err
	}
	defer a.Close()
	if d, ok := ctx.Deadline(); ok {
		a.Timeout = max(time.Until(d), time.Millisecond)
	}
	n, err := a.PartitionCount(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", topic, err)
	}
	return n, nil
}

// watermarks queries a partition's offsets, retrying transient errors (a leader moving) until ctx ends.
func watermarks(ctx context.Context, c *Consumer, topic string, p int32) (low, high int64, err error) {
	for {
		step := 10 * time.Second
		if d, ok := ctx.Deadline(); ok {
			step = max(min(step, time.Until(d)), time.Millisecond)
		}
		low, high, err = c.Watermarks(topic, p, step)
		if err == nil || !IsRetriable(err) || ctx.Err() != nil {
			return low, high, err
		}
		select {
		case <-ctx.Done():
			return 0, 0, errors.Join(err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// progress describes where the unfinished partitions stand, e.g. "partition 3 at 120 of 200".
func progress(ends, reached map[int32]int64) string {
	ps := slices.Sorted(maps.Keys(ends))
	s := ""
	for i, p := range ps {
		if i == 5 {
			s += fmt.Sprintf(", and %d more", len(ps)-i)
			break
		}
		if i > 0 {
			s += ", "
		}
		if r, ok := reached[p]; ok {
			s += fmt.Sprintf("partition %d read to %d of end offset %d", p, r, ends[p])
		} else {
			s += fmt.Sprintf("partition %d nothing read of end offset %d", p, ends[p])
		}
	}
	return s
}
