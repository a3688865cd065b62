package kafka_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// TestRoundTrip proves the harness clusters and the librdkafka wrappers: 10,000 keyed records with headers
// (duplicates and a null value among them) and tombstones go in and come back in order, byte for byte.
func TestRoundTrip(t *testing.T) {
	for _, cluster := range []string{"A", "B"} {
		t.Run(cluster, func(t *testing.T) {
			t.Parallel()
			topic := kafkatest.TopicName(t, "roundtrip")
			const partitions = 3
			kafkatest.CreateTopic(t, cluster, topic, partitions, nil)

			const n = 10000
			// Recent: the brokers' 7-day retention would soon delete records with older timestamps.
			base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
			var sent []kafkatest.Record
			for i := range n {
				r := kafkatest.Record{
					Topic: topic, Partition: int32(i % partitions),
					Key:       []byte(fmt.Sprintf("key-%05d", i)),
					Value:     []byte(fmt.Sprintf("value-%05d", i)),
					Timestamp: base.Add(time.Duration(i) * time.Millisecond),
					Headers: []kafka.Header{
						{Key: "h", Value: []byte(fmt.Sprint(i))},
						{Key: "h", Value: []byte("dup")},
						{Key: "null", Value: nil},
					},
				}
				if i%1000 == 999 {
					r.Value = nil // tombstone
				}
				sent = append(sent, r)
			}
			kafkatest.Produce(t, cluster, sent)

			got := kafkatest.Consume(t, cluster, topic, partitions, n, 2*time.Minute)
			require.Len(t, got, n)
			byPartition := map[int32][]kafkatest.Record{}
			for _, r := range got {
				byPartition[r.Partition] = append(byPartition[r.Partition], r)
			}
			for p := range int32(partitions) {
				var want []kafkatest.Record
				for _, r := range sent {
					if r.Partition == p {
						want = append(want, r)
					}
				}
				have := byPartition[p]
				require.Len(t, have, len(want), "partition %d", p)
				for i := range want {
					require.Equal(t, int64(i), have[i].Offset, "offsets are dense and in order")
					require.True(t, bytes.Equal(want[i].Key, have[i].Key), "key at %d/%d", p, i)
					require.Equal(t, want[i].Value == nil, have[i].Value == nil, "tombstone at %d/%d", p, i)
					require.True(t, bytes.Equal(want[i].Value, have[i].Value), "value at %d/%d", p, i)
					require.Equal(t, want[i].Timestamp.UnixMilli(), have[i].Timestamp.UnixMilli())
					require.Equal(t, want[i].Headers, have[i].Headers, "headers at %d/%d", p, i)
				}
			}
		})
	}
}
