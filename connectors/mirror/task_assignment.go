package mirror

import (
	"fmt"
	"strings"
)

// Task config keys written by the connectors' task planning.
const (
	TaskAssignedPartitionsConfig = "task.assigned.partitions"
	TaskAssignedGroupsConfig     = "task.assigned.groups"
	TaskIndexConfig              = "task.index"
	// TaskLastMoveConfig is kmirror's: the last move by measured load that changed the task's partitions
	// (a JSON PartitionMove), kept in the config so that any worker can show it and a new run carry it on.
	TaskLastMoveConfig = "kmirror.task.last.move"
	// TaskAssignedByConfig is kmirror's: the task assignment (topics, partitions) the task set was dealt by, so
	// that a new run carries on only from a set dealt the way it deals.
	TaskAssignedByConfig = "kmirror.task.assigned.by"
)

// PartitionMove is one hand-over between two tasks made by measured load: Out went From -> To and In To -> From.
type PartitionMove struct {
	At       string   `json:"at"` // RFC 3339
	FromTask int      `json:"from_task"`
	ToTask   int      `json:"to_task"`
	Out      []string `json:"out"` // "topic-partition"
	In       []string `json:"in"`
	Reason   string   `json:"reason"`
}

// AssignRoundRobin deals source partitions to n = min(maxTasks, len(tps)) tasks: the k-th partition goes
// to task k mod n (MirrorSourceConnector.taskConfigs). Dealing, rather than cutting contiguous chunks,
// spreads the partitions of one topic over all tasks. It returns nil when there is nothing to assign or
// maxTasks < 1.
func AssignRoundRobin(tps []TopicPartition, maxTasks int) [][]TopicPartition {
	n := min(maxTasks, len(tps))
	if n < 1 {
		return nil
	}
	tasks := make([][]TopicPartition, n)
	for k, tp := range tps {
		tasks[k%n] = append(tasks[k%n], tp)
	}
	return tasks
}

// EncodeAssignedPartitions formats a task.assigned.partitions value: "topic-partition" joined with
// commas.
func EncodeAssignedPartitions(tps []TopicPartition) string {
	parts := make([]string, len(tps))
	for i, tp := range tps {
		parts[i] = tp.String()
	}
	return strings.Join(parts, ",")
}

// DecodeAssignedPartitions parses a task.assigned.partitions value as a LIST of "topic-partition"
// strings split at their last '-'. Java reads it into a set, so repeats are dropped; the order of first
// appearance is kept.
func DecodeAssignedPartitions(value string) ([]TopicPartition, error) {
	elements := ParseList(value)
	tps := make([]TopicPartition, 0, len(elements))
	seen := make(map[TopicPartition]bool, len(elements))
	for _, element := range elements {
		tp, err := ParseTopicPartition(element)
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", TaskAssignedPartitionsConfig, err)
		}
		if !seen[tp] {
			seen[tp] = true
			tps = append(tps, tp)
		}
	}
	return tps, nil
}

// GroupContiguous cuts items, in order, into numGroups contiguous groups whose sizes differ by at most
// one, the larger ones first (Connect's ConnectorUtils.groupPartitions, used for consumer groups). Some
// groups are empty when there are fewer items than groups. It returns nil when numGroups < 1.
func GroupContiguous[T any](items []T, numGroups int) [][]T {
	if numGroups < 1 {
		return nil
	}
	groups := make([][]T, numGroups)
	perGroup, leftover := len(items)/numGroups, len(items)%numGroups
	next := 0
	for g := range groups {
		size := perGroup
		if g < leftover {
			size++
		}
		groups[g] = append(make([]T, 0, size), items[next:next+size]...)
		next += size
	}
	return groups
}
