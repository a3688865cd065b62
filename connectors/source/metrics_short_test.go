package source

import (
	"context"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/metrics"
	"github.com/kmirror/kmirror/tasks"
)

// seriesOf returns the names of the metric families that have a series with label name=value, with that
// series' value (a gauge's or a counter's).
func seriesOf(t *testing.T, reg *metrics.Registry, name, value string) map[string]float64 {
	t.Helper()
	families, err := reg.Prometheus().Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == name && l.GetValue() == value {
					out[f.GetName()] = metricValue(m)
				}
			}
		}
	}
	return out
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	}
	return 0
}

// A task's series (its partitions', its own, its clients') show what it replicates while it runs, and are gone
// once the run ended: a task that moved to another worker leaves no stale series behind.
func TestTaskSeriesFollowTheRunAndLeaveWithIt(t *testing.T) {
	reg := metrics.New()
	task := &sourceTask{id: tasks.TaskID{Connector: "mm2", Task: 3}, metrics: reg}
	p := newSourcePartition(mirror.TopicPartition{Topic: "metered", Partition: 0}, "A.metered", -1, "id-1")
	p.metrics = task.partitionMetrics("A", "B", p)
	require.True(t, p.metrics.on())
	now := time.Now()
	p.metrics.fetched(100, now.Add(-time.Second))
	p.metrics.fetchedBatch(300, unixMilli(now), now)
	p.metrics.acked(unixMilli(now), 120, now)
	p.metrics.ackedBatch(2, noTimestamp, 240, now)
	p.metrics.setPositions(3, 10, now.Add(-time.Minute), now)
	p.metrics.setStatus(statusWarn)
	p.forwarded(3, unixMilli(now), 10, 5)

	r := &sourceRun{t: task, env: &leasedEnv{pausedTestEnv: &pausedTestEnv{t: t, revoked: make(chan struct{}), stop: context.Background()}},
		parts: []*sourcePartition{p}, taskMetrics: task.newTaskMetrics()}
	r.taskMetrics.committed(now.Add(-time.Millisecond))
	r.sampleInFlight(now)

	series := seriesOf(t, reg, "topic", "metered")
	require.NotEmpty(t, series, "the partition's series exist while the task runs")
	require.NotEmpty(t, seriesOf(t, reg, "task", "3"), "and the task's")

	sink, removeClient := task.statsSink(clientconfig.ReplicationProducer, map[string]string{"client.id": "mm2-producer-3"}, func(*metrics.ClientDoc) {})
	sink(`{"name": "mm2-producer-3", "type": "producer", "msg_cnt": 7, "brokers": {}, "topics": {}}`)
	sink(`not json`)
	require.NotEmpty(t, seriesOf(t, reg, "client", "mm2-producer-3"), "the client's statistics are exported")
	opts, _ := task.clientStats(clientconfig.ReplicationProducer, map[string]string{}, time.Second, func(*metrics.ClientDoc) {})
	require.Len(t, opts, 2, "statistics, and delivery times for the replication latency")
	removeClient()
	require.Empty(t, seriesOf(t, reg, "client", "mm2-producer-3"))

	r.end(nil)
	require.Empty(t, seriesOf(t, reg, "topic", "metered"), "the run's end removes its partitions' series")
	for name := range seriesOf(t, reg, "task", "3") {
		t.Errorf("series %s of the task left after its run", name)
	}
}

// Without a registry nothing is reported, and nothing costs: the zero series take every call.
func TestNoMetricsReportNothing(t *testing.T) {
	task := &sourceTask{id: tasks.TaskID{Connector: "mm2"}}
	p := newSourcePartition(mirror.TopicPartition{Topic: "t"}, "A.t", -1, "")
	p.metrics = task.partitionMetrics("A", "B", p)
	require.False(t, p.metrics.on())
	p.metrics.fetchedBatch(1, noTimestamp, time.Now())
	p.metrics.ackedBatch(1, noTimestamp, 1, time.Now())
	p.metrics.remove()
	tm := task.newTaskMetrics()
	tm.committed(time.Now())
	tm.remove()
	(&sourceRun{parts: []*sourcePartition{p}}).sampleInFlight(time.Now())
	figures := 0
	sink, remove := task.statsSink(clientconfig.ReplicationConsumer, nil, func(*metrics.ClientDoc) { figures++ })
	sink(`{"name": "c", "type": "consumer"}`)
	sink(`{`)
	remove()
	require.Equal(t, 1, figures, "the capacity advice still takes the client's statistics")
	opts, _ := task.clientStats(clientconfig.ReplicationConsumer, nil, 0, nil)
	require.Empty(t, opts, "no statistics asked for")
	r := &sourceRun{parts: make([]*sourcePartition, 300), consumerStatsOff: true}
	require.Zero(t, r.statsEvery(clientconfig.ReplicationConsumer))
	require.Equal(t, 6*time.Second, r.statsEvery(clientconfig.ReplicationProducer), "20 ms a partition above 250")
}
