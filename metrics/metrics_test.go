package metrics

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
)

// series is one gathered sample: its labels and value (a histogram's sample count).
type series struct {
	labels map[string]string
	value  float64
}

// gather returns every series of the registry by metric name.
func gather(t *testing.T, r *Registry) map[string][]series {
	t.Helper()
	fams, err := r.Prometheus().Gather()
	require.NoError(t, err)
	out := make(map[string][]series)
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			s := series{labels: map[string]string{}}
			for _, lp := range m.GetLabel() {
				s.labels[lp.GetName()] = lp.GetValue()
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				s.value = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				s.value = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				s.value = float64(m.GetHistogram().GetSampleCount())
			default:
				s.value = m.GetUntyped().GetValue()
			}
			out[f.GetName()] = append(out[f.GetName()], s)
		}
	}
	return out
}

// value returns the value of the one series of name whose labels include want; ok is false if there is none.
func value(t *testing.T, all map[string][]series, name string, want map[string]string) (float64, bool) {
	t.Helper()
	var found []float64
	for _, s := range all[name] {
		match := true
		for k, v := range want {
			if s.labels[k] != v {
				match = false
				break
			}
		}
		if match {
			found = append(found, s.value)
		}
	}
	require.LessOrEqual(t, len(found), 1, "%s%v matches several series", name, want)
	if len(found) == 0 {
		return 0, false
	}
	return found[0], true
}

func mustValue(t *testing.T, all map[string][]series, name string, want map[string]string) float64 {
	t.Helper()
	v, ok := value(t, all, name, want)
	require.True(t, ok, "no series %s%v", name, want)
	return v
}

func TestWindowEmptyIsNaN(t *testing.T) {
	t.Parallel()
	var w window
	st := w.measure(1_000_000)
	require.True(t, math.IsNaN(st.min) && math.IsNaN(st.max) && math.IsNaN(st.avg), "%+v", st)
	require.Zero(t, st.rate)
}

func TestWindowStatsAndRoll(t *testing.T) {
	t.Parallel()
	var w window
	t0 := int64(1_000_000)
	w.record(10, true, 100, t0)
	w.record(30, true, 300, t0+1000)
	st := w.measure(t0 + 2000)
	require.Equal(t, 10.0, st.min)
	require.Equal(t, 30.0, st.max)
	require.Equal(t, 20.0, st.avg)
	// One sample started 2 s ago: the window counts as at least one full window (30 s) more.
	require.InDelta(t, 400/32.0, st.rate, 1e-9)

	// 30 s after the first sample started, events go to the second sample; both count.
	w.record(50, true, 0, t0+30_000)
	st = w.measure(t0 + 31_000)
	require.Equal(t, 10.0, st.min)
	require.Equal(t, 50.0, st.max)
	require.Equal(t, 30.0, st.avg)
	require.InDelta(t, 400/31.0, st.rate, 1e-9) // the oldest sample started 31 s ago: already one full window

	// 60 s after it started, the first sample is obsolete; the second still holds 50.
	st = w.measure(t0 + 60_000)
	require.Equal(t, 50.0, st.min)
	require.Equal(t, 50.0, st.max)
	// The next event after 30 s more reuses the first sample slot (a ring of two).
	w.record(70, true, 0, t0+61_000)
	st = w.measure(t0 + 62_000)
	require.Equal(t, 50.0, st.min)
	require.Equal(t, 70.0, st.max)
	// And once both are older than 60 s, the window is empty again.
	st = w.measure(t0 + 200_000)
	require.True(t, math.IsNaN(st.max), "%+v", st)
	require.Zero(t, st.rate)
}

func TestWindowAmountWithoutValue(t *testing.T) {
	t.Parallel()
	var w window
	w.record(0, false, 5, 0)
	st := w.measure(1000)
	require.True(t, math.IsNaN(st.avg))
	require.InDelta(t, 5/31.0, st.rate, 1e-9)
}

func TestJMXSanitize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"A", "A"},
		{"A.orders", "A.orders"},
		{"mm2-source_1 %x\t", "mm2-source_1 %x\t"},
		{"", ""},
		{"A->B.MirrorSourceConnector", `"A->B.MirrorSourceConnector"`},
		{"A->B|conn-0|replication-consumer", `"A->B|conn-0|replication-consumer"`},
		{`a"b\c*d?e`, `"a\"b\\c\*d\?e"`},
		{"a\nb", `"a\nb"`},
		{"a:b", `"a:b"`},
		{"é", `"é"`},
	} {
		require.Equal(t, tc.want, jmxSanitize(tc.in), "%q", tc.in)
	}
	require.Equal(t, "A_orders_x", fetchTopic("A.orders.x"))
}

var testPartition = PartitionLabels{Connector: "A->B.Source", Task: 0, SourceAlias: "A", TargetAlias: "B",
	Topic: "orders", RemoteTopic: "A.orders", Partition: 3}

func TestSourcePartitionSeries(t *testing.T) {
	t.Parallel()
	r := New()
	p := r.SourcePartition(testPartition)
	require.Same(t, p, r.SourcePartition(testPartition), "idempotent")

	compat := map[string]string{"source": "A", "target": "B", "topic": "A.orders", "partition": "3"}
	native := map[string]string{"connector": "A->B.Source", "source": "A", "target": "B", "topic": "orders", "partition": "3"}

	all := gather(t, r)
	// Before any record: Kafka's Value starts at 0, the windowed stats are NaN, nothing native about positions.
	require.Equal(t, 0.0, mustValue(t, all, mm2SourcePrefix+"record_age_ms", compat))
	require.True(t, math.IsNaN(mustValue(t, all, mm2SourcePrefix+"record_age_ms_max", compat)))
	require.True(t, math.IsNaN(mustValue(t, all, mm2SourcePrefix+"replication_latency_ms_avg", compat)))
	_, ok := value(t, all, "kmirror_replication_lag_seconds", native)
	require.False(t, ok, "lag unknown: absent")
	_, ok = value(t, all, "kmirror_partition_status", native)
	require.False(t, ok, "status unknown: absent")

	now := time.Now()
	p.Fetched(100, now.Add(-2*time.Second), now)
	p.Fetched(50, now.Add(-1*time.Second), now)
	p.AckedSize(now.Add(-2*time.Second), now.Add(500*time.Millisecond), 180)
	p.Acked(now.Add(-1*time.Second), now.Add(time.Second))
	p.SetPositions(10, 15, now.Add(-7*time.Second), now)
	p.SetStatus(StatusStall)

	all = gather(t, r)
	require.Equal(t, 1000.0, mustValue(t, all, mm2SourcePrefix+"record_age_ms", compat), "last value")
	require.Equal(t, 1000.0, mustValue(t, all, mm2SourcePrefix+"record_age_ms_min", compat))
	require.Equal(t, 2000.0, mustValue(t, all, mm2SourcePrefix+"record_age_ms_max", compat))
	require.Equal(t, 1500.0, mustValue(t, all, mm2SourcePrefix+"record_age_ms_avg", compat))
	require.Equal(t, 150.0, mustValue(t, all, mm2SourcePrefix+"byte_count", compat))
	require.Equal(t, 2.0, mustValue(t, all, mm2SourcePrefix+"record_count", compat))
	require.Equal(t, 2000.0, mustValue(t, all, mm2SourcePrefix+"replication_latency_ms", compat))
	require.Equal(t, 2500.0, mustValue(t, all, mm2SourcePrefix+"replication_latency_ms_max", compat))
	require.InDelta(t, 2/30.0, mustValue(t, all, mm2SourcePrefix+"record_rate", compat), 0.01)
	require.InDelta(t, 150/30.0, mustValue(t, all, mm2SourcePrefix+"byte_rate", compat), 0.2)
	rps, bps := p.Rates()
	require.InDelta(t, 2/30.0, rps, 0.01)
	require.InDelta(t, 150/30.0, bps, 0.2)

	require.Equal(t, 2.0, mustValue(t, all, "kmirror_replicated_records_total", native))
	require.Equal(t, 180.0, mustValue(t, all, "kmirror_replicated_bytes_total", native))
	require.Equal(t, 10.0, mustValue(t, all, "kmirror_replicated_offset", native))
	require.Equal(t, 15.0, mustValue(t, all, "kmirror_source_end_offset", native))
	require.Equal(t, 5.0, mustValue(t, all, "kmirror_replication_lag_records", native))
	require.InDelta(t, 7.0, mustValue(t, all, "kmirror_replication_lag_seconds", native), 0.001)
	require.InDelta(t, float64(now.Add(-time.Second).UnixMilli())/1000, mustValue(t, all, "kmirror_last_replicated_timestamp_seconds", native), 0.001)
	for _, s := range partitionStatuses {
		want := 0.0
		if s == StatusStall {
			want = 1
		}
		require.Equal(t, want, mustValue(t, all, "kmirror_partition_status", withLabel(native, "status", s)), s)
	}
	topic := map[string]string{"connector": "A->B.Source", "source": "A", "target": "B", "topic": "orders"}
	require.Equal(t, 2.0, mustValue(t, all, "kmirror_record_age_seconds", topic))
	require.Equal(t, 2.0, mustValue(t, all, "kmirror_replication_latency_seconds", topic))
	require.Equal(t, 1.0, mustValue(t, all, "kmirror_topic_mapping_info",
		map[string]string{"source": "A", "target": "B", "topic": "orders", "remote_topic": "A.orders"}))

	// Caught up: 0 s whatever the head timestamp; end unknown: lag absent.
	p.SetPositions(15, 15, time.Time{}, now)
	all = gather(t, r)
	require.Equal(t, 0.0, mustValue(t, all, "kmirror_replication_lag_seconds", native))
	require.Equal(t, 0.0, mustValue(t, all, "kmirror_replication_lag_records", native))
	p.SetPositions(15, -1, time.Time{}, now)
	all = gather(t, r)
	_, ok = value(t, all, "kmirror_replication_lag_seconds", native)
	require.False(t, ok)
	_, ok = value(t, all, "kmirror_source_end_offset", native)
	require.False(t, ok)
	require.Equal(t, 15.0, mustValue(t, all, "kmirror_replicated_offset", native))
}

func withLabel(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

// TestSourcePartitionWindowRolls: an idle partition keeps its last value while its windowed stats go NaN.
func TestSourcePartitionWindowRolls(t *testing.T) {
	t.Parallel()
	r := New()
	p := r.SourcePartition(testPartition)
	past := time.Now().Add(-90 * time.Second)
	p.Fetched(10, past.Add(-300*time.Millisecond), past)
	p.Acked(past.Add(-400*time.Millisecond), past)
	compat := map[string]string{"topic": "A.orders", "partition": "3"}
	all := gather(t, r)
	require.Equal(t, 300.0, mustValue(t, all, mm2SourcePrefix+"record_age_ms", compat))
	require.True(t, math.IsNaN(mustValue(t, all, mm2SourcePrefix+"record_age_ms_avg", compat)))
	require.Equal(t, 400.0, mustValue(t, all, mm2SourcePrefix+"replication_latency_ms", compat))
	require.True(t, math.IsNaN(mustValue(t, all, mm2SourcePrefix+"replication_latency_ms_min", compat)))
	require.Zero(t, mustValue(t, all, mm2SourcePrefix+"record_rate", compat))
	require.Equal(t, 1.0, mustValue(t, all, mm2SourcePrefix+"record_count", compat))
}

func TestSourcePartitionQuotesCompatLabels(t *testing.T) {
	t.Parallel()
	r := New()
	r.SourcePartition(PartitionLabels{Connector: "c", SourceAlias: "us-east:1", TargetAlias: "B", Topic: "t", RemoteTopic: "us-east:1.t"})
	all := gather(t, r)
	mustValue(t, all, mm2SourcePrefix+"record_count", map[string]string{"source": `"us-east:1"`, "topic": `"us-east:1.t"`})
	mustValue(t, all, "kmirror_replicated_records_total", map[string]string{"source": "us-east:1", "topic": "t"})
}

func TestRemoveDeletesEverySeries(t *testing.T) {
	t.Parallel()
	r := New()
	base := len(gather(t, r))
	p := r.SourcePartition(testPartition)
	other := testPartition
	other.Partition = 4
	q := r.SourcePartition(other)
	now := time.Now()
	for _, x := range []*SourcePartition{p, q} {
		x.Fetched(1, now, now)
		x.Acked(now, now)
		x.SetPositions(1, 2, now, now)
		x.SetStatus(StatusOK)
	}
	r.CheckpointLatency(CheckpointLabels{Connector: "cp", SourceAlias: "A", TargetAlias: "B", Group: "g", Topic: "A.orders"}, time.Second)
	c := ClientLabels{Connector: "A->B.Source", Task: 0, Role: "replication-consumer", ClientID: "A->B|A->B.Source-0|replication-consumer"}
	r.ClientStats(c, consumerStats)
	require.Greater(t, len(gather(t, r)), base)

	p.Remove()
	all := gather(t, r)
	for name, ss := range all {
		for _, s := range ss {
			if s.labels["partition"] == "3" && s.labels["group"] == "" && s.labels["clientid"] == "" {
				t.Errorf("series left after Remove: %s%v", name, s.labels)
			}
		}
	}
	// The topic-level histograms stay while partition 4 lives.
	mustValue(t, all, "kmirror_replication_latency_seconds", map[string]string{"topic": "orders"})
	p.Remove() // twice is harmless
	q.Remove()
	r.RemoveCheckpoints("cp")
	r.RemoveClient(c)
	all = gather(t, r)
	var left []string
	for name := range all {
		if strings.HasPrefix(name, "kafka_") || strings.HasPrefix(name, "kmirror_") {
			switch name {
			case "kafka_connect_worker_connector_count", "kafka_connect_worker_task_count", "kmirror_worker_leader",
				"kafka_connect_worker_rebalance_rebalancing": // worker-level: always there
			default:
				left = append(left, name)
			}
		}
	}
	slices.Sort(left)
	require.Empty(t, left)
	require.NotSame(t, p, r.SourcePartition(testPartition), "a removed partition starts afresh")
}

// TestDuplicateLabelsExportOnce: two connectors mirroring one topic between the same aliases share compat
// labels; the page stays valid and shows the newest.
func TestDuplicateLabelsExportOnce(t *testing.T) {
	t.Parallel()
	r := New()
	a := testPartition
	b := testPartition
	b.Connector = "other"
	pa, pb := r.SourcePartition(a), r.SourcePartition(b)
	now := time.Now()
	pa.Acked(now, now)
	pb.Acked(now, now)
	pb.Acked(now, now)
	all := gather(t, r) // Gather fails on duplicate series
	require.Equal(t, 2.0, mustValue(t, all, mm2SourcePrefix+"record_count", map[string]string{"partition": "3"}))
	require.Len(t, all["kmirror_replicated_records_total"], 2)
}

func TestCheckpointLatency(t *testing.T) {
	t.Parallel()
	r := New()
	l := CheckpointLabels{Connector: "A->B.Checkpoint", SourceAlias: "A", TargetAlias: "B", Group: "app|1", Topic: "A.orders", Partition: 2}
	r.CheckpointLatency(l, 120*time.Millisecond)
	r.CheckpointLatency(l, 80*time.Millisecond)
	l2 := l
	l2.Partition = 3
	r.CheckpointLatency(l2, time.Second)
	key := map[string]string{"source": "A", "target": "B", "group": `"app|1"`, "topic": "A.orders", "partition": "2"}
	all := gather(t, r)
	require.Equal(t, 80.0, mustValue(t, all, mm2CheckpointPrefix+"checkpoint_latency_ms", key))
	require.Equal(t, 80.0, mustValue(t, all, mm2CheckpointPrefix+"checkpoint_latency_ms_min", key))
	require.Equal(t, 120.0, mustValue(t, all, mm2CheckpointPrefix+"checkpoint_latency_ms_max", key), "per key, not shared")
	require.Equal(t, 100.0, mustValue(t, all, mm2CheckpointPrefix+"checkpoint_latency_ms_avg", key))
	require.Equal(t, 3.0, mustValue(t, all, "kmirror_checkpoint_latency_seconds", map[string]string{"connector": "A->B.Checkpoint"}))
	r.RemoveCheckpoint(l2)
	require.Len(t, gather(t, r)[mm2CheckpointPrefix+"checkpoint_latency_ms"], 1)
}

const consumerStats = `{"name":"rdkafka#consumer-1","client_id":"x","type":"consumer","msg_cnt":0,"tx_bytes":1200,"rx_bytes":98765,
"brokers":{
 "127.0.0.1:9092/1":{"name":"127.0.0.1:9092/1","nodeid":1,"source":"learned","txerrs":2,"rxerrs":1,"req_timeouts":3,
   "rtt":{"min":800,"max":9000,"avg":1500,"p99":8000,"cnt":12},"throttle":{"avg":0,"max":0,"cnt":0}},
 "GroupCoordinator":{"name":"GroupCoordinator","nodeid":-1,"source":"logical","rtt":{"avg":5,"cnt":1}}},
"topics":{"orders.eu":{"topic":"orders.eu","partitions":{
 "0":{"partition":0,"desired":true,"hi_offset":120,"ls_offset":110,"app_offset":100,"consumer_lag":-1},
 "1":{"partition":1,"desired":false,"hi_offset":50,"app_offset":-1001},
 "-1":{"partition":-1,"desired":false,"hi_offset":-1,"app_offset":-1001}}}}}`

const producerStats = `{"type":"producer","msg_cnt":7,"msg_size":7000,"msg_max":100000,"msg_size_max":1048576,"tx_bytes":555,"rx_bytes":44,
"brokers":{"127.0.0.1:9093/2":{"name":"127.0.0.1:9093/2","nodeid":2,"source":"learned","rtt":{"avg":2500,"p99":20000,"cnt":3},
"throttle":{"avg":40,"max":100,"cnt":2}}}}`

func TestClientStats(t *testing.T) {
	t.Parallel()
	r := New()
	cons := ClientLabels{Connector: "A->B.Source", Task: 1, Role: "replication-consumer", ClientID: "A->B|A->B.Source-1|replication-consumer"}
	prod := ClientLabels{Connector: "A->B.Source", Task: 1, Role: "replication-producer", ClientID: "connector-producer-A->B.Source-1"}
	r.ClientStats(cons, consumerStats)
	r.ClientStats(prod, producerStats)
	r.ClientStats(prod, "{not json") // ignored: the last good document stays
	all := gather(t, r)

	qc := `"A->B|A->B.Source-1|replication-consumer"`
	require.Equal(t, 20.0, mustValue(t, all, "kafka_consumer_fetch_manager_records_lag", map[string]string{"clientid": qc, "topic": "orders_eu", "partition": "0"}))
	require.Len(t, all["kafka_consumer_fetch_manager_records_lag"], 1, "only assigned partitions")
	require.Equal(t, 98765.0, mustValue(t, all, "kafka_consumer_incoming_byte_total", map[string]string{"clientid": qc}))
	qp := `"connector-producer-A->B.Source-1"`
	require.Equal(t, 555.0, mustValue(t, all, "kafka_producer_outgoing_byte_total", map[string]string{"clientid": qp}))
	require.Equal(t, 1048576.0-7000, mustValue(t, all, "kafka_producer_buffer_available_bytes", map[string]string{"clientid": qp}))

	nc := map[string]string{"connector": "A->B.Source", "task": "1", "role": "replication-consumer", "broker": "127.0.0.1:9092/1"}
	require.Equal(t, 0.0015, mustValue(t, all, "kmirror_client_broker_rtt_avg_seconds", nc))
	require.Equal(t, 0.008, mustValue(t, all, "kmirror_client_broker_rtt_p99_seconds", nc))
	require.Equal(t, 2.0, mustValue(t, all, "kmirror_client_broker_tx_errors_total", nc))
	require.Equal(t, 1.0, mustValue(t, all, "kmirror_client_broker_rx_errors_total", nc))
	_, ok := value(t, all, "kmirror_client_broker_throttle_avg_seconds", nc)
	require.False(t, ok, "no throttle sample in the interval")
	_, ok = value(t, all, "kmirror_client_broker_rtt_avg_seconds", map[string]string{"broker": "GroupCoordinator"})
	require.False(t, ok, "logical brokers are skipped")
	np := map[string]string{"role": "replication-producer"}
	require.Equal(t, 7.0, mustValue(t, all, "kmirror_client_queue_messages", np))
	require.Equal(t, 7000.0, mustValue(t, all, "kmirror_client_queue_bytes", np))
	require.Equal(t, 0.1, mustValue(t, all, "kmirror_client_broker_throttle_max_seconds", np))
}

// TestConsumerLagsWithoutStatistics: a consumer without librdkafka statistics exports Java's records-lag from the
// figures it is given, and none of the series a statistics document would have made (absent, not zero); a
// document later replaces it, and RemoveClient removes it.
func TestConsumerLagsWithoutStatistics(t *testing.T) {
	t.Parallel()
	r := New()
	cons := ClientLabels{Connector: "A->B.Source", Task: 1, Role: "replication-consumer", ClientID: "A->B|A->B.Source-1|replication-consumer"}
	r.ConsumerLags(cons, []PartitionLag{
		{Topic: "orders.eu", Partition: 0, Lag: 20}, {Topic: "orders.eu", Partition: 1, Lag: 0},
		{Topic: "orders.eu", Partition: 2, Lag: -1}, // no end offset known yet: no sample
	})
	all := gather(t, r)
	qc := `"A->B|A->B.Source-1|replication-consumer"`
	require.Equal(t, 20.0, mustValue(t, all, "kafka_consumer_fetch_manager_records_lag", map[string]string{"clientid": qc, "topic": "orders_eu", "partition": "0"}))
	require.Equal(t, 0.0, mustValue(t, all, "kafka_consumer_fetch_manager_records_lag", map[string]string{"clientid": qc, "topic": "orders_eu", "partition": "1"}))
	require.Len(t, all["kafka_consumer_fetch_manager_records_lag"], 2)
	for _, name := range []string{"kafka_consumer_incoming_byte_total", "kafka_consumer_outgoing_byte_total", "kmirror_client_received_bytes_total", "kmirror_client_transmitted_bytes_total"} {
		require.Empty(t, all[name], name)
	}

	r.ClientStats(cons, consumerStats)
	all = gather(t, r)
	require.Equal(t, 98765.0, mustValue(t, all, "kafka_consumer_incoming_byte_total", map[string]string{"clientid": qc}))
	require.Len(t, all["kafka_consumer_fetch_manager_records_lag"], 1, "the document's partitions now")

	r.ConsumerLags(cons, []PartitionLag{{Topic: "orders.eu", Partition: 0, Lag: 3}})
	r.RemoveClient(cons)
	all = gather(t, r)
	require.Empty(t, all["kafka_consumer_fetch_manager_records_lag"])
}

func TestRuntimeStates(t *testing.T) {
	t.Parallel()
	r := New()
	conn := "A->B.Source"
	r.UnitState(conn, -1, "RUNNING")
	r.UnitState(conn, 0, "RUNNING")
	r.UnitState(conn, 1, "FAILED")
	r.UnitState(conn, 2, "UNASSIGNED")
	r.UnitState("hb", 0, "PAUSED")
	r.Leader(true)
	all := gather(t, r)
	q := `"A->B.Source"`
	require.Equal(t, 1.0, mustValue(t, all, "kafka_connect_worker_connector_count", nil))
	require.Equal(t, 4.0, mustValue(t, all, "kafka_connect_worker_task_count", nil))
	require.Equal(t, 1.0, mustValue(t, all, "kafka_connect_worker_connector_running_task_count", map[string]string{"connector": q}))
	require.Equal(t, 1.0, mustValue(t, all, "kafka_connect_worker_connector_failed_task_count", map[string]string{"connector": q}))
	require.Equal(t, 1.0, mustValue(t, all, "kafka_connect_worker_connector_unassigned_task_count", map[string]string{"connector": q}))
	require.Equal(t, 0.0, mustValue(t, all, "kafka_connect_worker_connector_paused_task_count", map[string]string{"connector": q}))
	require.Equal(t, 3.0, mustValue(t, all, "kafka_connect_worker_connector_total_task_count", map[string]string{"connector": q}))
	require.Equal(t, 1.0, mustValue(t, all, "kafka_connect_worker_connector_paused_task_count", map[string]string{"connector": "hb"}))
	require.Equal(t, 1.0, mustValue(t, all, "kafka_connect_connector_status", map[string]string{"connector": q, "task": "1", "status": "failed"}))
	require.Len(t, all["kafka_connect_connector_status"], 4)
	require.Equal(t, 1.0, mustValue(t, all, "kmirror_connector_state", map[string]string{"connector": conn, "state": "running"}))
	require.Equal(t, 0.0, mustValue(t, all, "kmirror_connector_state", map[string]string{"connector": conn, "state": "failed"}))
	require.Equal(t, 1.0, mustValue(t, all, "kmirror_task_state", map[string]string{"connector": conn, "task": "1", "state": "failed"}))
	require.Len(t, all["kmirror_task_state"], 4*len(unitStates))
	require.Equal(t, 1.0, mustValue(t, all, "kmirror_worker_leader", nil))

	r.UnitGone(conn, 1)
	r.UnitGone(conn, -1)
	r.Leader(false)
	all = gather(t, r)
	require.Equal(t, 0.0, mustValue(t, all, "kafka_connect_worker_connector_count", nil))
	require.Equal(t, 3.0, mustValue(t, all, "kafka_connect_worker_task_count", nil))
	_, ok := value(t, all, "kmirror_task_state", map[string]string{"task": "1"})
	require.False(t, ok)
	require.Equal(t, 0.0, mustValue(t, all, "kafka_connect_worker_connector_failed_task_count", map[string]string{"connector": q}))
	require.Equal(t, 0.0, mustValue(t, all, "kmirror_worker_leader", nil))
}

func TestHTTPMiddlewareAndHandler(t *testing.T) {
	t.Parallel()
	r := New()
	h := r.HTTPMiddleware(func(req *http.Request) string {
		if strings.HasPrefix(req.URL.Path, "/connectors/") {
			return "/connectors/{connector}"
		}
		return ""
	})(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodDelete {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		_, _ = io.WriteString(w, "{}")
	}))
	for _, req := range []*http.Request{
		httptest.NewRequest(http.MethodGet, "/connectors/a", nil),
		httptest.NewRequest(http.MethodGet, "/connectors/b", nil),
		httptest.NewRequest(http.MethodDelete, "/connectors/b", nil),
		httptest.NewRequest("BREW", "/coffee", nil),
	} {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	all := gather(t, r)
	require.Equal(t, 2.0, mustValue(t, all, "kmirror_http_requests_total", map[string]string{"route": "/connectors/{connector}", "method": "GET", "code": "200"}))
	require.Equal(t, 1.0, mustValue(t, all, "kmirror_http_requests_total", map[string]string{"route": "/connectors/{connector}", "method": "DELETE", "code": "204"}))
	require.Equal(t, 1.0, mustValue(t, all, "kmirror_http_requests_total", map[string]string{"route": "other", "method": "other", "code": "200"}))
	require.Equal(t, 3.0, mustValue(t, all, "kmirror_http_request_duration_seconds", map[string]string{"route": "/connectors/{connector}"}))

	// The page itself: text by default, OpenMetrics when asked; Go and process collectors present.
	r.SourcePartition(testPartition)
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	body := rec.Body.String()
	require.Contains(t, body, "go_goroutines ")
	require.Contains(t, body, "process_cpu_seconds_total")
	require.Contains(t, body, "# TYPE kafka_connect_mirror_mirrorsourceconnector_record_count gauge")
	require.Contains(t, body, `kafka_connect_mirror_mirrorsourceconnector_record_age_ms_max{partition="3",source="A",target="B",topic="A.orders"} NaN`)
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	rec = httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, req)
	require.Contains(t, rec.Header().Get("Content-Type"), "application/openmetrics-text")
	require.Contains(t, rec.Body.String(), "# TYPE kmirror_replicated_records counter")
	require.True(t, strings.HasSuffix(rec.Body.String(), "# EOF\n"))
}

// BenchmarkSourcePartitionHotPath is one record through the hot path: Fetched in the poll loop, Acked in the
// delivery handler.
func BenchmarkSourcePartitionHotPath(b *testing.B) {
	r := New()
	p := r.SourcePartition(testPartition)
	ts := time.Now().Add(-150 * time.Millisecond)
	now := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		t := now.Add(time.Duration(i) * time.Microsecond)
		p.Fetched(512, ts, t)
		p.Acked(ts, t)
	}
}

// BenchmarkSourcePartitionHotPathParallel runs the two calls on two goroutines at once, as a task does.
func BenchmarkSourcePartitionHotPathParallel(b *testing.B) {
	r := New()
	p := r.SourcePartition(testPartition)
	ts := time.Now().Add(-150 * time.Millisecond)
	now := time.Now()
	b.ReportAllocs()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < b.N; i++ {
			p.Acked(ts, now)
		}
	}()
	for i := 0; i < b.N; i++ {
		p.Fetched(512, ts, now)
	}
	<-done
}

func TestHotPathDoesNotAllocate(t *testing.T) {
	r := New()
	p := r.SourcePartition(testPartition)
	ts := time.Now().Add(-150 * time.Millisecond)
	now := time.Now()
	p.Fetched(512, ts, now) // the first observation of a native bucket creates it
	p.Acked(ts, now)
	allocs := testing.AllocsPerRun(1000, func() {
		p.Fetched(512, ts, now)
		p.Acked(ts, now)
	})
	require.Zero(t, allocs)
}

// TestCardinalityPerPartition pins the package doc's count: 26 series per partition here (+1 records-lag of
// its consumer), 39 per topic.
func TestCardinalityPerPartition(t *testing.T) {
	t.Parallel()
	r := New()
	count := func() (partition, topic int) {
		for name, ss := range gather(t, r) {
			for _, s := range ss {
				switch {
				case s.labels["partition"] != "":
					partition++
				case strings.HasPrefix(name, "kmirror_record_age") || strings.HasPrefix(name, "kmirror_replication_latency") || name == "kmirror_topic_mapping_info":
					if name == "kmirror_topic_mapping_info" {
						topic++
					} else {
						topic += len(latencyBuckets) + 3 // buckets, +Inf, _sum, _count
					}
				}
			}
		}
		return partition, topic
	}
	p := r.SourcePartition(testPartition)
	now := time.Now()
	p.Fetched(1, now, now)
	p.Acked(now, now)
	p.SetPositions(1, 2, now, now)
	p.SetStatus(StatusOK)
	parts, topics := count()
	require.Equal(t, 26, parts)
	require.Equal(t, 39, topics)
	p.Skipped(2)
	parts, _ = count()
	require.Equal(t, 27, parts, "the cycle guard's counter appears once it counted")
	other := testPartition
	other.Partition = 9
	r.SourcePartition(other).SetStatus(StatusOK)
	r.SourcePartition(other).SetPositions(1, 2, now, now)
	r.SourcePartition(other).Acked(now, now)
	parts, topics = count()
	require.Equal(t, 2*26+1, parts) // the first partition's skip counter too
	require.Equal(t, 39, topics, "topic-level series do not grow with partitions")
}

// BenchmarkScrape10000Partitions is one GET /metrics of a worker with 10,000 busy partitions in 100 topics.
func BenchmarkScrape10000Partitions(b *testing.B) {
	r := New()
	now := time.Now()
	for i := range 10_000 {
		l := testPartition
		l.Topic = "t" + strconv.Itoa(i%100)
		l.RemoteTopic = "A." + l.Topic
		l.Partition = int32(i / 100)
		p := r.SourcePartition(l)
		p.Fetched(100, now, now)
		p.Acked(now, now)
		p.SetPositions(10, 20, now, now)
		p.SetStatus(StatusOK)
	}
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		r.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
		b.ReportMetric(float64(rec.Body.Len()), "bytes/page")
	}
}

// TestInvalidUTF8Labels: names from Kafka are bytes; a label value that is not UTF-8 must not fail the page.
func TestInvalidUTF8Labels(t *testing.T) {
	t.Parallel()
	r := New()
	r.CheckpointLatency(CheckpointLabels{Connector: "cp", SourceAlias: "A", TargetAlias: "B", Group: "g\xff", Topic: "A.t"}, time.Millisecond)
	l := testPartition
	l.Topic = "t\xfe"
	r.SourcePartition(l)
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Body.String(), `group="\"g`+"\uFFFD"+`\""`)
	require.Contains(t, rec.Body.String(), `topic="t`+"\uFFFD"+`"`)
}

// TestCoordinatorAndRebalancing: Connect's coordinator assigned-connectors and assigned-tasks (tagged with the
// worker as client-id) and worker-rebalance rebalancing follow what the runtime says.
func TestCoordinatorAndRebalancing(t *testing.T) {
	t.Parallel()
	r := New()
	all := gather(t, r)
	_, ok := value(t, all, "kafka_connect_coordinator_assigned_tasks", nil)
	require.False(t, ok, "no assignment series before the runtime reconciled")
	require.Equal(t, 0.0, mustValue(t, all, "kafka_connect_worker_rebalance_rebalancing", nil))

	r.Rebalancing(true)
	r.Assignment("10.0.0.7:8083", 2, 5)
	all = gather(t, r)
	w := map[string]string{"clientid": `"10.0.0.7:8083"`} // ':' makes Kafka's jmxSanitize quote the value
	require.Equal(t, 2.0, mustValue(t, all, "kafka_connect_coordinator_assigned_connectors", w))
	require.Equal(t, 5.0, mustValue(t, all, "kafka_connect_coordinator_assigned_tasks", w))
	require.Equal(t, 1.0, mustValue(t, all, "kafka_connect_worker_rebalance_rebalancing", nil))

	r.Rebalancing(false)
	r.Assignment("10.0.0.7:8083", 0, 0)
	all = gather(t, r)
	require.Equal(t, 0.0, mustValue(t, all, "kafka_connect_coordinator_assigned_tasks", w))
	require.Equal(t, 0.0, mustValue(t, all, "kafka_connect_worker_rebalance_rebalancing", nil))
}

// TestSourceTaskSeries: offset-commit-{avg,max}-time-ms and source-record-active-count{,-max,-avg} as Connect
// computes them (2 x 30 s windows, NaN when empty), per run, removed with the run.
func TestSourceTaskSeries(t *testing.T) {
	t.Parallel()
	r := New()
	l := TaskLabels{Connector: "A->B.MirrorSourceConnector", Task: 3}
	tk := r.SourceTask(l)
	lv := map[string]string{"connector": `"A->B.MirrorSourceConnector"`, "task": "3"}
	all := gather(t, r)
	require.True(t, math.IsNaN(mustValue(t, all, "kafka_connect_connector_task_offset_commit_avg_time_ms", lv)), "no commit yet")
	require.Equal(t, 0.0, mustValue(t, all, "kafka_connect_source_task_source_record_active_count", lv))

	now := time.Now()
	tk.Committed(2*time.Millisecond, now)
	tk.Committed(6*time.Millisecond, now)
	tk.InFlight(100, now)
	tk.InFlight(300, now)
	tk.InFlight(50, now)
	all = gather(t, r)
	require.Equal(t, 4.0, mustValue(t, all, "kafka_connect_connector_task_offset_commit_avg_time_ms", lv))
	require.Equal(t, 6.0, mustValue(t, all, "kafka_connect_connector_task_offset_commit_max_time_ms", lv))
	require.Equal(t, 50.0, mustValue(t, all, "kafka_connect_source_task_source_record_active_count", lv))
	require.Equal(t, 300.0, mustValue(t, all, "kafka_connect_source_task_source_record_active_count_max", lv))
	require.Equal(t, 150.0, mustValue(t, all, "kafka_connect_source_task_source_record_active_count_avg", lv))

	// The next run of the task replaces this one's series; the old run's Remove leaves the new one alone.
	next := r.SourceTask(l)
	next.InFlight(7, now)
	tk.Remove()
	all = gather(t, r)
	require.Equal(t, 7.0, mustValue(t, all, "kafka_connect_source_task_source_record_active_count", lv))
	next.Remove()
	all = gather(t, r)
	_, ok := value(t, all, "kafka_connect_source_task_source_record_active_count", nil)
	require.False(t, ok)
}
