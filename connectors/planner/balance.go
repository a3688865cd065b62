package planner

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/kmirror/kmirror/balance"
	"github.com/kmirror/kmirror/connectors/mirror"
)

// Balancer moves partitions between a connector's tasks by their measured byte rates (package balance: the state
// machine, its hysteresis and its rules).
type Balancer = balance.Balancer[mirror.TopicPartition]

// Move is one exchange of partitions between two tasks.
type Move = balance.Move[mirror.TopicPartition]

// NewBalancer returns a Balancer of partitions with rules p.
func NewBalancer(p balance.Params) *Balancer {
	return balance.New(p, func(a, b mirror.TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	}, nil)
}

// TaskName renders a task index for Move.Reason.
func TaskName(task int) string { return fmt.Sprintf("task %d", task) }

// Apply returns order with the partitions of moves exchanged in place, so that Tasks deals each to its new task
// and every other partition keeps its position. order must be the list assigned was dealt from.
func Apply(order []mirror.TopicPartition, moves []Move) []mirror.TopicPartition {
	out := slices.Clone(order)
	pos := make(map[mirror.TopicPartition]int, len(out))
	for i, tp := range out {
		pos[tp] = i
	}
	for _, m := range moves {
		for i := range m.Hot {
			a, c := pos[m.Hot[i]], pos[m.Cold[i]]
			out[a], out[c] = out[c], out[a]
			pos[m.Hot[i]], pos[m.Cold[i]] = c, a
		}
	}
	return out
}
