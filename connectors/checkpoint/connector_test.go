package checkpoint

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/kmtype"
)

func checkpointTestConfig(t *testing.T, extra map[string]string) config {
	t.Helper()
	raw := map[string]string{
		"name":                             "ck",
		"connector.class":                  mirrorconfig.CheckpointConnectorClass,
		"source.cluster.alias":             "A",
		"target.cluster.alias":             "B",
		"source.cluster.bootstrap.servers": "a:9092",
		"target.cluster.bootstrap.servers": "b:9092",
	}
	for k, v := range extra {
		raw[k] = v
	}
	p, _ := mirrorconfig.LookupPlugin(mirrorconfig.CheckpointConnectorClass)
	cfg, err := connectors.ParseConfig(p, raw, clientconfig.Options{})
	require.NoError(t, err)
	return newConfig(cfg)
}

func TestCheckpointTaskConfigsAreContiguousChunks(t *testing.T) {
	c := &checkpointConnector{cfg: checkpointTestConfig(t, map[string]string{"tasks.max": "3"})}
	configs := c.taskConfigs([]string{"g1", "g2", "g3", "g4", "g5", "g6", "g7"})
	require.Len(t, configs, 3)
	var got []string
	for i, cfg := range configs {
		require.Equal(t, connectors.CheckpointTaskClass, cfg[connectors.TaskClassKey])
		require.Equal(t, []string{"0", "1", "2"}[i], cfg["task.index"])
		got = append(got, cfg[mirror.TaskAssignedGroupsConfig])
	}
	// Connect's groupPartitions: the first (7 mod 3) tasks get one more, in list order.
	require.Equal(t, []string{"g1,g2,g3", "g4,g5", "g6,g7"}, got)

	require.Len(t, (&checkpointConnector{cfg: checkpointTestConfig(t, map[string]string{"tasks.max": "10"})}).taskConfigs([]string{"a", "b"}), 2,
		"never more tasks than groups")
	require.Empty(t, c.taskConfigs(nil), "no group, no task")
}

func TestCheckpointRenamesTopicsAsMM2(t *testing.T) {
	policy, err := mirror.NewReplicationPolicy(map[string]string{})
	require.NoError(t, err)
	r := &checkpointRun{sourceAlias: "A", targetAlias: "B", policy: policy}
	for topic, want := range map[string]string{
		"orders":   "A.orders",   // the usual case
		"C.events": "A.C.events", // a topic A replicated from C
		"B.orders": "orders",     // a topic that came from the target: failback
	} {
		require.Equal(t, want, r.renameTopic(topic), "renameTopic(%q)", topic)
	}
}

// A position before the first range, in the gap the range knows to precede it (a partition that starts with
// an aborted transaction), translates exactly from the range after it, the only one there is.
func TestCheckpointTranslatesTheGapBeforeTheFirstRange(t *testing.T) {
	updated := time.Now().Add(-time.Minute)
	next := &kmtype.OffsetRange{SourceStart: 4, SourceEnd: 7, TargetStart: 0, SourceNext: 8, GapBefore: 4, UpdatedAt: updated}
	for c := int64(0); c < 4; c++ {
		row := kmtype.GroupOffset{UpstreamOffset: c}
		(&checkpointRun{}).translate(&row, kmtype.RangesAround{Next: next})
		if row.DownstreamOffset == nil || *row.DownstreamOffset != 0 || !row.Exact || row.Basis != basisMap {
			t.Fatalf("position %d: %+v", c, row)
		}
		if row.ReplicatedAt == nil || !row.ReplicatedAt.Equal(updated) {
			t.Fatalf("position %d: replicated at %v, want the range's %v", c, row.ReplicatedAt, updated)
		}
	}
}
