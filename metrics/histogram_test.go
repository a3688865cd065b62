package metrics

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// TestHistMatchesClientGolang: a hist exports what a client_golang histogram with kmirror's latency options
// exports for the same observations, classic and native buckets alike.
func TestHistMatchesClientGolang(t *testing.T) {
	t.Parallel()
	for name, gen := range map[string]func(r *rand.Rand) float64{
		"latencies":   func(r *rand.Rand) float64 { return math.Exp(r.NormFloat64()*2 - 3) }, // ms to minutes
		"with zeros":  func(r *rand.Rand) float64 { return float64(r.IntN(3)) * r.Float64() },
		"clock skew":  func(r *rand.Rand) float64 { return r.Float64()*2 - 0.5 }, // record timestamps ahead of the clock
		"bucket ends": func(r *rand.Rand) float64 { return latencyBuckets[r.IntN(len(latencyBuckets))] },
		"powers of 2": func(r *rand.Rand) float64 { return math.Exp2(float64(r.IntN(20) - 10)) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ref := latencyHistogram("ref_seconds", "reference", "l").WithLabelValues("x").(prometheus.Histogram)
			var h hist
			r := rand.New(rand.NewPCG(1, 2))
			for range 20000 {
				v := gen(r)
				ref.Observe(v)
				h.observe(v)
			}
			var want, got dto.Metric
			require.NoError(t, ref.Write(&want))
			desc := prometheus.NewDesc("ref_seconds", "reference", []string{"l"}, nil)
			require.NoError(t, newHistMetric(desc, h, "x").Write(&got))
			w, g := want.GetHistogram(), got.GetHistogram()
			w.CreatedTimestamp = nil // client_golang stamps its creation; a sum of partitions has none
			w.Exemplars = nil
			require.True(t, proto.Equal(w, g), "client_golang:\n%v\nhist:\n%v", w, g)
		})
	}
}

// TestHistHalvesPastMaxBuckets: observations spread over more than nativeMaxBuckets buckets are exported at a
// coarser schema, with every observation still counted.
func TestHistHalvesPastMaxBuckets(t *testing.T) {
	t.Parallel()
	var h hist
	for i := -200; i < 200; i++ {
		h.observe(math.Exp2(float64(i) / 8))
	}
	var m dto.Metric
	require.NoError(t, newHistMetric(descLatencyHist, h, "c", "s", "t", "x").Write(&m))
	hg := m.GetHistogram()
	require.Equal(t, int32(1), hg.GetSchema(), "400 buckets at schema 3 are 100 at schema 1")
	var n, run int64
	for _, d := range hg.GetPositiveDelta() {
		run += d
		n += run
	}
	require.Equal(t, int64(400), n)
	require.Equal(t, uint64(400), hg.GetSampleCount())
}
