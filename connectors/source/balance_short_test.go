package source

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/balance"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/planner"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/metrics"
)

// When one task carries a hot topic for the sustained period, the planner exchanges its hot partitions for cold
// ones of other tasks: a new task set whose shares stay even, with the move and its reason in the configs of
// both tasks. Rates a task reports for partitions it no longer owns do not count.
func TestBalanceSpreadsAHotTopicKeepingSharesEven(t *testing.T) {
	ctx := context.Background()
	source := newFakeCluster(map[string]int{"hot": 4, "b": 4, "c": 4, "d": 4})
	config := fakePlannerConfig("hot|b|c|d")
	config["tasks.max"] = "4"
	config[mirrorconfig.TaskMovesSustainConfig] = "1000"
	r, env, logs := fakePlanner(t, config, source, newFakeCluster(map[string]int{}))
	require.NotNil(t, r.balancer, "topics are dealt whole, and move by load")
	params := balance.DefaultParams()
	params.Sustain = time.Millisecond // the shortest a config allows is a second
	r.balancer = planner.NewBalancer(params)
	r.metrics = metrics.New()
	require.NoError(t, r.refreshPlan(ctx))
	first := decodeTasks(t, env.taskSets()[0])
	hotTask := -1
	for task, tps := range first {
		if tps[0].Topic == "hot" {
			hotTask = task
		}
	}
	require.NotEqual(t, -1, hotTask)

	env.rates = func() []kmtype.PartitionRate {
		var out []kmtype.PartitionRate
		for task, tps := range decodeTasks(t, env.taskSets()[len(env.taskSets())-1]) {
			for _, tp := range tps {
				rate := float64(64 << 10)
				if tp.Topic == "hot" {
					rate = 4 << 20
				}
				out = append(out, kmtype.PartitionRate{Topic: tp.Topic, Partition: tp.Partition, Task: task, BytesPerSecond: rate},
					kmtype.PartitionRate{Topic: tp.Topic, Partition: tp.Partition, Task: task + 1, BytesPerSecond: 1 << 30}) // a former owner's
			}
		}
		return out
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(env.taskSets()) == 1 && time.Now().Before(deadline) {
		require.NoError(t, r.balance(ctx))
		time.Sleep(5 * time.Millisecond) // the balancer judges the load over its sustained period
	}
	sets := env.taskSets()
	require.Len(t, sets, 2, "one move")
	var record mirror.PartitionMove
	on := map[int]bool{}
	for task, tps := range decodeTasks(t, sets[1]) {
		require.Len(t, tps, 4, "task %d keeps its share", task)
		for _, tp := range tps {
			if tp.Topic == "hot" {
				on[task] = true
			}
		}
		if raw, ok := sets[1][task][mirror.TaskLastMoveConfig]; ok {
			require.NoError(t, json.Unmarshal([]byte(raw), &record))
		}
	}
	require.Greater(t, len(on), 1, "the hot topic is spread")
	require.Equal(t, hotTask, record.FromTask)
	require.Len(t, record.In, len(record.Out))
	for _, name := range record.Out {
		require.True(t, strings.HasPrefix(name, "hot-"), name)
	}
	require.Positive(t, logs.count(slog.LevelInfo, "moving partitions between tasks by load"))
	require.NotEmpty(t, seriesOf(t, r.metrics, "connector", "mm2"), "the moves are counted")
}

// Rates that cannot be read are retried with backoff, whatever the cause.
func TestBalanceRetriesUnreadableRates(t *testing.T) {
	r, env, _ := fakePlanner(t, fakePlannerConfig("t"), newFakeCluster(map[string]int{"t": 1}), newFakeCluster(map[string]int{}))
	r.env = ratesFailing{env}
	err := r.balance(context.Background())
	require.ErrorContains(t, err, "read partition rates")
	require.True(t, plannerTransient(err), "retried even before the job first succeeded")
}

type ratesFailing struct{ *plannerEnv }

func (ratesFailing) PartitionRates(context.Context) ([]kmtype.PartitionRate, error) {
	return nil, errors.New("database down")
}
