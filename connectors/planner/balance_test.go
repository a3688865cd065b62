package planner

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/balance"
	"github.com/kmirror/kmirror/connectors/mirror"
)

const step = 10 * time.Second // how often the connector asks the balancer

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// hotTopic is the hot scenario: topics of 8 partitions, the first carrying share of the bytes, the rest sharing
// the remainder evenly; grouped over 8 tasks, so the hot topic sits inside one task.
func hotTopic(topics int, total, share float64) (map[string]int, map[mirror.TopicPartition]float64) {
	parts := map[string]int{}
	rates := map[mirror.TopicPartition]float64{}
	for i := range topics {
		name := fmt.Sprintf("t%02d", i)
		parts[name] = 8
		for p := range 8 {
			r := total * (1 - share) / float64((topics-1)*8)
			if i == 0 {
				r = total * share / 8
			}
			rates[mirror.TopicPartition{Topic: name, Partition: int32(p)}] = r
		}
	}
	return parts, rates
}

func loads(tasks [][]mirror.TopicPartition, rates map[mirror.TopicPartition]float64) (out []float64, mean float64) {
	for _, tps := range tasks {
		var l float64
		for _, tp := range tps {
			l += rates[tp]
		}
		out = append(out, l)
		mean += l
	}
	return out, mean / float64(len(tasks))
}

func squares(xs []float64) (s float64) {
	for _, x := range xs {
		s += x * x
	}
	return s
}

// run steps the balancer every 10 s for d with rates from at(now), applying its moves, and checks every move's
// invariants: shares stay even, each task in one move per step and not again within the cooldown.
func run(t *testing.T, b *Balancer, order []mirror.TopicPartition, maxTasks int, from time.Time, d time.Duration,
	at func(time.Time) map[mirror.TopicPartition]float64) ([]mirror.TopicPartition, []Move, time.Time) {
	t.Helper()
	var all []Move
	lastMove := map[int]time.Time{}
	now := from
	for ; now.Before(from.Add(d)); now = now.Add(step) {
		tasks := Tasks(order, maxTasks)
		moves := b.Step(now, tasks, at(now))
		inStep := map[int]bool{}
		for _, m := range moves {
			for _, task := range []int{m.From, m.To} {
				require.False(t, inStep[task], "task %d in two moves of one step", task)
				inStep[task] = true
				if last, ok := lastMove[task]; ok {
					require.GreaterOrEqual(t, now.Sub(last), b.Params().Cooldown, "task %d moved again within its cooldown", task)
				}
				lastMove[task] = now
			}
			require.Len(t, m.Cold, len(m.Hot))
			require.NotEmpty(t, m.Reason(TaskName))
			require.Less(t, squares([]float64{m.FromAfter, m.ToAfter}), squares([]float64{m.FromLoad, m.ToLoad}),
				"every move lowers the sum of squared loads")
			require.LessOrEqual(t, max(m.FromAfter, m.ToAfter), 0.9*m.FromLoad, "and the giver's by MinGain")
		}
		if len(moves) > 0 {
			order = Apply(order, moves)
			after := Tasks(order, maxTasks)
			for i := range after {
				require.Len(t, after[i], len(tasks[i]), "a move keeps every task's share")
			}
		}
		all = append(all, moves...)
	}
	return order, all, now
}

// randomGroupedDeal is the grouped first deal of random topics (of up to 16 partitions) over 2..taskSpan+1 tasks.
func randomGroupedDeal(rng *rand.Rand, maxTopics, taskSpan int) ([]mirror.TopicPartition, int) {
	maxTasks := 2 + rng.IntN(taskSpan)
	return Order(nil, randomTopics(rng, maxTopics, 16), maxTasks, true), maxTasks
}

func constant(r map[mirror.TopicPartition]float64) func(time.Time) map[mirror.TopicPartition]float64 {
	return func(time.Time) map[mirror.TopicPartition]float64 { return r }
}

// The hot scenario: one topic of 8 partitions carries 80% of 100 MiB/s among 50 topics, grouped onto one of 8
// tasks. Nothing moves before the minute is sustained; then the hot partitions are halved apart each round
// until each task holds one, and the moves stop.
func TestBalancerSpreadsAHotTopic(t *testing.T) {
	topics, rates := hotTopic(50, 100<<20, 0.8)
	order := Order(nil, topics, 8, true)
	tasks := Tasks(order, 8)
	require.Equal(t, 1, pieces(tasks[:1])+1, "the hot topic starts inside one task")

	b := NewBalancer(balance.DefaultParams())
	order, early, now := run(t, b, order, 8, t0, 60*time.Second, constant(rates))
	require.Empty(t, early, "nothing moves before the overload has lasted a minute")
	order, moves, _ := run(t, b, order, 8, now, 5*time.Minute, constant(rates))
	require.NotEmpty(t, moves)
	require.LessOrEqual(t, len(moves), 7, "a halving per round: 1+2+4 moves")
	require.Contains(t, moves[0].Reason(TaskName), "task ", "the reason names the task")

	hotOn := map[int]int{}
	for task, tps := range Tasks(order, 8) {
		for _, tp := range tps {
			if tp.Topic == "t00" {
				hotOn[task]++
			}
		}
	}
	require.Len(t, hotOn, 8, "each task carries one hot partition: %v", hotOn)
	l, mean := loads(Tasks(order, 8), rates)
	for task, x := range l {
		require.Less(t, x, 1.25*mean, "task %d", task)
	}
}

// Property: once balanced, ±20% noise on every rate at every sample moves nothing where no task comes near its
// threshold, and never keeps partitions moving anywhere (at most one move per task over half an hour).
func TestBalancerNoisyRatesNeverPingPong(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 50 {
		order, maxTasks := randomGroupedDeal(rng, 40, 14)
		base := map[mirror.TopicPartition]float64{}
		for _, tp := range order {
			base[tp] = 1 << 20
		}
		// Balance the base first: equal partition rates over uneven shares can leave a task at 1.3× the mean.
		b := NewBalancer(balance.DefaultParams())
		order, _, now := run(t, b, order, maxTasks, t0, 10*time.Minute, constant(base))
		noisy := func(time.Time) map[mirror.TopicPartition]float64 {
			r := map[mirror.TopicPartition]float64{}
			for tp, x := range base {
				r[tp] = x * (0.8 + 0.4*rng.Float64()) // ±20%, new every sample
			}
			return r
		}
		tasks, _ := loads(Tasks(order, maxTasks), base)
		_, mean := loads(Tasks(order, maxTasks), base)
		calm := true
		for _, x := range tasks {
			calm = calm && x*1.2 < mean*b.Params().Exit*0.8
		}
		_, moves, _ := run(t, b, order, maxTasks, now, 30*time.Minute, noisy)
		if calm {
			require.Empty(t, moves, "case %d: noise alone moves nothing", i)
		}
		require.LessOrEqual(t, len(moves), maxTasks, "case %d: noise does not keep moving partitions", i)
	}
}

// Property: with random constant rates (a tenth of the partitions 50x hotter), the moves end: none in the ten
// minutes after the first twenty.
func TestBalancerConverges(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 100 {
		order, maxTasks := randomGroupedDeal(rng, 30, 10)
		rates := map[mirror.TopicPartition]float64{}
		for _, tp := range order {
			rates[tp] = float64(10<<10 + rng.IntN(200<<10))
			if rng.IntN(10) == 0 {
				rates[tp] *= 50
			}
		}
		b := NewBalancer(balance.DefaultParams())
		order, _, now := run(t, b, order, maxTasks, t0, 20*time.Minute, constant(rates))
		_, late, _ := run(t, b, order, maxTasks, now, 10*time.Minute, constant(rates))
		require.Empty(t, late, "case %d: the moves have ended", i)
	}
}

// A task whose partitions do not all report a rate neither gives nor receives, and an idle connector moves
// nothing.
func TestBalancerNeedsMeasuredTasksAndLoad(t *testing.T) {
	topics, rates := hotTopic(50, 100<<20, 0.8)
	order := Order(nil, topics, 8, true)
	hot := Tasks(order, 8)[0]
	missing := map[mirror.TopicPartition]float64{}
	for tp, r := range rates {
		if tp != hot[len(hot)-1] {
			missing[tp] = r
		}
	}
	_, moves, _ := run(t, NewBalancer(balance.DefaultParams()), order, 8, t0, 5*time.Minute, constant(missing))
	require.Empty(t, moves, "the hot task is unmeasured")

	_, idle := hotTopic(50, 100<<10, 0.8) // 100 KiB/s in all: below the floor
	_, moves, _ = run(t, NewBalancer(balance.DefaultParams()), order, 8, t0, 5*time.Minute, constant(idle))
	require.Empty(t, moves)
}

// A spike that lifts a task above 1.5× the mean and falls back below 1.25× before the minute is out restarts the
// clock: the overload must last, judged by the smoothed rates.
func TestBalancerHysteresis(t *testing.T) {
	topics, hot := hotTopic(50, 100<<20, 0.5)
	order := Order(nil, topics, 8, true)
	_, calm := hotTopic(50, 100<<20, 1.0/50)
	flapping := func(now time.Time) map[mirror.TopicPartition]float64 {
		if d := now.Sub(t0) % (80 * time.Second); d >= 40*time.Second && d < 50*time.Second {
			return hot
		}
		return calm
	}
	_, moves, _ := run(t, NewBalancer(balance.DefaultParams()), order, 8, t0, 10*time.Minute, flapping)
	require.Empty(t, moves, "10 s hot, 70 s calm: never a sustained minute")

	// The same spikes held for good are moved once the minute has passed.
	_, moves, _ = run(t, NewBalancer(balance.DefaultParams()), order, 8, t0, 3*time.Minute, constant(hot))
	require.NotEmpty(t, moves)
	require.GreaterOrEqual(t, moves[0].HotFor, time.Minute)
}
