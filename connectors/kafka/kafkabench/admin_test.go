package kafkabench_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkabench"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// TestEndOffsetsAndPartitionEndsAgree: both ways of reading partition ends answer the records written, and leave
// out partitions they cannot read (a missing topic's).
func TestEndOffsetsAndPartitionEndsAgree(t *testing.T) {
	topic := kafkatest.TopicName(t, "bench-ends")
	kafkatest.CreateTopic(t, "A", topic, 2, nil)
	var recs []kafkatest.Record
	for i := range 5 {
		recs = append(recs, kafkatest.Record{Topic: topic, Partition: int32(i % 2), Value: []byte{byte(i)}})
	}
	kafkatest.Produce(t, "A", recs)

	a, err := kafkabench.NewAdmin(kafkatest.Bootstrap(t, "A"))
	require.NoError(t, err)
	t.Cleanup(a.Close)
	want := map[kafkabench.TP]int64{{Topic: topic, Partition: 0}: 3, {Topic: topic, Partition: 1}: 2}

	ends, err := a.EndOffsets(context.Background(), map[string]int{topic: 2, "missing-" + topic: 1})
	require.NoError(t, err)
	require.Equal(t, want, ends)

	ends, err = a.PartitionEnds(context.Background(), []kafkabench.TP{{Topic: topic, Partition: 0}, {Topic: topic, Partition: 1}})
	require.NoError(t, err)
	require.Equal(t, want, ends)

	ends, err = a.PartitionEnds(context.Background(), nil)
	require.NoError(t, err)
	require.Empty(t, ends)
}
