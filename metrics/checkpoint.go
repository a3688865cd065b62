package metrics

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// CheckpointLabels name one checkpointed (group, downstream partition) of a checkpoint connector.
type CheckpointLabels struct {
	Connector, SourceAlias, TargetAlias, Group string
	Topic                                      string // downstream topic
	Partition                                  int32
}

// checkpointStat is MM2's checkpoint-latency-ms sensor, kept per key: MM2 shares one sensor between every
// group and partition of a task, so its min/max/avg are the task's; here they are the key's own.
type checkpointStat struct {
	seq    uint64
	compat []string // source, target, group, topic, partition: jmx-sanitized

	mu   sync.Mutex
	w    window
	last float64
}

// CheckpointLatency records the latency of a checkpoint the target acknowledged (acknowledgement time - the
// checkpoint's timestamp, as MM2 measures it): in checkpoint-latency-ms{,-min,-max,-avg} of its key and in
// kmirror_checkpoint_latency_seconds of its connector.
func (r *Registry) CheckpointLatency(l CheckpointLabels, latency time.Duration) {
	r.cpMu.Lock()
	st, ok := r.checkpoints[l]
	if !ok {
		r.cpSeq++
		st = &checkpointStat{seq: r.cpSeq, compat: []string{
			jmxSanitize(validLabel(l.SourceAlias)), jmxSanitize(validLabel(l.TargetAlias)), jmxSanitize(validLabel(l.Group)),
			jmxSanitize(validLabel(l.Topic)),
			strconv.Itoa(int(l.Partition)),
		}}
		r.checkpoints[l] = st
	}
	r.cpMu.Unlock()
	ms := float64(latency.Milliseconds())
	st.mu.Lock()
	st.w.record(ms, true, 1, time.Now().UnixMilli())
	st.last = ms
	st.mu.Unlock()
	r.cpLatency.WithLabelValues(validLabel(l.Connector)).Observe(latency.Seconds())
}

// RemoveCheckpoints deletes every checkpoint series of the connector.
func (r *Registry) RemoveCheckpoints(connector string) {
	r.cpMu.Lock()
	defer r.cpMu.Unlock()
	for l := range r.checkpoints {
		if l.Connector == connector {
			delete(r.checkpoints, l)
		}
	}
	r.cpLatency.DeleteLabelValues(validLabel(connector))
}

// RemoveCheckpoint deletes the series of one key (a group or partition the connector no longer checkpoints).
func (r *Registry) RemoveCheckpoint(l CheckpointLabels) {
	r.cpMu.Lock()
	defer r.cpMu.Unlock()
	delete(r.checkpoints, l)
}

const mm2CheckpointPrefix = "kafka_connect_mirror_mirrorcheckpointconnector_"

var (
	compatCheckpointLabels = []string{"source", "target", "group", "topic", "partition"}
	descCheckpointLatency  = prometheus.NewDesc(mm2CheckpointPrefix+"checkpoint_latency_ms",
		"MM2 checkpoint-latency-ms: acknowledgement time - timestamp of the last checkpoint of the group and partition.", compatCheckpointLabels, nil)
	descCheckpointLatencyMin = prometheus.NewDesc(mm2CheckpointPrefix+"checkpoint_latency_ms_min",
		"MM2 checkpoint-latency-ms-min over the 2 x 30 s window (NaN when empty), per group and partition.", compatCheckpointLabels, nil)
	descCheckpointLatencyMax = prometheus.NewDesc(mm2CheckpointPrefix+"checkpoint_latency_ms_max",
		"MM2 checkpoint-latency-ms-max over the 2 x 30 s window (NaN when empty), per group and partition.", compatCheckpointLabels, nil)
	descCheckpointLatencyAvg = prometheus.NewDesc(mm2CheckpointPrefix+"checkpoint_latency_ms_avg",
		"MM2 checkpoint-latency-ms-avg over the 2 x 30 s window (NaN when empty), per group and partition.", compatCheckpointLabels, nil)
)

type checkpointCollector struct{ r *Registry }

func (c checkpointCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, descCheckpointLatency, descCheckpointLatencyMin, descCheckpointLatencyMax, descCheckpointLatencyAvg)
}

func (c checkpointCollector) Collect(ch chan<- prometheus.Metric) {
	// Two checkpoint connectors of the same aliases may checkpoint the same group: the newest key wins.
	stats := newestFirst(&c.r.cpMu, c.r.checkpoints, func(st *checkpointStat) uint64 { return st.seq })
	stats = firstOfEach(stats, func(st *checkpointStat) [5]string { return [5]string(st.compat) })
	nowMs := time.Now().UnixMilli()
	for _, st := range stats {
		st.mu.Lock()
		m, last := st.w.measure(nowMs), st.last
		st.mu.Unlock()
		emitGauges(ch, st.compat, []gaugeValue{{descCheckpointLatency, last}, {descCheckpointLatencyMin, m.min},
			{descCheckpointLatencyMax, m.max}, {descCheckpointLatencyAvg, m.avg}})
	}
}
