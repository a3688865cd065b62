package metrics

import "math"

// Kafka's default MetricConfig, which MM2's metrics use: two samples of 30 s.
const (
	windowSamples  = 2
	windowLengthMs = 30_000
)

// window is Kafka's SampledStat as MM2's sensors use it, for one stream of events that each carry a value
// (record age, replication latency, checkpoint latency: the -min, -max and -avg stats) and an amount (bytes or
// one record: the Meter's windowed rate). It copies Kafka's rules exactly, because they decide what the compat
// gauges show:
//
//   - an event goes into the current sample unless that sample started a window length (30 s) or more ago;
//     then the next sample is reset and takes it (samples are created lazily, at most windowSamples);
//   - a measurement first resets every sample that started windowSamples window lengths (60 s) or more ago;
//   - min, max and avg combine the samples' values and are NaN when no sample holds an event;
//   - the rate is the samples' amount over the time since the oldest sample started, counted as at least
//     windowSamples-1 full windows and at least 1 ms.
//
// It is not safe for concurrent use; its owner guards it.
type window struct {
	s   [windowSamples]sample
	n   int // samples created so far
	cur int
}

type sample struct {
	start  int64 // ms; Kafka's lastWindowMs
	events int64 // events that carried a value
	sum    float64
	min    float64
	max    float64
	amount float64
}

func (s *sample) reset(nowMs int64) {
	*s = sample{start: nowMs, min: math.Inf(1), max: math.Inf(-1)}
}

// current is SampledStat.current: the sample events go to, created at nowMs if there is none yet.
func (w *window) current(nowMs int64) *sample {
	if w.n == 0 {
		w.s[0].reset(nowMs)
		w.n, w.cur = 1, 0
	}
	return &w.s[w.cur]
}

// record adds an event at nowMs: amount always, value only if hasValue.
func (w *window) record(value float64, hasValue bool, amount float64, nowMs int64) {
	s := w.current(nowMs)
	if nowMs-s.start >= windowLengthMs {
		w.cur = (w.cur + 1) % windowSamples
		if w.cur >= w.n {
			w.n++
		}
		s = &w.s[w.cur]
		s.reset(nowMs)
	}
	s.amount += amount
	if hasValue {
		s.events++
		s.sum += value
		s.min = math.Min(s.min, value)
		s.max = math.Max(s.max, value)
	}
}

// stats is one measurement of a window.
type stats struct {
	min, max, avg float64 // NaN when the window holds no event with a value
	rate          float64 // amount per second
}

// measure purges obsolete samples and combines the rest, as Kafka does when a metric is read.
func (w *window) measure(nowMs int64) stats {
	if w.n == 0 { // SampledStat.oldest creates the first sample when measured before any event
		w.current(nowMs)
	}
	var (
		events int64
		sum    float64
		amount float64
		oldest = int64(math.MaxInt64)
		lo, hi = math.Inf(1), math.Inf(-1)
	)
	for i := range w.n {
		s := &w.s[i]
		if nowMs-s.start >= windowSamples*windowLengthMs {
			s.reset(nowMs)
		}
		events += s.events
		sum += s.sum
		amount += s.amount
		lo, hi = math.Min(lo, s.min), math.Max(hi, s.max)
		oldest = min(oldest, s.start)
	}
	st := stats{min: math.NaN(), max: math.NaN(), avg: math.NaN()}
	if events > 0 {
		st.min, st.max, st.avg = lo, hi, sum/float64(events)
	}
	elapsed := nowMs - oldest
	if full := elapsed / windowLengthMs; full < windowSamples-1 {
		elapsed += (windowSamples - 1 - full) * windowLengthMs
	}
	st.rate = amount / (float64(max(elapsed, 1)) / 1000)
	return st
}
