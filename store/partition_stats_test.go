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

	// A connector without tasks (disabled) replicates nothing, and no row is left.
	_, err = s.ReplaceTaskConfigs(ctx, conn, nil)
	require.NoError(t, err)
	require.Empty(t, rows())

	// Only the holder of the connector unit drops rows.
	_, err = s.RetainPartitionStats(ctx, store.Claim{Unit: connUnit, Epoch: conn.Epoch + 100}, nil)
	require.ErrorIs(t, err, kmtype.ErrFenced)
}

// A STOPPED connector keeps its partitions' stats, marked stop, and its connector run refreshes their end
// offsets: the end only grows, the lag follows it, and only the holder of the connector unit writes.
func TestStopKeepsPartitionStats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	conn, runs := claimedTaskSet(t, s, []map[string]string{{"p": "t-0"}, {"p": "t-1"}})
	end, lag, lagSecs := int64(50), int64(40), 5.0
	for task := range runs {
		require.NoError(t, s.PutPartitionStats(ctx, runs[task], "w1", []kmtype.PartitionStat{{Topic: "t", Partition: int32(task),
			RemoteTopic: "A.t", ReplicatedOffset: 10, EndOffset: &end, LagRecords: &lag, LagSeconds: &lagSecs, BytesPerSecond: 100, Status: "ok"}}))
	}
	require.NoError(t, s.SetTargetState(ctx, "c", store.TargetStopped))
	require.NoError(t, s.StopTaskSet(ctx, conn))
	// A stopping task's last report is stored although its task set is gone: nothing else will say where it
	// stood (task 1's, with status stop as a run leaves it).
	require.NoError(t, s.PutPartitionStats(ctx, runs[1], "w1", []kmtype.PartitionStat{{Topic: "t", Partition: 1,
		RemoteTopic: "A.t", ReplicatedOffset: 11, EndOffset: &end, LagRecords: &lag, LagSeconds: &lagSecs, Status: store.PartitionStopped}}))
	tcs, err := s.TaskConfigs(ctx, "c")
	require.NoError(t, err)
	require.Empty(t, tcs, "a stopped connector has no tasks")
	byPartition := func() map[int32]kmtype.PartitionStat {
		t.Helper()
		all, err := s.ConnectorPartitionStats(ctx, "c")
		require.NoError(t, err)
		out := map[int32]kmtype.PartitionStat{}
		for _, st := range all {
			out[st.Partition] = st
		}
		return out
	}
	kept := byPartition()
	require.Len(t, kept, 2)
	require.Equal(t, int64(11), kept[1].ReplicatedOffset, "the stopping task's last report is stored")
	for _, st := range kept {
		require.Equal(t, store.PartitionStopped, st.Status)
		require.Zero(t, st.BytesPerSecond)
		require.Equal(t, int64(50), *st.EndOffset)
	}

	require.NoError(t, s.RefreshPartitionEnds(ctx, conn, []kmtype.PartitionEnd{{Topic: "t", Partition: 0, Next: -1, End: 80},
		{Topic: "t", Partition: 1, Next: 12, End: 5}, {Topic: "other", Partition: 0, Next: 3, End: 9}}))
	now := byPartition()
	require.Len(t, now, 2, "only kept rows are refreshed")
	require.Equal(t, int64(80), *now[0].EndOffset)
	require.Equal(t, int64(70), *now[0].LagRecords)
	require.Equal(t, int64(12), now[1].ReplicatedOffset, "the position follows the committed offset")
	require.Equal(t, int64(38), *now[1].LagRecords)
	require.GreaterOrEqual(t, *now[0].LagSeconds, 5.0, "the oldest unreplicated record ages with the clock")
	require.Equal(t, int64(50), *now[1].EndOffset, "a smaller end is another incarnation's")
	require.True(t, now[0].UpdatedAt.After(kept[0].UpdatedAt) || now[0].UpdatedAt.Equal(kept[0].UpdatedAt))

	// A partition whose topic is gone keeps the end and the time it was last seen at.
	require.NoError(t, s.RefreshPartitionEnds(ctx, conn, []kmtype.PartitionEnd{{Topic: "t", Partition: 0, Next: 11, End: -1}}))
	gone := byPartition()[0]
	require.Equal(t, int64(80), *gone.EndOffset)
	require.Equal(t, int64(11), gone.ReplicatedOffset)
	require.Equal(t, now[0].UpdatedAt, gone.UpdatedAt)

	err = s.RefreshPartitionEnds(ctx, store.Claim{Unit: conn.Unit, Epoch: conn.Epoch + 100}, []kmtype.PartitionEnd{{Topic: "t", Partition: 0, Next: -1, End: 90}})
	require.ErrorIs(t, err, kmtype.ErrFenced)
}

// The last report of a task of a connector being STOPPED can come after the STOPPED connector's run has looked
// at the source and recorded the committed position (the task drains within the stop budget, its report was
// sampled before its last commit): it must not move the row's end or position back, or a topic deleted right
// after is judged on an end older than the one seen, and a task that finds the topic re-created distrusts a
// row behind its committed offset. The report still marks the row stop and drops its rates.
func TestStoppingTaskReportAfterTheWatchLooked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	conn, runs := claimedTaskSet(t, s, []map[string]string{{"p": "t-0"}})
	row := func() kmtype.PartitionStat {
		t.Helper()
		all, err := s.ConnectorPartitionStats(ctx, "c")
		require.NoError(t, err)
		require.Len(t, all, 1)
		return all[0]
	}
	at := func(pos, end int64, status string) kmtype.PartitionStat {
		lag, lagSecs := max(end-pos, 0), 2.0
		return kmtype.PartitionStat{Topic: "t", Partition: 0, RemoteTopic: "A.t", ReplicatedOffset: pos, EndOffset: &end,
			LagRecords: &lag, LagSeconds: &lagSecs, BytesPerSecond: 100, Status: status}
	}
	// While the connector runs, a report says where the partition stands, smaller end and all (a topic
	// re-created under the same name starts over).
	require.NoError(t, s.PutPartitionStats(ctx, runs[0], "w1", []kmtype.PartitionStat{at(1000, 6000, "ok")}))
	require.NoError(t, s.PutPartitionStats(ctx, runs[0], "w1", []kmtype.PartitionStat{at(0, 40, "rewind")}))
	require.Equal(t, int64(40), *row().EndOffset)
	require.Equal(t, int64(0), row().ReplicatedOffset)
	require.NoError(t, s.PutPartitionStats(ctx, runs[0], "w1", []kmtype.PartitionStat{at(1000, 6000, "ok")}))

	require.NoError(t, s.SetTargetState(ctx, "c", store.TargetStopped))
	require.NoError(t, s.StopTaskSet(ctx, conn))
	// The watch's look: committed position 1028, end 9000 (records written since the task's last sample).
	require.NoError(t, s.RefreshPartitionEnds(ctx, conn, []kmtype.PartitionEnd{{Topic: "t", Partition: 0, Next: 1028, End: 9000}}))
	// The stopping task's last report, sampled before its last commit and before those records.
	last := at(1020, 6000, store.PartitionStopped)
	last.BytesPerSecond = 0
	require.NoError(t, s.PutPartitionStats(ctx, runs[0], "w1", []kmtype.PartitionStat{last}))
	got := row()
	require.Equal(t, int64(9000), *got.EndOffset, "the end the watch saw stands")
	require.Equal(t, int64(1028), got.ReplicatedOffset, "the committed position the watch recorded stands")
	require.Equal(t, int64(9000-1028), *got.LagRecords)
	require.Equal(t, store.PartitionStopped, got.Status)
	require.Zero(t, got.BytesPerSecond)
}

// A connector resumed after a stop deals its partitions afresh (the stop removed its task set), often to other
// tasks than the ones whose reports the stop kept. Its plan round drops the rows of partitions given to another
// task, and it comes before the new tasks read the rows to judge a topic re-created meanwhile: a kept row goes to
// its partition's new task instead of going away, or the re-creation is judged on nothing.
func TestResumedPlanKeepsTheStoppedRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	w1, conn := startedConnector(t, s)
	_, err := s.ReplaceTaskConfigs(ctx, conn, []map[string]string{{"p": "t-0"}, {"p": "t-1"}, {"p": "t-2"}})
	require.NoError(t, err)
	assignAll(t, s, "w1")
	runs := make([]store.Claim, 3)
	for i := range runs {
		runs[i], err = s.ClaimUnit(ctx, workOf(t, s, "w1", store.Unit{Connector: "c", Task: i}), w1)
		require.NoError(t, err)
	}
	end := int64(9000)
	for task := range runs {
		require.NoError(t, s.PutPartitionStats(ctx, runs[task], "w1", []kmtype.PartitionStat{{Topic: "t", Partition: int32(task),
			RemoteTopic: "A.t", ReplicatedOffset: 1000, EndOffset: &end, Status: "ok"}}))
	}
	require.NoError(t, s.SetTargetState(ctx, "c", store.TargetStopped))
	require.NoError(t, s.StopTaskSet(ctx, conn))
	require.NoError(t, s.SetTargetState(ctx, "c", store.TargetStarted))
	// The resumed plan: t-0 to task 1, t-1 to task 0, t-2 where it was; a partition of another topic is new.
	_, err = s.ReplaceTaskConfigs(ctx, conn, []map[string]string{{"p": "t-1"}, {"p": "t-0,u-0"}, {"p": "t-2"}})
	require.NoError(t, err)
	n, err := s.RetainPartitionStats(ctx, conn, []kmtype.PartitionOwner{{Topic: "t", Partition: 1, Task: 0},
		{Topic: "t", Partition: 0, Task: 1}, {Topic: "u", Partition: 0, Task: 1}, {Topic: "t", Partition: 2, Task: 2}})
	require.NoError(t, err)
	require.Zero(t, n, "no kept row goes")
	all, err := s.ConnectorPartitionStats(ctx, "c")
	require.NoError(t, err)
	var got []string
	for _, st := range all {
		got = append(got, fmt.Sprintf("%s-%d@%d end %d", st.Topic, st.Partition, st.Task, *st.EndOffset))
	}
	require.Equal(t, []string{"t-0@1 end 9000", "t-1@0 end 9000", "t-2@2 end 9000"}, got)

	// A running task's row of a partition the plan moves still goes until the new owner reports.
	_, err = s.ReplaceTaskConfigs(ctx, conn, []map[string]string{{"p": "t-1,t-0"}, {"p": "u-0"}, {"p": "t-2"}})
	require.NoError(t, err)
	for _, run := range runs {
		require.NoError(t, s.ReleaseUnit(ctx, run, nil))
	}
	assignAll(t, s, "w1")
	next, err := s.ClaimUnit(ctx, workOf(t, s, "w1", store.Unit{Connector: "c", Task: 2}), w1)
	require.NoError(t, err)
	require.NoError(t, s.PutPartitionStats(ctx, next, "w1", []kmtype.PartitionStat{{Topic: "t", Partition: 2,
		RemoteTopic: "A.t", ReplicatedOffset: 1001, EndOffset: &end, Status: "ok"}}))
	n, err = s.RetainPartitionStats(ctx, conn, []kmtype.PartitionOwner{{Topic: "t", Partition: 1, Task: 0},
		{Topic: "t", Partition: 0, Task: 0}, {Topic: "u", Partition: 0, Task: 1}, {Topic: "t", Partition: 2, Task: 1}})
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "the running task's row of the moved partition goes")
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
