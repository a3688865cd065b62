package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

func heartbeatConfig(t *testing.T, extra map[string]any) map[string]any {
	cfg := map[string]any{
		"connector.class":                     "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
		"source.cluster.alias":                "A",
		"target.cluster.alias":                "B",
		"source.cluster.bootstrap.servers":    kafkatest.Bootstrap(t, "A"),
		"target.cluster.bootstrap.servers":    kafkatest.Bootstrap(t, "B"),
		"heartbeats.topic.replication.factor": "1",
	}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

func (k *kmirror) create(name string, config map[string]any) {
	k.t.Helper()
	code, body := k.do(http.MethodPost, "/connectors", map[string]any{"name": name, "config": config})
	require.Equal(k.t, http.StatusCreated, code, "create %s: %v", name, body)
}

// TestDashboardEscapesNamesAndHidesPasswords: a connector name with markup, '/', spaces and an emoji, and a
// config value with markup, render as text in a real browser (no element is made of them), the name's links
// work, and a PASSWORD value reaches the browser on no page.
func TestDashboardEscapesNamesAndHidesPasswords(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	k := startKmirror(t, "")
	name := `<script>window.injected=1</script> a/b 🚀`
	const secret = "s3cret-value-never-shown"
	markup := `<img id="injected" src="x">`
	k.create(name, heartbeatConfig(t, map[string]any{"x.note": markup, "target.cluster.ssl.key.password": secret}))

	b.open(k.url+"/ui/", "#connector-rows .connector-link")
	require.Equal(t, name, b.text("#connector-rows .connector-link"))
	require.Zero(t, eval[int](b, `document.querySelectorAll("main script").length`), "the name made no element")
	b.shot("escaping-list")

	b.submit("#connector-rows .connector-link", "#connector-name")
	require.Equal(t, name, b.text("#connector-name"))
	require.Equal(t, "/ui/connectors/"+url.PathEscape(name), eval[string](b, "location.pathname"), "the name is one path segment")
	require.Equal(t, markup, b.text(configKeyRow("x.note")+" .config-value"))
	require.Zero(t, eval[int](b, `document.querySelectorAll("#injected, main script").length`), "no element made of a value")
	require.Equal(t, "hidden (password)", b.text(configKeyRow("target.cluster.ssl.key.password")+" .hidden-value"))
	require.False(t, eval[bool](b, `document.documentElement.outerHTML.includes(`+jsString(secret)+`)`), "the password is not in the page")
	// The live region refreshes through the escaped URL too.
	b.await("the live status refreshed", `document.querySelector("#connector-state") && document.querySelector("#connector-state").textContent === "RUNNING"`, 30*time.Second)
	require.Nil(t, eval[any](b, `window.injected === undefined ? null : window.injected`))

	b.open(k.url+"/ui/connectors/"+url.PathEscape(name)+"/edit", "#edit-form")
	require.False(t, eval[bool](b, `document.documentElement.outerHTML.includes(`+jsString(secret)+`)`), "the password is not in the edit form")
	require.Equal(t, "password", eval[string](b, `document.getElementById("f-target.cluster.ssl.key.password").type`))
	// Saving with the password field left empty keeps the stored password.
	b.setValues(map[string]string{"f-x.note": "changed"})
	b.submit("#save", "#notice")
	cfg := k.config(name)
	require.Equal(t, secret, cfg["target.cluster.ssl.key.password"], "an untouched password field keeps the stored value")
	require.Equal(t, "changed", cfg["x.note"])
}

// configKeyRow selects the row of a config key in the connector page's config table.
func configKeyRow(key string) string {
	return fmt.Sprintf("#config tr[data-key=%q]", key)
}

// TestDashboardFailoverWorkersAndOffsets shows the groups page translating a committed group's offsets, the
// workers page with its leader, and the offsets page refusing a reset while the connector runs (the API's
// message verbatim) and doing it once the connector is stopped from the dashboard.
func TestDashboardFailoverWorkersAndOffsets(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	k := startKmirror(t, "")
	topic := kafkatest.TopicName(t, "uig")
	kafkatest.CreateTopic(t, "A", topic, 1, nil)
	producePlain(t, topic, 0, 0, 100)
	group := "orders-app-" + topic[len(topic)-8:]
	k.create("mirror", mirrorConfig(t, topic, nil))
	// The other two types are made from their forms, as the source connector is in the lifecycle test.
	clusters := map[string]string{"f-source.cluster.alias": "A", "f-target.cluster.alias": "B",
		"f-source.cluster.bootstrap.servers": kafkatest.Bootstrap(t, "A"),
		"f-target.cluster.bootstrap.servers": kafkatest.Bootstrap(t, "B")}
	createFromForm(b, k, "MirrorCheckpointConnector", "checkpoints", clusters, map[string]string{
		"f-groups": group, "f-emit.checkpoints.interval.seconds": "1", "f-refresh.groups.interval.seconds": "1",
		"f-checkpoints.topic.replication.factor": "1"})
	createFromForm(b, k, "MirrorHeartbeatConnector", "heartbeats", clusters, map[string]string{
		"f-heartbeats.topic.replication.factor": "1"})
	require.Equal(t, group, k.config("checkpoints")["groups"])
	require.Equal(t, "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector", k.config("heartbeats")["connector.class"])
	commitGroup(t, group, map[kafkatest.Partition]int64{{Topic: topic, Partition: 0}: 60})

	b.open(k.url+"/ui/connectors/checkpoints", "#groups-link")
	b.submit("#groups-link", "#groups")
	b.await("the group's offset translated on the page", `(() => {
		const row = document.querySelector("#groups tbody tr");
		return row && row.cells[1].textContent === "60" && row.cells[3].textContent !== "–";
	})()`, 60*time.Second)
	require.Contains(t, b.text("#groups"), group)
	b.shot("groups")

	b.open(k.url+"/ui/workers", "#leader")
	code, body := k.do(http.MethodGet, "/workers", nil)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, body.(map[string]any)["leader"], b.text("#leader"))
	b.await("the workers list names the connectors they run", `document.querySelector("#workers").textContent.includes("mirror")`, 30*time.Second)
	b.shot("workers")

	// Reset while running: refused with the API's own words, nothing changed.
	code, _ = k.do(http.MethodGet, "/connectors/mirror/offsets", nil)
	require.Equal(t, http.StatusOK, code)
	b.open(k.url+"/ui/connectors/mirror/offsets", "#reset")
	b.submit("#reset", "#error")
	code, apiErr := k.do(http.MethodDelete, "/connectors/mirror/offsets", nil)
	require.NotEqual(t, http.StatusOK, code)
	require.Equal(t, apiErr.(map[string]any)["message"], b.text("#error pre"), "the API's message, verbatim")

	// Stop from the connector page, then reset.
	b.open(k.url+"/ui/connectors/mirror", "#stop")
	b.submit("#stop", "#notice")
	b.await("the page shows STOPPED", `document.querySelector("#connector-state").textContent === "STOPPED"`, 30*time.Second)
	b.open(k.url+"/ui/connectors/mirror/offsets", "#reset")
	b.submit("#reset", "#notice")
	require.True(t, strings.HasPrefix(b.text("#notice"), "Offsets reset"), b.text("#notice"))
	code, offs := k.do(http.MethodGet, "/connectors/mirror/offsets", nil)
	require.Equal(t, http.StatusOK, code)
	require.Empty(t, offs.(map[string]any)["offsets"])
}

// TestDashboardFailedConnector: a connector that fails (it cannot create its heartbeats topic, its task cannot
// deliver) is listed first and kept by the failed filter with the first line of its trace; its page shows the full trace; a restart of the failed tasks only
// (includeTasks + onlyFailed) brings it back once its target is reachable again.
func TestDashboardFailedConnector(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	k := startKmirror(t, "")
	k.create("healthy", heartbeatConfig(t, nil))
	proxy := newTCPProxy(t, kafkatest.Bootstrap(t, "B")) // down: B is unreachable through it
	source := uniqueAlias("uiA")
	name := "broken-" + source
	k.create(name, map[string]any{
		"connector.class":                     "MirrorHeartbeatConnector",
		"source.cluster.alias":                source,
		"target.cluster.alias":                uniqueAlias("uiB"),
		"target.cluster.bootstrap.servers":    proxy.addr,
		"heartbeats.topic.replication.factor": "1",
		"admin.timeout.ms":                    "2000",
		"target.producer.delivery.timeout.ms": "2000",
		"target.producer.request.timeout.ms":  "1000",
		"target.producer.linger.ms":           "0",
	})
	k.awaitStates(name, "FAILED FAILED", 60*time.Second)

	b.open(k.url+"/ui/", "#connector-rows tr.failed")
	require.Equal(t, name, b.text("#connector-rows tr:first-child .connector-link"), "failing connectors first")
	require.Contains(t, b.text("#connector-rows tr.failed .trace-line"), "create the heartbeats topic")
	b.open(k.url+"/ui/?failed=1", "#connector-rows")
	require.Equal(t, 1, eval[int](b, `document.querySelectorAll("#connector-rows .connector-link").length`), "only the failed one")
	require.Equal(t, name, b.text("#connector-rows .connector-link"))

	b.submit("#connector-rows .connector-link", "#tasks")
	b.do("open the task's trace", chromedp.Click(chromedp.CSS("#trace-task-0 summary")))
	require.Contains(t, b.text("#trace-task-0 pre"), "no heartbeat delivered to heartbeats on cluster")
	// The live refresh keeps the opened trace open.
	b.await("a live refresh swapped the status", `(() => { const d = document.querySelector("#trace-task-0");
		if (!d) return false; if (!window.__seen) { window.__seen = d; return false; } return window.__seen !== d; })()`, 20*time.Second)
	require.True(t, eval[bool](b, `document.querySelector("#trace-task-0").open`), "the opened trace stays open")
	b.shot("failed-connector")

	proxy.up(t)
	b.do("restart only the failed tasks", chromedp.Click(chromedp.CSS("#includeTasks")), chromedp.Click(chromedp.CSS("#onlyFailed")))
	b.submit("#restart", "#notice")
	b.await("the task runs again", `document.querySelector("#tasks tbody").textContent.includes("RUNNING") &&
		!document.querySelector("#tasks tbody").textContent.includes("FAILED")`, 60*time.Second)
}

// createFromForm creates a connector of class (the short name) from the dashboard's form.
func createFromForm(b *browser, k *kmirror, class, name string, values ...map[string]string) {
	b.t.Helper()
	b.open(k.url+"/ui/new", "#plugin-list")
	b.do("choose "+class, chromedp.Click(chromedp.CSS(`a[href$="`+class+`"]`)), chromedp.WaitVisible(chromedp.CSS("#create-form")))
	all := map[string]string{"f-name": name}
	for _, v := range values {
		for id, x := range v {
			all[id] = x
		}
	}
	b.setValues(all)
	b.submit("#create", "#connector-name")
	require.Equal(b.t, "Connector created.", b.text("#notice"))
	require.Equal(b.t, name, b.text("#connector-name"))
}
