package source

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/mirror"
)

// TestKnownPartitionsOfRoundRobinTasks: a consumer knows every partition of each topic it reads; the estimate from
// its assignment (per topic, the highest partition plus one) never says more than that, and with partitions
// dealt round-robin, as MM2 deals them, not much less.
func TestKnownPartitionsOfRoundRobinTasks(t *testing.T) {
	t.Parallel()
	for _, layout := range []struct{ topics, partitions, tasks int }{{100, 10, 8}, {1000, 10, 8}, {300, 1, 8}, {50, 3, 4}, {4, 64, 8}} {
		var all []mirror.TopicPartition
		for topic := range layout.topics {
			for p := range layout.partitions {
				all = append(all, mirror.TopicPartition{Topic: fmt.Sprintf("t%04d", topic), Partition: int32(p)})
			}
		}
		for i, tps := range mirror.AssignRoundRobin(all, layout.tasks) {
			topics := map[string]bool{}
			for _, tp := range tps {
				topics[tp.Topic] = true
			}
			known, est := len(topics)*layout.partitions, knownPartitions(tps)
			require.LessOrEqual(t, est, known, "%+v task %d", layout, i)
			require.GreaterOrEqual(t, est, known/2, "%+v task %d", layout, i)
		}
	}
	require.Equal(t, 0, knownPartitions(nil))
	x := []mirror.TopicPartition{{Topic: "x", Partition: 4}, {Topic: "y", Partition: 0}}
	require.Equal(t, 6, knownPartitions(x), "partitions 0-4 of x at least, and y's 0")
	require.True(t, statsOff(x, 5))
	require.False(t, statsOff(x, 6))
	require.False(t, statsOff(x, 0), "0: no limit")
}
