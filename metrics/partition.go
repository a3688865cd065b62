package metrics

import (
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// PartitionLabels name one source partition a source task replicates.
type PartitionLabels struct {
	Connector                string
	Task                     int
	SourceAlias, TargetAlias string
	Topic                    string // source topic
	RemoteTopic              string // topic on the target
	Partition                int32
}

// Partition statuses, the values of SetStatus and of kmirror_partition_status's status label (a state-set).
const (
	StatusOK        = "ok"
	StatusWarn      = "warn"
	StatusStall     = "stall"
	StatusStop      = "stop"
	StatusRewind    = "rewind"
	StatusTruncated = "truncated"
	StatusPaused    = "paused" // the connector is paused: nothing is replicated, the lag shows the backlog
)

var partitionStatuses = [...]string{StatusOK, StatusWarn, StatusStall, StatusStop, StatusRewind, StatusTruncated, StatusPaused}

// topicKey names a topic-level histogram child.
type topicKey struct{ connector, source, target, topic string }

var topicLabelNames = []string{"connector", "source", "target", "topic"}

// SourcePartition is the metrics of one source partition. Fetched and Acked are the hot path: each takes one
// uncontended mutex of its own side (the poll loop's, the delivery handler's, on separate cache lines) and
// counts one observation of a topic-level histogram in the side's own hist (histogram.go), with no allocation
// once its buckets exist and no lookup. The windowed stats and the topic histograms are computed when
// scraped. All methods are safe for concurrent use.
type SourcePartition struct {
	fetch side // poll loop: record age and value bytes
	_     [64]byte
	ack   side // delivery handler: replication latency and records
	_     [64]byte

	r           *Registry
	labels      PartitionLabels
	topic       topicKey // label values of the topic-level series
	remoteTopic string
	compat      []string // source, target, remote topic, partition: jmx-sanitized
	native      []string // connector, source, target, topic, partition
	seq         uint64
	created     time.Time
	removed     atomic.Bool

	posMu sync.Mutex
	pos   positions

	status  atomic.Int32 // index into partitionStatuses + 1; 0 before the first SetStatus
	skipped atomic.Int64 // records the cycle guard did not copy (Skipped)
}

// side is what one goroutine records: a Kafka window and the totals beside it.
type side struct {
	mu     sync.Mutex
	w      window
	last   float64 // ms: the last value (MM2's bare record-age-ms / replication-latency-ms)
	total  float64 // value bytes (fetch: byte-count) or records (ack: record-count)
	bytes  int64   // ack: bytes of acknowledged records (AckedSize)
	lastTS int64   // ack: source timestamp (ms) of the last acknowledged record; 0 before the first
	h      hist    // seconds: record age (fetch) or replication latency (ack), for the topic histograms
}

type positions struct {
	set        bool
	replicated int64
	end        int64   // -1 unknown
	lagSeconds float64 // NaN unknown
}

// SourcePartition returns the metrics of the partition named by l, creating them on first use; the same
// labels return the same *SourcePartition until it is removed.
func (r *Registry) SourcePartition(l PartitionLabels) *SourcePartition {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.partitions[l]; ok {
		return p
	}
	part := strconv.Itoa(int(l.Partition))
	conn, src, tgt, topic, remote := validLabel(l.Connector), validLabel(l.SourceAlias), validLabel(l.TargetAlias),
		validLabel(l.Topic), validLabel(l.RemoteTopic)
	tk := topicKey{conn, src, tgt, topic}
	r.seq++
	p := &SourcePartition{
		r: r, labels: l, seq: r.seq, created: time.Now(), topic: tk, remoteTopic: remote,
		compat: []string{jmxSanitize(src), jmxSanitize(tgt), jmxSanitize(remote), part},
		native: []string{conn, src, tgt, topic, part},
	}
	r.topics[tk]++
	r.partitions[l] = p
	return p
}

// Fetched records a record the poll loop fetched: valueBytes is the length of its value (MM2's byte-count and
// byte-rate count value bytes at poll), and its age (now - recordTS) goes into record-age-ms and
// kmirror_record_age_seconds. A zero recordTS (no timestamp) counts the bytes only.
func (p *SourcePartition) Fetched(valueBytes int, recordTS, now time.Time) {
	nowMs := now.UnixMilli()
	has := !recordTS.IsZero()
	var age float64
	if has {
		age = float64(nowMs - recordTS.UnixMilli())
	}
	s := &p.fetch
	s.mu.Lock()
	s.w.record(age, has, float64(valueBytes), nowMs)
	s.total += float64(valueBytes)
	if has {
		s.last = age
		s.h.observe(now.Sub(recordTS).Seconds())
	}
	s.mu.Unlock()
}

// Acked records a record the target acknowledged: record-count and record-rate, and its replication latency
// (now - recordTS) in replication-latency-ms and kmirror_replication_latency_seconds. It adds no bytes to
// kmirror_replicated_bytes_total; AckedSize does.
func (p *SourcePartition) Acked(recordTS, now time.Time) { p.acked(recordTS, now, 0) }

// AckedSize is Acked for a record of size bytes (key + value + headers), which kmirror_replicated_bytes_total
// counts.
func (p *SourcePartition) AckedSize(recordTS, now time.Time, size int) { p.acked(recordTS, now, size) }

// AckedRecords is AckedSize for n records acknowledged together, of size bytes in all, the last of them with
// source timestamp recordTS (the C data path reports acknowledgements per batch): record-count and
// record-rate count all n, the latency series take one observation, the last record's.
func (p *SourcePartition) AckedRecords(n int, recordTS, now time.Time, size int) {
	if n <= 0 {
		return
	}
	nowMs := now.UnixMilli()
	has := !recordTS.IsZero()
	var latency float64
	var ts int64
	if has {
		ts = recordTS.UnixMilli()
		latency = float64(nowMs - ts)
	}
	s := &p.ack
	s.mu.Lock()
	s.w.record(latency, has, float64(n), nowMs)
	s.total += float64(n)
	s.bytes += int64(size)
	if has {
		s.last = latency
		s.lastTS = ts
		s.h.observe(now.Sub(recordTS).Seconds())
	}
	s.mu.Unlock()
}

func (p *SourcePartition) acked(recordTS, now time.Time, size int) {
	p.AckedRecords(1, recordTS, now, size)
}

// Skipped counts n records the cycle guard did not copy: their provenance header names the target cluster.
func (p *SourcePartition) Skipped(n int) { p.skipped.Add(int64(n)) }

// SetPositions records where the partition stands: replicated is the next source offset to replicate, end the
// source's end offset (-1 when unknown), headTS the source timestamp of the record at replicated, or when it
// was first seen to exist when its timestamp is not known (zero: neither). The lag in seconds is 0 when caught up (replicated >= end), now - headTS otherwise, and
// unknown (no sample) when end or headTS is.
func (p *SourcePartition) SetPositions(replicated, end int64, headTS, now time.Time) {
	lag := math.NaN()
	switch {
	case end < 0:
	case replicated >= end:
		lag = 0
	case !headTS.IsZero():
		lag = max(0, now.Sub(headTS).Seconds())
	}
	p.posMu.Lock()
	p.pos = positions{set: true, replicated: replicated, end: end, lagSeconds: lag}
	p.posMu.Unlock()
}

// SetStatus sets the partition's status, one of StatusOK, StatusWarn, StatusStall, StatusStop, StatusRewind,
// StatusTruncated, StatusPaused (kmirror_partition_status); other values are ignored.
func (p *SourcePartition) SetStatus(status string) {
	for i, s := range partitionStatuses {
		if s == status {
			p.status.Store(int32(i + 1))
			return
		}
	}
}

// Rates returns the windowed rates the compat gauges show: records acknowledged per second (record-rate) and
// value bytes fetched per second (byte-rate).
func (p *SourcePartition) Rates() (recordsPerSec, bytesPerSec float64) {
	nowMs := time.Now().UnixMilli()
	return p.ack.measure(nowMs).rate, p.fetch.measure(nowMs).rate
}

// Remove deletes every series of the partition (and the topic-level ones once no partition of the topic is
// left). Calls on a removed SourcePartition change nothing that is exported; SourcePartition with the same
// labels then starts afresh.
func (p *SourcePartition) Remove() {
	if p.removed.Swap(true) {
		return
	}
	r := p.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.partitions[p.labels] == p {
		delete(r.partitions, p.labels)
	}
	tk := p.topic
	if r.topics[tk]--; r.topics[tk] <= 0 {
		delete(r.topics, tk)
		delete(r.retired, tk)
		return
	}
	// The topic's histograms go on: what this partition counted stays in them, as it stayed in a
	// client_golang histogram's child, so that their counts never go back.
	ret := r.retired[tk]
	if ret == nil {
		ret = &topicHists{}
		r.retired[tk] = ret
	}
	p.fetch.mu.Lock()
	ret.age.add(&p.fetch.h)
	p.fetch.mu.Unlock()
	p.ack.mu.Lock()
	ret.latency.add(&p.ack.h)
	p.ack.mu.Unlock()
}

// sideView is one measurement of a side.
type sideView struct {
	stats
	last, total float64
	bytes       int64
	lastTS      int64
}

func (s *side) measure(nowMs int64) sideView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sideView{stats: s.w.measure(nowMs), last: s.last, total: s.total, bytes: s.bytes, lastTS: s.lastTS}
}
