package server_test

import (
	"encoding/json"
	"fmt"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/source"
	"github.com/kmirror/kmirror/server"
)

// capacityReport is the part of GET /connectors/{c}/partitions capacity advice stands on.
type capacityReport struct {
	ByTask []struct {
		Task     int `json:"task"`
		Pipeline *struct {
			IntervalSeconds    float64 `json:"interval_seconds"`
			WaitSourceFraction float64 `json:"wait_source_fraction"`
			WaitTargetFraction float64 `json:"wait_target_fraction"`
			BusyFraction       float64 `json:"busy_fraction"`
			BatchSizeBytes     int64   `json:"batch_size_bytes"`
			LingerMs           float64 `json:"linger_ms"`
			CompressionType    string  `json:"compression_type"`
			MaxInFlight        int     `json:"max_in_flight"`
			WorkerCPUs         int     `json:"worker_cpus"`
			WorkerCPUCores     float64 `json:"worker_cpu_cores"`
			Producer           *struct {
				Batches       int64   `json:"batches"`
				BatchAvgBytes float64 `json:"batch_avg_bytes"`
				RTTAvgMs      float64 `json:"rtt_avg_ms"`
			} `json:"producer"`
			Stale bool `json:"stale"`
		} `json:"pipeline"`
	} `json:"by_task"`
	Verdicts []struct {
		Kind               string            `json:"kind"`
		Message            string            `json:"message"`
		TaskIDs            []int             `json:"task_ids"`
		WaitTargetFraction *float64          `json:"wait_target_fraction"`
		SuggestedSettings  map[string]string `json:"suggested_settings"`
	} `json:"verdicts"`
}

func (k *kmirror) capacity(name string) capacityReport {
	k.t.Helper()
	var r capacityReport
	code, err := k.getJSON("/connectors/"+name+"/partitions", &r)
	require.NoError(k.t, err)
	require.Equal(k.t, http.StatusOK, code)
	return r
}

// getJSON decodes the body of GET path into v when the answer is 200; safe inside an Eventually condition.
func (k *kmirror) getJSON(path string, v any) (int, error) {
	resp, err := k.client.Get(k.url + path)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	return resp.StatusCode, json.NewDecoder(resp.Body).Decode(v)
}

// TestCapacityAdviceNamesTheTargetAsTheBound: a task whose producer may queue only 64 KiB (buffer.memory) and
// lingers 200 ms drains a backlog an hour old. Its poll loop then waits for the target most of the time, and the
// partitions endpoint says so with the producer's measured figures and names the cure (a queue that holds a
// batch.size, so that batches need not wait out linger.ms); once the backlog is drained the same loop
// waits for the source, and the verdict is caught up.
//
// It runs on the Go data path, whose loop this is: the C path sends a batch the moment its partition's last one
// is acknowledged instead of letting it wait out linger.ms (connectors/kafka/cpath/doc.go), so the same backlog
// drains without a wait for the target long enough to advise on.
func TestCapacityAdviceNamesTheTargetAsTheBound(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "", func(c *server.Config) { c.DataPath = source.DataPathGo })
	prefix := "cap" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 1)
	sent := makeRecords(topics, 12_000, 0)
	for i := range sent {
		sent[i].Value = append(sent[i].Value, make([]byte, 1000)...) // ~1 KiB each: 12 MB through a 64 KiB queue
	}
	kafkatest.Produce(t, "A", sent)

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", map[string]any{
		"tasks.max": "1", "producer.override.buffer.memory": "65536", "producer.override.linger.ms": "200",
		// The batch bound below allows for the records' framing, not for a header on each: records are copied
		// as they are, without the provenance stamp (42 bytes each).
		mirrorconfig.ProvenanceEnabledConfig: "false",
	}))
	require.Equal(t, http.StatusCreated, code, "%v", body)

	var why string
	require.Eventually(t, func() bool {
		r := k.capacity(name)
		why = fmt.Sprintf("%+v", r)
		if len(r.ByTask) != 1 || r.ByTask[0].Pipeline == nil || r.ByTask[0].Pipeline.Producer == nil {
			return false // librdkafka's statistics come every 5 s
		}
		for _, v := range r.Verdicts {
			if v.Kind == "target_bound" && len(v.TaskIDs) == 1 && v.TaskIDs[0] == 0 && v.WaitTargetFraction != nil &&
				*v.WaitTargetFraction >= 0.5 && v.SuggestedSettings["producer.override.buffer.memory"] == "4000000" {
				t.Logf("verdict: %s", v.Message)
				return true
			}
		}
		return false
	}, 90*time.Second, 250*time.Millisecond, "a target_bound verdict on task 0 while the backlog drains: %s", lazy(func() string { return why }))

	r := k.capacity(name)
	require.Len(t, r.ByTask, 1)
	p := r.ByTask[0].Pipeline
	require.NotNil(t, p)
	require.False(t, p.Stale)
	require.Positive(t, p.IntervalSeconds)
	require.InDelta(t, 1, p.WaitSourceFraction+p.WaitTargetFraction+p.BusyFraction, 0.001, "the fractions split the loop's time")
	require.Equal(t, int64(1000000), p.BatchSizeBytes, "librdkafka's batch.size")
	require.Equal(t, 200.0, p.LingerMs)
	require.Equal(t, "none", p.CompressionType)
	require.Equal(t, 5, p.MaxInFlight, "the idempotent producer's cap")
	require.Positive(t, p.WorkerCPUs)
	require.NotNil(t, p.Producer, "the replication producer's statistics")
	require.Positive(t, p.Producer.Batches)
	require.Positive(t, p.Producer.BatchAvgBytes)
	require.LessOrEqual(t, p.Producer.BatchAvgBytes, 65536.0+2048, "no batch is larger than the queue")

	awaitCount(t, prefixA, topics, sent, 3*time.Minute)
	require.Eventually(t, func() bool {
		r := k.capacity(name)
		why = fmt.Sprintf("%+v", r)
		if len(r.Verdicts) != 1 || r.Verdicts[0].Kind != "caught_up" || r.ByTask[0].Pipeline == nil {
			return false
		}
		return r.ByTask[0].Pipeline.WaitSourceFraction >= 0.9
	}, 30*time.Second, 250*time.Millisecond, "caught up, the loop waits for the source: %s", lazy(func() string { return why }))
}
