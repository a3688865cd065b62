package planner

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/mirror"
)

// randomTopics returns up to maxTopics topics of 1..maxPartitions partitions, skewed towards small ones as real
// clusters are.
func randomTopics(rng *rand.Rand, maxTopics, maxPartitions int) map[string]int {
	topics := map[string]int{}
	for i := range 1 + rng.IntN(maxTopics) {
		n := 1 + rng.IntN(maxPartitions)
		if rng.IntN(3) > 0 {
			n = 1 + rng.IntN(min(maxPartitions, 4))
		}
		topics[fmt.Sprintf("t%03d", i)] = n
	}
	return topics
}

func ownerOf(tasks [][]mirror.TopicPartition) map[mirror.TopicPartition]int {
	owner := map[mirror.TopicPartition]int{}
	for t, tps := range tasks {
		for _, tp := range tps {
			owner[tp] = t
		}
	}
	return owner
}

// requireEvenAndComplete checks the deal's invariants: n = min(maxTasks, partitions) tasks, shares that differ by
// one at most, and every partition of topics on exactly one task.
func requireEvenAndComplete(t *testing.T, tasks [][]mirror.TopicPartition, topics map[string]int, maxTasks int, msg string) {
	t.Helper()
	total := 0
	for _, n := range topics {
		total += n
	}
	require.Len(t, tasks, min(maxTasks, total), msg)
	seen := map[mirror.TopicPartition]bool{}
	lo, hi := total, 0
	for _, tps := range tasks {
		lo, hi = min(lo, len(tps)), max(hi, len(tps))
		for _, tp := range tps {
			require.False(t, seen[tp], "%s: %v twice", msg, tp)
			require.Less(t, int(tp.Partition), topics[tp.Topic], "%s: %v does not exist", msg, tp)
			seen[tp] = true
		}
	}
	require.Len(t, seen, total, "%s: every partition once", msg)
	if len(tasks) > 0 {
		require.LessOrEqual(t, hi-lo, 1, "%s: shares even ±1", msg)
	}
}

// pieces counts, over all topics, the tasks holding a part of each topic beyond the first.
func pieces(tasks [][]mirror.TopicPartition) int {
	holders := map[string]map[int]bool{}
	for task, tps := range tasks {
		for _, tp := range tps {
			if holders[tp.Topic] == nil {
				holders[tp.Topic] = map[int]bool{}
			}
			holders[tp.Topic][task] = true
		}
	}
	extra := 0
	for _, h := range holders {
		extra += len(h) - 1
	}
	return extra
}

// Property: a first deal is even, complete, and splits topics only where shares end: each split of a topic
// fills a task's share, so all topics together sit on at most n more tasks than there are topics, where MM2's
// spread puts a topic of p partitions on min(p, n) tasks.
func TestDealIsEvenCompleteAndGrouped(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		topics := randomTopics(rng, 60, 40)
		maxTasks := 1 + rng.IntN(24)
		msg := fmt.Sprintf("case %d: %d topics, tasks.max %d", i, len(topics), maxTasks)
		grouped := Tasks(Order(nil, topics, maxTasks, true), maxTasks)
		requireEvenAndComplete(t, grouped, topics, maxTasks, msg)
		require.LessOrEqual(t, pieces(grouped), len(grouped), msg)

		spread := Tasks(Order(nil, topics, maxTasks, false), maxTasks)
		requireEvenAndComplete(t, spread, topics, maxTasks, msg)
		require.LessOrEqual(t, pieces(grouped), pieces(spread), msg)
	}
}

// Property: once there are at least as many partitions as tasks, partitions that appear (new topics, grown
// topics) never move a partition already placed, and the deal stays even and complete.
func TestDealIsStableWhenPartitionsAppear(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 300 {
		topics := randomTopics(rng, 40, 30)
		maxTasks := 1 + rng.IntN(16)
		grouped := rng.IntN(4) > 0
		order := Order(nil, topics, maxTasks, grouped)
		for step := range 5 {
			msg := fmt.Sprintf("case %d step %d, grouped %v", i, step, grouped)
			before := ownerOf(Tasks(order, maxTasks))
			if rng.IntN(2) == 0 {
				topics[fmt.Sprintf("new%d-%d", i, step)] = 1 + rng.IntN(12)
			} else {
				for topic := range topics {
					topics[topic] += 1 + rng.IntN(3)
					break
				}
			}
			order = Order(order, topics, maxTasks, grouped)
			after := Tasks(order, maxTasks)
			requireEvenAndComplete(t, after, topics, maxTasks, msg)
			if len(before) >= maxTasks {
				moved := 0
				owner := ownerOf(after)
				for tp, task := range before {
					if owner[tp] != task {
						moved++
					}
				}
				require.Zero(t, moved, "%s: placed partitions stay", msg)
			}
		}
	}
}

// Example of the scale case the default exists for: 1,000 topics of 10 partitions over 8 tasks. Grouped, every
// task holds whole topics (125 of them); MM2's spread gives every task a part of all 1,000.
func TestDealScaleCaseKeepsTopicsWhole(t *testing.T) {
	topics := map[string]int{}
	for i := range 1000 {
		topics[fmt.Sprintf("topic-%04d", i)] = 10
	}
	grouped := Tasks(Order(nil, topics, 8, true), 8)
	spread := Tasks(Order(nil, topics, 8, false), 8)
	require.Zero(t, pieces(grouped))
	require.Equal(t, 1000*7, pieces(spread))
}
