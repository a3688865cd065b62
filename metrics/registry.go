package metrics

import (
	"cmp"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry holds every metric of one kmirror process. The server creates one and hands it to whatever
// reports; nothing registers anywhere else.
type Registry struct {
	reg     *prometheus.Registry
	handler http.Handler

	mu         sync.Mutex // guards partitions, topics and seq
	partitions map[PartitionLabels]*SourcePartition
	topics     map[topicKey]int         // live partitions per topic-level histogram
	retired    map[topicKey]*topicHists // what removed partitions of a live topic counted
	seq        uint64                   // creation order, so the newest of two duplicates wins

	cpMu        sync.Mutex // guards checkpoints and cpSeq
	checkpoints map[CheckpointLabels]*checkpointStat
	cpSeq       uint64
	cpLatency   *prometheus.HistogramVec

	clMu    sync.Mutex // guards clients and clSeq
	clients map[ClientLabels]*clientSnapshot
	clSeq   uint64

	tkMu  sync.Mutex // guards tasks and tkSeq
	tasks map[TaskLabels]*SourceTask
	tkSeq uint64

	rtMu        sync.Mutex
	units       map[unitKey]string // state of each unit this worker runs (tasks.Observer)
	leader      bool
	assigned    assignment // the units the runtime last said are assigned here (tasks.Observer)
	rebalancing bool       // this worker is handing units over or taking them up (tasks.Observer)
	verdicts    VerdictSource

	notices *prometheus.GaugeVec // tasks.Observer's UnitNotices
	health  healthGauges
	moves   *prometheus.CounterVec

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
}

// latencyBuckets are the classic buckets of the latency histograms: 5 ms to 600 s. Scrapers that negotiate
// protobuf also get native (exponential) buckets.
var latencyBuckets = [...]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

func latencyHistogram(name, help string, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: name, Help: help, Buckets: latencyBuckets[:],
		NativeHistogramBucketFactor:     1.1,
		NativeHistogramMaxBucketNumber:  160,
		NativeHistogramMinResetDuration: time.Hour,
	}, labels)
}

// New returns a Registry with the Go runtime and process collectors and every kmirror metric registered.
func New() *Registry {
	r := &Registry{
		reg:         prometheus.NewRegistry(),
		partitions:  make(map[PartitionLabels]*SourcePartition),
		topics:      make(map[topicKey]int),
		retired:     make(map[topicKey]*topicHists),
		checkpoints: make(map[CheckpointLabels]*checkpointStat),
		clients:     make(map[ClientLabels]*clientSnapshot),
		units:       make(map[unitKey]string),
		tasks:       make(map[TaskLabels]*SourceTask),
		cpLatency: latencyHistogram("kmirror_checkpoint_latency_seconds",
			"Latency of emitted checkpoints (target acknowledgement - time the upstream group offsets were read).", "connector"),
		notices: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kmirror_unit_notices",
			Help: "Notices a running connector instance (task -1) or task on this worker shows beside its state, by kind (only kinds shown).",
		}, []string{"connector", "task", "kind"}),
		moves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kmirror_connector_partition_moves_total",
			Help: "Partitions a source connector's planner moved between its tasks by measured load, by reason: spread (a hot partition off an overloaded task) or pack (the cold one exchanged for it).",
		}, []string{"connector", "reason"}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kmirror_http_requests_total", Help: "REST requests served, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "kmirror_http_request_duration_seconds", Help: "Time to serve REST requests, by route pattern.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route"}),
		health: newHealthGauges(),
	}
	r.reg.MustRegister(r.health.collectors()...)
	r.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		r.cpLatency, r.notices, r.moves, r.httpRequests, r.httpDuration,
		partitionCollector{r}, topicHistCollector{r}, checkpointCollector{r}, clientCollector{r}, runtimeCollector{r}, taskCollector{r}, verdictCollector{r},
	)
	r.handler = promhttp.InstrumentMetricHandler(r.reg, promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		// One bad collector must not blank the whole page: the rest is served and the error counted in
		// promhttp_metric_handler_errors_total.
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      r.reg,
	}))
	return r
}

// Handler serves GET /metrics: the text exposition format, OpenMetrics or protobuf (native histograms), as
// the scraper asks.
func (r *Registry) Handler() http.Handler { return r.handler }

// Prometheus returns the underlying registry, for tests and PromQL checks that gather directly.
func (r *Registry) Prometheus() *prometheus.Registry { return r.reg }

// describe is a collector's Describe: it sends every desc the collector exports.
func describe(ch chan<- *prometheus.Desc, descs ...*prometheus.Desc) {
	for _, d := range descs {
		ch <- d
	}
}

// newestFirst copies the values of m, read under mu, newest first by seq. Where two of them would export
// the same labels, a collector exports the first it meets, since a registry refuses duplicate series.
func newestFirst[K comparable, V any](mu *sync.Mutex, m map[K]V, seq func(V) uint64) []V {
	mu.Lock()
	out := slices.Collect(maps.Values(m))
	mu.Unlock()
	slices.SortFunc(out, func(a, b V) int { return cmp.Compare(seq(b), seq(a)) })
	return out
}

// firstOfEach keeps the first of the values that share a key (their exported labels).
func firstOfEach[V any, K comparable](vs []V, key func(V) K) []V {
	seen := make(map[K]bool, len(vs))
	return slices.DeleteFunc(vs, func(v V) bool {
		k := key(v)
		dup := seen[k]
		seen[k] = true
		return dup
	})
}

// gaugeValue is one gauge sample: its series and value.
type gaugeValue struct {
	d *prometheus.Desc
	v float64
}

// emitGauges sends the gauges, all with the label values lv.
func emitGauges(ch chan<- prometheus.Metric, lv []string, gs []gaugeValue) {
	for _, g := range gs {
		ch <- prometheus.MustNewConstMetric(g.d, prometheus.GaugeValue, g.v, lv...)
	}
}
