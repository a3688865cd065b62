package parallelism

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/kmtype"
)

// measured gives task i of tasks the pipeline figures p (fresh).
func measured(tasks []TaskEntry, i int, p kmtype.PipelineStat) []TaskEntry {
	if p.IntervalSeconds == 0 {
		p.IntervalSeconds = 2
	}
	tasks[i].Pipeline = &TaskPipeline{PipelineStat: p}
	return tasks
}

// producerSettings are librdkafka's defaults as a task reports them, with an idempotent producer.
func producerSettings(p kmtype.PipelineStat) kmtype.PipelineStat {
	p.BatchSizeBytes, p.LingerMs, p.CompressionType, p.MaxInFlight = 1000000, 5, "none", 5
	p.QueueMaxBytes = 1 << 30
	p.FetchMaxBytes, p.PartitionMaxBytes = 52428800, 1048576
	p.WorkerCPUs = 2
	return p
}

func TestCapacityAdvice(t *testing.T) {
	t.Parallel()
	// Two tasks with one partition each on two workers, partition 1 behind: neither tasks.max nor the workers
	// bound the connector, so the pipeline figures decide.
	behind := func(p kmtype.PipelineStat) *Report {
		parts := evenParts(2, 2, 800)
		parts[1].LagRecords, parts[1].LagSeconds, parts[1].Status = ptr(int64(50000)), ptr(30.0), statusOK
		return body(2, 2, parts, measured(running(2, "w1", "w2"), 1, producerSettings(p)))
	}
	wan := func(p kmtype.PipelineStat) kmtype.PipelineStat {
		p.Producer = &kmtype.ClientFigures{BatchAvgBytes: 14 << 10, BatchAvgRecords: 14, Batches: 400, RTTAvgMs: 48, InFlightMax: 5}
		return p
	}
	for _, tc := range []struct {
		name     string
		report   *Report
		want     string
		settings map[string]string
	}{{
		name:   "target bound over a WAN: linger, compression, in-flight slots",
		report: behind(wan(kmtype.PipelineStat{WaitTargetFraction: 0.71, WaitSourceFraction: 0.02, BusyFraction: 0.27, WorkerCPUCores: 0.6})),
		want: "target_bound (warning): task 1 waits for the target 71% of its time (its producer's queue is full: records wait to be sent or " +
			"acknowledged); batches average 14.0 KiB (1.4% of batch.size 976.6 KiB), " +
			"linger.ms 5, compression none, broker round trip 48.0 ms, 5 of 5 requests in flight to one broker: raise linger.ms to 50 " +
			"so that each request carries more records; set compression.type=lz4: with 48 ms round trips, fewer bytes per request is " +
			"more records per trip; every request slot to a broker is in use: throughput is batch size × requests in flight ÷ round " +
			"trip, so larger batches are the lever",
		settings: map[string]string{"producer.override.linger.ms": "50", "producer.override.compression.type": "lz4"},
	}, {
		name: "target bound by a quota",
		report: behind(kmtype.PipelineStat{WaitTargetFraction: 0.9, BusyFraction: 0.1, LingerMs: 100,
			Producer: &kmtype.ClientFigures{BatchAvgBytes: 600 << 10, Batches: 10, RTTAvgMs: 2, ThrottleAvgMs: 350, InFlightMax: 1}}),
		want: "target_bound (warning): task 1 waits for the target 90% of its time (its producer's queue is full: records wait to be sent or " +
			"acknowledged); batches average 600.0 KiB (61.4% of batch.size 976.6 KiB), " +
			"linger.ms 5, compression none, broker round trip 2.0 ms, 1 of 5 requests in flight to one broker: the target throttles " +
			"the producer 350 ms per request on average: a quota on the target cluster bounds the connector; raise it",
	}, {
		name: "target bound with nothing to tune",
		report: behind(kmtype.PipelineStat{WaitTargetFraction: 0.6, BusyFraction: 0.4,
			Producer: &kmtype.ClientFigures{BatchAvgBytes: 500 << 10, Batches: 10, RTTAvgMs: 3, InFlightMax: 2}}),
		want: "target_bound (warning): task 1 waits for the target 60% of its time (its producer's queue is full: records wait to be sent or " +
			"acknowledged); batches average 500.0 KiB (51.2% of batch.size 976.6 KiB), " +
			"linger.ms 5, compression none, broker round trip 3.0 ms, 2 of 5 requests in flight to one broker: nothing in the " +
			"producer's settings stands out: the target cluster (its brokers' disks, network or replication) is the bound",
	}, {
		name: "full batches",
		report: behind(kmtype.PipelineStat{WaitTargetFraction: 0.6, BusyFraction: 0.4,
			Producer: &kmtype.ClientFigures{BatchAvgBytes: 990000, Batches: 10, RTTAvgMs: 3, InFlightMax: 2}}),
		want: "target_bound (warning): task 1 waits for the target 60% of its time (its producer's queue is full: records wait to be sent or " +
			"acknowledged); batches average 966.8 KiB (99.0% of batch.size 976.6 KiB), " +
			"linger.ms 5, compression none, broker round trip 3.0 ms, 2 of 5 requests in flight to one broker: batches are full: " +
			"raise batch.size to 2000000",
		settings: map[string]string{"producer.override.batch.size": "2000000"},
	}, {
		name: "a queue smaller than a batch",
		report: func() *Report {
			r := behind(kmtype.PipelineStat{WaitTargetFraction: 0.99, BusyFraction: 0.01,
				Producer: &kmtype.ClientFigures{BatchAvgBytes: 64 << 10, Batches: 10, RTTAvgMs: 2}})
			r.ByTask[1].Pipeline.QueueMaxBytes, r.ByTask[1].Pipeline.LingerMs = 64<<10, 200
			return r
		}(),
		want: "target_bound (warning): task 1 waits for the target 99% of its time (its producer's queue is full: records wait to be sent or " +
			"acknowledged); batches average 64.0 KiB (6.6% of batch.size 976.6 KiB), " +
			"linger.ms 200, compression none, broker round trip 2.0 ms, 0 of 5 requests in flight to one broker: the producer's " +
			"queue holds 64.0 KiB (buffer.memory), less than one batch.size: batches cannot fill, so each waits out linger.ms; " +
			"raise buffer.memory to 4000000 (4 × batch.size)",
		settings: map[string]string{"producer.override.buffer.memory": "4000000"},
	}, {
		name: "source bound",
		report: behind(kmtype.PipelineStat{WaitSourceFraction: 0.8, BusyFraction: 0.2,
			Consumer: &kmtype.ClientFigures{RTTAvgMs: 120}}),
		want: "source_bound (warning): task 1 waits for source records 80% of its time although its partitions lag, fetch round trip " +
			"120.0 ms: fetching is the bound; raise max.partition.fetch.bytes (now 1048576) to 4194304 and fetch.max.bytes (now " +
			"52428800) with it, so that each fetch carries more",
		settings: map[string]string{"source.consumer.max.partition.fetch.bytes": "4194304", "source.consumer.fetch.max.bytes": "52428800"},
	}, {
		name:   "a busy loop with a partition of its own",
		report: behind(kmtype.PipelineStat{WaitSourceFraction: 0.03, WaitTargetFraction: 0.04, BusyFraction: 0.93}),
		want: "task_busy (warning): task 1 handles records 93% of its time: a task is one pipeline and runs on one core at most; " +
			"more source partitions (and tasks.max with them) would split the work",
	}, {
		name:   "a saturated worker comes first",
		report: behind(kmtype.PipelineStat{WaitTargetFraction: 0.7, BusyFraction: 0.3, WorkerCPUCores: 1.93}),
		want: "cpu_bound (warning): worker w2 uses 1.93 of its 2 CPUs and runs task 1, which lags: its CPU is the bound; add workers " +
			"(the leader spreads the tasks over them)",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := judgeParallelism(verdictFacts{Report: tc.report, LiveWorkers: 2})
			var lines []string
			var settings map[string]string
			for _, v := range got {
				lines = append(lines, fmt.Sprintf("%s (%s): %s", v.Kind, v.Severity, v.Message))
				if v.SuggestedSettings != nil {
					settings = v.SuggestedSettings
				}
			}
			require.Equal(t, []string{tc.want}, lines)
			require.Equal(t, tc.settings, settings)
		})
	}
}

func TestCapacityAdviceNeedsFreshFigures(t *testing.T) {
	t.Parallel()
	parts := evenParts(2, 2, 800)
	parts[1].LagRecords, parts[1].LagSeconds = ptr(int64(50000)), ptr(30.0)
	tasks := measured(running(2, "w1", "w2"), 1, producerSettings(kmtype.PipelineStat{WaitTargetFraction: 0.9}))
	tasks[1].Pipeline.Stale = true
	got := judgeParallelism(verdictFacts{Report: body(2, 2, parts, tasks), LiveWorkers: 2})
	require.Len(t, got, 1)
	require.Equal(t, verdictPipelineBound, got[0].Kind, "stale figures say nothing of the present: the generic verdict stands")
}

func TestCapacityAdviceLeavesTasksMaxToItsRule(t *testing.T) {
	t.Parallel()
	parts := evenParts(8, 2, 800)
	parts[0].LagRecords, parts[0].LagSeconds = ptr(int64(50000)), ptr(30.0)
	tasks := measured(running(2, "w1", "w2"), 0, producerSettings(kmtype.PipelineStat{BusyFraction: 0.95}))
	got := judgeParallelism(verdictFacts{Report: body(2, 8, parts, tasks), LiveWorkers: 2})
	var kinds []string
	for _, v := range got {
		kinds = append(kinds, v.Kind)
	}
	require.Equal(t, []string{verdictTasksMaxBound}, kinds, "a busy task short of tasks.max: raising tasks.max is the advice")
}
