package parallelism

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
)

// part is a fresh partition report of task, with lag records and seconds (negative: unknown).
func part(topic string, p int32, task int, rps float64, lag int64, lagSeconds float64, status string) PartitionEntry {
	e := PartitionEntry{Topic: topic, Partition: p, Task: task, WorkerID: "w1", RecordsPerSecond: rps, Status: status}
	if lag >= 0 {
		e.LagRecords = ptr(lag)
	}
	if lagSeconds >= 0 {
		e.LagSeconds = ptr(lagSeconds)
	}
	return e
}

func stalePart(e PartitionEntry) PartitionEntry {
	e.Stale = true
	e.Status = worseStatus(e.Status, statusStop)
	return e
}

// evenParts is n caught-up partitions of topic orders dealt round-robin to tasks, carrying rps in all.
func evenParts(n, tasks int, rps float64) []PartitionEntry {
	out := make([]PartitionEntry, n)
	for i := range out {
		out[i] = part("orders", int32(i), i%tasks, rps/float64(n), 0, 0, statusOK)
	}
	return out
}

// running is n RUNNING tasks on the given workers, round-robin.
func running(n int, workers ...string) []TaskEntry {
	out := make([]TaskEntry, n)
	for i := range out {
		out[i] = TaskEntry{Task: i, State: store.StateRunning, WorkerID: workers[i%len(workers)]}
	}
	return out
}

// body completes a report as partitionFacts.report would: counts and totals from its entries.
func body(tasksMax, partitions int, parts []PartitionEntry, tasks []TaskEntry) *Report {
	b := &Report{Name: "c", TasksMax: tasksMax, Partitions: partitions, ByPartition: parts, ByTask: tasks}
	for _, t := range tasks {
		if t.State == store.StateRunning {
			b.Tasks++
		}
	}
	for _, e := range parts {
		if !e.Stale {
			b.Totals.RecordsPerSecond += e.RecordsPerSecond
		}
		if e.LagSeconds != nil && (b.Totals.MaxLagSeconds == nil || *e.LagSeconds > *b.Totals.MaxLagSeconds) {
			b.Totals.MaxLagSeconds = ptr(*e.LagSeconds)
		}
	}
	return b
}

func with(parts []PartitionEntry, i int, change func(e *PartitionEntry)) []PartitionEntry {
	change(&parts[i])
	return parts
}

func TestJudgeParallelism(t *testing.T) {
	t.Parallel()
	const straggler = "partition orders-3 carries 61% of the connector's traffic: a straggler; more tasks will not help, more source partitions will"
	hot := func(n int, share float64) []PartitionEntry { // partition 3 carries share of 1000 records/s
		parts := evenParts(n, n, 1000*(1-share)*float64(n)/float64(n-1))
		parts[3].RecordsPerSecond = 1000 * share
		return parts
	}
	lagging := func(parts []PartitionEntry, idx ...int) []PartitionEntry {
		for _, i := range idx {
			parts[i].LagRecords, parts[i].LagSeconds, parts[i].Status = ptr(int64(5000)), ptr(2.5), statusWarn
		}
		return parts
	}
	pipeline := func(behind string) string {
		return "pipeline_bound (warning): " + behind + " although neither tasks.max nor the workers bound the connector: " +
			"each task's pipeline is the limit; over a WAN raise batch.size and linger.ms, set compression.type, and raise the consumer's fetch sizes"
	}
	tests := []struct {
		name        string
		report      *Report
		unreported  []plannedPartition
		liveWorkers int
		want        []string // "kind (severity): message"
	}{{
		name:   "no tasks",
		report: body(1, 0, nil, nil),
		want: []string{"no_reports (info): no task has reported yet: the connector has no tasks (its source partitions are not listed yet, " +
			"none passes its topic filters, or it is stopped)"},
	}, {
		name:   "tasks planned, none reported",
		report: body(20, 8, nil, append(running(1, "w1"), TaskEntry{Task: 1, State: store.StateUnassigned})),
		want: []string{
			"no_reports (info): no task has reported yet: 1 of 2 tasks are RUNNING",
			"unusable_task_slots (info): tasks.max 20, 8 partitions: 8 tasks run, 12 slots cannot be used",
		},
	}, {
		name:   "unusable slots, caught up",
		report: body(20, 8, evenParts(8, 8, 800), running(8, "w1", "w2")),
		want: []string{
			"unusable_task_slots (info): tasks.max 20, 8 partitions: 8 tasks run, 12 slots cannot be used",
			"caught_up (ok): caught up: every partition's lag is 0",
		},
	}, {
		name:   "one unused slot",
		report: body(3, 2, evenParts(2, 2, 0), running(2, "w1")),
		want: []string{
			"unusable_task_slots (info): tasks.max 3, 2 partitions: 2 tasks run, 1 slot cannot be used",
			"caught_up (ok): caught up, no traffic: every partition's lag is 0 and no records are arriving",
		},
	}, {
		name:   "straggler keeping up is worth knowing",
		report: body(8, 8, hot(8, 0.61), running(8, "w1")),
		want:   []string{"straggler (info): " + straggler, "caught_up (ok): caught up: every partition's lag is 0"},
	}, {
		name:   "straggler behind is a warning",
		report: body(8, 8, lagging(hot(8, 0.61), 3), running(8, "w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8")),
		want:   []string{"straggler (warning): " + straggler, pipeline("1 partition is behind (task 3)")},
	}, {
		name: "below the traffic floor, no straggler",
		report: func() *Report {
			parts := hot(8, 0.61)
			for i := range parts {
				parts[i].RecordsPerSecond *= 0.099
			}
			return body(8, 8, parts, running(8, "w1"))
		}(),
		want: []string{"caught_up (ok): caught up: every partition's lag is 0"},
	}, {
		name: "a trickle has no straggler",
		report: func() *Report {
			parts := evenParts(8, 8, 0)
			parts[3].RecordsPerSecond = 99
			return body(8, 8, parts, running(8, "w1"))
		}(),
		want: []string{"caught_up (ok): caught up: every partition's lag is 0"},
	}, {
		name:   "2 partitions: only all the traffic on one",
		report: body(2, 2, []PartitionEntry{part("t", 0, 0, 900, 0, 0, statusOK), part("t", 1, 1, 100, 0, 0, statusOK)}, running(2, "w1")),
		want:   []string{"caught_up (ok): caught up: every partition's lag is 0"},
	}, {
		name:   "2 partitions, one idle",
		report: body(2, 2, []PartitionEntry{part("t", 0, 0, 500, 0, 0, statusOK), part("t", 1, 1, 0, 0, 0, statusOK)}, running(2, "w1")),
		want: []string{
			"straggler (info): partition t-0 carries 100% of the connector's traffic: a straggler; more tasks will not help, more source partitions will",
			"caught_up (ok): caught up: every partition's lag is 0",
		},
	}, {
		name:   "4 partitions: half is twice the fair share",
		report: body(4, 4, hot(4, 0.501), running(4, "w1")),
		want: []string{
			"straggler (info): partition orders-3 carries 50% of the connector's traffic: a straggler; more tasks will not help, more source partitions will",
			"caught_up (ok): caught up: every partition's lag is 0",
		},
	}, {
		name:   "4 partitions: 49% is not",
		report: body(4, 4, hot(4, 0.49), running(4, "w1")),
		want:   []string{"caught_up (ok): caught up: every partition's lag is 0"},
	}, {
		name:   "100 partitions: 24% is not, though 12 times the fair share",
		report: body(100, 100, hot(100, 0.24), running(100, "w1")),
		want:   []string{"caught_up (ok): caught up: every partition's lag is 0"},
	}, {
		name:   "100 partitions: 25% is",
		report: body(100, 100, hot(100, 0.251), running(100, "w1")),
		want: []string{
			"straggler (info): partition orders-3 carries 25% of the connector's traffic: a straggler; more tasks will not help, more source partitions will",
			"caught_up (ok): caught up: every partition's lag is 0",
		},
	}, {
		name:   "tasks.max bound",
		report: body(2, 8, lagging(evenParts(8, 2, 800), 0, 1, 5), running(2, "w1", "w2")),
		want:   []string{"tasks_max_bound (warning): tasks.max 2 for 8 partitions and 2 tasks have lag: raise tasks.max up to 8"},
	}, {
		name:   "tasks.max bound, one task",
		report: body(2, 8, lagging(evenParts(8, 2, 800), 1, 3), running(2, "w1", "w2")),
		want:   []string{"tasks_max_bound (warning): tasks.max 2 for 8 partitions and 1 task has lag: raise tasks.max up to 8"},
	}, {
		name:   "small lag that falls is keeping up",
		report: body(2, 8, with(evenParts(8, 2, 800), 2, func(e *PartitionEntry) { e.LagRecords, e.LagSeconds = ptr(int64(40)), ptr(0.8) }), running(2, "w1", "w2")),
		want:   []string{"keeping_up (ok): keeping up: no partition is behind (max lag 0.8 s)"},
	}, {
		name:   "a backlog that falls is behind",
		report: body(2, 8, with(evenParts(8, 2, 800), 2, func(e *PartitionEntry) { e.LagRecords, e.LagSeconds = ptr(int64(4e6)), ptr(3600.0) }), running(2, "w1", "w2")),
		want:   []string{"tasks_max_bound (warning): tasks.max 2 for 8 partitions and 1 task has lag: raise tasks.max up to 8"},
	}, {
		name:        "workers bound",
		report:      body(4, 4, lagging(evenParts(4, 4, 800), 2), running(4, "w1")),
		liveWorkers: 3,
		want: []string{"workers_bound (warning): 4 tasks run on 1 of 3 workers and 1 task has lag: spread over more workers they would " +
			"get more CPU and network; the leader spreads each connector's tasks evenly, so look in GET /workers for workers that are " +
			"draining or late with their heartbeat"},
	}, {
		name:        "one task per worker already: more workers do not help",
		report:      body(2, 2, lagging(evenParts(2, 2, 800), 0, 1), running(2, "w1", "w2")),
		liveWorkers: 5,
		want:        []string{pipeline("2 partitions are behind (tasks 0, 1)")},
	}, {
		name:        "all workers used",
		report:      body(4, 4, lagging(evenParts(4, 4, 800), 2), running(4, "w1", "w2", "w3")),
		liveWorkers: 3,
		want:        []string{pipeline("1 partition is behind (task 2)")},
	}, {
		name:        "tasks.max and workers bound together",
		report:      body(2, 8, lagging(evenParts(8, 2, 800), 0), running(2, "w1")),
		liveWorkers: 2,
		want: []string{
			"tasks_max_bound (warning): tasks.max 2 for 8 partitions and 1 task has lag: raise tasks.max up to 8",
			"workers_bound (warning): 2 tasks run on 1 of 2 workers and 1 task has lag: spread over more workers they would " +
				"get more CPU and network; the leader spreads each connector's tasks evenly, so look in GET /workers for workers that are " +
				"draining or late with their heartbeat",
		},
	}, {
		name: "stale reports",
		report: func() *Report {
			parts := evenParts(4, 2, 400)
			parts[1], parts[3] = stalePart(parts[1]), stalePart(parts[3])
			return body(2, 4, parts, running(1, "w1"))
		}(),
		want: []string{"stale_reports (warning): no report for 2 partitions (task 1) in more than 10 s: the task is not running or " +
			"cannot reach PostgreSQL; the figures shown are the last reported"},
	}, {
		name: "a stale partition counts for no straggler",
		report: func() *Report {
			parts := hot(8, 0.61)
			parts[3] = stalePart(parts[3])
			return body(8, 8, parts, running(8, "w1"))
		}(),
		want: []string{"stale_reports (warning): no report for 1 partition (task 3) in more than 10 s: the task is not running or " +
			"cannot reach PostgreSQL; the figures shown are the last reported"},
	}, {
		name:   "unreported partitions",
		report: body(4, 4, evenParts(2, 2, 0), running(4, "w1")),
		unreported: []plannedPartition{{TopicPartition: mirror.TopicPartition{Topic: "orders", Partition: 2}, Task: 2},
			{TopicPartition: mirror.TopicPartition{Topic: "orders", Partition: 3}, Task: 3}},
		want: []string{"unreported_partitions (warning): 2 of 4 partitions have no report yet (tasks 2, 3): their task has not started replicating them"},
	}, {
		name: "unhealthy partitions",
		report: body(8, 8, with(with(evenParts(8, 8, 800), 2, func(e *PartitionEntry) { e.Status, e.LagRecords, e.LagSeconds = statusStall, ptr(int64(9)), ptr(60.0) }),
			5, func(e *PartitionEntry) { e.Status = statusTruncated }), running(8, "w1")),
		want: []string{"unhealthy_partitions (warning): 2 partitions are not replicating normally (orders-2 stall, orders-5 truncated): " +
			"more capacity will not help; see the connector's notices and its tasks' status"},
	}, {
		name: "many unhealthy partitions are abridged",
		report: func() *Report {
			parts := evenParts(7, 1, 0)
			for i := range parts {
				parts[i].Status = statusRewind
			}
			return body(1, 7, parts, running(1, "w1"))
		}(),
		want: []string{"unhealthy_partitions (warning): 7 partitions are not replicating normally (orders-0 rewind, orders-1 rewind, " +
			"orders-2 rewind, orders-3 rewind, orders-4 rewind and 2 more): more capacity will not help; see the connector's notices and its tasks' status"},
	}, {
		name:   "an unknown status is not unhealthy",
		report: body(1, 1, []PartitionEntry{part("t", 0, 0, 10, 0, 0, "lagging")}, running(1, "w1")),
		want:   []string{"caught_up (ok): caught up: every partition's lag is 0"},
	}, {
		// Paused with a backlog that would otherwise read as behind (lag_seconds >= 10) and bounded by tasks.max:
		// the connector is paused on purpose, so no capacity verdict and no positive one.
		name: "paused with a backlog",
		report: body(1, 4, func() []PartitionEntry {
			parts := evenParts(4, 1, 0)
			for i := range parts {
				parts[i].Status, parts[i].LagRecords, parts[i].LagSeconds = statusPaused, ptr(int64(250)), ptr(float64(10*(i+1)))
			}
			parts[3].LagSeconds = nil // its first unreplicated record could not be read
			return parts
		}(), []TaskEntry{{Task: 0, State: store.StatePaused, WorkerID: "w1"}}),
		want: []string{"paused (info): the connector is paused: 4 partitions are not replicated and their backlog of 1000 records " +
			"grows until it is resumed (max lag 30.0 s); nothing to tune"},
	}, {
		name:   "paused, caught up",
		report: body(2, 2, with(evenParts(2, 2, 0), 0, func(e *PartitionEntry) { e.Status = statusPaused }), running(2, "w1")),
		want: []string{"paused (info): the connector is paused: 1 partition is not replicated, caught up so far (lag 0); records " +
			"that arrive wait until it is resumed"},
	}, {
		name: "paused with an unhealthy partition: both are said",
		report: body(2, 2, with(with(evenParts(2, 2, 0), 0, func(e *PartitionEntry) { e.Status, e.LagRecords, e.LagSeconds = statusPaused, ptr(int64(1)), nil }),
			1, func(e *PartitionEntry) { e.Status = statusStall }), running(2, "w1")),
		want: []string{"paused (info): the connector is paused: 1 partition is not replicated and its backlog of 1 record grows " +
			"until it is resumed; nothing to tune",
			"unhealthy_partitions (warning): 1 partition is not replicating normally (orders-1 stall): more capacity will not help; " +
				"see the connector's notices and its tasks' status"},
	}, {
		name:   "lag not known yet: nothing to say",
		report: body(1, 1, []PartitionEntry{part("t", 0, 0, 10, -1, -1, statusOK)}, running(1, "w1")),
		want:   nil,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, v := range judgeParallelism(verdictFacts{Report: tc.report, Unreported: tc.unreported, LiveWorkers: tc.liveWorkers}) {
				got = append(got, fmt.Sprintf("%s (%s): %s", v.Kind, v.Severity, v.Message))
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// TestVerdictFields checks the fields of each verdict beside its words.
func TestVerdictFields(t *testing.T) {
	t.Parallel()
	judge := func(r *Report, liveWorkers int, unreported ...plannedPartition) string {
		b, err := json.Marshal(judgeParallelism(verdictFacts{Report: r, Unreported: unreported, LiveWorkers: liveWorkers}))
		require.NoError(t, err)
		return string(b)
	}
	unusable := `{"kind":"unusable_task_slots","severity":"info","message":"tasks.max 20, 8 partitions: 8 tasks run, 12 slots cannot be used",` +
		`"tasks_max":20,"partitions":8,"tasks":8,"unused":12}`
	require.JSONEq(t, `[{"kind":"no_reports","severity":"info","message":"no task has reported yet: 0 of 1 task is RUNNING","partitions":8,"tasks":0},`+
		unusable+`]`, judge(body(20, 8, nil, []TaskEntry{{Task: 0, State: store.StateUnassigned}}), 1))
	require.JSONEq(t, `[`+unusable+`,{"kind":"caught_up","severity":"ok","message":"caught up: every partition's lag is 0","partitions":8,"records_per_second":800}]`,
		judge(body(20, 8, evenParts(8, 8, 800), running(8, "w1")), 1))

	parts := evenParts(4, 2, 400)
	parts[3].RecordsPerSecond, parts[3].LagRecords, parts[3].LagSeconds, parts[3].Status = 700, ptr(int64(100)), ptr(1.5), statusWarn
	require.JSONEq(t, `[`+
		`{"kind":"straggler","severity":"warning","message":"partition orders-3 carries 70% of the connector's traffic: a straggler; more tasks will not help, more source partitions will",`+
		`"topic":"orders","partition":3,"share":0.7,"records_per_second":700},`+
		`{"kind":"tasks_max_bound","severity":"warning","message":"tasks.max 2 for 4 partitions and 1 task has lag: raise tasks.max up to 4",`+
		`"tasks_max":2,"partitions":4,"task_ids":[1],"suggested_tasks_max":4},`+
		`{"kind":"workers_bound","severity":"warning","message":"2 tasks run on 1 of 2 workers and 1 task has lag: spread over more workers they would get more CPU and network; `+
		`the leader spreads each connector's tasks evenly, so look in GET /workers for workers that are draining or late with their heartbeat",`+
		`"tasks":2,"workers":1,"live_workers":2,"task_ids":[1]}]`,
		judge(body(2, 4, parts, running(2, "w1")), 2))

	parts = evenParts(3, 3, 30)
	parts[0] = stalePart(parts[0])
	require.JSONEq(t, `[`+
		`{"kind":"stale_reports","severity":"warning","message":"no report for 1 partition (task 0) in more than 10 s: the task is not running or cannot reach PostgreSQL; the figures shown are the last reported",`+
		`"partitions":1,"task_ids":[0]},`+
		`{"kind":"unreported_partitions","severity":"warning","message":"1 of 4 partitions has no report yet (task 3): their task has not started replicating them",`+
		`"partitions":1,"task_ids":[3]}]`,
		judge(body(4, 4, parts, running(4, "w1")), 1, plannedPartition{TopicPartition: mirror.TopicPartition{Topic: "orders", Partition: 3}, Task: 3}))

	parts = evenParts(2, 1, 10)
	parts[1].LagRecords, parts[1].LagSeconds = ptr(int64(3)), ptr(0.25)
	require.JSONEq(t, `[{"kind":"keeping_up","severity":"ok","message":"keeping up: no partition is behind (max lag 0.2 s)","partitions":2,"max_lag_seconds":0.25}]`,
		judge(body(1, 2, parts, running(1, "w1")), 1))

	parts = evenParts(2, 1, 0)
	for i := range parts {
		parts[i].Status, parts[i].LagRecords, parts[i].LagSeconds = statusPaused, ptr(int64(5)), ptr(float64(40+i))
	}
	require.JSONEq(t, `[{"kind":"paused","severity":"info","message":"the connector is paused: 2 partitions are not replicated and their `+
		`backlog of 10 records grows until it is resumed (max lag 41.0 s); nothing to tune","partitions":2,"lag_records":10,"max_lag_seconds":41}]`,
		judge(body(1, 2, parts, []TaskEntry{{Task: 0, State: store.StatePaused, WorkerID: "w1"}}), 1))
}

// TestPartitionsReport covers how the response is built from the store's facts: counts from the task configs,
// stale reports, shares and totals over fresh reports, the worst status.
func TestPartitionsReport(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) time.Time { return now.Add(-ago) }
	stat := func(p int32, task int, rps float64, lag int64, status string, updated time.Time) kmtype.PartitionStat {
		end := 1000 + lag
		return kmtype.PartitionStat{Topic: "orders", Partition: p, RemoteTopic: "A.orders", Task: task, WorkerID: "w1",
			ReplicatedOffset: 1000, EndOffset: &end, LagRecords: &lag, LagSeconds: ptr(float64(lag) / 100), RecordsPerSecond: rps,
			BytesPerSecond: rps * 100, Status: status, UpdatedAt: updated}
	}
	taskConfig := func(task int, partitions ...int32) store.TaskConfig {
		tps := make([]mirror.TopicPartition, len(partitions))
		for i, p := range partitions {
			tps[i] = mirror.TopicPartition{Topic: "orders", Partition: p}
		}
		return store.TaskConfig{Connector: "c", Task: task, Config: map[string]string{
			mirror.TaskAssignedPartitionsConfig: mirror.EncodeAssignedPartitions(tps)}}
	}
	f := Facts{
		Name: "c", TasksMax: 3, Now: now, LiveWorkers: 2,
		Stats: []kmtype.PartitionStat{
			stat(0, 0, 300, 0, statusOK, at(time.Second)),
			stat(1, 1, 500, 0, statusOK, at(11*time.Second)), // stale
			stat(2, 2, 100, 20, statusWarn, at(10*time.Second)),
			stat(3, 0, 0, 0, statusTruncated, at(time.Hour)), // stale and worse than stop
		},
		TaskConfigs: []store.TaskConfig{taskConfig(0, 0, 3), taskConfig(1, 1, 4), taskConfig(2, 2)},
		Statuses: []store.Status{
			{Unit: store.Unit{Connector: "c", Task: 0}, State: store.StateRunning, WorkerID: "w1"},
			{Unit: store.Unit{Connector: "c", Task: 1}, State: store.StateFailed, WorkerID: "w2"},
		},
	}
	r := f.Build()
	require.Equal(t, 3, r.TasksMax)
	require.Equal(t, 5, r.Partitions, "by the task configs")
	require.Equal(t, 1, r.Tasks, "RUNNING")

	var stale []bool
	var statuses []string
	var shares []*float64
	for _, e := range r.ByPartition {
		stale, statuses, shares = append(stale, e.Stale), append(statuses, e.Status), append(shares, e.Share)
	}
	require.Equal(t, []bool{false, true, false, true}, stale, "10 s old is still fresh")
	require.Equal(t, []string{statusOK, statusStop, statusWarn, statusTruncated}, statuses)
	require.Equal(t, []*float64{ptr(0.75), nil, ptr(0.25), nil}, shares)
	require.Equal(t, Totals{RecordsPerSecond: 400, BytesPerSecond: 40000, LagRecords: ptr(int64(20)), MaxLagSeconds: ptr(0.2),
		Status: ptr(statusTruncated)}, r.Totals)
	require.Equal(t, []TaskEntry{
		{Task: 0, WorkerID: "w1", State: store.StateRunning, Partitions: 2, RecordsPerSecond: 300, BytesPerSecond: 30000},
		{Task: 1, WorkerID: "w2", State: store.StateFailed, Partitions: 2},
		{Task: 2, State: store.StateUnassigned, Partitions: 1, RecordsPerSecond: 100, BytesPerSecond: 10000},
	}, r.ByTask)
	var kinds []string
	for _, v := range r.Verdicts {
		kinds = append(kinds, v.Kind)
	}
	require.Equal(t, []string{verdictStaleReports, verdictUnreported, verdictTasksMaxBound}, kinds)
	require.Equal(t, []int{0, 1}, r.Verdicts[0].TaskIDs)
	require.Equal(t, "1 of 5 partitions has no report yet (task 1): their task has not started replicating them", r.Verdicts[1].Message)

	// Task configs that do not list their partitions: the reports count.
	f.TaskConfigs = []store.TaskConfig{{Connector: "c", Task: 0}, {Connector: "c", Task: 1}, {Connector: "c", Task: 2}}
	r = f.Build()
	require.Equal(t, 4, r.Partitions)
	require.Equal(t, []int{2, 1, 1}, []int{r.ByTask[0].Partitions, r.ByTask[1].Partitions, r.ByTask[2].Partitions})

	// Nothing known: zero totals, no status, empty lists.
	r = Facts{Name: "c", TasksMax: 1, Now: now}.Build()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	require.JSONEq(t, `{"name":"c","tasks_max":1,"partitions":0,"tasks":0,`+
		`"totals":{"records_per_second":0,"bytes_per_second":0,"lag_records":null,"max_lag_seconds":null,"status":null},`+
		`"by_partition":[],"by_task":[],"verdicts":[{"kind":"no_reports","severity":"info","message":"no task has reported yet: `+
		`the connector has no tasks (its source partitions are not listed yet, none passes its topic filters, or it is stopped)","tasks":0}],"moves":[]}`, string(b))
}

func TestStatusOrder(t *testing.T) {
	t.Parallel()
	require.Equal(t, statusStop, worseStatus(statusOK, statusStop))
	require.Equal(t, statusTruncated, worseStatus(statusTruncated, statusStop))
	require.Equal(t, "lagging", worseStatus(statusOK, "lagging"), "an unknown status is worse than ok")
	require.Equal(t, statusStall, worseStatus("lagging", statusStall))
	require.Equal(t, statusPaused, worseStatus(statusOK, statusPaused), "paused is not ok")
	require.Equal(t, statusWarn, worseStatus(statusPaused, statusWarn), "any trouble is worse than paused")
	require.Equal(t, "lagging", worseStatus(statusPaused, "lagging"), "an unknown status ranks as warn")
}

// The moves by load the task configs keep are shown once per move, newest first, and on each task they changed.
func TestPartitionsReportShowsMoves(t *testing.T) {
	t.Parallel()
	move := func(at string, from, to int) string {
		b, err := json.Marshal(mirror.PartitionMove{At: at, FromTask: from, ToTask: to, Out: []string{"hot-0"}, In: []string{"cold-0"},
			Reason: "task carried 3.0x the mean load"})
		require.NoError(t, err)
		return string(b)
	}
	older, newer := move("2026-12-01T12:00:00Z", 0, 1), move("2026-12-01T12:01:00Z", 0, 2)
	f := Facts{Name: "c", TasksMax: 3, Now: time.Now(), TaskConfigs: []store.TaskConfig{
		{Connector: "c", Task: 0, Config: map[string]string{mirror.TaskLastMoveConfig: newer}},
		{Connector: "c", Task: 1, Config: map[string]string{mirror.TaskLastMoveConfig: older}},
		{Connector: "c", Task: 2, Config: map[string]string{mirror.TaskLastMoveConfig: newer}},
		{Connector: "c", Task: 3, Config: map[string]string{mirror.TaskLastMoveConfig: "not json"}},
	}}
	r := f.Build()
	require.Len(t, r.Moves, 2, "each move once")
	require.Equal(t, "2026-12-01T12:01:00Z", r.Moves[0].At, "newest first")
	require.Equal(t, 2, r.Moves[0].ToTask)
	require.Equal(t, []string{"hot-0"}, r.Moves[1].Out)
	require.Equal(t, 1, r.ByTask[1].LastMove.ToTask)
	require.Equal(t, r.ByTask[0].LastMove, r.ByTask[2].LastMove)
	require.Nil(t, r.ByTask[3].LastMove, "an unreadable move is left out")
}
