package source

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/mirror"
)

// topicsPerTask returns, per task, the topics its partitions belong to and how many partitions it has.
func topicsPerTask(assigned [][]mirror.TopicPartition) (topics []map[string]int, sizes []int) {
	for _, tps := range assigned {
		m := map[string]int{}
		for _, tp := range tps {
			m[tp.Topic]++
		}
		topics, sizes = append(topics, m), append(sizes, len(tps))
	}
	return topics, sizes
}

func manyTopics(n, partitions int) map[string]int {
	topics := make(map[string]int, n)
	for i := range n {
		topics[fmt.Sprintf("topic-%04d", i)] = partitions
	}
	return topics
}

// The scale case: many topics of equal size over few tasks. Round-robin over the MM2 order puts every topic on
// every task; the topics order gives each task whole topics, with the same even split.
func TestTopicAssignmentKeepsTopicsWhole(t *testing.T) {
	topics := manyTopics(80, 10)

	spread := mirror.AssignRoundRobin(partitionOrder(nil, topics, 8, AssignPartitions), 8)
	spreadTopics, spreadSizes := topicsPerTask(spread)
	for task, m := range spreadTopics {
		require.Len(t, m, 80, "task %d: MM2's spread gives every task a part of every topic", task)
	}

	grouped := mirror.AssignRoundRobin(partitionOrder(nil, topics, 8, AssignTopics), 8)
	groupedTopics, groupedSizes := topicsPerTask(grouped)
	require.Equal(t, spreadSizes, groupedSizes, "the same even split")
	tasksOf := map[string]int{}
	for task, m := range groupedTopics {
		for topic, n := range m {
			tasksOf[topic]++
			require.Equal(t, 10, n, "task %d holds topic %s whole", task, topic)
		}
	}
	require.Len(t, tasksOf, 80, "every topic is assigned")

	// Shares of 125 partitions do not divide into topics of 10: a topic is split only where a share ends.
	grouped = mirror.AssignRoundRobin(partitionOrder(nil, manyTopics(100, 10), 8, AssignTopics), 8)
	groupedTopics, _ = topicsPerTask(grouped)
	tasksOf = map[string]int{}
	for _, m := range groupedTopics {
		for topic := range m {
			tasksOf[topic]++
		}
	}
	for topic, n := range tasksOf {
		require.LessOrEqual(t, n, 2, "topic %s", topic)
	}
}

// Where whole topics do not fit the even split, they are split over as few tasks as the shares allow, and the
// split stays even.
func TestTopicAssignmentSplitsOnlyWhatDoesNotFit(t *testing.T) {
	topics := map[string]int{"a": 8, "b": 8, "c": 8}
	grouped := mirror.AssignRoundRobin(partitionOrder(nil, topics, 8, AssignTopics), 8)
	groupedTopics, sizes := topicsPerTask(grouped)
	require.Equal(t, []int{3, 3, 3, 3, 3, 3, 3, 3}, sizes)
	tasksOf := map[string]int{}
	for _, m := range groupedTopics {
		for topic := range m {
			tasksOf[topic]++
		}
	}
	for topic, n := range tasksOf {
		require.LessOrEqual(t, n, 4, "topic %s: 8 partitions in shares of 3 need 3 tasks, or 4 when a share is shared", topic)
	}

	// Fewer partitions than tasks: one each, as MM2 deals them.
	single := mirror.AssignRoundRobin(partitionOrder(nil, map[string]int{"a": 3}, 8, AssignTopics), 8)
	require.Len(t, single, 3)
}

// The stable order's promise holds under the topics order: listed partitions keep their positions, and topics
// that appear together land whole where the shares of their positions allow. A lone new topic is spread as MM2
// spreads it: its partitions take consecutive positions, which round-robin deals to consecutive tasks.
func TestTopicAssignmentNewTopicsKeepTheOldPlan(t *testing.T) {
	topics := manyTopics(16, 4)
	before := partitionOrder(nil, topics, 4, AssignTopics)
	for i := range 8 {
		topics[fmt.Sprintf("new-%d", i)] = 4
	}
	after := partitionOrder(before, topics, 4, AssignTopics)
	require.Equal(t, before, after[:len(before)], "listed partitions keep their positions")

	a, b := mirror.AssignRoundRobin(before, 4), mirror.AssignRoundRobin(after, 4)
	tasksOf := map[string]int{}
	for task := range a {
		require.Equal(t, a[task], b[task][:len(a[task])], "task %d keeps its partitions", task)
		for topic, n := range topicsPerTaskOne(b[task][len(a[task]):]) {
			tasksOf[topic]++
			require.Equal(t, 4, n, "task %d holds %s whole", task, topic)
		}
	}
	require.Len(t, tasksOf, 8)

	topics["lone"] = 4
	lone := mirror.AssignRoundRobin(partitionOrder(after, topics, 4, AssignTopics), 4)
	for task := range lone {
		require.Equal(t, "lone", lone[task][len(lone[task])-1].Topic, "task %d gets one partition of the lone topic", task)
	}
}

func topicsPerTaskOne(tps []mirror.TopicPartition) map[string]int {
	m, _ := topicsPerTask([][]mirror.TopicPartition{tps})
	return m[0]
}

func TestParseTaskAssignment(t *testing.T) {
	for in, want := range map[string]TaskAssignment{"": AssignTopics, "partitions": AssignPartitions, " Topics ": AssignTopics} {
		got, err := ParseTaskAssignment(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := ParseTaskAssignment("round-robin")
	require.ErrorContains(t, err, `"round-robin": want topics or partitions`)
}
