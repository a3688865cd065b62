package parallelism

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
)

// staleAfter is how old a partition's report may be before it is stale. Source tasks publish every ~2 s, so
// this is more than three missed reports, with room for a slow write: a stale partition's task is not running,
// or cannot reach PostgreSQL, and its figures are the last it reported, not the present.
const staleAfter = 10 * time.Second

// Report is GET /connectors/{c}/partitions, a kmirror extension: where each source partition of a
// MirrorSourceConnector stands, which task and worker replicate it, how the traffic spreads, and what that says
// about the parallelism (docs/partitions.md). The partition is MM2's unit of work, so this is the view that
// shows a hot partition no task count can help.
type Report struct {
	Name     string `json:"name"`
	TasksMax int    `json:"tasks_max"`
	// Partitions counts the source partitions the connector replicates: those of its task configs
	// (task.assigned.partitions), or the reported ones when the task configs do not say.
	Partitions int `json:"partitions"`
	// Tasks counts the tasks in state RUNNING.
	Tasks       int              `json:"tasks"`
	Totals      Totals           `json:"totals"`
	ByPartition []PartitionEntry `json:"by_partition"`
	ByTask      []TaskEntry      `json:"by_task"`
	Verdicts    []Verdict        `json:"verdicts"`
	// Moves are the last moves by measured load of the current tasks, newest first (one per move).
	Moves []Move `json:"moves"`
}

// Move is a hand-over the connector's planner made by measured load: Out went from FromTask to ToTask and In
// the other way (mirror.PartitionMove, as the task configs keep it).
type Move = mirror.PartitionMove

// Totals aggregates the partitions. Rates add up fresh reports only; lags take every report, stale
// ones included, since a stale lag is a lower bound of the present one.
type Totals struct {
	RecordsPerSecond float64 `json:"records_per_second"`
	BytesPerSecond   float64 `json:"bytes_per_second"`
	// LagRecords is null when no partition knows its lag yet; MaxLagSeconds likewise.
	LagRecords    *int64   `json:"lag_records"`
	MaxLagSeconds *float64 `json:"max_lag_seconds"`
	// Status is the worst partition status, null without partitions.
	Status *string `json:"status"`
}

// PartitionEntry is one source partition, as its task last reported it.
type PartitionEntry struct {
	Topic            string   `json:"topic"`
	Partition        int32    `json:"partition"`
	RemoteTopic      string   `json:"remote_topic"`
	Task             int      `json:"task"`
	WorkerID         string   `json:"worker_id"`
	ReplicatedOffset int64    `json:"replicated_offset"` // the next source offset to replicate
	EndOffset        *int64   `json:"end_offset"`
	LagRecords       *int64   `json:"lag_records"`
	LagSeconds       *float64 `json:"lag_seconds"`
	RecordsPerSecond float64  `json:"records_per_second"`
	BytesPerSecond   float64  `json:"bytes_per_second"`
	// Share is the partition's fraction of the connector's records/s over fresh reports; null when stale.
	Share *float64 `json:"share"`
	// Status is the reported one, or stop for a stale report (whichever is worse).
	Status           string  `json:"status"`
	LastReplicatedAt *string `json:"last_replicated_at"`
	UpdatedAt        string  `json:"updated_at"`
	Stale            bool    `json:"stale"`
}

// TaskEntry is one task of the connector's current task set.
type TaskEntry struct {
	Task     int    `json:"task"`
	WorkerID string `json:"worker_id"`
	State    string `json:"state"`
	// Partitions counts the task's partitions by its config, or its reported partitions when the config does
	// not say. The rates add up its fresh reports.
	Partitions       int     `json:"partitions"`
	RecordsPerSecond float64 `json:"records_per_second"`
	BytesPerSecond   float64 `json:"bytes_per_second"`
	// Pipeline is what the task last measured of its pipeline; null until it has (capacity advice).
	Pipeline *TaskPipeline `json:"pipeline"`
	// LastMove is the task's last move by measured load; null when none changed its partitions.
	LastMove *Move `json:"last_move"`
}

// TasksMax is the connector's tasks.max: Connect's default 1 when absent. Stored configs were validated, so
// a value that does not parse cannot occur; it counts as the default too.
func TasksMax(cfg map[string]string) int {
	n, err := strconv.Atoi(strings.TrimSpace(cfg["tasks.max"]))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// databaseNow is the database's clock, read off the workers' heartbeat ages (both computed by the same query):
// report instants are stamped by the database, so staleness is judged by its clock, not this worker's. Without
// workers the local clock has to do.
func databaseNow(workers []store.Worker) time.Time {
	if len(workers) == 0 {
		return time.Now()
	}
	return workers[0].HeartbeatAt.Add(workers[0].HeartbeatAge)
}

// Facts is what the store says about one connector's partitions, tasks and the cluster.
type Facts struct {
	Name        string
	TasksMax    int
	Stats       []kmtype.PartitionStat // by topic and partition
	TaskStats   []store.TaskStat       // by task id
	TaskConfigs []store.TaskConfig     // by task id
	Statuses    []store.Status         // of the tasks, by task id
	Now         time.Time              // the database's clock
	LiveWorkers int
}

// Build builds the response from the facts: pure, so the handler only reads.
func (f Facts) Build() Report {
	plan := plannedPartitions(f.TaskConfigs)
	out := Report{
		Name: f.Name, TasksMax: f.TasksMax,
		ByPartition: make([]PartitionEntry, 0, len(f.Stats)), ByTask: make([]TaskEntry, 0, len(f.TaskConfigs)),
		Moves: lastMoves(f.TaskConfigs),
	}

	totals := &out.Totals
	reported := make(map[mirror.TopicPartition]bool, len(f.Stats))
	for _, st := range f.Stats {
		reported[mirror.TopicPartition{Topic: st.Topic, Partition: st.Partition}] = true
		e := PartitionEntry{
			Topic: st.Topic, Partition: st.Partition, RemoteTopic: st.RemoteTopic, Task: st.Task, WorkerID: st.WorkerID,
			ReplicatedOffset: st.ReplicatedOffset, EndOffset: st.EndOffset, LagRecords: st.LagRecords,
			LagSeconds: finiteOrNil(st.LagSeconds), RecordsPerSecond: finiteOrZero(st.RecordsPerSecond),
			BytesPerSecond: finiteOrZero(st.BytesPerSecond), Status: st.Status, UpdatedAt: formatTime(st.UpdatedAt),
			Stale: f.Now.Sub(st.UpdatedAt) > staleAfter,
		}
		if st.LastReplicatedAt != nil {
			t := formatTime(*st.LastReplicatedAt)
			e.LastReplicatedAt = &t
		}
		if e.Stale {
			e.Status = worseStatus(e.Status, statusStop)
		} else {
			totals.RecordsPerSecond += e.RecordsPerSecond
			totals.BytesPerSecond += e.BytesPerSecond
		}
		out.ByPartition = append(out.ByPartition, e)
	}
	for i := range out.ByPartition {
		e := &out.ByPartition[i]
		if !e.Stale {
			e.Share = ptr(shareOf(e.RecordsPerSecond, totals.RecordsPerSecond))
		}
		if e.LagRecords != nil {
			totals.LagRecords = ptr(deref(totals.LagRecords) + *e.LagRecords)
		}
		if e.LagSeconds != nil && (totals.MaxLagSeconds == nil || *e.LagSeconds > *totals.MaxLagSeconds) {
			totals.MaxLagSeconds = ptr(*e.LagSeconds)
		}
		status := e.Status
		if totals.Status != nil {
			status = worseStatus(*totals.Status, status)
		}
		totals.Status = &status
	}

	byID := make(map[int]store.Status, len(f.Statuses))
	for _, st := range f.Statuses {
		byID[st.Task] = st
	}
	pipelines := make(map[int]*TaskPipeline, len(f.TaskStats))
	for _, ts := range f.TaskStats {
		pipelines[ts.Task] = &TaskPipeline{PipelineStat: ts.Pipeline, UpdatedAt: formatTime(ts.UpdatedAt),
			Stale: f.Now.Sub(ts.UpdatedAt) > staleAfter}
	}
	for _, tc := range f.TaskConfigs {
		st, ok := byID[tc.Task]
		t := TaskEntry{Task: tc.Task, WorkerID: st.WorkerID, State: st.State, Pipeline: pipelines[tc.Task]}
		if !ok {
			t.State = store.StateUnassigned
		}
		if t.State == store.StateRunning {
			out.Tasks++
		}
		if plan != nil {
			t.Partitions = len(plan[tc.Task])
		}
		if m, ok := decodeMove(tc.Config); ok {
			t.LastMove = &m
		}
		for _, e := range out.ByPartition {
			if e.Task != tc.Task {
				continue
			}
			if plan == nil {
				t.Partitions++
			}
			if !e.Stale {
				t.RecordsPerSecond += e.RecordsPerSecond
				t.BytesPerSecond += e.BytesPerSecond
			}
		}
		out.ByTask = append(out.ByTask, t)
	}

	var unreported []plannedPartition
	if plan != nil {
		for _, tc := range f.TaskConfigs {
			out.Partitions += len(plan[tc.Task])
			for _, tp := range plan[tc.Task] {
				if !reported[tp] {
					unreported = append(unreported, plannedPartition{TopicPartition: tp, Task: tc.Task})
				}
			}
		}
	} else {
		out.Partitions = len(f.Stats)
	}
	out.Verdicts = judgeParallelism(verdictFacts{Report: &out, Unreported: unreported, LiveWorkers: f.LiveWorkers})
	return out
}

// plannedPartition is a partition of a task's config.
type plannedPartition struct {
	mirror.TopicPartition
	Task int
}

// plannedPartitions reads task.assigned.partitions of every task config, by task id; nil when a config lacks
// it or does not parse, so that counts then come from the reports instead of a plan known only in part.
func plannedPartitions(tcs []store.TaskConfig) map[int][]mirror.TopicPartition {
	if len(tcs) == 0 {
		return nil
	}
	plan := make(map[int][]mirror.TopicPartition, len(tcs))
	for _, tc := range tcs {
		v, ok := tc.Config[mirror.TaskAssignedPartitionsConfig]
		if !ok {
			return nil
		}
		tps, err := mirror.DecodeAssignedPartitions(v)
		if err != nil {
			return nil
		}
		plan[tc.Task] = tps
	}
	return plan
}

// The partition statuses (docs/partitions.md, after Burrow's rules), best first. Paused (the connector is
// paused: the lag grows by design) is no health problem, but it is not ok either; any trouble ranks worse.
const (
	statusOK        = "ok"
	statusPaused    = "paused"
	statusWarn      = "warn"
	statusRewind    = "rewind"
	statusStall     = "stall"
	statusStop      = "stop"
	statusDeleted   = "deleted" // the source topic is gone; the connector's plan drops the partition next
	statusTruncated = "truncated"
)

var partitionStatuses = []string{statusOK, statusPaused, statusWarn, statusRewind, statusStall, statusStop, statusDeleted, statusTruncated}

// Statuses lists the partition statuses, best first.
func Statuses() []string { return slices.Clone(partitionStatuses) }

// statusRank orders statuses from best to worst. A status this worker does not know (a newer worker's) ranks
// as warn: something is not ok, and nothing says more.
func statusRank(s string) int {
	for i, known := range partitionStatuses {
		if s == known {
			return i
		}
	}
	return slices.Index(partitionStatuses, statusWarn)
}

func worseStatus(a, b string) string {
	if statusRank(b) > statusRank(a) {
		return b
	}
	return a
}

// finiteOrNil and finiteOrZero keep NaN and infinities, which PostgreSQL's double precision can hold, out of
// the JSON (which has none).
func finiteOrNil(v *float64) *float64 {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return nil
	}
	return v
}

func finiteOrZero(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// shareOf is records/s as a fraction of total, to 4 decimals (a hundredth of a percent); 0 without traffic.
func shareOf(records, total float64) float64 {
	if total <= 0 {
		return 0
	}
	return math.Round(records/total*1e4) / 1e4
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// decodeMove reads a task config's last move by load; false when it has none (or one this worker cannot read).
func decodeMove(config map[string]string) (Move, bool) {
	var m Move
	raw, ok := config[mirror.TaskLastMoveConfig]
	if !ok || json.Unmarshal([]byte(raw), &m) != nil {
		return m, false
	}
	return m, true
}

// lastMoves lists the moves the task configs keep, each once (both tasks of a move keep it), newest first.
func lastMoves(tcs []store.TaskConfig) []Move {
	out := []Move{}
	seen := map[string]bool{}
	for _, tc := range tcs {
		if m, ok := decodeMove(tc.Config); ok && !seen[tc.Config[mirror.TaskLastMoveConfig]] {
			seen[tc.Config[mirror.TaskLastMoveConfig]] = true
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b Move) int { return strings.Compare(b.At, a.At) })
	return out
}
