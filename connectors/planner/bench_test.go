package planner

import (
	"fmt"
	"testing"
	"time"

	"github.com/kmirror/kmirror/balance"
	"github.com/kmirror/kmirror/connectors/mirror"
)

// The internet-scale case: 100,000 partitions (10,000 topics of 10) over 400 tasks. The 50 workers hosting the
// tasks do not enter the partition planner: it runs once per connector, on the worker holding the connector.
const (
	benchTopics     = 10_000
	benchPartitions = 10
	benchTasks      = 400
)

func benchTopicMap() map[string]int {
	topics := make(map[string]int, benchTopics)
	for i := range benchTopics {
		topics[fmt.Sprintf("topic-%05d", i)] = benchPartitions
	}
	return topics
}

// BenchmarkDeal is a first plan: the whole grouped deal of 100,000 partitions.
func BenchmarkDeal(b *testing.B) {
	topics := benchTopicMap()
	for b.Loop() {
		Tasks(Order(nil, topics, benchTasks, true), benchTasks)
	}
}

// BenchmarkDealNewTopic is a refresh that finds one new topic: the tasks changed per change is the figure
// that costs restarts.
func BenchmarkDealNewTopic(b *testing.B) {
	topics := benchTopicMap()
	order := Order(nil, topics, benchTasks, true)
	before := Tasks(order, benchTasks)
	topics["topic-new"] = benchPartitions
	var changed int
	for b.Loop() {
		after := Tasks(Order(order, topics, benchTasks, true), benchTasks)
		changed = 0
		for t := range after {
			if len(after[t]) != len(before[t]) {
				changed++
			}
		}
	}
	b.ReportMetric(float64(changed), "tasks-changed/change")
}

// BenchmarkBalancerStep is one balancing round of 100,000 rates where nothing needs to move: what every
// connector pays every interval.
func BenchmarkBalancerStep(b *testing.B) {
	topics := benchTopicMap()
	order := Order(nil, topics, benchTasks, true)
	tasks := Tasks(order, benchTasks)
	rates := make(map[mirror.TopicPartition]float64, len(order))
	for _, tp := range order {
		rates[tp] = 100 << 10
	}
	bal := NewBalancer(balance.DefaultParams())
	now := t0
	for b.Loop() {
		now = now.Add(10 * time.Second)
		if moves := bal.Step(now, tasks, rates); len(moves) > 0 {
			b.Fatal("balanced rates moved partitions")
		}
	}
}

// BenchmarkBalancerHotTopics is a change of load: 20 topics turn hot (each partition 50x the others) while
// grouped, so 20 tasks carry them. It reports the time of a round that plans moves, how many moves (task
// hand-overs) and partitions moved until the moves end, and the rounds that took.
func BenchmarkBalancerHotTopics(b *testing.B) {
	topics := benchTopicMap()
	start := Order(nil, topics, benchTasks, true)
	rates := make(map[mirror.TopicPartition]float64, len(start))
	for _, tp := range start {
		rates[tp] = 100 << 10
	}
	for i := range 20 {
		for p := range benchPartitions {
			rates[mirror.TopicPartition{Topic: fmt.Sprintf("topic-%05d", i*397), Partition: int32(p)}] *= 50
		}
	}
	var moves, moved, rounds int
	var planning time.Duration
	for b.Loop() {
		order := start
		bal := NewBalancer(balance.DefaultParams())
		moves, moved, rounds, planning = 0, 0, 0, 0
		quiet := 0
		for now := t0; quiet < 12; now = now.Add(10 * time.Second) {
			began := time.Now()
			ms := bal.Step(now, Tasks(order, benchTasks), rates)
			if len(ms) == 0 {
				quiet++
				continue
			}
			planning += time.Since(began)
			quiet = 0
			rounds++
			moves += len(ms)
			for _, m := range ms {
				moved += 2 * len(m.Hot)
			}
			order = Apply(order, ms)
		}
	}
	b.ReportMetric(float64(moves), "moves/change")
	b.ReportMetric(float64(moved), "partitions-moved/change")
	b.ReportMetric(float64(rounds), "rounds-with-moves/change")
	if rounds > 0 {
		b.ReportMetric(float64(planning.Microseconds())/float64(rounds)/1000, "ms/round-with-moves")
	}
}
