package source

import (
	"errors"
	"time"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/metrics"
)

// partitionMetrics is one partition's series in the metrics registry. Its zero value reports nothing, so a
// task without metrics pays one comparison per call and reads no clock.
type partitionMetrics struct{ m *metrics.SourcePartition }

func (pm partitionMetrics) on() bool { return pm.m != nil }

// fetched reports a record forwarded with valueBytes of value and source timestamp ts (zero: none).
func (pm partitionMetrics) fetched(valueBytes int, ts time.Time) {
	if pm.m != nil {
		pm.m.Fetched(valueBytes, ts, time.Now())
	}
}

// acked reports a record of size bytes (key, value, headers) acknowledged at, with source timestamp ts (Unix
// ms, or noTimestamp).
func (pm partitionMetrics) acked(ts int64, size int, at time.Time) {
	if pm.m != nil {
		pm.m.AckedSize(recordTime(ts), at, size)
	}
}

// fetchedBatch reports records forwarded together, valueBytes of value in all, the last with source
// timestamp ts (Unix ms, or noTimestamp), at now: the C data path's per-batch form of fetched.
func (pm partitionMetrics) fetchedBatch(valueBytes int64, ts int64, now time.Time) {
	if pm.m != nil {
		pm.m.Fetched(int(valueBytes), recordTime(ts), now)
	}
}

// ackedBatch reports n records acknowledged together, size bytes in all, the last with source timestamp ts.
func (pm partitionMetrics) ackedBatch(n int64, ts int64, size int64, at time.Time) {
	if pm.m != nil {
		pm.m.AckedRecords(int(n), recordTime(ts), at, int(size))
	}
}

func (pm partitionMetrics) setPositions(replicated, end int64, headTS, now time.Time) {
	if pm.m != nil {
		pm.m.SetPositions(replicated, end, headTS, now)
	}
}

func (pm partitionMetrics) setStatus(status string) {
	if pm.m != nil {
		pm.m.SetStatus(status)
	}
}

func (pm partitionMetrics) remove() {
	if pm.m != nil {
		pm.m.Remove()
	}
}

// recordTime turns a timestamp kept in Unix milliseconds back into a time (zero for noTimestamp).
func recordTime(ts int64) time.Time {
	if ts == noTimestamp {
		return time.Time{}
	}
	return time.UnixMilli(ts)
}

// partitionMetrics returns the series of one of the task's partitions (none without a metrics registry).
func (t *sourceTask) partitionMetrics(sourceAlias, targetAlias string, p *sourcePartition) partitionMetrics {
	if t.metrics == nil {
		return partitionMetrics{}
	}
	return partitionMetrics{t.metrics.SourcePartition(metrics.PartitionLabels{
		Connector: t.id.Connector, Task: t.id.Task, SourceAlias: sourceAlias, TargetAlias: targetAlias,
		Topic: p.tp.Topic, RemoteTopic: *p.remote, Partition: p.tp.Partition,
	})}
}

// How often librdkafka hands its statistics to the metrics: its counters (bytes, queues, round trips) are
// exported as they stand, and librdkafka builds the document under its locks, so not more often.
const clientStatsInterval = 5 * time.Second

// The statistics document has an entry per partition (2-7 KB each, in every broker's and every topic's part),
// and the task parses it twice (metrics, capacity advice): at 1,250 partitions per client the documents were 2-9
// MB, and parsing them every 5 s took most of a core for 16 clients. A task with many partitions therefore asks
// less often, clientStatsPerPartition per partition, so that the bytes parsed per second stay bounded; at most
// clientStatsMaxInterval, so that the metrics still move.
const (
	clientStatsPerPartition = 20 * time.Millisecond
	clientStatsMaxInterval  = time.Minute
)

// clientStatsEvery is the statistics interval of a replication client serving partitions partitions: 5 s up to
// 250 partitions, 25 s at 1,250, a minute from 3,000.
func clientStatsEvery(partitions int) time.Duration {
	return min(max(clientStatsInterval, time.Duration(partitions)*clientStatsPerPartition), clientStatsMaxInterval)
}

// statsEvery is how often librdkafka hands the statistics of the run's client in role over; 0: never.
func (r *sourceRun) statsEvery(role clientconfig.Role) time.Duration {
	if role == clientconfig.ReplicationConsumer && r.consumerStatsOff || role == clientconfig.ReplicationProducer && r.producerStatsOff {
		return 0
	}
	return clientStatsEvery(len(r.parts))
}

// Client roles as the metrics name them (MM2's client.id suffixes).
const (
	roleReplicationConsumer = "replication-consumer"
	roleReplicationProducer = "replication-producer"
)

// clientStats returns the options that hand a replication client's librdkafka statistics to the metrics and to
// figures (capacity advice), every every (none when 0), and what removes its series once the client has closed
// (no statistics arrive after Close).
func (t *sourceTask) clientStats(role clientconfig.Role, props map[string]string, every time.Duration, figures func(*metrics.ClientDoc)) ([]kafka.Option, func()) {
	sink, remove := t.statsSink(role, props, figures)
	var opts []kafka.Option
	if every > 0 {
		opts = append(opts, kafka.WithStats(every, sink))
	}
	if t.metrics != nil && role == clientconfig.ReplicationProducer {
		opts = append(opts, kafka.WithDeliveryTimes()) // replication latency
	}
	return opts, remove
}

// statsSink returns what takes a replication client's librdkafka statistics (to the metrics and to figures),
// and what removes its series once the client has closed. Each document is parsed once, for both: a document
// that does not parse changes neither.
func (t *sourceTask) statsSink(role clientconfig.Role, props map[string]string, figures func(*metrics.ClientDoc)) (func(json string), func()) {
	if t.metrics == nil {
		return func(json string) {
			if d, err := metrics.ParseClientStats(json); err == nil {
				figures(d)
			}
		}, func() {}
	}
	l := t.clientLabels(role, props)
	reg := t.metrics
	return func(json string) {
		d, err := metrics.ParseClientStats(json)
		if err != nil {
			return
		}
		reg.ClientDoc(l, d)
		figures(d)
	}, func() { reg.RemoveClient(l) }
}

// clientLabels names a replication client of the task in the metrics.
func (t *sourceTask) clientLabels(role clientconfig.Role, props map[string]string) metrics.ClientLabels {
	name := roleReplicationConsumer
	if role == clientconfig.ReplicationProducer {
		name = roleReplicationProducer
	}
	return metrics.ClientLabels{Connector: t.id.Connector, Task: t.id.Task, Role: name, ClientID: props["client.id"]}
}

// end finishes a run: unless it was fenced, it leaves its partitions' last positions behind marked stop, and
// it removes their series and the task's.
func (r *sourceRun) end(err error) {
	if !errors.Is(err, kmtype.ErrFenced) {
		r.publishFinalStats()
	}
	for _, p := range r.parts {
		p.metrics.remove()
	}
	r.taskMetrics.remove()
	if r.removeConsumerLags != nil {
		r.removeConsumerLags()
	}
}

// taskMetrics is the run's task-level series (offset commit time, records in flight). Its zero value reports
// nothing.
type taskMetrics struct{ m *metrics.SourceTask }

// newTaskMetrics returns the run's task-level series (none without a metrics registry).
func (t *sourceTask) newTaskMetrics() taskMetrics {
	if t.metrics == nil {
		return taskMetrics{}
	}
	return taskMetrics{t.metrics.SourceTask(metrics.TaskLabels{Connector: t.id.Connector, Task: t.id.Task})}
}

// committed reports a successful commit round that began at began.
func (tm taskMetrics) committed(began time.Time) {
	if tm.m != nil {
		now := time.Now()
		tm.m.Committed(now.Sub(began), now)
	}
}

func (tm taskMetrics) remove() {
	if tm.m != nil {
		tm.m.Remove()
	}
}

// sampleInFlight reports the records handed to the producer and not yet acknowledged, over the run's
// partitions (Connect's source-record-active-count). The committer calls it every round; without metrics it
// takes no lock.
func (r *sourceRun) sampleInFlight(now time.Time) {
	if r.taskMetrics.m == nil {
		return
	}
	n := 0
	for _, p := range r.parts {
		n += p.inflightLen()
	}
	r.taskMetrics.m.InFlight(n, now)
}
