package parallelism

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kmirror/kmirror/kmtype"
)

// TaskPipeline is what a task last measured of its pipeline (kmtype.PipelineStat), with its age.
type TaskPipeline struct {
	kmtype.PipelineStat
	UpdatedAt string `json:"updated_at"`
	Stale     bool   `json:"stale"`
}

// Capacity advice: which side of a lagging task's pipeline is the bound, from where its poll loop spends its
// time, its worker's CPU and its clients' librdkafka statistics (docs/partitions.md, "Capacity advice").
const (
	verdictCPUBound    = "cpu_bound"
	verdictTargetBound = "target_bound"
	verdictSourceBound = "source_bound"
	verdictTaskBusy    = "task_busy"

	// cpuBoundShare of the worker's cores in use is a saturated worker: the Go scheduler and librdkafka's
	// threads leave little more to take.
	cpuBoundShare = 0.85
	// A loop that spends waitBoundFraction of its time waiting on one side is bounded by that side.
	waitBoundFraction = 0.5
	// A loop busy busyBoundFraction of its time is one core's worth of work: the task is its own bound.
	busyBoundFraction = 0.8
	// Batches below smallBatchShare of batch.size leave room that a longer linger fills.
	smallBatchShare = 0.25
	// fullBatchShare of batch.size is a full batch.
	fullBatchShare = 0.8
	// Round trips from highRTTMs on are a WAN's: compression pays for itself there.
	highRTTMs = 20.0
	// suggestedLingerMs is the linger that fills batches over a WAN without adding much latency to a lag
	// that is seconds already.
	suggestedLingerMs = 50
)

// capacityVerdicts classifies the lagging tasks by their fresh pipeline figures, one verdict per bound with
// every task it holds. Tasks without fresh figures are left to the other rules.
func capacityVerdicts(r *Report, lagging []int, tasksBound bool) []Verdict {
	var cpu = map[string][]TaskEntry{}
	var workers []string
	var target, source, busy []TaskEntry
	for _, id := range lagging {
		i := slices.IndexFunc(r.ByTask, func(t TaskEntry) bool { return t.Task == id })
		if i < 0 {
			continue
		}
		t := r.ByTask[i]
		p := t.Pipeline
		if p == nil || p.Stale || p.IntervalSeconds <= 0 {
			continue
		}
		switch {
		case p.WorkerCPUs > 0 && p.WorkerCPUCores >= cpuBoundShare*float64(p.WorkerCPUs):
			if _, ok := cpu[t.WorkerID]; !ok {
				workers = append(workers, t.WorkerID)
			}
			cpu[t.WorkerID] = append(cpu[t.WorkerID], t)
		case p.WaitTargetFraction >= waitBoundFraction:
			target = append(target, t)
		case p.WaitSourceFraction >= waitBoundFraction:
			source = append(source, t)
		case p.BusyFraction >= busyBoundFraction && !tasksBound:
			busy = append(busy, t) // with tasks.max short, tasks_max_bound says what to do
		}
	}
	var out []Verdict
	slices.Sort(workers)
	for _, w := range workers {
		out = append(out, cpuBound(w, cpu[w]))
	}
	if len(target) > 0 {
		out = append(out, targetBound(target))
	}
	if len(source) > 0 {
		out = append(out, sourceBound(source))
	}
	if len(busy) > 0 {
		out = append(out, taskBusy(busy))
	}
	return out
}

func cpuBound(worker string, ts []TaskEntry) Verdict {
	p := ts[0].Pipeline
	ids := entryIDs(ts)
	return Verdict{
		Kind: verdictCPUBound, Severity: severityWarning, WorkerID: worker, TaskIDs: ids,
		WorkerCPUCores: ptr(round2(p.WorkerCPUCores)), WorkerCPUs: ptr(p.WorkerCPUs),
		Message: fmt.Sprintf("worker %s uses %.2f of its %d CPUs and runs %s %s, which %s: its CPU is the bound; add workers "+
			"(the leader spreads the tasks over them)", worker, p.WorkerCPUCores, p.WorkerCPUs,
			plural(len(ids), "task", "tasks"), joinInts(ids), plural(len(ids), "lags", "lag")),
	}
}

// targetBound is the verdict on tasks that wait for the target: the producer's queue is full because the
// target acknowledges more slowly than the source delivers. What to change follows from the producer's figures.
func targetBound(ts []TaskEntry) Verdict {
	ids := entryIDs(ts)
	p := meanPipeline(ts)
	v := Verdict{
		Kind: verdictTargetBound, Severity: severityWarning, TaskIDs: ids,
		WaitTargetFraction: ptr(round2(p.WaitTargetFraction)), BatchSizeBytes: ptr(p.BatchSizeBytes), QueueMaxBytes: ptr(p.QueueMaxBytes),
		LingerMs: ptr(p.LingerMs), CompressionType: p.CompressionType, MaxInFlight: ptr(p.MaxInFlight),
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s for the target %.0f%% of %s time (its producer's queue is full: records wait to be sent or "+
		"acknowledged)", plural(len(ids), "task", "tasks"), joinInts(ids), plural(len(ids), "waits", "wait"),
		p.WaitTargetFraction*100, plural(len(ids), "its", "their"))
	settings := map[string]string{}
	var advice []string
	if pr := p.Producer; pr != nil {
		v.BatchAvgBytes, v.RTTAvgMs, v.ThrottleAvgMs, v.InFlightRequests = ptr(round2(pr.BatchAvgBytes)), ptr(round2(pr.RTTAvgMs)),
			ptr(round2(pr.ThrottleAvgMs)), ptr(pr.InFlightMax)
		fmt.Fprintf(&b, "; batches average %s (%.1f%% of batch.size %s), linger.ms %s, compression %s, broker round trip %.1f ms, "+
			"%d of %d requests in flight to one broker", formatBytes(pr.BatchAvgBytes), 100*pr.BatchAvgBytes/float64(max(p.BatchSizeBytes, 1)),
			formatBytes(float64(p.BatchSizeBytes)), formatFloat(p.LingerMs), p.CompressionType, pr.RTTAvgMs, pr.InFlightMax, p.MaxInFlight)
		if pr.ThrottleAvgMs >= 1 {
			advice = append(advice, fmt.Sprintf("the target throttles the producer %.0f ms per request on average: a quota on the target "+
				"cluster bounds the connector; raise it", pr.ThrottleAvgMs))
		}
		small := pr.Batches > 0 && pr.BatchAvgBytes < smallBatchShare*float64(p.BatchSizeBytes)
		queueBound := p.QueueMaxBytes > 0 && p.QueueMaxBytes < p.BatchSizeBytes
		if queueBound {
			// librdkafka sends a partition's batch when it reaches batch.size or has waited linger.ms; a queue
			// that cannot hold batch.size makes every batch wait out linger.ms.
			want := 4 * p.BatchSizeBytes
			settings["producer.override.buffer.memory"] = strconv.FormatInt(want, 10)
			advice = append(advice, fmt.Sprintf("the producer's queue holds %s (buffer.memory), less than one batch.size: batches "+
				"cannot fill, so each waits out linger.ms; raise buffer.memory to %d (4 × batch.size)", formatBytes(float64(p.QueueMaxBytes)), want))
		}
		if small && !queueBound && p.LingerMs < suggestedLingerMs {
			settings["producer.override.linger.ms"] = strconv.Itoa(suggestedLingerMs)
			advice = append(advice, fmt.Sprintf("raise linger.ms to %d so that each request carries more records", suggestedLingerMs))
		}
		if pr.Batches > 0 && pr.BatchAvgBytes >= fullBatchShare*float64(p.BatchSizeBytes) {
			settings["producer.override.batch.size"] = strconv.FormatInt(2*p.BatchSizeBytes, 10)
			advice = append(advice, fmt.Sprintf("batches are full: raise batch.size to %d", 2*p.BatchSizeBytes))
		}
		if pr.RTTAvgMs >= highRTTMs && (p.CompressionType == "none" || p.CompressionType == "") {
			settings["producer.override.compression.type"] = "lz4"
			advice = append(advice, fmt.Sprintf("set compression.type=lz4: with %.0f ms round trips, fewer bytes per request "+
				"is more records per trip", pr.RTTAvgMs))
		}
		if p.MaxInFlight > 0 && pr.InFlightMax >= int64(p.MaxInFlight) {
			advice = append(advice, "every request slot to a broker is in use: throughput is batch size × requests in flight ÷ "+
				"round trip, so larger batches are the lever")
		}
	}
	if len(advice) == 0 {
		advice = append(advice, "nothing in the producer's settings stands out: the target cluster (its brokers' disks, network "+
			"or replication) is the bound")
	}
	fmt.Fprintf(&b, ": %s", strings.Join(advice, "; "))
	v.Message = b.String()
	if len(settings) > 0 {
		v.SuggestedSettings = settings
	}
	return v
}

// sourceBound is the verdict on tasks that wait for source records although their partitions lag: fetching is
// the bound, which over a WAN means too little per round trip.
func sourceBound(ts []TaskEntry) Verdict {
	ids := entryIDs(ts)
	p := meanPipeline(ts)
	v := Verdict{
		Kind: verdictSourceBound, Severity: severityWarning, TaskIDs: ids, WaitSourceFraction: ptr(round2(p.WaitSourceFraction)),
		FetchMaxBytes: ptr(p.FetchMaxBytes), PartitionFetchBytes: ptr(p.PartitionMaxBytes),
	}
	rtt := ""
	if c := p.Consumer; c != nil && c.RTTAvgMs > 0 {
		v.RTTAvgMs = ptr(round2(c.RTTAvgMs))
		rtt = fmt.Sprintf(", fetch round trip %.1f ms", c.RTTAvgMs)
	}
	want := max(4*p.PartitionMaxBytes, 4<<20)
	v.SuggestedSettings = map[string]string{
		"source.consumer.max.partition.fetch.bytes": strconv.FormatInt(want, 10),
		"source.consumer.fetch.max.bytes":           strconv.FormatInt(max(p.FetchMaxBytes, want*int64(max(len(ts), 1))), 10),
	}
	v.Message = fmt.Sprintf("%s %s %s for source records %.0f%% of %s time although %s partitions lag%s: fetching is the bound; "+
		"raise max.partition.fetch.bytes (now %d) to %d and fetch.max.bytes (now %d) with it, so that each fetch carries more",
		plural(len(ids), "task", "tasks"), joinInts(ids), plural(len(ids), "waits", "wait"), p.WaitSourceFraction*100,
		plural(len(ids), "its", "their"), plural(len(ids), "its", "their"), rtt, p.PartitionMaxBytes, want, p.FetchMaxBytes)
	return v
}

// taskBusy is the verdict on lagging tasks whose loop is busy most of the time with every partition in a task
// of its own: one pipeline runs on one core at most, so only more source partitions (and tasks) split the work.
func taskBusy(ts []TaskEntry) Verdict {
	ids := entryIDs(ts)
	p := meanPipeline(ts)
	return Verdict{
		Kind: verdictTaskBusy, Severity: severityWarning, TaskIDs: ids, BusyFraction: ptr(round2(p.BusyFraction)),
		Message: fmt.Sprintf("%s %s %s records %.0f%% of %s time: a task is one pipeline and runs on one core at most; "+
			"more source partitions (and tasks.max with them) would split the work", plural(len(ids), "task", "tasks"), joinInts(ids),
			plural(len(ids), "handles", "handle"), p.BusyFraction*100, plural(len(ids), "its", "their")),
	}
}

// meanPipeline averages the figures of tasks (their settings are the connector's, so the first task's).
func meanPipeline(ts []TaskEntry) kmtype.PipelineStat {
	out := ts[0].Pipeline.PipelineStat
	if len(ts) == 1 {
		return out
	}
	n := float64(len(ts))
	out.WaitSourceFraction, out.WaitTargetFraction, out.BusyFraction = 0, 0, 0
	var pr kmtype.ClientFigures
	producers := 0.0
	for _, t := range ts {
		p := t.Pipeline
		out.WaitSourceFraction += p.WaitSourceFraction / n
		out.WaitTargetFraction += p.WaitTargetFraction / n
		out.BusyFraction += p.BusyFraction / n
		if c := p.Producer; c != nil {
			producers++
			pr.BatchAvgBytes += c.BatchAvgBytes
			pr.BatchAvgRecords += c.BatchAvgRecords
			pr.Batches += c.Batches
			pr.RTTAvgMs = max(pr.RTTAvgMs, c.RTTAvgMs)
			pr.ThrottleAvgMs = max(pr.ThrottleAvgMs, c.ThrottleAvgMs)
			pr.InFlightRequests += c.InFlightRequests
			pr.InFlightMax = max(pr.InFlightMax, c.InFlightMax)
		}
	}
	out.Producer = nil
	if producers > 0 {
		pr.BatchAvgBytes /= producers
		pr.BatchAvgRecords /= producers
		out.Producer = &pr
	}
	return out
}

func entryIDs(ts []TaskEntry) []int {
	return taskIDs(ts, func(t TaskEntry) int { return t.Task })
}

// formatBytes says a size the way an operator reads it: bytes, KiB or MiB.
func formatBytes(n float64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", n/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", n/(1<<10))
	}
	return fmt.Sprintf("%.0f B", n)
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }
