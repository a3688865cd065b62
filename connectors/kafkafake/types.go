package kafkafake

import (
	"time"

	"github.com/kmirror/kmirror/kmtype"
)

// Special start positions for Assign, as librdkafka's.
const (
	OffsetBeginning int64 = -2
	OffsetEnd       int64 = -1
)

// Start is where a partition's consumption starts: an absolute offset, OffsetBeginning or OffsetEnd.
type Start struct {
	Topic     string
	Partition int32
	Offset    int64
}

// PartitionID names one partition of a topic.
type PartitionID struct {
	Topic     string
	Partition int32
}

// LogOffsets is where a partition's log starts and ends (the next offset, or the last stable offset).
type LogOffsets struct{ Start, End int64 }

// TopicShape is a topic's id and partition count.
type TopicShape = kmtype.TopicShape

// Header is a record header; Value nil is a null header value.
type Header struct {
	Key   string
	Value []byte
}

// Message is what a test appends to a log.
type Message struct {
	Key, Value []byte
	Headers    []Header
	Timestamp  time.Time
}

// Record is one consumed record.
type Record struct {
	topic     string
	partition int32
	offset    int64
	m         Message
}

// Topic returns the record's topic.
func (r Record) Topic() string { return r.topic }

// Partition returns the record's partition.
func (r Record) Partition() int32 { return r.partition }

// Offset returns the record's offset.
func (r Record) Offset() int64 { return r.offset }

// Key returns the key (nil for a null key).
func (r Record) Key() []byte { return r.m.Key }

// Value returns the value (nil for a tombstone).
func (r Record) Value() []byte { return r.m.Value }

// Timestamp returns the record timestamp, or the zero time when it has none.
func (r Record) Timestamp() time.Time { return r.m.Timestamp }

// Headers returns the headers in order.
func (r Record) Headers() []Header { return r.m.Headers }

// Size returns the bytes of the record's key, value and headers.
func (r Record) Size() int {
	n := len(r.m.Key) + len(r.m.Value)
	for _, h := range r.m.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return n
}

// Delivery is the outcome of one produced record, as kafka.Delivery.
type Delivery struct {
	Topic       string
	Partition   int32
	Offset      int64 // valid when Err is nil and Unconfirmed is false
	Err         error
	Unconfirmed bool // reported written without an offset; the record may or may not be on the target
	Opaque      any
	At          time.Time
}

// PartitionError is a consumer error about one partition, e.g. an offset out of range.
type PartitionError = kmtype.PartitionError
