package source

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kmirror/kmirror/balance"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/planner"
)

// How often the planner judges the tasks' load, and how old a partition's reported rate may be to count: tasks
// publish every 2 s, and every 6 s at least when nothing changed.
const (
	balanceInterval = 10 * time.Second
	rateFreshness   = 15 * time.Second
)

// newBalancer returns the balancer of a run of a connector whose partitions move by load, nil otherwise.
func (c *sourceConnector) newBalancer(a TaskAssignment) *planner.Balancer {
	if a != AssignTopics || !c.cfg.Kmirror.TaskMovesEnabled {
		return nil
	}
	p := balance.DefaultParams()
	p.Sustain = time.Duration(c.cfg.Kmirror.TaskMovesSustainMs) * time.Millisecond
	return planner.NewBalancer(p)
}

// balance is the job that moves partitions between the connector's tasks by the byte rates they report
// (connectors/planner). Each move is published as a new task set, so the runtime hands the partitions over as
// it does for any task set change: the old runs drain and commit before the new ones claim.
func (r *sourcePlanner) balance(ctx context.Context) error {
	maxTasks := r.cfg.TasksMax
	assigned := planner.Tasks(r.order, maxTasks)
	owner := make(map[mirror.TopicPartition]int, len(r.order))
	for task, tps := range assigned {
		for _, tp := range tps {
			owner[tp] = task
		}
	}
	reported, err := r.env.PartitionRates(ctx)
	if err != nil {
		return plannerRetry(fmt.Errorf("read partition rates: %w", err))
	}
	rates := make(map[mirror.TopicPartition]float64, len(reported))
	for _, pr := range reported {
		tp := mirror.TopicPartition{Topic: pr.Topic, Partition: pr.Partition}
		if task, ok := owner[tp]; ok && task == pr.Task && pr.Age <= rateFreshness {
			rates[tp] = pr.BytesPerSecond
		}
	}
	now := time.Now()
	moves := r.balancer.Step(now, assigned, rates)
	if len(moves) == 0 {
		return nil
	}
	r.order = planner.Apply(r.order, moves)
	if r.lastMove == nil {
		r.lastMove = map[int]string{}
	}
	for _, m := range moves {
		record := mirror.PartitionMove{At: now.UTC().Format(time.RFC3339), FromTask: m.From, ToTask: m.To,
			Out: partitionNames(m.Hot), In: partitionNames(m.Cold), Reason: m.Reason(planner.TaskName)}
		b, err := json.Marshal(record)
		if err != nil {
			return fmt.Errorf("encode a partition move: %w", err)
		}
		r.lastMove[m.From], r.lastMove[m.To] = string(b), string(b)
		r.log.Info("moving partitions between tasks by load", "from_task", m.From, "to_task", m.To,
			"out", record.Out, "in", record.In, "reason", record.Reason)
		if r.metrics != nil {
			r.metrics.PartitionsMoved(r.name, "spread", len(m.Hot))
			r.metrics.PartitionsMoved(r.name, "pack", len(m.Cold))
		}
	}
	if err := r.publish(ctx); err != nil {
		return err
	}
	return r.retainStats(ctx)
}

func partitionNames(tps []mirror.TopicPartition) []string {
	out := make([]string, len(tps))
	for i, tp := range tps {
		out[i] = tp.String()
	}
	return out
}

// resume seeds a new run with the task set an earlier run published: the order it was dealt from and the last
// move of each task, so that a connector that restarts (a new config, its unit moving to another worker) keeps
// its tasks, and the moves by load, instead of dealing afresh and restarting every task. A task set that is
// not a round-robin deal of one list, or was dealt by another assignment (or by a kmirror that did not say),
// is ignored.
func (r *sourcePlanner) resume(ctx context.Context) {
	configs, err := r.env.TaskConfigs(ctx)
	if err != nil || len(configs) == 0 {
		return
	}
	tasks := make([][]mirror.TopicPartition, len(configs))
	total := 0
	for i, c := range configs {
		if c[mirror.TaskAssignedByConfig] != string(r.assignment) {
			return // dealt another way: switching the assignment deals afresh
		}
		tps, err := mirror.DecodeAssignedPartitions(c[mirror.TaskAssignedPartitionsConfig])
		if err != nil || len(tps) == 0 {
			return
		}
		tasks[i] = tps
		total += len(tps)
	}
	order := make([]mirror.TopicPartition, 0, total)
	for k := range total {
		t, i := k%len(tasks), k/len(tasks)
		if i >= len(tasks[t]) {
			return // not dealt round-robin: shares must shrink by one at most, the larger first
		}
		order = append(order, tasks[t][i])
	}
	r.order = order
	for i, c := range configs {
		if move, ok := c[mirror.TaskLastMoveConfig]; ok {
			if r.lastMove == nil {
				r.lastMove = map[int]string{}
			}
			r.lastMove[i] = move
		}
	}
}
