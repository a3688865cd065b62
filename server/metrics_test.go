package server_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// scrape reads GET /metrics and returns its families by name.
func (k *kmirror) scrape() map[string]*dto.MetricFamily {
	k.t.Helper()
	resp, err := k.client.Get(k.url + "/metrics")
	require.NoError(k.t, err)
	defer resp.Body.Close()
	require.Equal(k.t, http.StatusOK, resp.StatusCode)
	require.Contains(k.t, resp.Header.Get("Content-Type"), "text/plain")
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(k.t, err)
	return fams
}

// sample returns the value of the series of name whose labels include want, and whether there is one.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		match := true
		for k, v := range want {
			if labels[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		default:
			return m.GetUntyped().GetValue(), true
		}
	}
	return 0, false
}

// TestMetricsEndpoint: a worker running a heartbeat connector lists its connector and task states, its
// leadership and the REST requests it served on GET /metrics, with the Strimzi board's names and quoting.
func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	source, target := uniqueAlias("mA"), uniqueAlias("mB")
	name := source + "->" + target + ".MirrorHeartbeatConnector" // Kafka quotes such a name in its MBeans
	code, body := k.do(http.MethodPost, "/connectors", map[string]any{
		"name": name,
		"config": map[string]any{
			"connector.class":                     "MirrorHeartbeatConnector",
			"source.cluster.alias":                source,
			"target.cluster.alias":                target,
			"target.cluster.bootstrap.servers":    kafkatest.Bootstrap(t, "B"),
			"heartbeats.topic.replication.factor": "1",
		},
	})
	require.Equal(t, http.StatusCreated, code, "%v", body)
	path := "/connectors/" + url.PathEscape(name)
	k.awaitStates(url.PathEscape(name), "RUNNING RUNNING", 30*time.Second)
	code, _ = k.do(http.MethodGet, "/connectors/no-such-connector", nil)
	require.Equal(t, http.StatusNotFound, code)
	code, _ = k.do(http.MethodGet, "/no/such/route", nil)
	require.Equal(t, http.StatusNotFound, code)

	quoted := `"` + name + `"`
	var fams map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		fams = k.scrape()
		v, ok := sample(fams, "kafka_connect_connector_status", map[string]string{"connector": quoted, "task": "0", "status": "running"})
		return ok && v == 1
	}, 20*time.Second, 100*time.Millisecond, "task status never appeared")

	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"kafka_connect_worker_connector_count", nil, 1},
		{"kafka_connect_worker_task_count", nil, 1},
		{"kafka_connect_worker_connector_running_task_count", map[string]string{"connector": quoted}, 1},
		{"kafka_connect_worker_connector_failed_task_count", map[string]string{"connector": quoted}, 0},
		{"kafka_connect_worker_connector_total_task_count", map[string]string{"connector": quoted}, 1},
		{"kmirror_connector_state", map[string]string{"connector": name, "state": "running"}, 1},
		{"kmirror_connector_state", map[string]string{"connector": name, "state": "failed"}, 0},
		{"kmirror_task_state", map[string]string{"connector": name, "task": "0", "state": "running"}, 1},
		{"kmirror_worker_leader", nil, 1},
	} {
		v, ok := sample(fams, c.name, c.labels)
		require.True(t, ok, "no %s%v", c.name, c.labels)
		require.Equal(t, c.want, v, "%s%v", c.name, c.labels)
	}

	// REST requests by route pattern, never by raw path.
	for _, c := range []map[string]string{
		{"route": "/connectors", "method": "POST", "code": "201"},
		{"route": "/connectors/{connector}/status", "method": "GET", "code": "200"},
		{"route": "/connectors/{connector}", "method": "GET", "code": "404"},
		{"route": "unmatched", "method": "GET", "code": "404"},
	} {
		v, ok := sample(fams, "kmirror_http_requests_total", c)
		require.True(t, ok, "no kmirror_http_requests_total%v", c)
		require.GreaterOrEqual(t, v, 1.0)
	}
	_, ok := sample(fams, "kmirror_http_request_duration_seconds", map[string]string{"route": "/connectors/{connector}/status"})
	require.True(t, ok)
	for _, f := range fams["kmirror_http_requests_total"].GetMetric() {
		for _, lp := range f.GetLabel() {
			if lp.GetName() == "route" {
				require.NotContains(t, lp.GetValue(), source, "a raw path leaked into the route label")
			}
		}
	}
	require.Contains(t, fams, "go_goroutines")
	require.Contains(t, fams, "process_resident_memory_bytes")

	// OpenMetrics for scrapers that ask for it.
	req, err := http.NewRequest(http.MethodGet, k.url+"/metrics", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0")
	resp, err := k.client.Do(req)
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Contains(t, resp.Header.Get("Content-Type"), "application/openmetrics-text")
	require.True(t, strings.HasSuffix(string(raw), "# EOF\n"))

	// The connector gone, its series go with it.
	code, _ = k.do(http.MethodDelete, path, nil)
	require.Equal(t, http.StatusNoContent, code)
	require.Eventually(t, func() bool {
		fams = k.scrape()
		_, task := sample(fams, "kmirror_task_state", map[string]string{"connector": name})
		count, _ := sample(fams, "kafka_connect_worker_connector_count", nil)
		return !task && count == 0
	}, 30*time.Second, 100*time.Millisecond, "the deleted connector's series stayed")
}
