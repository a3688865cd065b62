package planner_test

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/kmirror/kmirror/balance"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/planner"
)

// planning is a connector's partition planning over time: topics appear and grow, partitions report rates, and
// every refresh deals the order again, asks the balancer, and applies its moves.
type planning struct {
	maxTasks int
	grouped  bool
	topics   map[string]int
	order    []mirror.TopicPartition
	tasks    [][]mirror.TopicPartition
	bal      *planner.Balancer
	params   balance.Params
	now      time.Time
	lastMove map[int]time.Time // when each task last took part in a move
	rates    map[mirror.TopicPartition]float64
}

func newPlanning(t *rapid.T) *planning {
	p := &planning{
		maxTasks: rapid.IntRange(1, 8).Draw(t, "tasks.max"),
		grouped:  rapid.Bool().Draw(t, "grouped"),
		topics:   map[string]int{"t0": rapid.IntRange(1, 8).Draw(t, "partitions of t0")},
		params:   balance.DefaultParams(),
		now:      time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		lastMove: map[int]time.Time{},
		rates:    map[mirror.TopicPartition]float64{},
	}
	p.bal = planner.NewBalancer(p.params)
	p.deal(t)
	return p
}

func (p *planning) all() map[mirror.TopicPartition]bool {
	out := map[mirror.TopicPartition]bool{}
	for name, n := range p.topics {
		for i := range n {
			out[mirror.TopicPartition{Topic: name, Partition: int32(i)}] = true
		}
	}
	return out
}

// where maps each partition to its task.
func where(tasks [][]mirror.TopicPartition) map[mirror.TopicPartition]int {
	out := map[mirror.TopicPartition]int{}
	for i, tps := range tasks {
		for _, tp := range tps {
			out[tp] = i
		}
	}
	return out
}

// deal refreshes the order for the current topics: a partition placed before keeps its task when partitions
// were only added.
func (p *planning) deal(t *rapid.T) {
	before := where(p.tasks)
	sameCount := len(p.tasks) == min(p.maxTasks, len(p.all()))
	p.order = planner.Order(p.order, p.topics, p.maxTasks, p.grouped)
	p.tasks = planner.Tasks(p.order, p.maxTasks)
	if !sameCount {
		return // the task count grew with the partitions: the deal spreads over the new tasks
	}
	after := where(p.tasks)
	for tp, task := range before {
		if after[tp] != task {
			t.Fatalf("%v moved from task %d to %d though partitions were only added", tp, task, after[tp])
		}
	}
}

func (p *planning) grow(t *rapid.T) {
	if rapid.Bool().Draw(t, "new topic") && len(p.topics) < 6 {
		p.topics[fmt.Sprintf("t%d", len(p.topics))] = rapid.IntRange(1, 8).Draw(t, "partitions")
	} else {
		name := rapid.SampledFrom(sortedNames(p.topics)).Draw(t, "topic")
		p.topics[name] += rapid.IntRange(1, 4).Draw(t, "more partitions")
	}
	p.deal(t)
}

func sortedNames(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for i := range len(m) {
		out = append(out, fmt.Sprintf("t%d", i))
	}
	return out
}

func (p *planning) measure(t *rapid.T) {
	for tp := range p.all() {
		p.rates[tp] = float64(rapid.IntRange(0, 4<<20).Draw(t, "rate"))
	}
}

// balanceStep asks the balancer and applies its moves: every move exchanges partitions one for one between two
// tasks that take part in no other move of the step and in none during the cooldown before, lowers the giver's
// load, and moves exactly its partitions.
func (p *planning) balanceStep(t *rapid.T) {
	p.now = p.now.Add(time.Duration(rapid.IntRange(1, 30).Draw(t, "seconds")) * time.Second)
	before := where(p.tasks)
	moves := p.bal.Step(p.now, p.tasks, p.rates)
	inStep := map[int]bool{}
	moved := map[mirror.TopicPartition]int{}
	for _, m := range moves {
		for _, task := range []int{m.From, m.To} {
			if inStep[task] {
				t.Fatalf("task %d takes part in two moves of one step: %+v", task, moves)
			}
			inStep[task] = true
			if last, ok := p.lastMove[task]; ok && p.now.Sub(last) < p.params.Cooldown {
				t.Fatalf("task %d moved again %s after its last move, within the cooldown", task, p.now.Sub(last))
			}
			p.lastMove[task] = p.now
		}
		if len(m.Hot) == 0 || len(m.Hot) != len(m.Cold) {
			t.Fatalf("a move is not one for one: %d hot, %d cold", len(m.Hot), len(m.Cold))
		}
		if max(m.FromAfter, m.ToAfter) >= m.FromLoad {
			t.Fatalf("a move does not lower the larger load: %.0f -> %.0f / %.0f", m.FromLoad, m.FromAfter, m.ToAfter)
		}
		for i := range m.Hot {
			if before[m.Hot[i]] != m.From || before[m.Cold[i]] != m.To {
				t.Fatalf("move %d->%d names partitions of other tasks: %v, %v", m.From, m.To, m.Hot[i], m.Cold[i])
			}
			moved[m.Hot[i]], moved[m.Cold[i]] = m.To, m.From
		}
	}
	p.order = planner.Apply(p.order, moves)
	p.tasks = planner.Tasks(p.order, p.maxTasks)
	for tp, task := range where(p.tasks) {
		want, ok := moved[tp]
		if !ok {
			want = before[tp]
		}
		if task != want {
			t.Fatalf("%v is on task %d after the moves, want %d", tp, task, want)
		}
	}
}

// check: every partition on exactly one task, min(tasks.max, partitions) tasks, shares even to within one.
func (p *planning) check(t *rapid.T) {
	all := p.all()
	if want := min(p.maxTasks, len(all)); len(p.tasks) != want {
		t.Fatalf("%d tasks for %d partitions and tasks.max %d", len(p.tasks), len(all), p.maxTasks)
	}
	seen := map[mirror.TopicPartition]bool{}
	lo, hi := len(all), 0
	for _, tps := range p.tasks {
		lo, hi = min(lo, len(tps)), max(hi, len(tps))
		for _, tp := range tps {
			if seen[tp] || !all[tp] {
				t.Fatalf("%v is dealt twice or does not exist", tp)
			}
			seen[tp] = true
		}
	}
	if len(seen) != len(all) {
		t.Fatalf("%d of %d partitions dealt", len(seen), len(all))
	}
	if hi-lo > 1 {
		t.Fatalf("uneven shares: %d to %d partitions", lo, hi)
	}
}

func TestPlanningKeepsEveryPartitionOnOneTaskEvenlyAndMovesBounded(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := newPlanning(t)
		t.Repeat(map[string]func(*rapid.T){
			"grow":    p.grow,
			"measure": p.measure,
			"balance": p.balanceStep,
			"":        p.check,
		})
	})
}
