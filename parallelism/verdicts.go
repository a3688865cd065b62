package parallelism

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/store"
)

// Verdict is one conclusion GET /connectors/{c}/partitions draws about a connector's parallelism, in words
// (Message) and in fields, so that a dashboard can both show and act on it. Kind says which rule spoke
// (docs/partitions.md); only the fields that rule uses are present.
type Verdict struct {
	Kind string `json:"kind"`
	// Severity is ok (healthy), info (worth knowing, nothing to do) or warning (something to act on).
	Severity string `json:"severity"`
	Message  string `json:"message"`

	TasksMax          *int     `json:"tasks_max,omitempty"`
	Partitions        *int     `json:"partitions,omitempty"`
	Tasks             *int     `json:"tasks,omitempty"`
	Unused            *int     `json:"unused,omitempty"`
	SuggestedTasksMax *int     `json:"suggested_tasks_max,omitempty"`
	TaskIDs           []int    `json:"task_ids,omitempty"`
	Workers           *int     `json:"workers,omitempty"`
	LiveWorkers       *int     `json:"live_workers,omitempty"`
	Topic             string   `json:"topic,omitempty"`
	Partition         *int32   `json:"partition,omitempty"`
	Share             *float64 `json:"share,omitempty"`
	RecordsPerSecond  *float64 `json:"records_per_second,omitempty"`
	MaxLagSeconds     *float64 `json:"max_lag_seconds,omitempty"`
	LagRecords        *int64   `json:"lag_records,omitempty"`

	// Capacity advice (partitions_capacity.go).
	WorkerID            string   `json:"worker_id,omitempty"`
	WorkerCPUCores      *float64 `json:"worker_cpu_cores,omitempty"`
	WorkerCPUs          *int     `json:"worker_cpus,omitempty"`
	WaitSourceFraction  *float64 `json:"wait_source_fraction,omitempty"`
	WaitTargetFraction  *float64 `json:"wait_target_fraction,omitempty"`
	BusyFraction        *float64 `json:"busy_fraction,omitempty"`
	BatchAvgBytes       *float64 `json:"batch_avg_bytes,omitempty"`
	BatchSizeBytes      *int64   `json:"batch_size_bytes,omitempty"`
	QueueMaxBytes       *int64   `json:"queue_max_bytes,omitempty"`
	LingerMs            *float64 `json:"linger_ms,omitempty"`
	CompressionType     string   `json:"compression_type,omitempty"`
	RTTAvgMs            *float64 `json:"rtt_avg_ms,omitempty"`
	ThrottleAvgMs       *float64 `json:"throttle_avg_ms,omitempty"`
	InFlightRequests    *int64   `json:"in_flight_requests,omitempty"`
	MaxInFlight         *int     `json:"max_in_flight,omitempty"`
	FetchMaxBytes       *int64   `json:"fetch_max_bytes,omitempty"`
	PartitionFetchBytes *int64   `json:"max_partition_fetch_bytes,omitempty"`
	// SuggestedSettings are connector config changes the advice proposes, ready for PUT /connectors/{c}/config.
	SuggestedSettings map[string]string `json:"suggested_settings,omitempty"`
}

// The verdict kinds.
const (
	verdictNoReports     = "no_reports"
	verdictStaleReports  = "stale_reports"
	verdictUnreported    = "unreported_partitions"
	verdictUnhealthy     = "unhealthy_partitions"
	verdictStraggler     = "straggler"
	verdictTasksMaxBound = "tasks_max_bound"
	verdictWorkersBound  = "workers_bound"
	verdictPipelineBound = "pipeline_bound"
	verdictUnusableSlots = "unusable_task_slots"
	verdictCaughtUp      = "caught_up"
	verdictKeepingUp     = "keeping_up"
	verdictPaused        = "paused"
	severityOK           = "ok"
	severityInfo         = "info"
	severityWarning      = "warning"
)

// Kinds lists every verdict kind, in the order the rules speak (the capacity advice among them).
func Kinds() []string {
	return []string{verdictNoReports, verdictStaleReports, verdictUnreported, verdictUnhealthy,
		verdictStraggler, verdictTasksMaxBound, verdictWorkersBound, verdictCPUBound, verdictTargetBound, verdictSourceBound,
		verdictTaskBusy, verdictPipelineBound, verdictUnusableSlots, verdictCaughtUp, verdictKeepingUp, verdictPaused}
}

// Severities lists the severities of verdicts, least first.
func Severities() []string { return []string{severityOK, severityInfo, severityWarning} }

// listedPartitionsLimit is how many partitions a message names before "and N more".
const listedPartitionsLimit = 5

const (
	// stragglerMinRecordsPerSecond is the connector traffic below which no partition is called a straggler:
	// at a trickle, shares are noise (one burst of 50 records makes a partition "hot"), and a partition that
	// carries most of 100 records/s is far from what one task can move.
	stragglerMinRecordsPerSecond = 100
	// stragglerMinShare is the least share a straggler carries, whatever the partition count (see isStraggler).
	stragglerMinShare = 0.25
	// behindLagSeconds is the lag from which a partition counts as behind although its lag falls: in steady
	// state lag_seconds is the time a record spends in flight (a fetch, a linger, a round trip), well under a
	// second or two; 10 s is a backlog that more capacity would drain sooner.
	behindLagSeconds = 10
)

// verdictFacts is what judgeParallelism rules on.
type verdictFacts struct {
	Report *Report // everything but its verdicts
	// Unreported lists the partitions of the task configs no task has reported yet (nil when the task configs
	// do not list their partitions).
	Unreported  []plannedPartition
	LiveWorkers int // the registered workers (GET /workers)
}

// judgeParallelism draws the verdicts: first what the reports cover (none, stale, missing), then unhealthy
// partitions, stragglers, what bounds the capacity (tasks.max, workers), unusable task slots, and last the
// positive verdict when nothing else spoke of a problem. The list is empty only when everything reported is
// fine but some lag is not known yet.
func judgeParallelism(f verdictFacts) []Verdict {
	r := f.Report
	out := []Verdict{}
	if len(r.ByPartition) == 0 {
		v := Verdict{Kind: verdictNoReports, Severity: severityInfo, Tasks: ptr(r.Tasks)}
		if len(r.ByTask) == 0 {
			v.Message = "no task has reported yet: the connector has no tasks (its source partitions are not listed yet, " +
				"none passes its topic filters, or it is stopped)"
		} else {
			v.Message = fmt.Sprintf("no task has reported yet: %d of %d %s RUNNING", r.Tasks, len(r.ByTask), plural(len(r.ByTask), "task is", "tasks are"))
		}
		if r.Partitions > 0 {
			v.Partitions = ptr(r.Partitions)
		}
		out = append(out, v)
		return append(out, unusableSlots(r)...)
	}

	var fresh, stale []PartitionEntry
	for _, e := range r.ByPartition {
		if e.Stale {
			stale = append(stale, e)
		} else {
			fresh = append(fresh, e)
		}
	}
	if len(stale) > 0 {
		tasks := taskIDs(stale, func(e PartitionEntry) int { return e.Task })
		out = append(out, Verdict{
			Kind: verdictStaleReports, Severity: severityWarning, Partitions: ptr(len(stale)), TaskIDs: tasks,
			Message: fmt.Sprintf("no report for %d %s (%s %s) in more than %d s: the task is not running or cannot reach PostgreSQL; "+
				"the figures shown are the last reported", len(stale), plural(len(stale), "partition", "partitions"),
				plural(len(tasks), "task", "tasks"), joinInts(tasks), int(staleAfter.Seconds())),
		})
	}
	if len(f.Unreported) > 0 {
		tasks := taskIDs(f.Unreported, func(p plannedPartition) int { return p.Task })
		out = append(out, Verdict{
			Kind: verdictUnreported, Severity: severityWarning, Partitions: ptr(len(f.Unreported)), TaskIDs: tasks,
			Message: fmt.Sprintf("%d of %d partitions %s no report yet (%s %s): their task has not started replicating them",
				len(f.Unreported), r.Partitions, plural(len(f.Unreported), "has", "have"), plural(len(tasks), "task", "tasks"), joinInts(tasks)),
		})
	}
	paused := pausedVerdict(fresh)
	out = append(out, paused...)
	var unhealthy []PartitionEntry
	for _, e := range fresh {
		if statusRank(e.Status) >= statusRank(statusRewind) {
			unhealthy = append(unhealthy, e)
		}
	}
	if len(unhealthy) > 0 {
		names := make([]string, len(unhealthy))
		for i, e := range unhealthy {
			names[i] = partitionName(e) + " " + e.Status
		}
		out = append(out, Verdict{
			Kind: verdictUnhealthy, Severity: severityWarning, Partitions: ptr(len(unhealthy)),
			TaskIDs: taskIDs(unhealthy, func(e PartitionEntry) int { return e.Task }),
			Message: fmt.Sprintf("%d %s not replicating normally (%s): more capacity will not help; "+
				"see the connector's notices and its tasks' status", len(unhealthy), plural(len(unhealthy), "partition is", "partitions are"),
				listNames(names)),
		})
	}

	total := r.Totals.RecordsPerSecond
	for _, e := range fresh {
		if !isStraggler(e.RecordsPerSecond, total, len(fresh)) {
			continue
		}
		share := shareOf(e.RecordsPerSecond, total)
		v := Verdict{
			Kind: verdictStraggler, Severity: severityInfo, Topic: e.Topic, Partition: ptr(e.Partition), Share: ptr(share),
			RecordsPerSecond: ptr(e.RecordsPerSecond),
			Message: fmt.Sprintf("partition %s carries %.0f%% of the connector's traffic: a straggler; more tasks will not help, "+
				"more source partitions will", partitionName(e), share*100),
		}
		if isBehind(e) {
			v.Severity = severityWarning
		}
		out = append(out, v)
	}

	var behind []PartitionEntry
	for _, e := range fresh {
		if isBehind(e) {
			behind = append(behind, e)
		}
	}
	lagging := taskIDs(behind, func(e PartitionEntry) int { return e.Task })
	used := map[string]bool{} // the workers running the connector's tasks
	for _, t := range r.ByTask {
		if t.State == store.StateRunning && t.WorkerID != "" {
			used[t.WorkerID] = true
		}
	}
	tasksBound := len(lagging) > 0 && r.TasksMax < r.Partitions
	workersBound := len(lagging) > 0 && r.Tasks > len(used) && len(used) < f.LiveWorkers
	if tasksBound {
		out = append(out, Verdict{
			Kind: verdictTasksMaxBound, Severity: severityWarning, TasksMax: ptr(r.TasksMax), Partitions: ptr(r.Partitions),
			TaskIDs: lagging, SuggestedTasksMax: ptr(r.Partitions),
			Message: fmt.Sprintf("tasks.max %d for %d partitions and %d %s lag: raise tasks.max up to %d",
				r.TasksMax, r.Partitions, len(lagging), plural(len(lagging), "task has", "tasks have"), r.Partitions),
		})
	}
	if workersBound {
		out = append(out, Verdict{
			Kind: verdictWorkersBound, Severity: severityWarning, Tasks: ptr(r.Tasks), Workers: ptr(len(used)),
			LiveWorkers: ptr(f.LiveWorkers), TaskIDs: lagging,
			Message: fmt.Sprintf("%d tasks run on %d of %d workers and %d %s lag: spread over more workers they would get more CPU "+
				"and network; the leader spreads each connector's tasks evenly, so look in GET /workers for workers that are draining "+
				"or late with their heartbeat", r.Tasks, len(used), f.LiveWorkers, len(lagging), plural(len(lagging), "task has", "tasks have")),
		})
	}
	capacity := capacityVerdicts(r, lagging, tasksBound)
	out = append(out, capacity...)
	// Behind with every partition in its own task and the tasks spread, and no figures that say more:
	// parallelism is not what is short (ARCHITECTURE.md §1: over a WAN, batching and compression matter more
	// than the task count).
	if len(behind) > 0 && !tasksBound && !workersBound && len(capacity) == 0 {
		out = append(out, Verdict{
			Kind: verdictPipelineBound, Severity: severityWarning, Partitions: ptr(len(behind)), TaskIDs: lagging,
			Message: fmt.Sprintf("%d %s behind (%s %s) although neither tasks.max nor the workers bound the connector: each task's "+
				"pipeline is the limit; over a WAN raise batch.size and linger.ms, set compression.type, and raise the consumer's "+
				"fetch sizes", len(behind), plural(len(behind), "partition is", "partitions are"),
				plural(len(lagging), "task", "tasks"), joinInts(lagging)),
		})
	}

	out = append(out, unusableSlots(r)...)

	if len(stale) > 0 || len(f.Unreported) > 0 || len(unhealthy) > 0 || len(behind) > 0 || len(paused) > 0 {
		return out
	}
	caughtUp := true
	for _, e := range fresh {
		if e.LagRecords == nil {
			return out // an end offset not seen yet: nothing to say
		}
		caughtUp = caughtUp && *e.LagRecords == 0
	}
	switch {
	case caughtUp && total == 0:
		out = append(out, Verdict{Kind: verdictCaughtUp, Severity: severityOK, Partitions: ptr(len(fresh)), RecordsPerSecond: ptr(total),
			Message: "caught up, no traffic: every partition's lag is 0 and no records are arriving"})
	case caughtUp:
		out = append(out, Verdict{Kind: verdictCaughtUp, Severity: severityOK, Partitions: ptr(len(fresh)), RecordsPerSecond: ptr(total),
			Message: "caught up: every partition's lag is 0"})
	default:
		v := Verdict{Kind: verdictKeepingUp, Severity: severityOK, Partitions: ptr(len(fresh)), MaxLagSeconds: r.Totals.MaxLagSeconds,
			Message: "keeping up: no partition is behind"}
		if m := r.Totals.MaxLagSeconds; m != nil {
			v.Message += fmt.Sprintf(" (max lag %.1f s)", *m)
		}
		out = append(out, v)
	}
	return out
}

// pausedVerdict says that the connector is paused when fresh partitions report so: their lag is a backlog that
// grows until the resume, not a lack of capacity, so no capacity verdict speaks of them (isBehind) and the
// positive verdicts stay silent.
func pausedVerdict(fresh []PartitionEntry) []Verdict {
	var n int
	var lag *int64
	var maxLag *float64
	for _, e := range fresh {
		if e.Status != statusPaused {
			continue
		}
		n++
		if e.LagRecords != nil {
			lag = ptr(deref(lag) + *e.LagRecords)
		}
		if e.LagSeconds != nil && (maxLag == nil || *e.LagSeconds > *maxLag) {
			maxLag = ptr(*e.LagSeconds)
		}
	}
	if n == 0 {
		return nil
	}
	v := Verdict{Kind: verdictPaused, Severity: severityInfo, Partitions: ptr(n), LagRecords: lag, MaxLagSeconds: maxLag}
	parts := fmt.Sprintf("%d %s", n, plural(n, "partition is", "partitions are"))
	switch {
	case lag == nil:
		v.Message = fmt.Sprintf("the connector is paused: %s not replicated; records that arrive wait until it is resumed", parts)
	case *lag == 0:
		v.Message = fmt.Sprintf("the connector is paused: %s not replicated, caught up so far (lag 0); records that arrive wait "+
			"until it is resumed", parts)
	default:
		v.Message = fmt.Sprintf("the connector is paused: %s not replicated and %s backlog of %d %s grows until it is resumed",
			parts, plural(n, "its", "their"), *lag, plural(int(min(*lag, 2)), "record", "records"))
		if maxLag != nil {
			v.Message += fmt.Sprintf(" (max lag %.1f s)", *maxLag)
		}
		v.Message += "; nothing to tune"
	}
	return []Verdict{v}
}

// unusableSlots is the verdict on a tasks.max above the partition count: the connector makes one task per
// partition at most, so the extra slots stay empty whatever the workers.
func unusableSlots(r *Report) []Verdict {
	if r.Partitions == 0 || r.TasksMax <= r.Partitions {
		return nil
	}
	unused := r.TasksMax - r.Partitions
	return []Verdict{{
		Kind: verdictUnusableSlots, Severity: severityInfo, TasksMax: ptr(r.TasksMax), Partitions: ptr(r.Partitions),
		Tasks: ptr(r.Partitions), Unused: ptr(unused),
		Message: fmt.Sprintf("tasks.max %d, %d partitions: %d tasks run, %d %s cannot be used", r.TasksMax, r.Partitions,
			r.Partitions, unused, plural(unused, "slot", "slots")),
	}}
}

// isStraggler says whether a partition carrying records of the connector's total records/s over n fresh
// partitions is a straggler. One task serves a partition, so a partition carrying far more than its fair share
// (1/n) caps the connector: once its task is saturated nothing but splitting the partition helps. Twice the
// fair share is "far more", beyond the ordinary skew of keyed topics. Past 8 partitions twice the fair share
// falls below a quarter, where a partition still leaves the other tasks most of the work and its own task
// bounds nothing; so the share must also be at least 25%. With 2 partitions the rule asks for 100% (the other
// one idle), with 3 for 67%, with 4 for 50%. Below stragglerMinRecordsPerSecond, no partition is one.
func isStraggler(records, total float64, n int) bool {
	if n < 2 || total < stragglerMinRecordsPerSecond {
		return false
	}
	return records/total >= max(2/float64(n), stragglerMinShare)
}

// isBehind says whether a fresh partition falls behind in a way more capacity can help with: it has lag and
// either its lag does not fall while its position moves (warn), or its lag is a backlog of behindLagSeconds or
// more. A partition in stall, stop, rewind or truncated is unhealthy rather than short of capacity; one that is
// paused is not replicated on purpose.
func isBehind(e PartitionEntry) bool {
	if e.Stale || e.LagRecords == nil || *e.LagRecords <= 0 {
		return false
	}
	switch e.Status {
	case statusWarn:
		return true
	case statusOK:
		return e.LagSeconds != nil && *e.LagSeconds >= behindLagSeconds
	}
	return false
}

func partitionName(e PartitionEntry) string {
	return mirror.TopicPartition{Topic: e.Topic, Partition: e.Partition}.String()
}

// taskIDs returns the distinct tasks of items, sorted.
func taskIDs[T any](items []T, task func(T) int) []int {
	var ids []int
	for _, it := range items {
		ids = append(ids, task(it))
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

func joinInts(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ", ")
}

// listNames joins names, the first listedPartitionsLimit of them and a count of the rest.
func listNames(names []string) string {
	if len(names) <= listedPartitionsLimit {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:listedPartitionsLimit], ", ") + fmt.Sprintf(" and %d more", len(names)-listedPartitionsLimit)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
