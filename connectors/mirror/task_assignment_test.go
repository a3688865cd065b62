package mirror

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func partitions(topic string, n int) []TopicPartition {
	tps := make([]TopicPartition, n)
	for i := range tps {
		tps[i] = TopicPartition{Topic: topic, Partition: int32(i)}
	}
	return tps
}

// MirrorSourceConnectorTest.testMirrorSourceConnectorTaskConfig: 3 tasks, topics of 8, 2 and 2 partitions.
func TestAssignRoundRobin(t *testing.T) {
	tps := append(append(partitions("t0", 8), partitions("t1", 2)...), partitions("t2", 2)...)
	tasks := AssignRoundRobin(tps, 3)
	require.Len(t, tasks, 3)
	require.Equal(t, "t0-0,t0-3,t0-6,t1-1", EncodeAssignedPartitions(tasks[0]))
	require.Equal(t, "t0-1,t0-4,t0-7,t2-0", EncodeAssignedPartitions(tasks[1]))
	require.Equal(t, "t0-2,t0-5,t1-0,t2-1", EncodeAssignedPartitions(tasks[2]))
}

func TestAssignRoundRobinNeverMoreTasksThanPartitions(t *testing.T) {
	tasks := AssignRoundRobin(partitions("t", 2), 5)
	require.Equal(t, [][]TopicPartition{{{"t", 0}}, {{"t", 1}}}, tasks)
	require.Nil(t, AssignRoundRobin(nil, 3))
	require.Nil(t, AssignRoundRobin(partitions("t", 2), 0))
}

func TestAssignedPartitionsRoundTrip(t *testing.T) {
	tps := []TopicPartition{{"my-topic", 0}, {"my-topic", 12}, {"a-b-c", 3}, {"plain", 7}}
	value := EncodeAssignedPartitions(tps)
	require.Equal(t, "my-topic-0,my-topic-12,a-b-c-3,plain-7", value)
	decoded, err := DecodeAssignedPartitions(value)
	require.NoError(t, err)
	require.Equal(t, tps, decoded)
}

func TestDecodeAssignedPartitions(t *testing.T) {
	decoded, err := DecodeAssignedPartitions("")
	require.NoError(t, err)
	require.Empty(t, decoded)

	decoded, err = DecodeAssignedPartitions(" a-1 , b-2 ,a-1")
	require.NoError(t, err)
	require.Equal(t, []TopicPartition{{"a", 1}, {"b", 2}}, decoded, "whitespace trimmed, repeats dropped")

	for _, bad := range []string{"a-1,,b-2", "a-1,", "nodash", "t-x"} {
		_, err := DecodeAssignedPartitions(bad)
		require.ErrorContains(t, err, TaskAssignedPartitionsConfig, bad)
	}
}

// ConnectorUtilsTest.testGroupPartitions.
func TestGroupContiguous(t *testing.T) {
	five := []int{1, 2, 3, 4, 5}
	require.Equal(t, [][]int{{1, 2, 3, 4, 5}}, GroupContiguous(five, 1))
	require.Equal(t, [][]int{{1, 2, 3}, {4, 5}}, GroupContiguous(five, 2))
	require.Equal(t, [][]int{{1, 2}, {3, 4}, {5}}, GroupContiguous(five, 3))
	require.Equal(t, [][]int{{1}, {2}, {3}, {4}, {5}}, GroupContiguous(five, 5))
	require.Equal(t, [][]int{{1}, {2}, {3}, {4}, {5}, {}, {}}, GroupContiguous(five, 7))
	require.Nil(t, GroupContiguous(five, 0))
}

func TestGroupContiguousDoesNotAliasInput(t *testing.T) {
	items := []string{"a", "b", "c", "d"}
	groups := GroupContiguous(items, 2)
	groups[0] = append(groups[0], "x")
	groups[1][0] = "y"
	require.Equal(t, []string{"a", "b", "c", "d"}, items)
}
