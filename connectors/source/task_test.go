package source

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

// TestUnconfirmedDeliveryBeforeAnyConfirmedOneFails: librdkafka reports success without an offset for
// records it assumes written because a later request succeeded. The fault suite saw such records missing on
// the target: the partition's first requests of a new producer, where the broker had no state for it and took
// the later request as the first. So before any delivery of the pipeline's producer came with an offset, the
// task counts neither the record nor anything after it, and fails the pipeline so that it sends them again.
func TestUnconfirmedDeliveryBeforeAnyConfirmedOneFails(t *testing.T) {
	p, r := unconfirmedFixture(3)
	r.delivered(kafka.Delivery{Topic: "A.t", Partition: 0, Offset: int64(ckafkaOffsetInvalid), Unconfirmed: true}, nil)
	r.delivered(kafka.Delivery{Topic: "A.t", Partition: 0, Offset: 21}, nil)
	r.delivered(kafka.Delivery{Topic: "A.t", Partition: 0, Offset: 22}, nil)

	acked, _ := p.progress()
	require.Equal(t, int64(9), acked, "nothing counts: the stored offset stays")
	f := r.failure.Load()
	require.NotNil(t, f, "the pipeline fails")
	var pe *pipelineError
	require.ErrorAs(t, *f, &pe, "a restart of the pipeline sends the record again")
	require.ErrorIs(t, *f, errUnconfirmedDelivery)
	require.Contains(t, (*f).Error(), "partition 0 offset 10")
}

// TestUnconfirmedDeliveryAfterAConfirmedOneCounts: once the producer's delivery for the partition came with
// an offset, the broker holds the producer's state and refuses a request out of sequence, so a later
// request's success proves the earlier one written: the record counts, without a place in the offset map.
func TestUnconfirmedDeliveryAfterAConfirmedOneCounts(t *testing.T) {
	p, r := unconfirmedFixture(3)
	r.delivered(kafka.Delivery{Topic: "A.t", Partition: 0, Offset: 20}, nil)
	r.delivered(kafka.Delivery{Topic: "A.t", Partition: 0, Offset: int64(ckafkaOffsetInvalid), Unconfirmed: true}, nil)
	r.delivered(kafka.Delivery{Topic: "A.t", Partition: 0, Offset: 22}, nil)

	acked, _ := p.progress()
	require.Equal(t, int64(12), acked, "all three count")
	require.Nil(t, r.failure.Load(), "the pipeline goes on")
	_, _, snap := p.progressWithRanges()
	require.NotEmpty(t, snap.Ranges)
	for _, rg := range snap.Ranges {
		require.False(t, rg.SourceStart <= 11 && 11 <= rg.SourceEnd, "source offset 11 has no target offset: %+v", rg)
	}

	// A new pipeline (a new producer) starts unconfirmed again.
	p.reset()
	p.forwarded(13, 0, 1, 1)
	r.delivered(kafka.Delivery{Topic: "A.t", Partition: 0, Offset: int64(ckafkaOffsetInvalid), Unconfirmed: true}, nil)
	require.NotNil(t, r.failure.Load())
}

// unconfirmedFixture is a run with one partition whose stored offset is 9 and n records forwarded from 10 on.
func unconfirmedFixture(n int) (*sourcePartition, *sourceRun) {
	p := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 0}, "A.t", 9, "")
	r := &sourceRun{log: slog.New(slog.DiscardHandler), sourceAlias: "A", targetAlias: "B", txn: atLeastOnce{},
		byRemote: map[string][]*sourcePartition{"A.t": {p}}}
	for off := int64(10); off < 10+int64(n); off++ {
		p.forwarded(off, 0, 1, 1)
	}
	return p, r
}

// ckafkaOffsetInvalid is librdkafka's RD_KAFKA_OFFSET_INVALID, the offset of an implicitly acknowledged record.
const ckafkaOffsetInvalid = -1001
