package server_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// TestDashboardFailback: after a failover from A to B, the failover page links to the failback page of the
// connector copying B to A; that page says where the failback would start copying B (the ends the failover
// recorded) and which groups it would move, refuses to start without the typed name, files one when confirmed,
// and shows its report as it ends: started from the recorded end, only B's later records on A, and the group
// committed on A at its exact position.
func TestDashboardFailback(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	k := startKmirror(t, "")
	topic, local, group := failedOver(t, k, "uifb")

	b.open(k.url+"/ui/connectors/mirror/failover", ".failback-page-link")
	require.Contains(t, b.text("#failback-links"), "failback by back")
	b.submit(".failback-page-link", "#failback-form")
	require.Contains(t, b.text("#no-failback"), "never failed back")
	plan := b.text("#failback-plan")
	require.Contains(t, plan, "After the failover of mirror")
	require.Equal(t, 1, strings.Count(plan, "uifbB-"), "only the topics the connector replicates")
	require.Regexp(t, regexp.QuoteMeta(local+"-0")+`\s*5\b`, plan, "it would copy B's topic from the failover's end, 5")
	require.Contains(t, b.text("#failback-groups"), group)
	b.shot("failback-plan")

	b.setValues(map[string]string{"confirm": "not-it", "failover_of": "mirror", "checkpoint_connector": "checkpoints-back", "drain_timeout_s": "30"})
	b.submit("#failback", "#error")
	require.Contains(t, b.text("#error"), "Type the connector's name")
	code, _ := k.do(http.MethodGet, "/connectors/back/failback", nil)
	require.Equal(t, http.StatusNotFound, code, "nothing was filed")

	b.setValues(map[string]string{"confirm": "back", "failover_of": "mirror", "checkpoint_connector": "checkpoints-back", "drain_timeout_s": "30"})
	b.submit("#failback", "#notice")
	b.await("the failback succeeded on the page", `(() => {
		const s = document.querySelector("#failback-state-value");
		return s && s.textContent === "succeeded";
	})()`, 90*time.Second)
	require.Regexp(t, regexp.QuoteMeta(local+"-0")+`\s*5\b`, b.text("#failback-started"))
	require.Contains(t, b.text("#failback-op"), group)
	require.Contains(t, b.text("#failback-op"), "committed")
	b.shot("failback-report")

	code, body := k.do(http.MethodGet, "/connectors/back/failback", nil)
	require.Equal(t, http.StatusOK, code)
	rep := body.(map[string]any)["report"].(map[string]any)
	g := rep["groups"].([]any)[0].(map[string]any)
	require.Equal(t, "committed", g["action"])
	p := g["partitions"].([]any)[0].(map[string]any)
	require.Equal(t, "A."+topic, p["source_topic"])
	require.Equal(t, topic, p["target_topic"])
	require.Equal(t, "60", fmt.Sprint(p["target_offset"]), "the group resumes on A where it was on B")
	require.Equal(t, true, p["exact"])
	requireFailedBack(t, local)
}

// requireFailedBack checks that A holds, once and in order, the records produced on B's local after the
// failover, and none of those before it.
func requireFailedBack(t *testing.T, local string) {
	t.Helper()
	var values []string
	// read_committed: under exactly-once the copy is written in transactions, its log ends with a marker.
	_, err := kafka.ReadTopic(t.Context(), map[string]string{"bootstrap.servers": kafkatest.Bootstrap(t, "A"), "isolation.level": "read_committed"},
		"B."+local, slog.New(slog.DiscardHandler), func(r kafka.Record) error { values = append(values, string(r.Value())); return nil })
	require.NoError(t, err)
	require.Equal(t, []string{"after 0", "after 1", "after 2", "after 3", "after 4", "after 5", "after 6"}, values, "A holds B's records after the failover, once")
}

// failedOver sets up a failback on k: a topic on A (100 records, group at 60) replicated to B by "mirror" with
// "checkpoints", a topic of B's own (local: 5 records before the failover), the failover of "mirror", 7 records
// on local after it, and the B→A connectors "back" (created STOPPED) and "checkpoints-back" following group.
func failedOver(t *testing.T, k *kmirror, prefix string) (topic, local, group string) {
	t.Helper()
	topic, local = kafkatest.TopicName(t, prefix), kafkatest.TopicName(t, prefix+"B")
	kafkatest.CreateTopic(t, "A", topic, 1, nil)
	kafkatest.CreateTopic(t, "B", local, 1, nil)
	producePlain(t, topic, 0, 0, 100)
	onB := func(what string, n int) {
		var recs []kafkatest.Record
		for i := range n {
			recs = append(recs, kafkatest.Record{Topic: local, Partition: 0, Value: fmt.Appendf(nil, "%s %d", what, i)})
		}
		kafkatest.Produce(t, "B", recs)
	}
	onB("before", 5) // on B before the failover: never copied to A
	group = "orders-app-" + topic[len(topic)-8:]
	k.create("mirror", mirrorConfig(t, regexp.QuoteMeta(topic), nil))
	k.create("checkpoints", map[string]any{
		"connector.class":                      "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
		"source.cluster.alias":                 "A",
		"target.cluster.alias":                 "B",
		"source.cluster.bootstrap.servers":     kafkatest.Bootstrap(t, "A"),
		"target.cluster.bootstrap.servers":     kafkatest.Bootstrap(t, "B"),
		"groups":                               regexp.QuoteMeta(group),
		"emit.checkpoints.interval.seconds":    "1",
		"refresh.groups.interval.seconds":      "1",
		"checkpoints.topic.replication.factor": "1",
	})
	commitGroup(t, group, map[kafkatest.Partition]int64{{Topic: topic, Partition: 0}: 60})
	awaitGroupFollowed(t, k, "checkpoints", group)
	code, body := k.do(http.MethodPost, "/connectors/mirror/failover", map[string]any{"checkpoint_connector": "checkpoints", "drain_timeout_ms": 30_000})
	require.Equal(t, http.StatusAccepted, code, "%v", body)
	awaitOperationState(t, k, "mirror", "failover", "succeeded")

	onB("after", 7)
	code, body = k.do(http.MethodPost, "/connectors", map[string]any{"name": "back", "initial_state": "STOPPED", "config": map[string]any{
		"connector.class":                       "org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"source.cluster.alias":                  "B",
		"target.cluster.alias":                  "A",
		"source.cluster.bootstrap.servers":      kafkatest.Bootstrap(t, "B"),
		"target.cluster.bootstrap.servers":      kafkatest.Bootstrap(t, "A"),
		"topics":                                regexp.QuoteMeta(local),
		"replication.factor":                    "1",
		"offset-syncs.topic.replication.factor": "1",
		"sync.topic.acls.enabled":               "false",
		"refresh.topics.interval.seconds":       "1",
	}})
	require.Equal(t, http.StatusCreated, code, "create back: %v", body)
	k.create("checkpoints-back", map[string]any{
		"connector.class":                      "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
		"source.cluster.alias":                 "B",
		"target.cluster.alias":                 "A",
		"source.cluster.bootstrap.servers":     kafkatest.Bootstrap(t, "B"),
		"target.cluster.bootstrap.servers":     kafkatest.Bootstrap(t, "A"),
		"groups":                               regexp.QuoteMeta(group),
		"emit.checkpoints.interval.seconds":    "1",
		"refresh.groups.interval.seconds":      "1",
		"checkpoints.topic.replication.factor": "1",
	})
	awaitGroupFollowed(t, k, "checkpoints-back", group)

	return topic, local, group
}

// awaitGroupFollowed waits until checkpoint connector ck follows group.
func awaitGroupFollowed(t *testing.T, k *kmirror, ck, group string) {
	t.Helper()
	require.Eventually(t, func() bool {
		code, _ := k.do(http.MethodGet, "/connectors/"+ck+"/groups/"+group+"/offsets", nil)
		return code == http.StatusOK
	}, time.Minute, 200*time.Millisecond, "checkpoint connector %s follows group %s", ck, group)
}

// awaitOperationState waits until connector's latest failover or failback (kind) is in state.
func awaitOperationState(t *testing.T, k *kmirror, connector, kind, state string) {
	t.Helper()
	require.Eventually(t, func() bool {
		code, body := k.do(http.MethodGet, "/connectors/"+connector+"/"+kind, nil)
		m, ok := body.(map[string]any)
		return code == http.StatusOK && ok && m["state"] == state
	}, 90*time.Second, 250*time.Millisecond, "%s of %s %s", kind, connector, state)
}
