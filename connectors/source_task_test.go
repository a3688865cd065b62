package connectors

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
)

// TestPipelineDefaultsShareABudget checks that a connector's tasks divide its queue budget, within the
// per-task bounds, and that what the user set is kept.
func TestPipelineDefaultsShareABudget(t *testing.T) {
	for _, tc := range []struct {
		tasks                    int
		producerKiB, prefetchKiB string
	}{
		{0, "32768", "16384"},
		{1, "32768", "16384"},
		{2, "32768", "16384"},
		{4, "16384", "8192"},
		{8, "8192", "4096"},
		{100, "8192", "4096"},
	} {
		consumer, producer := map[string]string{}, map[string]string{}
		PipelineDefaults(consumer, producer, tc.tasks)
		require.Equal(t, map[string]string{"queue.buffering.max.kbytes": tc.producerKiB, "queue.buffering.max.messages": "0"}, producer, "tasks=%d", tc.tasks)
		require.Equal(t, map[string]string{"queued.max.messages.kbytes": tc.prefetchKiB, "fetch.queue.backoff.ms": "10"}, consumer, "tasks=%d", tc.tasks)
	}

	consumer := map[string]string{"queued.max.messages.kbytes": "65536", "fetch.queue.backoff.ms": "500"}
	producer := map[string]string{"queue.buffering.max.kbytes": "1024", "queue.buffering.max.messages": "1000"}
	PipelineDefaults(consumer, producer, 8)
	require.Equal(t, map[string]string{"queued.max.messages.kbytes": "65536", "fetch.queue.backoff.ms": "500"}, consumer)
	require.Equal(t, map[string]string{"queue.buffering.max.kbytes": "1024", "queue.buffering.max.messages": "1000"}, producer)
}

// TestUnconfirmedDeliveryIsNotCountedAsWritten: librdkafka reports success without an offset for records it
// assumes written because a later request succeeded. The fault suite saw such records missing on the target
// (the broker had taken the later request as the producer's first), so the task must neither count them nor
// anything after them, and must fail the pipeline so that it sends them again.
func TestUnconfirmedDeliveryIsNotCountedAsWritten(t *testing.T) {
	p := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 0}, "A.t", 9, "")
	r := &sourceRun{log: slog.New(slog.DiscardHandler), sourceAlias: "A", targetAlias: "B",
		byRemote: map[string][]*sourcePartition{"A.t": {p}}}
	for off := int64(10); off < 13; off++ {
		p.forwarded(off, 0, 1, 1)
	}
	r.delivered(kafka.Delivery{Topic: "A.t", Partition: 0, Offset: 20}, nil)
	r.delivered(kafka.Delivery{Topic: "A.t", Partition: 0, Offset: int64(ckafkaOffsetInvalid), Unconfirmed: true}, nil)
	r.delivered(kafka.Delivery{Topic: "A.t", Partition: 0, Offset: 22}, nil)

	acked, _ := p.progress()
	require.Equal(t, int64(10), acked, "only the confirmed record counts")
	f := r.failure.Load()
	require.NotNil(t, f, "the pipeline fails")
	var pe *pipelineError
	require.ErrorAs(t, *f, &pe, "a restart of the pipeline sends the record again")
	require.ErrorIs(t, *f, errUnconfirmedDelivery)
	require.Contains(t, (*f).Error(), "partition 0 offset 11")
}

// ckafkaOffsetInvalid is librdkafka's RD_KAFKA_OFFSET_INVALID, the offset of an implicitly acknowledged record.
const ckafkaOffsetInvalid = -1001
