package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/store/storetest"
)

// TestStalePartitionStatsGo: rows of partitions no task owns any more are deleted, and a run of a superseded
// task set cannot bring them back. The connector plans three tasks over topics t (partitions 0-2) and gone
// (partition 0); then topic gone is deleted, t-2 moves from task 2 to task 0, and the set shrinks to two
// tasks.
func TestStalePartitionStatsGo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	w1, conn := startedConnector(t, s)
	connUnit := conn.Unit
	_, err := s.ReplaceTaskConfigs(ctx, conn, []map[string]string{{"p": "t-0"}, {"p": "t-1,gone-0"}, {"p": "t-2"}})
	require.NoError(t, err)
	assignAll(t, s, "w1")
	runs := make([]store.Claim, 3)
	for i := range runs {
		runs[i], err = s.ClaimUnit(ctx, workOf(t, s, "w1", store.Unit{Connector: "c", Task: i}), w1)
		require.NoError(t, err)
	}
	stat := func(topic string, p int32) kmtype.PartitionStat {
		return kmtype.PartitionStat{Topic: topic, Partition: p, RemoteTopic: "A." + topic, ReplicatedOffset: 10, Status: "ok"}
	}
	put := func(run store.Claim, stats ...kmtype.PartitionStat) {
		t.Helper()
		require.NoError(t, s.PutPartitionStats(ctx, run, "w1", stats))
	}
	rows := func() []string {
		t.Helper()
		all, err := s.ConnectorPartitionStats(ctx, "c")
		require.NoError(t, err)
		var out []string
		for _, st := range all {
			out = append(out, fmt.Sprintf("%s-%d@%d", st.Topic, st.Partition, st.Task))
		}
		slices.Sort(out)
		return out
	}
	put(runs[0], stat("t", 0))
	put(runs[1], stat("t", 1), stat("gone", 0))
	put(runs[2], stat("t", 2))
	require.Equal(t, []string{"gone-0@1", "t-0@0", "t-1@1", "t-2@2"}, rows())

	// The same plan keeps every row.
	plan := []kmtype.PartitionOwner{{Topic: "t", Partition: 0, Task: 0}, {Topic: "t", Partition: 1, Task: 1},
		{Topic: "gone", Partition: 0, Task: 1}, {Topic: "t", Partition: 2, Task: 2}}
	n, err := s.RetainPartitionStats(ctx, conn, plan)
	require.NoError(t, err)
	require.Zero(t, n)

	// The new plan: gone is deleted, t-2 goes to task 0, two tasks. Shrinking the set drops task 2's rows
	// with it; the plan drops the deleted topic.
	_, err = s.ReplaceTaskConfigs(ctx, conn, []map[string]string{{"p": "t-0,t-2"}, {"p": "t-1"}})
	require.NoError(t, err)
	require.Equal(t, []string{"gone-0@1", "t-0@0", "t-1@1"}, rows(), "the removed task's rows go with it")
	n, err = s.RetainPartitionStats(ctx, conn, []kmtype.PartitionOwner{{Topic: "t", Partition: 0, Task: 0},
		{Topic: "t", Partition: 2, Task: 0}, {Topic: "t", Partition: 1, Task: 1}})
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	require.Equal(t, []string{"t-0@0", "t-1@1"}, rows())

	// The old runs still hold their units until they stop; what they report on the way out (the final stats
	// of a run) is not stored: their task set is superseded.
	put(runs[1], stat("t", 1), stat("gone", 0))
	put(runs[2], stat("t", 2))
	put(runs[0], stat("t", 0))
	require.Equal(t, []string{"t-0@0", "t-1@1"}, rows(), "superseded runs store nothing")

	// The runs of the new task set report their partitions.
	for i := range 2 {
		require.NoError(t, s.ReleaseUnit(ctx, runs[i], nil))
	}
	require.NoError(t, s.ReleaseUnit(ctx, runs[2], nil))
	assignAll(t, s, "w1")
	next0, err := s.ClaimUnit(ctx, workOf(t, s, "w1", store.Unit{Connector: "c", Task: 0}), w1)
	require.NoError(t, err)
	put(next0, stat("t", 0), stat("t", 2))
	require.Equal(t, []string{"t-0@0", "t-1@1", "t-2@0"}, rows())

	// A stopped connector has no tasks: nothing is replicated, and no row is left.
	_, err = s.ReplaceTaskConfigs(ctx, conn, nil)
	require.NoError(t, err)
	require.Empty(t, rows())

	// Only the holder of the connector unit drops rows.
	_, err = s.RetainPartitionStats(ctx, store.Claim{Unit: connUnit, Epoch: conn.Epoch + 100}, nil)
	require.ErrorIs(t, err, kmtype.ErrFenced)
}

// PartitionRates reads each partition's byte rate with its reporting task and the report's age; TaskRates sums
// them by task.
func TestPartitionRates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	_, runs := claimedTaskSet(t, s, []map[string]string{{"p": "t-0"}, {"p": "t-1"}})
	for task, rate := range []float64{1000, 2500} {
		require.NoError(t, s.PutPartitionStats(ctx, runs[task], "w1", []kmtype.PartitionStat{
			{Topic: "t", Partition: int32(task), RemoteTopic: "A.t", BytesPerSecond: rate, Status: "ok"}}))
	}
	rates, err := s.PartitionRates(ctx, "c")
	require.NoError(t, err)
	slices.SortFunc(rates, func(a, b kmtype.PartitionRate) int { return int(a.Partition - b.Partition) })
	require.Len(t, rates, 2)
	for task, want := range []float64{1000, 2500} {
		require.Equal(t, task, rates[task].Task)
		require.Equal(t, want, rates[task].BytesPerSecond)
		require.Less(t, rates[task].Age, 10*time.Second)
		require.GreaterOrEqual(t, rates[task].Age, time.Duration(0))
	}
	none, err := s.PartitionRates(ctx, "unknown")
	require.NoError(t, err)
	require.Empty(t, none)

	// Summed by task, fresh reports only.
	require.NoError(t, s.PutPartitionStats(ctx, runs[1], "w1", []kmtype.PartitionStat{
		{Topic: "u", Partition: 0, RemoteTopic: "A.u", BytesPerSecond: 500, Status: "ok"}}))
	byTask, err := s.TaskRates(ctx, time.Minute)
	require.NoError(t, err)
	require.Equal(t, map[store.Unit]float64{{Connector: "c", Task: 0}: 1000, {Connector: "c", Task: 1}: 3000}, byTask)
	byTask, err = s.TaskRates(ctx, 0)
	require.NoError(t, err)
	require.Empty(t, byTask, "no report is fresher than now")
}
