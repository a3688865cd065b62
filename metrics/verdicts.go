package metrics

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Verdict is one conclusion GET /connectors/{c}/partitions draws about a connector's parallelism or capacity
// (docs/partitions.md), for the verdict gauges.
type Verdict struct {
	Connector string
	Kind      string // tasks_max_bound, target_bound, caught_up, ...
	Severity  string // ok, info or warning
	Tasks     []int  // the tasks it names, if any
}

// VerdictSource returns the verdicts of every MirrorSourceConnector of the cluster.
type VerdictSource func(ctx context.Context) ([]Verdict, error)

// verdictTimeout bounds the store reads of one scrape: a scrape must answer even when PostgreSQL does not.
const verdictTimeout = 5 * time.Second

var (
	descConnectorVerdict = prometheus.NewDesc("kmirror_connector_verdict",
		"1 for each verdict GET /connectors/{c}/partitions draws on the connector's parallelism and capacity; exported by the leader only.",
		[]string{"connector", "verdict", "severity"}, nil)
	descTaskVerdict = prometheus.NewDesc("kmirror_task_verdict",
		"1 for each verdict that names the task (capacity advice, lagging or stale tasks); exported by the leader only.",
		[]string{"connector", "task", "verdict", "severity"}, nil)
)

// SetVerdictSource makes the leader's scrapes export the verdicts src returns. The verdicts are drawn from the
// whole cluster's reports in PostgreSQL, so one worker exports them: the one holding the leader lease.
func (r *Registry) SetVerdictSource(src VerdictSource) {
	r.rtMu.Lock()
	defer r.rtMu.Unlock()
	r.verdicts = src
}

type verdictCollector struct{ r *Registry }

func (c verdictCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, descConnectorVerdict, descTaskVerdict)
}

func (c verdictCollector) Collect(ch chan<- prometheus.Metric) {
	c.r.rtMu.Lock()
	src, leader := c.r.verdicts, c.r.leader
	c.r.rtMu.Unlock()
	if src == nil || !leader {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), verdictTimeout)
	defer cancel()
	vs, err := src(ctx)
	if err != nil {
		// Counted in promhttp_metric_handler_errors_total; the rest of the page is served.
		ch <- prometheus.NewInvalidMetric(descConnectorVerdict, err)
		return
	}
	type taskKey struct {
		connector, kind, severity string
		task                      int
	}
	type connKey struct{ connector, kind, severity string }
	conns := map[connKey]bool{}
	tasks := map[taskKey]bool{}
	for _, v := range vs {
		k := connKey{validLabel(v.Connector), validLabel(v.Kind), validLabel(v.Severity)}
		conns[k] = true
		for _, t := range v.Tasks {
			tasks[taskKey{k.connector, k.kind, k.severity, t}] = true
		}
	}
	for k := range conns { // the registry sorts what it gathers

		ch <- prometheus.MustNewConstMetric(descConnectorVerdict, prometheus.GaugeValue, 1, k.connector, k.kind, k.severity)
	}
	for k := range tasks {
		ch <- prometheus.MustNewConstMetric(descTaskVerdict, prometheus.GaugeValue, 1, k.connector, strconv.Itoa(k.task), k.kind, k.severity)
	}
}
