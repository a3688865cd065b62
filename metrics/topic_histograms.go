package metrics

import "github.com/prometheus/client_golang/prometheus"

var (
	descRecordAgeHist = prometheus.NewDesc("kmirror_record_age_seconds",
		"Age of source records when the source task fetched them (fetch time - record timestamp), per topic.", topicLabelNames, nil)
	descLatencyHist = prometheus.NewDesc("kmirror_replication_latency_seconds",
		"Replication latency of source records (target acknowledgement - record timestamp), per topic.", topicLabelNames, nil)
)

// topicHists are a topic's two histograms.
type topicHists struct{ age, latency hist }

// addPartition adds what the partition's histograms counted.
func (t *topicHists) addPartition(p *SourcePartition) {
	p.fetch.mu.Lock()
	t.age.add(&p.fetch.h)
	p.fetch.mu.Unlock()
	p.ack.mu.Lock()
	t.latency.add(&p.ack.h)
	p.ack.mu.Unlock()
}

// topicHistCollector exports the topic-level histograms: the sums of the hists of the topic's partitions, live
// and removed.
type topicHistCollector struct{ r *Registry }

func (c topicHistCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, descRecordAgeHist, descLatencyHist)
}

func (c topicHistCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.r
	r.mu.Lock()
	sums := make(map[topicKey]*topicHists, len(r.topics))
	for tk, ret := range r.retired {
		s := &topicHists{age: ret.age.clone(), latency: ret.latency.clone()}
		sums[tk] = s
	}
	for _, p := range r.partitions {
		s := sums[p.topic]
		if s == nil {
			s = &topicHists{}
			sums[p.topic] = s
		}
		s.addPartition(p)
	}
	r.mu.Unlock()
	for tk, s := range sums {
		lv := []string{tk.connector, tk.source, tk.target, tk.topic}
		ch <- newHistMetric(descRecordAgeHist, s.age, lv...)
		ch <- newHistMetric(descLatencyHist, s.latency, lv...)
	}
}
