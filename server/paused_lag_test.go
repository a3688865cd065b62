package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// partitionsReport is the part of GET /connectors/{c}/partitions these tests read.
type partitionsReport struct {
	Totals struct {
		LagRecords *int64  `json:"lag_records"`
		Status     *string `json:"status"`
	} `json:"totals"`
	ByPartition []struct {
		Topic            string   `json:"topic"`
		Partition        int32    `json:"partition"`
		ReplicatedOffset int64    `json:"replicated_offset"`
		EndOffset        *int64   `json:"end_offset"`
		LagRecords       *int64   `json:"lag_records"`
		LagSeconds       *float64 `json:"lag_seconds"`
		RecordsPerSecond float64  `json:"records_per_second"`
		Status           string   `json:"status"`
		UpdatedAt        string   `json:"updated_at"`
		Stale            bool     `json:"stale"`
	} `json:"by_partition"`
	Verdicts []struct {
		Kind       string `json:"kind"`
		Message    string `json:"message"`
		LagRecords *int64 `json:"lag_records"`
	} `json:"verdicts"`
}

func (k *kmirror) partitions(name string) partitionsReport {
	k.t.Helper()
	code, body := k.do(http.MethodGet, "/connectors/"+name+"/partitions", nil)
	require.Equal(k.t, http.StatusOK, code, "%v", body)
	raw, err := json.Marshal(body)
	require.NoError(k.t, err)
	var r partitionsReport
	require.NoError(k.t, json.Unmarshal(raw, &r))
	return r
}

// lagIs tells whether the report shows every partition of topic fresh, with status and lag records of want
// (by partition); it says why not otherwise.
func (r partitionsReport) lagIs(topic, status string, want map[int32]int64) (bool, string) {
	seen := 0
	for _, e := range r.ByPartition {
		if e.Topic != topic {
			continue
		}
		seen++
		w, ok := want[e.Partition]
		switch {
		case !ok:
			return false, fmt.Sprintf("partition %d not expected", e.Partition)
		case e.Stale || e.Status != status:
			return false, fmt.Sprintf("partition %d: status %s, stale %v", e.Partition, e.Status, e.Stale)
		case e.LagRecords == nil || *e.LagRecords != w:
			return false, fmt.Sprintf("partition %d: lag %v, want %d", e.Partition, ptr(e.LagRecords), w)
		case w == 0 && (e.LagSeconds == nil || *e.LagSeconds != 0):
			return false, fmt.Sprintf("partition %d: lag %v s, want 0", e.Partition, ptr(e.LagSeconds))
		}
	}
	if seen != len(want) {
		return false, fmt.Sprintf("%d partitions reported, want %d", seen, len(want))
	}
	return true, ""
}

// TestPausedConnectorShowsGrowingLag: a paused connector replicates nothing but keeps reporting its backlog.
// Caught up (lag 0), then paused, then N records produced: the partitions endpoint and /metrics report lag
// exactly N per partition with status paused, lag in seconds from the first unreplicated record, no throughput
// and a paused verdict, while nothing reaches the target and no offset moves; resumed, the lag returns to 0.
func TestPausedConnectorShowsGrowingLag(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	name, topics, sent := mirrorFreshTopic(t, k, "mpz"+uniqueAlias(""), 600, 2)
	topic, remote := topics[0].name, prefixA(topics[0].name)
	zero := map[int32]int64{0: 0, 1: 0, 2: 0}
	var why string
	require.Eventually(t, func() bool {
		var ok bool
		ok, why = k.partitions(name).lagIs(topic, "ok", zero)
		return ok
	}, 30*time.Second, 200*time.Millisecond, "caught up: %s", lazy(func() string { return why }))

	code, _ := k.do(http.MethodPut, "/connectors/"+name+"/pause", nil)
	require.Equal(t, http.StatusAccepted, code)
	k.awaitStates(name, "PAUSED PAUSED PAUSED", 30*time.Second)
	// The paused tasks report before anything is produced, so the records below arrive while they watch.
	require.Eventually(t, func() bool {
		var ok bool
		ok, why = k.partitions(name).lagIs(topic, "paused", zero)
		return ok
	}, 30*time.Second, 200*time.Millisecond, "paused, caught up: %s", lazy(func() string { return why }))
	targetEnds := kafkatest.PartitionEnds(t, "B", remote, 3)
	_, offsetsBefore := k.do(http.MethodGet, "/connectors/"+name+"/offsets", nil)

	produced := time.Now()
	more := makeRecords(topics, 900, 600) // 300 per partition
	kafkatest.Produce(t, "A", more)
	want := map[int32]int64{}
	for p, rs := range groupByPartition(more) {
		if p.topic == topic {
			want[p.partition] = int64(len(rs))
		}
	}
	var total int64
	for _, n := range want {
		total += n
	}
	var report partitionsReport
	require.Eventually(t, func() bool {
		var ok bool
		report = k.partitions(name)
		ok, why = report.lagIs(topic, "paused", want)
		return ok
	}, 30*time.Second, 200*time.Millisecond, "the backlog shows while paused: %s", lazy(func() string { return why }))
	// The first unreplicated record was read: its age is the lag in seconds (the test records carry timestamps
	// from recordsBase on, older than the produce).
	require.Eventually(t, func() bool {
		report = k.partitions(name)
		for _, e := range report.ByPartition {
			if e.Topic == topic && (e.LagSeconds == nil || *e.LagSeconds < time.Since(produced).Seconds()-1 || e.RecordsPerSecond != 0) {
				why = fmt.Sprintf("partition %d: lag %v s, %v records/s", e.Partition, ptr(e.LagSeconds), e.RecordsPerSecond)
				return false
			}
		}
		return true
	}, 30*time.Second, 200*time.Millisecond, "lag in seconds while paused: %s", lazy(func() string { return why }))
	require.NotNil(t, report.Totals.Status)
	require.Equal(t, "paused", *report.Totals.Status)
	require.NotEmpty(t, report.Verdicts)
	require.Equal(t, "paused", report.Verdicts[0].Kind, "%+v", report.Verdicts)
	require.NotNil(t, report.Verdicts[0].LagRecords)
	require.Equal(t, total, *report.Verdicts[0].LagRecords, "the backlog: %s", report.Verdicts[0].Message)
	require.NotNil(t, report.Totals.LagRecords)
	require.Equal(t, total, *report.Totals.LagRecords)
	for _, v := range report.Verdicts {
		require.NotContains(t, []string{"pipeline_bound", "tasks_max_bound", "workers_bound", "unhealthy_partitions", "caught_up", "keeping_up"}, v.Kind,
			"nothing to tune while paused: %s", v.Message)
	}

	native := map[string]string{"connector": name, "source": "A", "target": "B", "topic": topic}
	wantSeries := map[string]float64{}
	for p, n := range want {
		wantSeries[strconv.Itoa(int(p))] = float64(n)
	}
	require.Eventually(t, func() bool {
		m := k.samples()
		why = fmt.Sprintf("lag %v, paused %v, lag_seconds %v", find(m["kmirror_replication_lag_records"], "partition", native),
			find(m["kmirror_partition_status"], "partition", withLabel(native, "status", "paused")),
			find(m["kmirror_replication_lag_seconds"], "partition", native))
		if !equalCounts(find(m["kmirror_replication_lag_records"], "partition", native), wantSeries) ||
			!allEqual(find(m["kmirror_partition_status"], "partition", withLabel(native, "status", "paused")), 3, 1) {
			return false
		}
		secs := find(m["kmirror_replication_lag_seconds"], "partition", native)
		for _, s := range secs {
			if s <= 0 {
				return false
			}
		}
		return len(secs) == 3
	}, 30*time.Second, 200*time.Millisecond, "/metrics while paused: %s", lazy(func() string { return why }))

	// The audit: two more reports later, nothing was produced to the target and no offset moved.
	updated := map[int32]string{}
	for _, e := range report.ByPartition {
		updated[e.Partition] = e.UpdatedAt
	}
	for range 2 {
		require.Eventually(t, func() bool {
			r := k.partitions(name)
			for _, e := range r.ByPartition {
				if e.Topic == topic && e.UpdatedAt == updated[e.Partition] {
					return false
				}
			}
			for _, e := range r.ByPartition {
				updated[e.Partition] = e.UpdatedAt
			}
			return true
		}, 30*time.Second, 200*time.Millisecond, "the paused tasks keep reporting")
	}
	require.Equal(t, targetEnds, kafkatest.PartitionEnds(t, "B", remote, 3), "nothing produced while paused")
	_, offsetsAfter := k.do(http.MethodGet, "/connectors/"+name+"/offsets", nil)
	require.Equal(t, offsetsBefore, offsetsAfter, "no offset committed while paused")
	k.awaitStates(name, "PAUSED PAUSED PAUSED", time.Second)

	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/resume", nil)
	require.Equal(t, http.StatusAccepted, code)
	awaitCount(t, prefixA, topics, append(append(sent[:0:0], sent...), more...), time.Minute)
	require.Eventually(t, func() bool {
		var ok bool
		ok, why = k.partitions(name).lagIs(topic, "ok", zero)
		return ok
	}, 30*time.Second, 200*time.Millisecond, "caught up after the resume: %s", lazy(func() string { return why }))
	require.Eventually(t, func() bool {
		m := k.samples()
		return allEqual(find(m["kmirror_replication_lag_records"], "partition", native), 3, 0) &&
			allEqual(find(m["kmirror_partition_status"], "partition", withLabel(native, "status", "ok")), 3, 1)
	}, 30*time.Second, 200*time.Millisecond, "/metrics after the resume")
}

// TestPausedConnectorShowsLossToRetention: records of the backlog that retention deletes while the connector
// is paused make the partition truncated and show in the task's status (still PAUSED) before the resume.
func TestPausedConnectorShowsLossToRetention(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	prefix := "mpr" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 1)
	topic := topics[0].name
	recs := makeRecords(topics, 150, 0)
	kafkatest.Produce(t, "A", recs[:50])

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, topic, nil))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING", 60*time.Second)
	awaitCount(t, prefixA, topics, recs[:50], time.Minute)

	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/pause", nil)
	require.Equal(t, http.StatusAccepted, code)
	k.awaitStates(name, "PAUSED PAUSED", 30*time.Second)
	var why string
	require.Eventually(t, func() bool {
		var ok bool
		ok, why = k.partitions(name).lagIs(topic, "paused", map[int32]int64{0: 0})
		return ok
	}, 30*time.Second, 200*time.Millisecond, "paused, caught up: %s", lazy(func() string { return why }))
	kafkatest.Produce(t, "A", recs[50:])
	require.NoError(t, kafkatest.Admin(t, "A").DeleteRecordsBefore(t.Context(), topic, 0, 100))

	require.Eventually(t, func() bool {
		var ok bool
		ok, why = k.partitions(name).lagIs(topic, "truncated", map[int32]int64{0: 100})
		return ok
	}, time.Minute, 200*time.Millisecond, "records 50 to 99 lost while paused: %s", lazy(func() string { return why }))
	code, body = k.do(http.MethodGet, "/connectors/"+name+"/status", nil)
	require.Equal(t, http.StatusOK, code)
	task := body.(map[string]any)["tasks"].([]any)[0].(map[string]any)
	require.Equal(t, "PAUSED", task["state"])
	require.Contains(t, task["trace"], "records 50 to 99 of A topic "+topic+" partition 0 were deleted from the source (retention) while the connector was paused")
}
