package server_test

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mirror"
)

func uniqueAlias(prefix string) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// heartbeatsFrom reads cluster B's heartbeats topic and returns the heartbeats of one alias pair.
func heartbeatsFrom(t *testing.T, source, target string) []mirror.Heartbeat {
	t.Helper()
	var out []mirror.Heartbeat
	for _, r := range kafkatest.ReadAll(t, "B", "heartbeats", 0) {
		hb, err := mirror.DecodeHeartbeat(r.Key, r.Value)
		require.NoError(t, err, "every record in heartbeats decodes as an MM2 heartbeat")
		if hb.SourceClusterAlias == source && hb.TargetClusterAlias == target {
			require.Equal(t, hb.Timestamp, r.Timestamp.UnixMilli(), "record timestamp equals the heartbeat's")
			out = append(out, hb)
		}
	}
	return out
}

func TestHeartbeatConnectorEndToEnd(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	source, target := uniqueAlias("hbA"), uniqueAlias("hbB")
	name := "heartbeats-" + source
	code, body := k.do(http.MethodPost, "/connectors", map[string]any{
		"name": name,
		"config": map[string]any{
			"connector.class":                     "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
			"source.cluster.alias":                source,
			"target.cluster.alias":                target,
			"target.cluster.bootstrap.servers":    kafkatest.Bootstrap(t, "B"),
			"heartbeats.topic.replication.factor": "1",
			"emit.heartbeats.interval.seconds":    "1",
		},
	})
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING", 30*time.Second)

	// Heartbeats arrive on B, in MM2's format, once a second.
	var seen []mirror.Heartbeat
	require.Eventually(t, func() bool {
		seen = heartbeatsFrom(t, source, target)
		return len(seen) >= 3
	}, 30*time.Second, 200*time.Millisecond)
	for i := 1; i < len(seen); i++ {
		require.GreaterOrEqual(t, seen[i].Timestamp, seen[i-1].Timestamp)
	}

	// As in Connect 4.1.1: the one task config is the connector's config plus task.class (no task.index), the
	// statuses carry the running version (KIP-891), and the topic the task writes is an active topic, listed
	// again at the task's next writes after a reset.
	code, body = k.do(http.MethodGet, "/connectors/"+name+"/tasks", nil)
	require.Equal(t, http.StatusOK, code)
	require.Len(t, body, 1)
	taskConfig := body.([]any)[0].(map[string]any)["config"].(map[string]any)
	require.NotContains(t, taskConfig, "task.index")
	require.Equal(t, "org.apache.kafka.connect.mirror.MirrorHeartbeatTask", taskConfig["task.class"])
	_, st := k.do(http.MethodGet, "/connectors/"+name+"/status", nil)
	require.Equal(t, "4.1.1", st.(map[string]any)["connector"].(map[string]any)["version"])
	require.Equal(t, "4.1.1", st.(map[string]any)["tasks"].([]any)[0].(map[string]any)["version"])
	activeTopics := func() []any {
		code, body := k.do(http.MethodGet, "/connectors/"+name+"/topics", nil)
		require.Equal(t, http.StatusOK, code)
		return body.(map[string]any)[name].(map[string]any)["topics"].([]any)
	}
	require.Eventually(t, func() bool { return len(activeTopics()) > 0 }, 30*time.Second, 100*time.Millisecond)
	require.Equal(t, []any{"heartbeats"}, activeTopics())
	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/topics/reset", nil)
	require.Equal(t, http.StatusAccepted, code)
	require.Empty(t, activeTopics(), "a reset forgets the topic at once")
	require.Eventually(t, func() bool { return len(activeTopics()) > 0 }, 30*time.Second, 100*time.Millisecond,
		"the next writes list it again")
	require.Equal(t, []any{"heartbeats"}, activeTopics())

	// The topic is compacted with one partition, as MM2 creates it.
	configs, err := kafkatest.Admin(t, "B").TopicConfigs(t.Context(), []string{"heartbeats"})
	require.NoError(t, err)
	var cleanup string
	for _, e := range configs["heartbeats"] {
		if e.Name == "cleanup.policy" {
			cleanup = e.Value
		}
	}
	require.Equal(t, "compact", cleanup)
	parts, err := kafkatest.Admin(t, "B").PartitionCount(t.Context(), "heartbeats")
	require.NoError(t, err)
	require.Equal(t, 1, parts)

	// Pause stops emission: over a window of three intervals no new heartbeat appears.
	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/pause", nil)
	require.Equal(t, http.StatusAccepted, code)
	k.awaitStates(name, "PAUSED PAUSED", 30*time.Second)
	paused := len(heartbeatsFrom(t, source, target))
	time.Sleep(3 * time.Second) // an observation window: absence cannot be awaited
	require.Equal(t, paused, len(heartbeatsFrom(t, source, target)), "no heartbeats while paused")

	// Resume restarts it.
	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/resume", nil)
	require.Equal(t, http.StatusAccepted, code)
	k.awaitStates(name, "RUNNING RUNNING", 30*time.Second)
	require.Eventually(t, func() bool { return len(heartbeatsFrom(t, source, target)) > paused }, 30*time.Second, 200*time.Millisecond)

	// Delete stops it and removes its state.
	code, _ = k.do(http.MethodDelete, "/connectors/"+name, nil)
	require.Equal(t, http.StatusNoContent, code)
	code, _ = k.do(http.MethodGet, "/connectors/"+name+"/status", nil)
	require.Equal(t, http.StatusNotFound, code)
	deleted := len(heartbeatsFrom(t, source, target))
	time.Sleep(3 * time.Second) // an observation window: absence cannot be awaited
	require.LessOrEqual(t, len(heartbeatsFrom(t, source, target)), deleted+1, "at most the heartbeat in flight at deletion")
}

func TestHeartbeatUnreachableTargetFailsThenRestartRecovers(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	proxy := newTCPProxy(t, kafkatest.Bootstrap(t, "B")) // down: B is unreachable through it
	source, target := uniqueAlias("hbA"), uniqueAlias("hbB")
	name := "unreachable-" + source
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", map[string]any{
		"connector.class":                     "MirrorHeartbeatConnector",
		"source.cluster.alias":                source,
		"target.cluster.alias":                target,
		"target.cluster.bootstrap.servers":    proxy.addr,
		"heartbeats.topic.replication.factor": "1",
		"admin.timeout.ms":                    "2000",
		"target.producer.delivery.timeout.ms": "2000",
		"target.producer.request.timeout.ms":  "1000",
		"target.producer.linger.ms":           "0",
	})
	require.Equal(t, http.StatusCreated, code, "%v", body)
	// The connector cannot create the heartbeats topic: FAILED, naming the cluster and its address, while it
	// retries. The task cannot deliver a heartbeat within its budget: FAILED for good, as in Connect.
	k.awaitStates(name, "FAILED FAILED", 60*time.Second)
	_, st := k.do(http.MethodGet, "/connectors/"+name+"/status", nil)
	connectorTrace := st.(map[string]any)["connector"].(map[string]any)["trace"].(string)
	require.Contains(t, connectorTrace, "create the heartbeats topic heartbeats on target cluster "+target)
	require.Contains(t, connectorTrace, "(cluster "+target+" at bootstrap.servers="+proxy.addr+")")
	_, st = k.do(http.MethodGet, "/connectors/"+name+"/tasks/0/status", nil)
	trace := st.(map[string]any)["trace"].(string)
	require.Contains(t, trace, "no heartbeat delivered to heartbeats on cluster "+target)
	require.True(t, strings.Contains(trace, "timed out") || strings.Contains(trace, "Timed out"), trace)

	// The target comes back: the connector recovers by itself, and a restart of the failed task recovers it.
	proxy.up(t)
	k.awaitStates(name, "RUNNING FAILED", 60*time.Second)
	code, _ = k.do(http.MethodPost, "/connectors/"+name+"/restart?includeTasks=true", nil)
	require.Equal(t, http.StatusAccepted, code)
	k.awaitStates(name, "RUNNING RUNNING", 60*time.Second)
	require.Eventually(t, func() bool { return len(heartbeatsFrom(t, source, target)) > 0 }, 60*time.Second, 200*time.Millisecond)
}
