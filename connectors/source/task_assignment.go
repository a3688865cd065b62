package source

import (
	"fmt"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/planner"
)

// TaskAssignment says how a source connector's partitions are spread over its tasks (worker option
// --task-assignment, connector key kmirror.task.assignment). Either way every task gets an even share (±1),
// dealt round-robin from one list as MM2 deals them; the options differ in the order of the partitions that
// list gains, which MM2 leaves unspecified, and in whether partitions then move by measured load.
type TaskAssignment string

const (
	// AssignTopics, the default, lists new partitions so that round-robin dealing gives each topic to as few
	// tasks as an even split allows, then moves partitions between tasks by the byte rates the tasks measure
	// (planner.Balancer): hot partitions apart, cold ones packed. A librdkafka client keeps an object for every
	// partition of every topic it reads or writes, assigned or not, and its producer walks them all on each
	// wake-up: with 1,000 topics of 10 partitions over 8 tasks, MM2's spread has every task's two clients hold
	// all 10,000 partitions, and keeping topics whole cuts that eightfold (docs/partitions.md). The moves give
	// back what grouping alone would cost a hot topic: sharing one task's pipeline.
	AssignTopics TaskAssignment = mirrorconfig.TaskAssignmentTopics
	// AssignPartitions lists new partitions by topic, then partition, so that round-robin dealing spreads every
	// topic over as many tasks as it has partitions (up to tasks.max): MM2's spread, never moved by load, for
	// users whose tooling expects MM2's placement.
	AssignPartitions TaskAssignment = mirrorconfig.TaskAssignmentPartitions
)

// ParseTaskAssignment reads a --task-assignment or kmirror.task.assignment value ("" is the default, topics).
func ParseTaskAssignment(s string) (TaskAssignment, error) {
	if a, ok := mirrorconfig.ParseChoice(s, AssignTopics, AssignPartitions, AssignTopics); ok {
		return a, nil
	}
	return "", fmt.Errorf("task assignment %q: want topics or partitions", s)
}

// partitionOrder is the list tasks are dealt from under assignment a (planner.Order).
func partitionOrder(previous []mirror.TopicPartition, topics map[string]int, maxTasks int, a TaskAssignment) []mirror.TopicPartition {
	return planner.Order(previous, topics, maxTasks, a == AssignTopics)
}
