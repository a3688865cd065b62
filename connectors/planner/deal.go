package planner

import (
	"cmp"
	"slices"

	"github.com/kmirror/kmirror/connectors/mirror"
)

// Order returns the flat list of source partitions that tasks are dealt from round-robin (Tasks), given the
// previous list and the replicated topics now on the source (topic -> partition count).
//
// Why the order is kept stable: partitions are dealt round-robin, the k-th going to task k mod n, so a
// partition's task depends only on its position in this list. MM2 rebuilds the list from a hash map on every
// refresh, so its order is effectively arbitrary and one new topic can move partitions between every task;
// Connect then restarts every task whose config changed, and each restart tears down a consumer and a
// producer and re-reads offsets. The list is kept instead: partitions still present keep their positions
// (and so their tasks, including where a load move put them), partitions that appeared are appended, and
// partitions that disappeared are dropped. A new topic or a grown topic then changes only the tasks that
// receive the new partitions. Removing partitions shifts the ones after them, which is the price of never
// leaving holes. Any order is valid MM2 behaviour: MM2 promises round-robin dealing, not an order.
//
// grouped chooses how the appended partitions are arranged: false lists them by topic, then partition, so
// that dealing spreads every topic over as many tasks as it has partitions (MM2's spread); true packs them
// (dealTopics) so that dealing gives each topic to as few of the n = min(maxTasks, partitions) tasks as an
// even split allows.
func Order(previous []mirror.TopicPartition, topics map[string]int, maxTasks int, grouped bool) []mirror.TopicPartition {
	kept, added := keptAndAdded(previous, topics)
	if grouped {
		added = dealTopics(len(kept), added, min(maxTasks, len(kept)+len(added)))
	}
	return append(kept, added...)
}

// Tasks deals order to n = min(maxTasks, len(order)) tasks, the k-th partition to task k mod n, as MM2 deals
// them (mirror.AssignRoundRobin): every task gets an even share, ±1.
func Tasks(order []mirror.TopicPartition, maxTasks int) [][]mirror.TopicPartition {
	return mirror.AssignRoundRobin(order, maxTasks)
}

// keptAndAdded splits Order's list: the partitions of previous still present, in their order, and those that
// appeared, sorted by topic, then partition.
func keptAndAdded(previous []mirror.TopicPartition, topics map[string]int) (order, added []mirror.TopicPartition) {
	order = make([]mirror.TopicPartition, 0, len(previous))
	kept := make(map[mirror.TopicPartition]bool, len(previous))
	for _, tp := range previous {
		if n, ok := topics[tp.Topic]; ok && int(tp.Partition) < n && !kept[tp] {
			kept[tp] = true
			order = append(order, tp)
		}
	}
	for topic, n := range topics {
		for p := range n {
			if tp := (mirror.TopicPartition{Topic: topic, Partition: int32(p)}); !kept[tp] {
				added = append(added, tp)
			}
		}
	}
	slices.SortFunc(added, func(a, b mirror.TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return order, added
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
