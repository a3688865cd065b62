package mirror

import (
	"fmt"
	"strconv"
	"strings"
)

// TopicPartition is a source or remote topic-partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String formats tp the way Kafka's TopicPartition.toString does, e.g. "topic-3". MM2 uses this form in
// task.assigned.partitions.
func (tp TopicPartition) String() string {
	return tp.Topic + "-" + strconv.FormatInt(int64(tp.Partition), 10)
}

// ParseTopicPartition parses the "topic-partition" form, splitting at the last '-' as MM2 does, so
// topics may contain '-'. Like Java, "t--1" parses as topic "t-" and partition 1: a negative partition
// does not survive a round trip.
func ParseTopicPartition(s string) (TopicPartition, error) {
	sep := strings.LastIndexByte(s, '-')
	if sep < 0 {
		return TopicPartition{}, fmt.Errorf("parse topic-partition %q: no '-' separator", s)
	}
	partition, err := strconv.ParseInt(s[sep+1:], 10, 32)
	if err != nil {
		return TopicPartition{}, fmt.Errorf("parse topic-partition %q: %w", s, err)
	}
	return TopicPartition{Topic: s[:sep], Partition: int32(partition)}, nil
}
