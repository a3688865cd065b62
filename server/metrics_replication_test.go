package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/server"
	"github.com/kmirror/kmirror/store"
)

// What source tasks report, checked against the clusters themselves: the partition stats they publish (what
// GET /connectors/{c}/partitions shows) and the series on GET /metrics.

// samples reads GET /metrics and returns every sample by metric name.
func (k *kmirror) samples() map[string][]promSample {
	k.t.Helper()
	out := map[string][]promSample{}
	for name, f := range k.scrape() {
		for _, m := range f.GetMetric() {
			s := promSample{labels: map[string]string{}}
			for _, l := range m.GetLabel() {
				s.labels[l.GetName()] = l.GetValue()
			}
			switch {
			case m.GetGauge() != nil:
				s.value = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				s.value = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				s.value = float64(m.GetHistogram().GetSampleCount())
			default:
				s.value = m.GetUntyped().GetValue()
			}
			out[name] = append(out[name], s)
		}
	}
	return out
}

// lazy is a failure message computed when it is printed.
type lazy func() string

func (l lazy) String() string { return l() }

type promSample struct {
	labels map[string]string
	value  float64
}

// find returns the values of the samples whose labels include want, by the value of label by.
func find(samples []promSample, by string, want map[string]string) map[string]float64 {
	out := map[string]float64{}
next:
	for _, s := range samples {
		for k, v := range want {
			if s.labels[k] != v {
				continue next
			}
		}
		out[s.labels[by]] = s.value
	}
	return out
}

// openStore opens the test's database, to read what the tasks published.
func openStore(t *testing.T, k *kmirror) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), k.dbURL, slog.New(slog.DiscardHandler), store.OpenOptions{MaxConns: 2})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st
}

// partitionStats returns the connector's published partition stats by partition of one source topic.
func partitionStats(t *testing.T, st *store.Store, connector, topic string) map[int32]kmtype.PartitionStat {
	t.Helper()
	all, err := st.ConnectorPartitionStats(context.Background(), connector)
	require.NoError(t, err)
	out := map[int32]kmtype.PartitionStat{}
	for _, s := range all {
		if s.Topic == topic {
			out[s.Partition] = s
		}
	}
	return out
}

// caughtUp tells whether the stats of every partition say it is replicated up to ends (Kafka's own end
// offsets), with status ok and the source timestamp of its last record; it says why not otherwise.
func caughtUp(stats map[int32]kmtype.PartitionStat, remote string, ends []int64, lastTS map[int32]time.Time) (bool, string) {
	if len(stats) != len(ends) {
		return false, fmt.Sprintf("%d partitions published, want %d", len(stats), len(ends))
	}
	for p, end := range ends {
		s := stats[int32(p)]
		switch {
		case s.RemoteTopic != remote:
			return false, fmt.Sprintf("partition %d: remote topic %q", p, s.RemoteTopic)
		case s.ReplicatedOffset != end || s.EndOffset == nil || *s.EndOffset != end:
			return false, fmt.Sprintf("partition %d: replicated %d, end %v; Kafka's end is %d", p, s.ReplicatedOffset, ptr(s.EndOffset), end)
		case s.LagRecords == nil || *s.LagRecords != 0 || s.LagSeconds == nil || *s.LagSeconds != 0:
			return false, fmt.Sprintf("partition %d: lag %v records, %v s", p, ptr(s.LagRecords), ptr(s.LagSeconds))
		case s.Status != "ok":
			return false, fmt.Sprintf("partition %d: status %s", p, s.Status)
		case s.WorkerID == "":
			return false, fmt.Sprintf("partition %d: no worker", p)
		}
		if want, ok := lastTS[int32(p)]; ok && (s.LastReplicatedAt == nil || !s.LastReplicatedAt.Equal(want)) {
			return false, fmt.Sprintf("partition %d: last replicated at %v, want %v", p, ptr(s.LastReplicatedAt), want)
		}
	}
	return true, ""
}

func ptr[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// lastTimestamps returns the timestamp of the last record sent to each partition of topic.
func lastTimestamps(sent []kafkatest.Record, topic string) map[int32]time.Time {
	out := map[int32]time.Time{}
	for _, r := range sent {
		if r.Topic == topic {
			out[r.Partition] = r.Timestamp.Truncate(time.Millisecond)
		}
	}
	return out
}

// mirrorFreshTopic creates a source topic of three partitions whose name starts with prefix, writes records
// records to it, mirrors it with tasks.max tasks and waits until every record is on B.
func mirrorFreshTopic(t *testing.T, k *kmirror, prefix string, records, tasks int) (name string, topics []sourceTopic, sent []kafkatest.Record) {
	t.Helper()
	topics = createSourceTopics(t, prefix, 3)
	sent = makeRecords(topics, records, 0)
	kafkatest.Produce(t, "A", sent)
	name = "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", map[string]any{"tasks.max": strconv.Itoa(tasks)}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING"+strings.Repeat(" RUNNING", min(tasks, 3)), 60*time.Second)
	awaitCount(t, prefixA, topics, sent, time.Minute)
	return name, topics, sent
}

// TestSourceReportsPartitionsAndMetrics replicates a topic and checks what the source tasks report against
// Kafka's end offsets: the published partition stats and the MM2 and kmirror series on /metrics, caught up;
// then marked stop while the connector is paused; then caught up again after the records produced meanwhile.
func TestSourceReportsPartitionsAndMetrics(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	st := openStore(t, k)
	name, topics, sent := mirrorFreshTopic(t, k, "met"+uniqueAlias(""), 3000, 2)
	topic, remote := topics[0].name, prefixA(topics[0].name)

	ends := kafkatest.PartitionEnds(t, "A", topic, 3)
	var why string
	require.Eventually(t, func() bool {
		var ok bool
		ok, why = caughtUp(partitionStats(t, st, name, topic), remote, ends, lastTimestamps(sent, topic))
		return ok
	}, 30*time.Second, 200*time.Millisecond, "the published stats agree with Kafka: %s", lazy(func() string { return why }))

	perPartition := map[string]float64{}
	for p, n := range groupByPartition(sent) {
		perPartition[strconv.Itoa(int(p.partition))] += float64(len(n))
	}
	compat := map[string]string{"source": "A", "target": "B", "topic": remote}
	native := map[string]string{"connector": name, "source": "A", "target": "B", "topic": topic}
	require.Eventually(t, func() bool {
		m := k.samples()
		why = fmt.Sprintf("record_count %v, lag %v, lag_seconds %v, ok %v, end %v",
			find(m["kafka_connect_mirror_mirrorsourceconnector_record_count"], "partition", compat),
			find(m["kmirror_replication_lag_records"], "partition", native), find(m["kmirror_replication_lag_seconds"], "partition", native),
			find(m["kmirror_partition_status"], "partition", withLabel(native, "status", "ok")),
			find(m["kmirror_source_end_offset"], "partition", native))
		return equalCounts(find(m["kafka_connect_mirror_mirrorsourceconnector_record_count"], "partition", compat), perPartition) &&
			allEqual(find(m["kmirror_replication_lag_records"], "partition", native), 3, 0) &&
			allEqual(find(m["kmirror_replication_lag_seconds"], "partition", native), 3, 0) &&
			allEqual(find(m["kmirror_partition_status"], "partition", withLabel(native, "status", "ok")), 3, 1) &&
			equalCounts(find(m["kmirror_source_end_offset"], "partition", native), ends64(ends))
	}, 30*time.Second, 200*time.Millisecond, "/metrics: %s", lazy(func() string { return why }))
	m := k.samples()
	require.Equal(t, perPartition, find(m["kmirror_replicated_records_total"], "partition", native))
	// librdkafka's statistics of the replication consumers, every 5 s: Java's records-lag, caught up.
	require.Eventually(t, func() bool {
		lags := find(k.samples()["kafka_consumer_fetch_manager_records_lag"], "partition", map[string]string{"topic": strings.ReplaceAll(topic, ".", "_")})
		return allEqual(lags, 3, 0)
	}, 20*time.Second, 200*time.Millisecond, "records-lag of the replication consumers")
	// The leader (the only worker) exports the connector's verdicts, as GET .../partitions draws them.
	verdicts := func() map[string]float64 {
		return find(k.samples()["kmirror_connector_verdict"], "verdict", map[string]string{"connector": name})
	}
	require.Eventually(t, func() bool { return maps.Equal(verdicts(), map[string]float64{"caught_up": 1}) },
		20*time.Second, 200*time.Millisecond, "the caught_up verdict as a gauge: %v", lazy(func() string { return fmt.Sprint(verdicts()) }))

	// Paused: the tasks stop replicating but keep watching (TestPausedConnectorShowsGrowingLag): the published
	// stats and the series stay where they stood, marked paused.
	code, _ := k.do(http.MethodPut, "/connectors/"+name+"/pause", nil)
	require.Equal(t, http.StatusAccepted, code)
	k.awaitStates(name, "PAUSED PAUSED PAUSED", 30*time.Second)
	require.Eventually(t, func() bool {
		stats := partitionStats(t, st, name, topic)
		for _, s := range stats {
			if s.Status != "paused" || s.ReplicatedOffset != ends[s.Partition] {
				return false
			}
		}
		return len(stats) == 3
	}, 30*time.Second, 200*time.Millisecond, "paused partitions are marked paused where they stood")
	require.Eventually(t, func() bool {
		m := k.samples()
		return allEqual(find(m["kmirror_replication_lag_records"], "partition", native), 3, 0) &&
			allEqual(find(m["kmirror_partition_status"], "partition", withLabel(native, "status", "paused")), 3, 1)
	}, 10*time.Second, 100*time.Millisecond, "the series of a paused task stay, marked paused")
	require.Eventually(t, func() bool { return maps.Equal(verdicts(), map[string]float64{"paused": 1}) },
		20*time.Second, 200*time.Millisecond, "the paused verdict as a gauge: %v", lazy(func() string { return fmt.Sprint(verdicts()) }))

	more := makeRecords(topics, 1500, 3000)
	kafkatest.Produce(t, "A", more)
	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/resume", nil)
	require.Equal(t, http.StatusAccepted, code)
	all := append(append([]kafkatest.Record{}, sent...), more...)
	awaitCount(t, prefixA, topics, all, time.Minute)
	ends = kafkatest.PartitionEnds(t, "A", topic, 3)
	require.Eventually(t, func() bool {
		var ok bool
		ok, why = caughtUp(partitionStats(t, st, name, topic), remote, ends, lastTimestamps(all, topic))
		return ok
	}, 30*time.Second, 200*time.Millisecond, "caught up again after the pause: %s", lazy(func() string { return why }))
	sincePause := map[string]float64{}
	for p, n := range groupByPartition(more) {
		if p.topic == topic {
			sincePause[strconv.Itoa(int(p.partition))] += float64(len(n))
		}
	}
	require.Eventually(t, func() bool {
		m := k.samples()
		return equalCounts(find(m["kafka_connect_mirror_mirrorsourceconnector_record_count"], "partition", compat), sincePause) &&
			allEqual(find(m["kmirror_replication_lag_records"], "partition", native), 3, 0)
	}, 30*time.Second, 200*time.Millisecond, "the new runs count what they replicated, and are caught up")
}

func withLabel(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for a, b := range m {
		out[a] = b
	}
	return out
}

func equalCounts(got, want map[string]float64) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func allEqual(got map[string]float64, n int, v float64) bool {
	if len(got) != n {
		return false
	}
	for _, x := range got {
		if x != v {
			return false
		}
	}
	return true
}

func ends64(ends []int64) map[string]float64 {
	out := map[string]float64{}
	for p, e := range ends {
		out[strconv.Itoa(p)] = float64(e)
	}
	return out
}

// TestSourceLagReachesZeroPastTransactionMarkers: a transactional source partition ends in a commit marker the
// consumer never returns; once everything is replicated the lag is still 0, not one record per marker.
func TestSourceLagReachesZeroPastTransactionMarkers(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	st := openStore(t, k)
	prefix := "mtx" + uniqueAlias("")
	topic := kafkatest.TopicName(t, prefix)
	kafkatest.CreateTopic(t, "A", topic, 1, nil)
	produceTransactions(t, topic, 0, 0, 200)

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, topic, nil))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING", 60*time.Second)
	ends := kafkatest.PartitionEnds(t, "A", topic, 1)
	require.Greater(t, ends[0], int64(200), "the log holds markers")
	var why string
	require.Eventually(t, func() bool {
		var ok bool
		ok, why = caughtUp(partitionStats(t, st, name, topic), prefixA(topic), ends, nil)
		return ok
	}, time.Minute, 200*time.Millisecond, "caught up past the last marker: %s", lazy(func() string { return why }))
}

// TestSourceMarksPartitionsWithLostRecordsTruncated: records deleted on the source before they were
// replicated make the partition's status truncated, in the published stats and on /metrics.
func TestSourceMarksPartitionsWithLostRecordsTruncated(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	st := openStore(t, k)
	prefix := "mtr" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 2)
	topic := topics[0].name
	first := []kafkatest.Record{}
	for _, r := range makeRecords(topics, 400, 0) {
		if r.Partition == 0 {
			first = append(first, r)
		}
	}
	kafkatest.Produce(t, "A", first[:50])

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", nil))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING", 60*time.Second)
	awaitCount(t, prefixA, topics, first[:50], time.Minute)

	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/stop", nil)
	require.Equal(t, http.StatusNoContent, code)
	k.awaitStates(name, "STOPPED", 30*time.Second)
	kafkatest.Produce(t, "A", first[50:150])
	require.NoError(t, kafkatest.Admin(t, "A").DeleteRecordsBefore(t.Context(), topic, 0, 100))
	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/resume", nil)
	require.Equal(t, http.StatusAccepted, code)

	require.Eventually(t, func() bool {
		stats := partitionStats(t, st, name, topic)
		return stats[0].Status == "truncated" && stats[0].ReplicatedOffset == 150 && stats[1].Status == "ok"
	}, time.Minute, 200*time.Millisecond, "partition 0 lost records 50 to 99: %s", lazy(func() string { return fmt.Sprintf("%+v", partitionStats(t, st, name, topic)) }))
	native := map[string]string{"connector": name, "topic": topic, "status": "truncated"}
	require.Equal(t, map[string]float64{"0": 1, "1": 0}, find(k.samples()["kmirror_partition_status"], "partition", native))
	// The notice the task shows in its status is a metric too.
	require.Eventually(t, func() bool {
		notices := find(k.samples()["kmirror_unit_notices"], "kind", map[string]string{"connector": name})
		return notices["data_not_replicated"] >= 1
	}, 30*time.Second, 200*time.Millisecond, "kmirror_unit_notices: %v",
		lazy(func() string {
			return fmt.Sprint(find(k.samples()["kmirror_unit_notices"], "kind", map[string]string{"connector": name}))
		}))
}

// TestCheckpointLatencyPerGroupPartition: an acknowledged checkpoint shows MM2's checkpoint-latency-ms for its
// group and downstream partition.
func TestCheckpointLatencyPerGroupPartition(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	m := startMirroredGroup(t, k, "mck", 50, 30)
	want := map[string]string{"source": m.alias, "target": "B", "group": m.group, "topic": m.alias + "." + m.topic}
	require.Eventually(t, func() bool {
		got := find(k.samples()["kafka_connect_mirror_mirrorcheckpointconnector_checkpoint_latency_ms"], "partition", want)
		v, ok := got["0"]
		return ok && v >= 0 && v < 60_000
	}, 30*time.Second, 200*time.Millisecond, "checkpoint latency of %s", m.group)
}

// TestSourceTaskAndWorkerSeries: the Connect task and worker series of the Strimzi board move as a source
// connector replicates a burst: records in flight (source-record-active-count) rise above 0 while it
// replicates and are 0 once caught up; every task times its offset commits; the worker counts the units
// assigned to it and is not rebalancing once they all run.
func TestSourceTaskAndWorkerSeries(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	prefix := "tsk" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 3)
	sent := makeRecords(topics, 30_000, 0)
	kafkatest.Produce(t, "A", sent)

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", map[string]any{"tasks.max": "2"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	task := map[string]string{"connector": name}
	// Sampled while records replicate: the largest sample of the 60 s window must be above 0. The sample is taken
	// every 100 ms, and the C data path can move the whole burst between two of them, so records keep coming
	// until a sample has seen some in flight.
	inFlightSeen := func() (bool, string) {
		peaks := find(k.samples()["kafka_connect_source_task_source_record_active_count_max"], "task", task)
		for _, v := range peaks {
			if v > 0 {
				return true, ""
			}
		}
		return false, fmt.Sprintf("active-count-max %v", peaks)
	}
	for deadline := time.Now().Add(time.Minute); ; {
		seen, why := inFlightSeen()
		if seen {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("records in flight while replicating: %s", why)
		}
		more := makeRecords(topics, 3_000, len(sent))
		kafkatest.Produce(t, "A", more)
		sent = append(sent, more...)
	}
	awaitCount(t, prefixA, topics, sent, time.Minute)

	var why string
	require.Eventually(t, func() bool {
		m := k.samples()
		active := find(m["kafka_connect_source_task_source_record_active_count"], "task", task)
		avg := find(m["kafka_connect_connector_task_offset_commit_avg_time_ms"], "task", task)
		peak := find(m["kafka_connect_connector_task_offset_commit_max_time_ms"], "task", task)
		conns := sum(m["kafka_connect_coordinator_assigned_connectors"])
		tasks := sum(m["kafka_connect_coordinator_assigned_tasks"])
		rebalancing := sum(m["kafka_connect_worker_rebalance_rebalancing"])
		why = fmt.Sprintf("active %v, commit avg %v max %v, assigned %v connectors %v tasks, rebalancing %v", active, avg, peak, conns, tasks, rebalancing)
		if !allEqual(active, 2, 0) || len(avg) != 2 || len(peak) != 2 {
			return false
		}
		for tk, v := range avg {
			if math.IsNaN(v) || v < 0 || !(peak[tk] >= v) || peak[tk] <= 0 {
				return false
			}
		}
		return conns == 1 && tasks == 2 && rebalancing == 0
	}, 30*time.Second, 200*time.Millisecond, "caught up: %s", lazy(func() string { return why }))
}

func sum(samples []promSample) float64 {
	var s float64
	for _, x := range samples {
		s += x.value
	}
	return s
}

// TestStalePartitionStatsAreDropped: when a replicated source topic is deleted, its partitions leave the plan
// and their published stats go, for good: the stopping runs of the old task set cannot report them again.
func TestStalePartitionStatsAreDropped(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	st := openStore(t, k)
	prefix := "stale" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 2, 2)
	sent := makeRecords(topics, 400, 0)
	kafkatest.Produce(t, "A", sent)

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", map[string]any{"tasks.max": "2"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	awaitCount(t, prefixA, topics, sent, time.Minute)
	kept, gone := topics[0].name, topics[1].name
	require.Eventually(t, func() bool {
		return len(partitionStats(t, st, name, kept)) == 2 && len(partitionStats(t, st, name, gone)) == 2
	}, 30*time.Second, 200*time.Millisecond, "both topics' partitions are published")

	require.NoError(t, kafkatest.Admin(t, "A").DeleteTopics(context.Background(), []string{gone}))
	require.Eventually(t, func() bool { return len(partitionStats(t, st, name, gone)) == 0 },
		30*time.Second, 200*time.Millisecond, "the deleted topic's rows go")
	k.awaitStates(name, "RUNNING RUNNING RUNNING", 60*time.Second)
	require.Never(t, func() bool { return len(partitionStats(t, st, name, gone)) > 0 }, 3*time.Second, 200*time.Millisecond,
		"no run reports the deleted topic again")
	require.Len(t, partitionStats(t, st, name, kept), 2, "the other topic's rows stay")
}

// TestClientsPastTheStatsLimitRunWithoutStatistics: a replication consumer that knows of more partitions than
// --consumer-stats-max-partitions, or a producer past --producer-stats-max-partitions, runs without librdkafka
// statistics, and says so in its series: its client series are absent (not zero) while the other client's are
// there, and Java's records-lag still tracks every partition (from kmirror's own sample when the consumer is the
// one without statistics).
func TestClientsPastTheStatsLimitRunWithoutStatistics(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		off, on string
		limit   func(*server.Config)
	}{
		{"replication-consumer", "replication-producer", func(c *server.Config) { c.ConsumerStatsMaxPartitions = 2 }},
		{"replication-producer", "replication-consumer", func(c *server.Config) { c.ProducerStatsMaxPartitions = 2 }},
	} {
		t.Run(c.off, func(t *testing.T) {
			t.Parallel()
			k := startKmirror(t, "", c.limit)
			name, topics, _ := mirrorFreshTopic(t, k, "nst"+uniqueAlias(""), 600, 1)
			topic := topics[0].name

			client := func(m map[string][]promSample, role string) map[string]float64 {
				return find(m["kmirror_client_received_bytes_total"], "client", map[string]string{"connector": name, "role": role})
			}
			var why string
			require.Eventually(t, func() bool {
				m := k.samples()
				lags := find(m["kafka_consumer_fetch_manager_records_lag"], "partition", map[string]string{"topic": strings.ReplaceAll(topic, ".", "_")})
				why = fmt.Sprintf("records-lag %v, %s clients %v", lags, c.on, client(m, c.on))
				return allEqual(lags, 3, 0) && len(client(m, c.on)) == 1
			}, 30*time.Second, 200*time.Millisecond, "records-lag of every partition and the %s's statistics: %s", c.on, lazy(func() string { return why }))
			require.Empty(t, client(k.samples(), c.off), "the %s has no statistics, so no client series", c.off)
		})
	}
}
