package server_test

// The dashboards' queries against what kmirror really exports: a kmirror replicates and checkpoints between
// clusters A and B, GET /metrics is scraped twice a few seconds apart, every series gets the labels a Strimzi
// PodMonitor and Prometheus would add, and Prometheus' own query engine evaluates every query of the Strimzi
// MirrorMaker 2 dashboard (testdata/strimzi-mm2-queries.txt) and of deploy/grafana/kmirror.json over the two
// scrapes.
//
// The engine is github.com/prometheus/prometheus/promql used as a library over a small in-memory Queryable.
// promql/promqltest (LoadedStorage) would do the storing, but it imports tsdb and config, which pull the
// Azure, AWS, Google Cloud and Kubernetes client modules into kmirror's module graph (some 50 more modules);
// promql alone needs none of them.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/util/annotations"
	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

const (
	strimziQueriesFile = "testdata/strimzi-mm2-queries.txt"
	grafanaDashboard   = "../deploy/grafana/kmirror.json"

	// What the test's fake Strimzi deployment is called; testdata/strimzi-mm2-queries.txt has these values
	// where the dashboard has $strimzi_mirror_maker_cluster_name and $kubernetes_namespace.
	strimziCluster   = "my-mirror-maker-2"
	strimziNamespace = "myproject"
	strimziPod       = strimziCluster + "-mirrormaker2-0"
)

// strimziTargetLabels are the labels Prometheus gives every series of the scraped pod: job and instance of its
// own, and what Strimzi's PodMonitor (kafka-resources-metrics.yaml) relabels in: the pod's strimzi.io/* labels
// by labelmap, namespace, kubernetes_pod_name, node_name and node_ip.
var strimziTargetLabels = map[string]string{
	"job":                 strimziNamespace + "/kafka-resources-metrics",
	"instance":            "10.244.0.17:8083",
	"namespace":           strimziNamespace,
	"kubernetes_pod_name": strimziPod,
	"node_name":           "node-1",
	"node_ip":             "192.168.49.2",
	"strimzi_io_kind":     "KafkaMirrorMaker2",
	"strimzi_io_cluster":  strimziCluster,
	"strimzi_io_name":     strimziCluster + "-mirrormaker2",
}

// strimziGaps are the Kafka Connect series the Strimzi board queries that kmirror does not export (yet): their
// panels stay empty. A query returning nothing is accepted only if it reads one of them, and a gap that starts
// answering fails the test, so that the list stays true. Every Connect series the board reads is exported now;
// the JVM row is left out of testdata/strimzi-mm2-queries.txt altogether (kmirror is no JVM).
var strimziGaps = map[string]string{}

// grafanaMayBeEmpty are the series of deploy/grafana/kmirror.json that are absent in the state the test can
// put kmirror in. A query reading one of them may return nothing, provided the metric is absent from the
// scrape altogether (were it there under other labels, the query would be wrong).
var grafanaMayBeEmpty = map[string]string{
	"kmirror_client_broker_throttle_max_seconds": "librdkafka reports throttle times only once a broker throttles (quotas); the test's brokers throttle nobody",
	"kmirror_unit_notices":                       "series exist only while a task shows a notice; the test's replication is healthy (server/metrics_replication_test.go shows one)",
}

// TestStrimziAndGrafanaDashboardQueries evaluates every query of both dashboards over two scrapes of a
// replicating, checkpointing kmirror: each must return at least one series with a number (not NaN), except
// the Strimzi queries of strimziGaps and the kmirror ones of grafanaMayBeEmpty.
func TestStrimziAndGrafanaDashboardQueries(t *testing.T) {
	t.Parallel()
	f := newDashboardFixture(t)

	t.Run("strimzi-mm2", func(t *testing.T) {
		queries := readStrimziQueries(t)
		require.NotEmpty(t, queries)
		var gaps []string
		for _, q := range queries {
			res := f.db.eval(t, q.expr, f.at)
			missing := gapsOf(t, q.expr)
			switch {
			case len(missing) > 0 && len(res) == 0:
				for _, m := range missing {
					gaps = append(gaps, fmt.Sprintf("line %d: %s: %s", q.line, m, strimziGaps[m]))
				}
			case len(missing) > 0:
				t.Errorf("line %d: %s now returns %d series: take %v off strimziGaps (and the docs' list)", q.line, q.expr, len(res), missing)
			case len(res) == 0:
				t.Errorf("line %d: no series for %s\n%s", q.line, q.expr, f.db.near(q.expr))
			case !hasNumber(res):
				t.Errorf("line %d: only NaN for %s: %v", q.line, q.expr, res)
			default:
				t.Logf("line %d: %d series, e.g. %s", q.line, len(res), res[0])
			}
		}
		t.Logf("%d queries, %d on series kmirror does not export:\n  %s", len(queries), len(gaps), strings.Join(gaps, "\n  "))
	})

	t.Run("grafana-kmirror", func(t *testing.T) {
		d := readGrafanaDashboard(t)
		// Every variable set to All (the allValue .*), then to every value its own query finds, as a user who
		// ticks them all would have it: both must find series for every panel.
		for _, mode := range []string{"all", "selected"} {
			vars := d.resolveVariables(t, f, mode)
			for _, tg := range d.targets {
				expr := grafanaSubstitute(t, tg.expr, vars, f.rateInterval)
				res := f.db.eval(t, expr, f.at)
				switch {
				case len(res) == 0 && f.db.absentExcused(t, expr):
					t.Logf("%s: panel %q %s: no series, as expected here (%s)", mode, tg.panel, tg.refID, expr)
				case len(res) == 0:
					t.Errorf("%s: panel %q %s: no series for %s\n%s", mode, tg.panel, tg.refID, expr, f.db.near(expr))
				case !hasNumber(res):
					t.Errorf("%s: panel %q %s: only NaN for %s: %v", mode, tg.panel, tg.refID, expr, res)
				case mode == "selected":
					t.Logf("panel %q %s: %d series, e.g. %s", tg.panel, tg.refID, len(res), res[0])
				}
			}
		}
	})
}

// TestGrafanaDashboardIsWellFormed checks deploy/grafana/kmirror.json without a cluster: valid JSON that
// Grafana imports (schema, datasource variable, unique ids and refIds, panels inside the 24-column grid) and
// every query parses as PromQL once its variables are substituted.
func TestGrafanaDashboardIsWellFormed(t *testing.T) {
	t.Parallel()
	d := readGrafanaDashboard(t)
	require.NotEmpty(t, d.raw.UID)
	require.NotEmpty(t, d.raw.Title)
	require.GreaterOrEqual(t, d.raw.SchemaVersion, 36, "schemaVersion")
	names := map[string]string{}
	for _, v := range d.raw.Templating.List {
		names[v.Name] = v.Type
	}
	require.Equal(t, "datasource", names["DS_PROMETHEUS"], "a datasource variable DS_PROMETHEUS of type datasource")
	for _, v := range []string{"connector", "source", "target", "topic"} {
		require.Equal(t, "query", names[v], "templating variable %s", v)
	}
	ids := map[int]string{}
	for _, p := range d.panels {
		require.NotZero(t, p.ID, "panel %q has no id", p.Title)
		require.Empty(t, ids[p.ID], "panels %q and %q share id %d", ids[p.ID], p.Title, p.ID)
		ids[p.ID] = p.Title
		require.LessOrEqual(t, p.GridPos.X+p.GridPos.W, 24, "panel %q is wider than the grid", p.Title)
		require.Positive(t, p.GridPos.W*p.GridPos.H, "panel %q has no size", p.Title)
		if p.Type == "row" {
			continue
		}
		require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
		require.Equal(t, "${DS_PROMETHEUS}", p.Datasource.UID, "panel %q datasource", p.Title)
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			require.False(t, refs[tg.RefID], "panel %q repeats refId %s", p.Title, tg.RefID)
			refs[tg.RefID] = true
		}
	}
	vars := map[string]string{"connector": ".*", "source": ".*", "target": ".*", "topic": ".*"}
	for _, tg := range d.targets {
		expr := grafanaSubstitute(t, tg.expr, vars, "1m")
		_, err := promParser.ParseExpr(expr)
		require.NoError(t, err, "panel %q %s: %s", tg.panel, tg.refID, expr)
	}
}

// TestStrimziQueriesParse: the test vectors are PromQL, with no Grafana variable left.
func TestStrimziQueriesParse(t *testing.T) {
	t.Parallel()
	for _, q := range readStrimziQueries(t) {
		require.NotContains(t, q.expr, "$", "line %d: a Grafana variable is left", q.line)
		_, err := promParser.ParseExpr(q.expr)
		require.NoError(t, err, "line %d: %s", q.line, q.expr)
	}
}

// dashboardFixture is a kmirror that replicated and checkpointed, scraped twice.
type dashboardFixture struct {
	db           *promDB
	at           time.Time // the second scrape: where the queries are evaluated
	rateInterval string    // what $__rate_interval stands for: spans both scrapes
}

func newDashboardFixture(t *testing.T) *dashboardFixture {
	t.Helper()
	k := startKmirror(t, "")
	// MM2's own connector names (<source>-><target>.Mirror...Connector), which the Strimzi board's regexes
	// expect, quotes included, in connector and client id labels. A source alias of its own keeps this test's
	// internal topics apart from the other tests'.
	alias := uniqueAlias("A")
	srcName, ckName := alias+"->B.MirrorSourceConnector", alias+"->B.MirrorCheckpointConnector"
	topics := createSourceTopics(t, "dash", 3, 2)
	var names []string
	for _, tp := range topics {
		names = append(names, tp.name)
	}
	remote := func(topic string) string { return alias + "." + topic }
	group := "dash-" + alias
	committed := func(o int64) map[kafkatest.Partition]int64 {
		return map[kafkatest.Partition]int64{{Topic: topics[0].name, Partition: 0}: o, {Topic: topics[0].name, Partition: 1}: o}
	}

	sent := recentRecords(topics, 3000, 0)
	kafkatest.Produce(t, "A", sent)
	commitGroupRetrying(t, group, committed(100))
	code, body := k.do(http.MethodPut, "/connectors/"+url.PathEscape(srcName)+"/config",
		mirrorConfig(t, strings.Join(names, ","), map[string]any{"source.cluster.alias": alias, "tasks.max": "2"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	code, body = k.do(http.MethodPut, "/connectors/"+url.PathEscape(ckName)+"/config",
		checkpointConfig(t, alias, group, map[string]any{"topics": strings.Join(names, ",")}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(url.PathEscape(srcName), "RUNNING RUNNING RUNNING", 60*time.Second)
	awaitCount(t, remote, topics, sent, 2*time.Minute)
	k.awaitTranslation(url.PathEscape(ckName), group, committed(100), 90*time.Second)

	// The client series come with librdkafka's statistics, every 5 s.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		text := scrapeText(t, k)
		if strings.Contains(text, "\nkafka_consumer_fetch_manager_records_lag{") && strings.Contains(text, "\nkafka_producer_buffer_available_bytes{") {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	db := newPromDB()
	t1 := time.Now()
	db.add(t, scrapeText(t, k), t1)

	// Between the scrapes: more records, a new committed offset to checkpoint, and a statistics interval, so
	// that every counter and histogram moves and rate() has something to say.
	more := recentRecords(topics, 1000, len(sent))
	kafkatest.Produce(t, "A", more)
	commitGroupRetrying(t, group, committed(200))
	awaitCount(t, remote, topics, append(sent, more...), 2*time.Minute)
	k.awaitTranslation(url.PathEscape(ckName), group, committed(200), 90*time.Second)
	time.Sleep(time.Until(t1.Add(6 * time.Second)))
	t2 := time.Now()
	db.add(t, scrapeText(t, k), t2)

	span := max(time.Minute, 2*t2.Sub(t1)).Round(time.Second)
	return &dashboardFixture{db: db, at: t2, rateInterval: model.Duration(span).String()}
}

// commitGroupRetrying is commitGroup through the transient errors of a young cluster, whose group coordinator
// may not be up yet (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE).
func commitGroupRetrying(t *testing.T, group string, offsets map[kafkatest.Partition]int64) {
	t.Helper()
	var list []kafka.GroupOffset
	for p, o := range offsets {
		list = append(list, kafka.GroupOffset{Topic: p.Topic, Partition: p.Partition, Offset: o})
	}
	admin := kafkatest.Admin(t, "A")
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if err = admin.AlterGroupOffsets(context.Background(), group, list); err == nil {
			return
		}
	}
	t.Fatalf("commit offsets of group %s: %v", group, err)
}

// recentRecords is makeRecords with the timestamps of now, so that latencies and ages are real ones.
func recentRecords(topics []sourceTopic, n, from int) []kafkatest.Record {
	rs := makeRecords(topics, n, from)
	now := time.Now()
	for i := range rs {
		rs[i].Timestamp = now
	}
	return rs
}

// scrapeText reads GET /metrics in the text format, as Prometheus does when it does not ask for protobuf.
func scrapeText(t *testing.T, k *kmirror) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, k.url+"/metrics", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := k.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// promDB holds the scraped samples and answers the query engine.
type promDB struct {
	series map[string]*promSeries // by labels.String()
}

type promSeries struct {
	lset    labels.Labels
	samples []chunks.Sample
}

func newPromDB() *promDB { return &promDB{series: map[string]*promSeries{}} }

// add stores one scrape taken at ts: every sample as Prometheus stores it (histograms and summaries as their
// _bucket/_sum/_count and quantile series), with the target's labels; a scraped label that collides with one
// of them is kept as exported_<name>, as Prometheus does without honor_labels.
func (db *promDB) add(t *testing.T, text string, ts time.Time) {
	t.Helper()
	tp := expfmt.NewTextParser(model.UTF8Validation)
	families, err := tp.TextToMetricFamilies(strings.NewReader(text))
	require.NoError(t, err)
	ms := ts.UnixMilli()
	put := func(name string, own []*dto.LabelPair, v float64, extra ...string) {
		b := labels.NewBuilder(labels.EmptyLabels())
		for _, l := range own {
			n := l.GetName()
			if _, ok := strimziTargetLabels[n]; ok {
				n = "exported_" + n
			}
			b.Set(n, l.GetValue())
		}
		for i := 0; i < len(extra); i += 2 {
			b.Set(extra[i], extra[i+1])
		}
		for n, v := range strimziTargetLabels {
			b.Set(n, v)
		}
		b.Set(labels.MetricName, name)
		lset := b.Labels()
		key := lset.String()
		s := db.series[key]
		if s == nil {
			s = &promSeries{lset: lset}
			db.series[key] = s
		}
		s.samples = append(s.samples, floatSample{t: ms, f: v})
	}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			lp := m.GetLabel()
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				put(name, lp, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				put(name, lp, m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				put(name, lp, m.GetUntyped().GetValue())
			case dto.MetricType_SUMMARY:
				s := m.GetSummary()
				for _, q := range s.GetQuantile() {
					put(name, lp, q.GetValue(), model.QuantileLabel, formatFloat(q.GetQuantile()))
				}
				put(name+"_sum", lp, s.GetSampleSum())
				put(name+"_count", lp, float64(s.GetSampleCount()))
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				inf := false
				for _, bk := range h.GetBucket() {
					inf = inf || math.IsInf(bk.GetUpperBound(), 1)
					put(name+"_bucket", lp, float64(bk.GetCumulativeCount()), model.BucketLabel, formatFloat(bk.GetUpperBound()))
				}
				if !inf {
					put(name+"_bucket", lp, float64(h.GetSampleCount()), model.BucketLabel, "+Inf")
				}
				put(name+"_sum", lp, h.GetSampleSum())
				put(name+"_count", lp, float64(h.GetSampleCount()))
			default:
				t.Fatalf("metric %s: type %s not expected in the text format", name, f.GetType())
			}
		}
	}
}

func formatFloat(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var promParser = parser.NewParser(parser.Options{})

var promEngine = promql.NewEngine(promql.EngineOpts{
	MaxSamples: 10_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute, Parser: promParser,
})

// eval runs expr as an instant query at ts, as Grafana does for a table and for a time series' last point.
func (db *promDB) eval(t *testing.T, expr string, ts time.Time) promql.Vector {
	t.Helper()
	q, err := promEngine.NewInstantQuery(context.Background(), db, nil, expr, ts)
	require.NoError(t, err, "%s", expr)
	defer q.Close()
	res := q.Exec(context.Background())
	require.NoError(t, res.Err, "%s", expr)
	switch v := res.Value.(type) {
	case promql.Vector:
		return v
	case promql.Scalar:
		return promql.Vector{{T: v.T, F: v.V}}
	}
	t.Fatalf("%s: a %s, not an instant vector", expr, res.Value.Type())
	return nil
}

// near explains an empty answer: for each metric the query selects, the label sets stored under that name.
func (db *promDB) near(expr string) string {
	e, err := promParser.ParseExpr(expr)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, name := range selectedMetrics(e) {
		var found []string
		for _, s := range db.series {
			if s.lset.Get(labels.MetricName) == name {
				found = append(found, s.lset.String())
			}
		}
		sort.Strings(found)
		fmt.Fprintf(&b, "  %s: %d series stored", name, len(found))
		for _, f := range found[:min(len(found), 3)] {
			fmt.Fprintf(&b, "\n    %s", f)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// absentExcused tells whether expr reads a metric of grafanaMayBeEmpty that the scrapes do not have.
func (db *promDB) absentExcused(t *testing.T, expr string) bool {
	t.Helper()
	e, err := promParser.ParseExpr(expr)
	require.NoError(t, err, "%s", expr)
	for _, name := range selectedMetrics(e) {
		if _, ok := grafanaMayBeEmpty[name]; !ok {
			continue
		}
		stored := false
		for _, s := range db.series {
			stored = stored || s.lset.Get(labels.MetricName) == name
		}
		if !stored {
			return true
		}
	}
	return false
}

func hasNumber(v promql.Vector) bool {
	for _, s := range v {
		if s.H != nil || !math.IsNaN(s.F) {
			return true
		}
	}
	return false
}

// selectedMetrics returns the metric names of the vector selectors in e.
func selectedMetrics(e parser.Expr) []string {
	var out []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			for _, m := range vs.LabelMatchers {
				if m.Name == labels.MetricName && m.Type == labels.MatchEqual && !slices.Contains(out, m.Value) {
					out = append(out, m.Value)
				}
			}
		}
		return nil
	})
	return out
}

// gapsOf returns the metrics of strimziGaps that expr reads.
func gapsOf(t *testing.T, expr string) []string {
	t.Helper()
	e, err := promParser.ParseExpr(expr)
	require.NoError(t, err, "%s", expr)
	var out []string
	for _, m := range selectedMetrics(e) {
		if _, ok := strimziGaps[m]; ok {
			out = append(out, m)
		}
	}
	return out
}

// promDB is a storage.Queryable over the stored samples: every Select returns every matching series whole,
// the engine keeps what its time range needs.
func (db *promDB) Querier(int64, int64) (storage.Querier, error) {
	return &storage.MockQuerier{SelectMockFunction: func(_ bool, _ *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
		var out []storage.Series
	next:
		for _, s := range db.series {
			for _, m := range ms {
				if !m.Matches(s.lset.Get(m.Name)) {
					continue next
				}
			}
			out = append(out, storage.NewListSeries(s.lset, s.samples))
		}
		slices.SortFunc(out, func(a, b storage.Series) int { return labels.Compare(a.Labels(), b.Labels()) })
		return &sliceSeriesSet{series: out, i: -1}
	}}, nil
}

type sliceSeriesSet struct {
	series []storage.Series
	i      int
}

func (s *sliceSeriesSet) Next() bool                        { s.i++; return s.i < len(s.series) }
func (s *sliceSeriesSet) At() storage.Series                { return s.series[s.i] }
func (s *sliceSeriesSet) Err() error                        { return nil }
func (s *sliceSeriesSet) Warnings() annotations.Annotations { return nil }

// floatSample is a float sample (chunks.Sample).
type floatSample struct {
	t int64
	f float64
}

func (s floatSample) T() int64                      { return s.t }
func (s floatSample) ST() int64                     { return 0 }
func (s floatSample) F() float64                    { return s.f }
func (s floatSample) H() *histogram.Histogram       { return nil }
func (s floatSample) FH() *histogram.FloatHistogram { return nil }
func (s floatSample) Type() chunkenc.ValueType      { return chunkenc.ValFloat }
func (s floatSample) Copy() chunks.Sample           { return s }

// strimziQuery is one line of testdata/strimzi-mm2-queries.txt.
type strimziQuery struct {
	line int
	expr string
}

// readStrimziQueries reads the test vectors: one PromQL expression a line; '#' starts a comment line.
func readStrimziQueries(t *testing.T) []strimziQuery {
	t.Helper()
	f, err := os.Open(strimziQueriesFile)
	require.NoError(t, err)
	defer f.Close()
	var out []strimziQuery
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, strimziQuery{line: n, expr: line})
	}
	require.NoError(t, sc.Err())
	return out
}

// grafanaJSON is the part of a Grafana dashboard model the tests read.
type grafanaJSON struct {
	UID           string         `json:"uid"`
	Title         string         `json:"title"`
	SchemaVersion int            `json:"schemaVersion"`
	Panels        []grafanaPanel `json:"panels"`
	Templating    struct {
		List []grafanaVariable `json:"list"`
	} `json:"templating"`
}

type grafanaPanel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	GridPos struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"` // a collapsed row's
}

type grafanaVariable struct {
	Name     string          `json:"name"`
	Type     string          `json:"type"`
	Query    json.RawMessage `json:"query"` // a string, or {"query": ...}
	AllValue string          `json:"allValue"`
}

type grafanaTarget struct {
	panel, refID, expr string
}

type grafanaDashboardFile struct {
	raw     grafanaJSON
	panels  []grafanaPanel
	targets []grafanaTarget
}

func readGrafanaDashboard(t *testing.T) *grafanaDashboardFile {
	t.Helper()
	b, err := os.ReadFile(grafanaDashboard)
	require.NoError(t, err)
	d := &grafanaDashboardFile{}
	require.NoError(t, json.Unmarshal(b, &d.raw), "%s is not a dashboard", grafanaDashboard)
	var walk func([]grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			d.panels = append(d.panels, p)
			for _, tg := range p.Targets {
				if tg.Expr != "" {
					d.targets = append(d.targets, grafanaTarget{panel: p.Title, refID: tg.RefID, expr: tg.Expr})
				}
			}
			walk(p.Panels)
		}
	}
	walk(d.raw.Panels)
	require.NotEmpty(t, d.targets)
	return d
}

func (v grafanaVariable) query(t *testing.T) string {
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var o struct {
		Query string `json:"query"`
	}
	require.NoError(t, json.Unmarshal(v.Query, &o), "variable %s: query", v.Name)
	return o.Query
}

var labelValuesQuery = regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

// resolveVariables gives each query variable its value, in the order Grafana resolves them: in "all" mode its
// allValue, in "selected" mode every value its label_values query finds (with the variables before it
// substituted), as Grafana writes a multi-value selection into a regex: (a|b), regex-escaped. Each variable's
// query must find at least one value.
func (d *grafanaDashboardFile) resolveVariables(t *testing.T, f *dashboardFixture, mode string) map[string]string {
	t.Helper()
	vars := map[string]string{}
	for _, v := range d.raw.Templating.List {
		if v.Type != "query" {
			continue
		}
		q := v.query(t)
		m := labelValuesQuery.FindStringSubmatch(q)
		require.NotNil(t, m, "variable %s: %q is not label_values(selector, label)", v.Name, q)
		res := f.db.eval(t, grafanaSubstitute(t, m[1], vars, f.rateInterval), f.at)
		var values []string
		for _, s := range res {
			if lv := s.Metric.Get(m[2]); lv != "" && !slices.Contains(values, lv) {
				values = append(values, lv)
			}
		}
		require.NotEmpty(t, values, "%s: variable %s finds no value with %s", mode, v.Name, q)
		if mode == "all" {
			require.NotEmpty(t, v.AllValue, "variable %s has no allValue", v.Name)
			vars[v.Name] = v.AllValue
			continue
		}
		sort.Strings(values)
		for i, lv := range values {
			values[i] = regexp.QuoteMeta(lv)
		}
		vars[v.Name] = "(" + strings.Join(values, "|") + ")"
	}
	return vars
}

var grafanaVar = regexp.MustCompile(`\$\{([a-zA-Z_][a-zA-Z0-9_]*)(?::[a-z]+)?\}|\$([a-zA-Z_][a-zA-Z0-9_]*)`)

// grafanaSubstitute replaces $var, ${var} and $__rate_interval as Grafana would before sending expr. Values go
// inside PromQL double-quoted strings, so backslashes are doubled.
func grafanaSubstitute(t *testing.T, expr string, vars map[string]string, rateInterval string) string {
	t.Helper()
	return grafanaVar.ReplaceAllStringFunc(expr, func(s string) string {
		m := grafanaVar.FindStringSubmatch(s)
		name := m[1] + m[2]
		if name == "__rate_interval" {
			return rateInterval
		}
		v, ok := vars[name]
		require.True(t, ok, "unknown variable $%s in %s", name, expr)
		return strings.ReplaceAll(v, `\`, `\\`)
	})
}
