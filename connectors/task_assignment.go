package connectors

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kmirror/kmirror/connectors/mirror"
)

// TaskAssignment says how a source connector's partitions are spread over its tasks (worker option
// --task-assignment). Either way the partitions are dealt round-robin from one list, as MM2 deals them; the
// options differ in the order of the partitions that list gains, which MM2 leaves unspecified.
type TaskAssignment string

const (
	// AssignPartitions, the default, lists new partitions by topic, then partition, so that round-robin
	// dealing spreads every topic over as many tasks as it has partitions (up to tasks.max): MM2's spread,
	// which shares a hot topic among the most pipelines.
	AssignPartitions TaskAssignment = "partitions"
	// AssignTopics lists new partitions so that round-robin dealing gives each topic to as few tasks as an even
	// split allows (dealTopics). A librdkafka client keeps an object for every partition of every topic it
	// reads or writes, assigned or not, and its producer walks them all on each wake-up: with 1,000 topics of
	// 10 partitions over 8 tasks, the MM2 spread has every task's two clients hold all 10,000 partitions,
	// and keeping topics whole cuts that eightfold (docs/benchmarks.md, Scale). The price: a hot topic then
	// shares one task's pipeline instead of spreading over many.
	AssignTopics TaskAssignment = "topics"
)

// ParseTaskAssignment reads a --task-assignment value ("" is the default, partitions).
func ParseTaskAssignment(s string) (TaskAssignment, error) {
	switch a := TaskAssignment(strings.ToLower(strings.TrimSpace(s))); a {
	case "":
		return AssignPartitions, nil
	case AssignPartitions, AssignTopics:
		return a, nil
	}
	return "", fmt.Errorf("task assignment %q: want partitions or topics", s)
}

// partitionOrder is the list tasks are dealt from under assignment a: stablePartitionOrder, with the
// partitions that appeared since previous arranged by dealTopics under AssignTopics. Partitions already
// listed keep their positions either way, so a new topic changes only the tasks that receive it.
func partitionOrder(previous []mirror.TopicPartition, topics map[string]int, maxTasks int, a TaskAssignment) []mirror.TopicPartition {
	kept, added := keptAndAdded(previous, topics)
	if a == AssignTopics {
		added = dealTopics(len(kept), added, min(maxTasks, len(kept)+len(added)))
	}
	return append(kept, added...)
}

// dealTopics orders the partitions added (sorted by topic, then partition) that will sit at positions start..
// of the list dealt round-robin to n tasks, so that each topic lands on as few tasks as possible. Round-robin
// fixes how many of these positions each task receives (an even split), so the topics are packed into those
// shares: largest topic first, each into the task with the least room that still holds it whole, or, when no
// task does, split over the tasks with the most room. Position k then takes the next partition packed for task
// k mod n.
func dealTopics(start int, added []mirror.TopicPartition, n int) []mirror.TopicPartition {
	if n <= 1 || len(added) == 0 {
		return added
	}
	room := make([]int, n)
	for k := start; k < start+len(added); k++ {
		room[k%n]++
	}
	var runs [][]mirror.TopicPartition // one per topic, in the order added lists them
	for i := 0; i < len(added); {
		j := i + 1
		for j < len(added) && added[j].Topic == added[i].Topic {
			j++
		}
		runs = append(runs, added[i:j])
		i = j
	}
	slices.SortStableFunc(runs, func(a, b []mirror.TopicPartition) int { return len(b) - len(a) })
	packed := make([][]mirror.TopicPartition, n)
	for _, rest := range runs {
		for len(rest) > 0 {
			t := roomFor(room, len(rest))
			k := min(room[t], len(rest))
			packed[t] = append(packed[t], rest[:k]...)
			room[t] -= k
			rest = rest[k:]
		}
	}
	out := make([]mirror.TopicPartition, 0, len(added))
	for k := start; k < start+len(added); k++ {
		t := k % n
		out = append(out, packed[t][0])
		packed[t] = packed[t][1:]
	}
	return out
}

// roomFor picks the task for need partitions of one topic: the one with the least room that holds them all,
// or the one with the most room (the lowest index among equals).
func roomFor(room []int, need int) int {
	fit, most := -1, 0
	for t, r := range room {
		if r >= need && (fit < 0 || r < room[fit]) {
			fit = t
		}
		if r > room[most] {
			most = t
		}
	}
	if fit >= 0 {
		return fit
	}
	return most
}
