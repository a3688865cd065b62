package source

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/kmtype"
)

func (e *plannerEnv) PartitionRates(context.Context) ([]kmtype.PartitionRate, error) {
	e.mu.Lock()
	rates := e.rates
	e.mu.Unlock()
	if rates == nil {
		return nil, nil
	}
	return rates(), nil
}

func (e *plannerEnv) TaskConfigs(context.Context) ([]map[string]string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.sets) > 0 {
		return e.sets[len(e.sets)-1], nil
	}
	return e.resumeAt, nil
}

func decodeTasks(t *testing.T, set []map[string]string) [][]mirror.TopicPartition {
	t.Helper()
	out := make([][]mirror.TopicPartition, len(set))
	for i, c := range set {
		tps, err := mirror.DecodeAssignedPartitions(c[mirror.TaskAssignedPartitionsConfig])
		require.NoError(t, err)
		out[i] = tps
	}
	return out
}

// By default a connector deals topics whole, and when one task then carries a hot topic for the sustained
// period, the planner exchanges its hot partitions for cold ones of other tasks: a new task set whose shares
// are still even, with the move and its reason in the configs of both tasks.
func TestSourceConnectorMovesHotPartitionsApart(t *testing.T) {
	t.Parallel()
	base := "kmbal-" + plannerRandom()
	topics := plannerTopics(t, base, prefixA, map[string]int{"hot": 4, "b": 4, "c": 4, "d": 4}, nil)
	config := plannerConfig(t, regexp.QuoteMeta(base)+"-.*")
	config["tasks.max"] = "4"
	config[mirrorconfig.TaskMovesSustainConfig] = "1000"
	p := startPlanner(t, config)

	first := decodeTasks(t, p.awaitTaskSet(t, "16 partitions", func(s []map[string]string) bool { return plannerPartitionCount(s) == 16 }))
	hotTask := -1
	for task, tps := range first {
		require.Len(t, tps, 4)
		for _, tp := range tps {
			require.Equal(t, tps[0].Topic, tp.Topic, "task %d holds one whole topic", task)
		}
		if tps[0].Topic == topics["hot"] {
			hotTask = task
		}
	}
	require.NotEqual(t, -1, hotTask)

	// Every task reports fresh rates for its partitions: the hot topic's at 4 MiB/s, the others at 64 KiB/s.
	p.env.mu.Lock()
	p.env.rates = func() []kmtype.PartitionRate {
		var out []kmtype.PartitionRate
		for task, tps := range decodeTasks(t, p.env.taskSets()[len(p.env.taskSets())-1]) {
			for _, tp := range tps {
				r := float64(64 << 10)
				if tp.Topic == topics["hot"] {
					r = 4 << 20
				}
				out = append(out, kmtype.PartitionRate{Topic: tp.Topic, Partition: tp.Partition, Task: task, BytesPerSecond: r})
			}
		}
		return out
	}
	p.env.mu.Unlock()

	moved := p.awaitTaskSet(t, "the hot topic spread", func(s []map[string]string) bool {
		on := map[int]bool{}
		for task, tps := range decodeTasks(t, s) {
			for _, tp := range tps {
				if tp.Topic == topics["hot"] {
					on[task] = true
				}
			}
		}
		return len(on) > 1
	})
	var record mirror.PartitionMove
	for task, tps := range decodeTasks(t, moved) {
		require.Len(t, tps, 4, "task %d keeps its share", task)
		if raw, ok := moved[task][mirror.TaskLastMoveConfig]; ok {
			require.NoError(t, json.Unmarshal([]byte(raw), &record))
			require.Equal(t, hotTask, record.FromTask)
			require.Contains(t, record.Reason, fmt.Sprintf("task %d carried", hotTask))
			require.Len(t, record.In, len(record.Out))
			for _, name := range record.Out {
				require.True(t, strings.HasPrefix(name, topics["hot"]+"-"), name)
			}
		}
	}
	require.NotEmpty(t, record.Out, "the move is recorded in the configs of its tasks")
	require.Positive(t, p.logs.count(slog.LevelInfo, "moving partitions between tasks by load"))
}

// A new run carries on from the task set an earlier run published (its order and last moves), and ignores one
// that is not a round-robin deal or was dealt by another assignment.
func TestSourceConnectorResumesThePublishedTaskSet(t *testing.T) {
	tp := func(topic string, p int32) mirror.TopicPartition {
		return mirror.TopicPartition{Topic: topic, Partition: p}
	}
	order := []mirror.TopicPartition{tp("a", 0), tp("b", 1), tp("c", 0), tp("a", 1), tp("b", 0)}
	set := sourceTaskConfigs(map[string]string{"name": "x"}, order, 2, AssignTopics, map[int]string{1: `{"reason":"r"}`})
	r := &sourcePlanner{env: &plannerEnv{resumeAt: set}, assignment: AssignTopics}
	r.resume(context.Background())
	require.Equal(t, order, r.order)
	require.Equal(t, map[int]string{1: `{"reason":"r"}`}, r.lastMove)
	require.Equal(t, set, sourceTaskConfigs(map[string]string{"name": "x"}, r.order, 2, AssignTopics, r.lastMove), "nothing restarts")

	uneven := slices.Clone(set)
	uneven[0], uneven[1] = set[1], set[0] // the shorter share first: not a round-robin deal
	r = &sourcePlanner{env: &plannerEnv{resumeAt: uneven}, assignment: AssignTopics}
	r.resume(context.Background())
	require.Nil(t, r.order)

	// A set dealt by the other assignment, or by a kmirror that did not say, is dealt afresh: switching a
	// connector to topics groups its partitions.
	r = &sourcePlanner{env: &plannerEnv{resumeAt: set}, assignment: AssignPartitions}
	r.resume(context.Background())
	require.Nil(t, r.order)
	unsaid := make([]map[string]string, len(set))
	for i, c := range set {
		unsaid[i] = maps.Clone(c)
		delete(unsaid[i], mirror.TaskAssignedByConfig)
	}
	r = &sourcePlanner{env: &plannerEnv{resumeAt: unsaid}, assignment: AssignTopics}
	r.resume(context.Background())
	require.Nil(t, r.order)
}

// The planner's state is per run: moves are planned only for the topics assignment with moves enabled.
func TestSourceConnectorBalancerOnlyForGroupedAssignment(t *testing.T) {
	for _, tc := range []struct {
		a     TaskAssignment
		extra map[string]string
		on    bool
	}{
		{AssignTopics, nil, true},
		{AssignTopics, map[string]string{mirrorconfig.TaskMovesEnabledConfig: "false"}, false},
		{AssignPartitions, nil, false},
	} {
		raw := map[string]string{"name": "x", "connector.class": mirrorconfig.SourceConnectorClass, "source.cluster.alias": "A"}
		for k, v := range tc.extra {
			raw[k] = v
		}
		p, _ := mirrorconfig.LookupPlugin(mirrorconfig.SourceConnectorClass)
		cfg, err := connectors.ParseConfig(p, raw, clientconfig.Options{})
		require.NoError(t, err)
		c := &sourceConnector{cfg: newConfig(cfg)}
		require.Equal(t, tc.on, c.newBalancer(tc.a) != nil, "%v %v", tc.a, tc.extra)
	}
}
