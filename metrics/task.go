package metrics

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TaskLabels name one run of a source task.
type TaskLabels struct {
	Connector string
	Task      int
}

// SourceTask is the task-level compat metrics of a source task: Connect's offset-commit-{avg,max}-time-ms
// (connector-task-metrics) and source-record-active-count{,-max,-avg} (source-task-metrics). Both are fed
// by the task's committer, every commit round (100 ms), never by the per-record hot path. Safe for
// concurrent use.
type SourceTask struct {
	r       *Registry
	labels  TaskLabels
	seq     uint64
	compat  []string // connector (jmx-sanitized), task
	removed atomic.Bool

	mu         sync.Mutex
	commits    window  // successful commit rounds: duration in ms
	active     window  // samples of the records in flight
	lastActive float64 // Connect's Value stat: the last sample (0 before the first)
}

// SourceTask returns new metrics for a run of the task named by l. Each run gets its own: a run that ends
// removes only what it made, and of two runs with the same labels the newest is exported.
func (r *Registry) SourceTask(l TaskLabels) *SourceTask {
	r.tkMu.Lock()
	defer r.tkMu.Unlock()
	r.tkSeq++
	t := &SourceTask{r: r, labels: l, seq: r.tkSeq,
		compat: []string{jmxSanitize(validLabel(l.Connector)), strconv.Itoa(l.Task)}}
	r.tasks[l] = t
	return t
}

// Committed records a successful commit round that took d. Like Connect, which records a flush that had
// nothing to write too, a round with nothing new to store counts: an idle task's average is then about 0
// rather than NaN, and one idle task does not turn the dashboard's sum() into NaN.
func (t *SourceTask) Committed(d time.Duration, now time.Time) {
	ms := float64(d) / float64(time.Millisecond)
	t.mu.Lock()
	t.commits.record(ms, true, 1, now.UnixMilli())
	t.mu.Unlock()
}

// InFlight records a sample of the records the task has handed to its producer and not yet seen
// acknowledged (or failed), summed over its partitions.
func (t *SourceTask) InFlight(records int, now time.Time) {
	v := float64(records)
	t.mu.Lock()
	t.active.record(v, true, 1, now.UnixMilli())
	t.lastActive = v
	t.mu.Unlock()
}

// Remove deletes the run's series. Calls on a removed SourceTask change nothing that is exported.
func (t *SourceTask) Remove() {
	if t.removed.Swap(true) {
		return
	}
	r := t.r
	r.tkMu.Lock()
	defer r.tkMu.Unlock()
	if r.tasks[t.labels] == t {
		delete(r.tasks, t.labels)
	}
}

var (
	compatTaskLabels    = []string{"connector", "task"}
	descOffsetCommitAvg = prometheus.NewDesc("kafka_connect_connector_task_offset_commit_avg_time_ms", "Connect offset-commit-avg-time-ms: average duration of the task's successful offset commits to PostgreSQL (2 x 30 s window; NaN when empty).", compatTaskLabels, nil)
	descOffsetCommitMax = prometheus.NewDesc("kafka_connect_connector_task_offset_commit_max_time_ms", "Connect offset-commit-max-time-ms: longest successful offset commit of the task (2 x 30 s window; NaN when empty).", compatTaskLabels, nil)
	descActiveCount     = prometheus.NewDesc("kafka_connect_source_task_source_record_active_count", "Connect source-record-active-count: records handed to the producer and not yet acknowledged, as last sampled.", compatTaskLabels, nil)
	descActiveCountMax  = prometheus.NewDesc("kafka_connect_source_task_source_record_active_count_max", "Connect source-record-active-count-max: the largest sample of records in flight (2 x 30 s window; NaN when empty).", compatTaskLabels, nil)
	descActiveCountAvg  = prometheus.NewDesc("kafka_connect_source_task_source_record_active_count_avg", "Connect source-record-active-count-avg: the average sample of records in flight (2 x 30 s window; NaN when empty).", compatTaskLabels, nil)
	taskCollectorDescs  = []*prometheus.Desc{descOffsetCommitAvg, descOffsetCommitMax, descActiveCount, descActiveCountMax, descActiveCountAvg}
)

type taskCollector struct{ r *Registry }

func (c taskCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, taskCollectorDescs...)
}

func (c taskCollector) Collect(ch chan<- prometheus.Metric) {
	// Two connectors whose names sanitize alike would export the same labels: the newest wins, as for
	// partitions.
	runs := newestFirst(&c.r.tkMu, c.r.tasks, func(t *SourceTask) uint64 { return t.seq })
	runs = firstOfEach(runs, func(t *SourceTask) [2]string { return [2]string(t.compat) })
	nowMs := time.Now().UnixMilli()
	for _, t := range runs {
		t.mu.Lock()
		commits, active, last := t.commits.measure(nowMs), t.active.measure(nowMs), t.lastActive
		t.mu.Unlock()
		emitGauges(ch, t.compat, []gaugeValue{{descOffsetCommitAvg, commits.avg}, {descOffsetCommitMax, commits.max},
			{descActiveCount, last}, {descActiveCountMax, active.max}, {descActiveCountAvg, active.avg}})
	}
}
