package kafka

import (
	"context"
	"fmt"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// PartitionID names one partition of a topic.
type PartitionID struct {
	Topic     string
	Partition int32
}

// LogOffsets is where a partition's log starts (its log start offset; -1 when not asked) and ends (the offset the
// next record will get, or with readCommitted the last stable offset).
type LogOffsets struct{ Start, End int64 }

// LogOffsets asks for the end offsets of partitions, and with starts their log start offsets too, in one
// batched ListOffsets request each, however many partitions there are, where a consumer's Watermarks makes a
// round trip per partition. readCommitted gives the last stable offset as the end, as a read_committed consumer
// sees it. Partitions the cluster could not answer for (no leader yet, unknown) are left out of the result,
// their errors returned by partition.
func (a *Admin) LogOffsets(ctx context.Context, parts []PartitionID, readCommitted, starts bool) (map[PartitionID]LogOffsets, map[PartitionID]error, error) {
	out := make(map[PartitionID]LogOffsets, len(parts))
	if len(parts) == 0 {
		return out, nil, nil
	}
	isolation := ckafka.IsolationLevelReadUncommitted
	if readCommitted {
		isolation = ckafka.IsolationLevelReadCommitted
	}
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	// Results are keyed by PartitionID: a ckafka.TopicPartition holds its topic by pointer, so the two answers'
	// keys never compare equal.
	list := func(spec ckafka.OffsetSpec) (map[PartitionID]ckafka.ListOffsetsResultInfo, error) {
		req := make(map[ckafka.TopicPartition]ckafka.OffsetSpec, len(parts))
		for _, p := range parts {
			topic := p.Topic
			req[ckafka.TopicPartition{Topic: &topic, Partition: p.Partition}] = spec
		}
		res, err := a.a.ListOffsets(ctx, req, ckafka.SetAdminIsolationLevel(isolation))
		if err != nil {
			return nil, fmt.Errorf("list offsets of %d partitions: %w", len(parts), a.cause(ctx, err))
		}
		out := make(map[PartitionID]ckafka.ListOffsetsResultInfo, len(res.ResultInfos))
		for tp, info := range res.ResultInfos {
			out[PartitionID{Topic: *tp.Topic, Partition: tp.Partition}] = info
		}
		return out, nil
	}
	var first map[PartitionID]ckafka.ListOffsetsResultInfo
	if starts {
		var err error
		if first, err = list(ckafka.EarliestOffsetSpec); err != nil {
			return nil, nil, err
		}
	}
	ends, err := list(ckafka.LatestOffsetSpec)
	if err != nil {
		return nil, nil, err
	}
	var failed map[PartitionID]error
	fail := func(id PartitionID, err ckafka.Error) {
		if failed == nil {
			failed = map[PartitionID]error{}
		}
		failed[id] = err
	}
	for id, end := range ends {
		if end.Error.Code() != ckafka.ErrNoError {
			fail(id, end.Error)
			continue
		}
		lo := LogOffsets{Start: -1, End: int64(end.Offset)}
		if starts {
			start, ok := first[id]
			switch {
			case !ok:
				fail(id, ckafka.NewError(ckafka.ErrUnknownPartition, "no log start offset returned", false))
				continue
			case start.Error.Code() != ckafka.ErrNoError:
				fail(id, start.Error)
				continue
			}
			lo.Start = int64(start.Offset)
		}
		out[id] = lo
	}
	return out, failed, nil
}
