package server_test

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// TestDashboardFailover: a source connector's failover page says what a failover would do, refuses to start
// one without the typed name, files one when confirmed, and shows its report as it ends: the partition all
// replicated, and the group committed on the target at its exact translated offset.
func TestDashboardFailover(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	k := startKmirror(t, "")
	topic := kafkatest.TopicName(t, "uif")
	kafkatest.CreateTopic(t, "A", topic, 1, nil)
	producePlain(t, topic, 0, 0, 100)
	group := "orders-app-" + topic[len(topic)-8:]
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
	deadline := time.Now().Add(time.Minute)
	for {
		code, _ := k.do(http.MethodGet, "/connectors/checkpoints/groups/"+group+"/offsets", nil)
		if code == http.StatusOK {
			break
		}
		require.True(t, time.Now().Before(deadline), "the checkpoint connector follows the group")
		time.Sleep(200 * time.Millisecond)
	}

	b.open(k.url+"/ui/connectors/mirror", "#failover-link")
	b.submit("#failover-link", "#failover-form")
	require.Contains(t, b.text("#no-failover"), "never failed over")
	require.Contains(t, b.text("#failover-plan"), "Stop this connector")
	b.shot("failover-plan")

	b.setValues(map[string]string{"confirm": "not-it", "checkpoint_connector": "checkpoints", "drain_timeout_s": "30"})
	b.submit("#failover", "#error")
	require.Contains(t, b.text("#error"), "Type the connector's name")
	code, _ := k.do(http.MethodGet, "/connectors/mirror/failover", nil)
	require.Equal(t, http.StatusNotFound, code, "nothing was filed")

	b.setValues(map[string]string{"confirm": "mirror", "checkpoint_connector": "checkpoints", "drain_timeout_s": "30"})
	b.submit("#failover", "#notice")
	b.await("the failover succeeded on the page", `(() => {
		const s = document.querySelector("#failover-state-value");
		return s && s.textContent === "succeeded";
	})()`, 90*time.Second)
	require.Equal(t, "0", b.text("#not-replicated"), "everything A held was replicated before the stop")
	require.Contains(t, b.text("#failover-op"), group)
	require.Contains(t, b.text("#failover-op"), "committed")
	b.shot("failover-report")

	code, body := k.do(http.MethodGet, "/connectors/mirror/failover", nil)
	require.Equal(t, http.StatusOK, code)
	rep := body.(map[string]any)["report"].(map[string]any)
	g := rep["groups"].([]any)[0].(map[string]any)
	require.Equal(t, "committed", g["action"])
	p := g["partitions"].([]any)[0].(map[string]any)
	require.Equal(t, true, p["exact"])
	require.Equal(t, true, p["committed"])
	// B may hold the records twice (a pipeline restarted while B's coordinator loaded): the group resumes where
	// the checkpoint connector translates its position too, after the copy the offset map knows.
	code, offs := k.do(http.MethodGet, "/connectors/checkpoints/groups/"+group+"/offsets", nil)
	require.Equal(t, http.StatusOK, code)
	want := offs.(map[string]any)["offsets"].([]any)[0].(map[string]any)["target_offset"]
	require.Equal(t, fmt.Sprint(want), fmt.Sprint(p["target_offset"]))
	code, st := k.do(http.MethodGet, "/connectors/mirror/status", nil)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "STOPPED", st.(map[string]any)["connector"].(map[string]any)["state"])
}
