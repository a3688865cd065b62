package server_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/loadgen"
)

const sourceClass = "org.apache.kafka.connect.mirror.MirrorSourceConnector"

// config reads a connector's config through the REST API.
func (k *kmirror) config(name string) map[string]string {
	k.t.Helper()
	// As stored, secrets included: the tests check what a save kept.
	code, body := k.do(http.MethodGet, "/connectors/"+url.PathEscape(name)+"/config?revealSecrets=true", nil)
	require.Equal(k.t, http.StatusOK, code, "config of %s: %v", name, body)
	out := map[string]string{}
	for key, v := range body.(map[string]any) {
		out[key] = v.(string)
	}
	return out
}

// startLoad produces into topic on A at rate records/s until the test ends.
func startLoad(t *testing.T, topic string, partitions int, rate float64) (stats *loadgen.Stats, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stats = &loadgen.Stats{}
	done := make(chan error, 1)
	go func() {
		done <- loadgen.Run(ctx, loadgen.Config{Bootstrap: kafkatest.Bootstrap(t, "A"), Topic: topic,
			Partitions: partitions, Rate: rate}, stats)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			require.NoError(t, <-done, "load generator")
		})
	}
	t.Cleanup(stop)
	return stats, stop
}

// TestDashboardSourceConnectorLifecycle drives the dashboard as an operator would, in a real Chromium: creates a
// source connector from the form built from the plugin definitions, edits it with a validation error (kept
// inline, nothing typed lost, nothing saved) and fixes it, pauses and resumes it, watches every record replicated while
// records keep flowing and its lag fall to zero once they stop, and deletes it after a failed confirmation.
func TestDashboardSourceConnectorLifecycle(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	k := startKmirror(t, "")
	topic := kafkatest.TopicName(t, "ui")
	kafkatest.CreateTopic(t, "A", topic, 2, nil)
	stats, stopLoad := startLoad(t, topic, 2, 200)
	name := "ui source " + topic[len(topic)-8:] // a space: the name is path-escaped in every link

	// Create from the form.
	b.open(k.url+"/ui/new", "#plugin-list")
	b.do("choose the source connector", chromedp.Click(chromedp.CSS(`a[href*="MirrorSourceConnector"]`)),
		chromedp.WaitVisible(chromedp.CSS("#create-form")))
	code, defs := k.do(http.MethodGet, "/connector-plugins/"+sourceClass+"/config", nil)
	require.Equal(t, http.StatusOK, code)
	for _, d := range defs.([]any) {
		if def := d.(map[string]any); def["name"] == "replication.factor" {
			require.Contains(t, b.text(byID("f-replication.factor-help")), strings.TrimSpace(def["documentation"].(string)),
				"help text comes from the plugin's config definitions")
		}
	}
	b.setValues(map[string]string{
		"f-name":                                  name,
		"f-source.cluster.alias":                  "A",
		"f-target.cluster.alias":                  "B",
		"f-source.cluster.bootstrap.servers":      kafkatest.Bootstrap(t, "A"),
		"f-target.cluster.bootstrap.servers":      kafkatest.Bootstrap(t, "B"),
		"f-topics":                                topic,
		"f-tasks.max":                             "2",
		"f-replication.factor":                    "1",
		"f-offset-syncs.topic.replication.factor": "1",
		"f-sync.topic.acls.enabled":               "false",
		"f-refresh.topics.interval.seconds":       "1",
	})
	b.shotTop("create")
	b.submit("#create", "#connector-name")
	require.Equal(t, name, b.text("#connector-name"))
	require.Equal(t, "Connector created.", b.text("#notice"))
	before := k.config(name)
	require.Equal(t, topic, before["topics"])
	require.Equal(t, sourceClass, before["connector.class"])
	require.NotContains(t, before, "emit.heartbeats.enabled", "fields left empty keep their defaults: not sent")

	// Edit with a validation error: shown at its field, what was typed kept, nothing saved.
	b.open(k.url+"/ui/connectors/"+url.PathEscape(name)+"/edit", "#edit-form")
	b.setValues(map[string]string{"f-tasks.max": "two", "extra": "producer.override.linger.ms=7"})
	b.submit("#save", byID("f-tasks.max-err"))
	require.Contains(t, b.text(byID("f-tasks.max-err")), "tasks.max")
	require.Contains(t, b.text("#error"), "nothing was saved")
	require.Equal(t, "two", b.value(byID("f-tasks.max")), "the typed value stays in the form")
	require.Equal(t, "producer.override.linger.ms=7", b.value("#extra"), "the added key stays in the form")
	require.Equal(t, before, k.config(name), "a failed save changes nothing")
	b.shot("edit-validation-error")

	// Fix it: saved, every other key kept, the added one added.
	b.setValues(map[string]string{"f-tasks.max": "1"})
	b.submit("#save", "#notice")
	require.Equal(t, "Configuration saved.", b.text("#notice"))
	after := k.config(name)
	want := map[string]string{}
	for key, v := range before {
		want[key] = v
	}
	want["tasks.max"], want["producer.override.linger.ms"] = "1", "7"
	require.Equal(t, want, after, "editing never drops keys")

	// Pause and resume: the live status follows without a reload.
	b.submit("#pause", "#notice")
	require.Equal(t, "Pause requested.", b.text("#notice"))
	b.await("the page shows PAUSED", `document.querySelector("#connector-state").textContent === "PAUSED"`, 30*time.Second)
	require.Equal(t, "PAUSED", strings.Fields(k.states(name))[0])
	b.submit("#resume", "#notice")
	b.await("the page shows RUNNING", `document.querySelector("#connector-state").textContent === "RUNNING"`, 30*time.Second)
	// Restart with its tasks (Connect's includeTasks): accepted, and the connector comes back RUNNING.
	b.do("tick include tasks", chromedp.Click(chromedp.CSS("#includeTasks")))
	b.submit("#restart", "#notice")
	require.Equal(t, "Restart requested.", b.text("#notice"))
	b.await("running again after the restart", `document.querySelector("#connector-state").textContent === "RUNNING" &&
		[...document.querySelectorAll("#tasks tbody tr th")].length === 1 &&
		document.querySelector("#tasks tbody").textContent.includes("RUNNING")`, 60*time.Second)

	// Everything produced before the restart is replicated while records keep flowing, per the page's table;
	// once the producer stops, the page's lag falls to zero with every acknowledged record replicated. (Lag 0
	// while 200 records/s arrive is a matter of when the page samples, not of what kmirror does.)
	produced := stats.Acked()
	replicatedAtLeast := func(what string, n int64, lagZero bool) {
		b.await(what, `(() => {
		const lag = document.querySelector("#total-lag");
		if (!lag || (`+strconv.FormatBool(lagZero)+` && lag.textContent !== "0")) return false;
		let sum = 0;
		for (const row of document.querySelectorAll("#partitions tbody tr[data-partition]")) {
			sum += Number(row.cells[3].textContent);
		}
		return sum >= `+strconv.FormatInt(n, 10)+`;
	})()`, 60*time.Second)
	}
	replicatedAtLeast("every record produced before the restart replicated", produced, false)
	require.Greater(t, stats.Acked(), produced, "records still flow")
	// While records flow, every partition has an age for its lag: a measured one, or a bound when the record at the
	// replicated offset has not been read yet (never "–" once records have been replicated).
	ages := eval[[]string](b, `[...document.querySelectorAll("#partitions td.lag-age")].map(td => td.textContent)`)
	require.Len(t, ages, 2)
	for _, a := range ages {
		require.Regexp(t, `^(≤ )?\d+\.\d s$`, a, "lag age of a replicating partition")
	}
	stopLoad()
	replicatedAtLeast("lag 0 with every record replicated once the producer stopped", stats.Acked(), true)
	b.await("a chart per partition with samples", `document.querySelectorAll("#charts figure").length === 2 &&
		Number(document.querySelector("#charts").dataset.samples) >= 3`, 30*time.Second)
	require.NotEmpty(t, b.text("#verdicts"), "the parallelism verdicts are shown")
	b.shot("connector")
	// The charts' y axes widen to their widest tick label: millions of records must not be clipped.
	fit, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`new Promise(resolve => {
		const figs = [...document.querySelectorAll("#charts figure")];
		const now = Date.now() / 1000;
		figs.forEach(f => f.uplot.setData([[now - 2, now], [1234567, 2345678], [12345.5, 23456.5]]));
		requestAnimationFrame(() => requestAnimationFrame(() => resolve(figs.length > 0 && figs.every(f => {
			const u = f.uplot;
			return [1, 2].every(i => {
				const a = u.axes[i];
				u.ctx.font = a.font[0];
				const widest = Math.max(...a._values.map(v => u.ctx.measureText(v).width)) / (window.devicePixelRatio || 1);
				return a._values.some(v => v.length >= 5) && a._size >= widest + a.ticks.size;
			});
		}))));
	})`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.True(t, fit, "every chart's axis is as wide as its widest label")

	// The list: state, tasks, throughput and lag; search and the failed filter.
	b.open(k.url+"/ui/", "#connector-rows .connector-link")
	require.Equal(t, name, b.text("#connector-rows .connector-link"))
	require.Contains(t, b.text("#connector-rows"), "1/1 running")
	b.shot("connectors")
	b.open(k.url+"/ui/?q=no-such-connector", "#connector-rows")
	require.Contains(t, b.text("#connector-rows"), "No connector matches.")
	b.open(k.url+"/ui/?failed=1", "#connector-rows")
	require.Contains(t, b.text("#connector-rows"), "No connector matches.", "a running connector is not failed")

	// Delete: a wrong confirmation deletes nothing and says why; the right one deletes.
	b.open(k.url+"/ui/connectors/"+url.PathEscape(name), "#connector-name")
	gap := eval[float64](b, `document.querySelector("#delete-box").getBoundingClientRect().top -
		document.querySelector(".actions").getBoundingClientRect().bottom`)
	require.GreaterOrEqual(t, gap, 16.0, "the delete box stands apart from the action buttons")
	b.do("open the delete box", chromedp.Click(chromedp.CSS("#delete-box summary")),
		chromedp.SetValue(chromedp.CSS("#confirm"), "not the name"))
	b.submit("#delete", "#error")
	require.Contains(t, b.text("#error"), "Not deleted")
	require.NotEmpty(t, k.states(name), "still there")
	b.do("confirm with the name", chromedp.Click(chromedp.CSS("#delete-box summary")),
		chromedp.SetValue(chromedp.CSS("#confirm"), name))
	b.submit("#delete", "#notice")
	require.Equal(t, "Connector "+name+" deleted.", b.text("#notice"))
	require.Empty(t, k.states(name), "gone from the API")
}
