package source

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/metrics"
)

// pipelineClock splits the poll loop's wall time into waiting for the source, waiting for the target, and the
// rest (handling records), the figures that say which side bounds a task (capacity advice, docs/partitions.md).
//
// Timing every poll would cost two clock reads per record on the hot path, so a busy loop (the last poll
// returned a record) times one poll in pollSampleEvery and counts it that many times; an empty poll waits its
// whole timeout and needs no clock; once the loop has found nothing, every poll is timed until a record
// arrives, which catches the wait of the poll that ends an idle stretch. A sampled poll that returned within
// pollWaitFloor did not wait for the network: that is the consumer handing over a prefetched record, work, not
// waiting. Target waits (a full producer queue, no acknowledgement, no lease) are off the hot path and timed
// exactly.
type pipelineClock struct {
	waitSource, waitTarget atomic.Int64 // nanoseconds, since the run started

	// The poll loop's own.
	polls     uint32
	prevEmpty bool

	// The committer's own: the previous reading.
	lastAt                 time.Time
	lastSource, lastTarget int64
}

const (
	pollSampleEvery = 16
	pollWaitFloor   = 50 * time.Microsecond
)

// pollStart is called before each poll; it says whether to time it, and when it started.
func (c *pipelineClock) pollStart() (time.Time, bool) {
	c.polls++
	if c.prevEmpty || c.polls%pollSampleEvery == 0 {
		return time.Now(), true
	}
	return time.Time{}, false
}

// pollEnd accounts one poll that waited up to timeout and returned a record (got) or nothing.
func (c *pipelineClock) pollEnd(start time.Time, timed, got bool, timeout time.Duration) {
	var wait time.Duration
	switch {
	case !timed && !got:
		wait = timeout
	case !timed:
	case c.prevEmpty || !got:
		wait = time.Since(start)
	default:
		if d := time.Since(start); d >= pollWaitFloor {
			wait = d * pollSampleEvery
		}
	}
	c.prevEmpty = !got
	if wait > 0 {
		c.waitSource.Add(int64(wait))
	}
}

// sourceWait accounts time the loop spent waiting for the source (the C path times its steps itself).
func (c *pipelineClock) sourceWait(d time.Duration) {
	if d > 0 {
		c.waitSource.Add(int64(d))
	}
}

// targetWait accounts time the loop spent waiting for the target.
func (c *pipelineClock) targetWait(d time.Duration) {
	if d > 0 {
		c.waitTarget.Add(int64(d))
	}
}

// fractions returns the loop's wait fractions since the previous call (false on the first, which only starts
// the interval).
func (c *pipelineClock) fractions(now time.Time) (source, target float64, interval time.Duration, ok bool) {
	s, t := c.waitSource.Load(), c.waitTarget.Load()
	defer func() { c.lastAt, c.lastSource, c.lastTarget = now, s, t }()
	if c.lastAt.IsZero() {
		return 0, 0, 0, false
	}
	interval = now.Sub(c.lastAt)
	if interval <= 0 {
		return 0, 0, 0, false
	}
	source = min(max(float64(s-c.lastSource)/float64(interval), 0), 1)
	target = min(max(float64(t-c.lastTarget)/float64(interval), 0), 1-source)
	return source, target, interval, true
}

// clientFigures keeps the last summary of a replication client's librdkafka statistics.
type clientFigures struct {
	last atomic.Pointer[kmtype.ClientFigures]
}

func (f *clientFigures) record(d *metrics.ClientDoc) {
	s := metrics.SummarizeDoc(d)
	f.last.Store(&kmtype.ClientFigures{
		BatchAvgBytes: s.BatchAvgBytes, BatchAvgRecords: s.BatchAvgRecords, Batches: s.Batches, RTTAvgMs: s.RTTAvgMs,
		ThrottleAvgMs: s.ThrottleAvgMs, InFlightRequests: s.InFlightRequests, InFlightMax: s.InFlightMax,
	})
}

// librdkafka's defaults for the settings capacity advice quotes (CONFIGURATION.md, 2.11), where the task's
// properties do not set them.
const (
	libDefaultMaxInFlight       = 1000000
	idempotentMaxInFlight       = 5
	libDefaultBatchSize         = 1000000
	libDefaultMessageMaxBytes   = 1000000
	libDefaultBatchNumMessages  = 10000
	libDefaultQueueKiB          = 1048576
	libDefaultLingerMs          = 5
	libDefaultFetchMaxBytes     = 52428800
	libDefaultPartitionMaxBytes = 1048576
)

// pipelineSettings fills the producer and consumer settings capacity advice quotes.
func (r *sourceRun) pipelineSettings(st *kmtype.PipelineStat) {
	st.BatchSizeBytes = propInt(r.producerProps, libDefaultBatchSize, "batch.size")
	st.QueueMaxBytes = 1024 * propInt(r.producerProps, libDefaultQueueKiB, "queue.buffering.max.kbytes")
	st.LingerMs = float64(propInt(r.producerProps, libDefaultLingerMs, "linger.ms", "queue.buffering.max.ms"))
	st.CompressionType = propString(r.producerProps, "none", "compression.type", "compression.codec")
	st.MaxInFlight = int(propInt(r.producerProps, libDefaultMaxInFlight, "max.in.flight", "max.in.flight.requests.per.connection"))
	if propString(r.producerProps, "false", "enable.idempotence") == "true" {
		st.MaxInFlight = min(st.MaxInFlight, idempotentMaxInFlight) // librdkafka's cap for the idempotent producer
	}
	st.FetchMaxBytes = propInt(r.consumerProps, libDefaultFetchMaxBytes, "fetch.max.bytes")
	st.PartitionMaxBytes = propInt(r.consumerProps, libDefaultPartitionMaxBytes, "max.partition.fetch.bytes", "fetch.message.max.bytes")
}

// publishPipeline publishes the loop's time split and the clients' figures over the interval since the last
// call; the first call only starts the interval. ErrFenced means the run lost its unit.
func (r *sourceRun) publishPipeline(ctx context.Context, now time.Time) error {
	source, target, interval, ok := r.clock.fractions(now)
	if !ok {
		return nil
	}
	st := kmtype.PipelineStat{
		IntervalSeconds:    interval.Seconds(),
		WaitSourceFraction: round4(source), WaitTargetFraction: round4(target), BusyFraction: round4(1 - source - target),
		Producer: r.producerFigures.last.Load(), Consumer: r.consumerFigures.last.Load(),
	}
	r.pipelineSettings(&st)
	return r.env.PublishPipelineStat(ctx, st)
}

func propInt(props map[string]string, def int64, names ...string) int64 {
	for _, n := range names {
		if v, ok := props[n]; ok {
			if i, err := strconv.ParseInt(v, 10, 64); err == nil {
				return i
			}
		}
	}
	return def
}

func propString(props map[string]string, def string, names ...string) string {
	for _, n := range names {
		if v, ok := props[n]; ok && v != "" {
			return v
		}
	}
	return def
}

func round4(v float64) float64 { return float64(int64(v*1e4+0.5)) / 1e4 }
