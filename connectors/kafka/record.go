package kafka

import (
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// NewRecord makes a record as a consumer would return it, for a test double of a source log whose records
// must reach code written for this package's.
func NewRecord(topic string, partition int32, offset int64, key, value []byte, headers []Header, ts time.Time) Record {
	m := &ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: &topic, Partition: partition, Offset: ckafka.Offset(offset)},
		Key: key, Value: value, Timestamp: ts}
	for _, h := range headers {
		m.Headers = append(m.Headers, ckafka.Header{Key: h.Key, Value: h.Value})
	}
	return Record{m: m}
}
