package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/metrics"
)

// How often a source task samples where its partitions stand (positions, lag, status: the metrics), and how
// often it publishes them for GET /connectors/{c}/partitions. The partition status is judged over the last
// statusWindow samples, as Burrow judges a consumer over its last 10 commits.
const (
	sourceStatsInterval   = time.Second
	sourcePublishInterval = 2 * time.Second
	statusWindow          = 10
	// A partition whose stats have not changed (idle, caught up) is published again only this often: a task with
	// thousands of quiet partitions rewrites a third of the rows. The partitions endpoint calls a report stale
	// after 10 s.
	sourceRepublishInterval = 6 * time.Second
	// A sample reads the consumer's cached watermarks of at most this many partitions, the next ones at the next
	// sample; the others keep what was read before (so a task of 1,250 partitions reads each every 5 s).
	// librdkafka finds a partition's watermarks by topic name, walking its list of topics: at 10,000 partitions
	// over 1,000 topics and eight tasks, reading them all every second was 8-10% of kmirror's CPU while the
	// scale scenario was bound by CPU (perf, docs/benchmarks.md).
	sourceWatermarkSampleMax = 250
)

// Partition statuses (kmtype.PartitionStat.Status and the kmirror_partition_status state set).
const (
	statusOK        = "ok"        // caught up at least once in the window, or the lag is falling
	statusWarn      = "warn"      // the position moves, but the lag grew all through the window
	statusStall     = "stall"     // the position has not moved through the window, with records to replicate
	statusStop      = "stop"      // the task does not run (left by its last run)
	statusRewind    = "rewind"    // the position went back in the window (a re-created source topic)
	statusTruncated = "truncated" // the task reported records lost before they were replicated
	// statusDeleted: the source topic is gone (or was re-created without the partition), and the task has
	// replicated and committed everything it could still read of it: the connector may drop it from its plan.
	statusDeleted = "deleted"
)

// lagSample is one sample of a partition's position.
type lagSample struct {
	at    time.Time
	pos   int64 // the next source offset to replicate
	lag   int64 // records between pos and the source's end; -1 when the end is unknown
	acks  uint64
	bytes uint64
}

// partitionStats is what the committer keeps of one partition between samples; it outlives pipeline restarts
// (not runs: a new run starts over).
type partitionStats struct {
	samples [statusWindow]lagSample
	n, next int // samples held; where the next one goes
	last    kmtype.PartitionStat
	ready   bool // last has been computed at least once

	published   kmtype.PartitionStat // what was last published, and when
	publishedAt time.Time
	// pausedSeen is publishedAt as the paused watch's previous look found it: unchanged since then means that
	// look left the partition out.
	pausedSeen time.Time
	// low and end are the source's watermarks as a sample last read them (-1: unknown; see
	// sourceWatermarkSampleMax); read says whether one has.
	low, end int64
	read     bool
	// seen dates the unreplicated records whose timestamps are not known yet.
	seen endSightings
}

func (s *partitionStats) add(x lagSample) {
	s.samples[s.next] = x
	s.next = (s.next + 1) % statusWindow
	s.n = min(s.n+1, statusWindow)
}

// at returns the i-th sample held, oldest first.
func (s *partitionStats) at(i int) lagSample {
	return s.samples[(s.next-s.n+i+statusWindow)%statusWindow]
}

// status judges the window as §5.3 of the dashboard-and-metrics reference says (Burrow's rules): lost records
// first, then a position that went back, then any sample caught up (ok); with a full window, a position that
// did not move while records wait (stall) or a lag that grew at every sample while the position moved (warn).
func (s *partitionStats) status(lost bool) string {
	if lost {
		return statusTruncated
	}
	if s.n == 0 {
		return statusOK
	}
	for i := 1; i < s.n; i++ {
		if s.at(i).pos < s.at(i-1).pos {
			return statusRewind
		}
	}
	for i := range s.n {
		if s.at(i).lag == 0 {
			return statusOK
		}
	}
	if s.n < statusWindow {
		return statusOK // too early to judge
	}
	first, last := s.at(0), s.at(s.n-1)
	if last.lag < 0 {
		return statusOK
	}
	if first.pos == last.pos {
		return statusStall
	}
	for i := 1; i < s.n; i++ {
		if a, b := s.at(i-1).lag, s.at(i).lag; a < 0 || b < a {
			return statusOK // unknown, or fell at least once
		}
	}
	if last.lag > first.lag {
		return statusWarn
	}
	return statusOK
}

// rates returns the records acknowledged and the value bytes forwarded per second over the window.
func (s *partitionStats) rates() (records, bytes float64) {
	if s.n < 2 {
		return 0, 0
	}
	first, last := s.at(0), s.at(s.n-1)
	secs := last.at.Sub(first.at).Seconds()
	if secs <= 0 {
		return 0, 0
	}
	return float64(last.acks-first.acks) / secs, float64(last.bytes-first.bytes) / secs
}

// partitionPosition is what a partition's stats are computed from, read at once under its lock.
type partitionPosition struct {
	acked    int64 // last acknowledged source offset; -1 before the first
	head     int64 // offset of the oldest record in flight; -1 when nothing is
	headTS   int64 // its source timestamp (Unix ms), or noTimestamp
	lastTS   int64 // source timestamp of the last acknowledged record, or noTimestamp
	readNext int64 // the consumer's position when it last had nothing to return; -1 unknown
	acks     uint64
	bytes    uint64
	broken   bool
}

func (p *sourcePartition) position() partitionPosition {
	p.mu.Lock()
	defer p.mu.Unlock()
	pp := partitionPosition{acked: p.acked, head: -1, headTS: noTimestamp, lastTS: p.lastTS, readNext: p.readNext,
		acks: p.acks, bytes: p.bytes, broken: p.broken}
	if rec, ok := p.inflight.peek(); ok {
		pp.head, pp.headTS = rec.offset, rec.ts
	} else if p.batched > 0 {
		// The C data path keeps a ring of batches, not records: the head's timestamp is its batch's first.
		pp.head = p.batchedHead
		if b, ok := p.sent.peek(); ok {
			pp.headTS = b.ts
		}
	}
	return pp
}

// replicatedOffset is the next source offset to replicate: past the last acknowledged record, and past what
// the consumer skipped without returning it (transaction markers, compacted offsets) once every record it
// returned has been acknowledged. Before the first acknowledgement it is where replication starts.
func (pp partitionPosition) replicatedOffset(low, end int64, latest bool) int64 {
	pos := pp.acked + 1
	if pp.acked < 0 {
		switch {
		case pp.head >= 0:
			pos = pp.head
		case latest && end >= 0:
			pos = end
		case low >= 0:
			pos = low
		default:
			pos = 0
		}
	}
	if pp.head < 0 && !pp.broken && pp.readNext > pos {
		pos = pp.readNext
	}
	return pos
}

// sampleStats samples every partition's position against the source's end offsets that consumer last saw,
// judges its status, and hands both to the metrics; what GET /connectors/{c}/partitions shows is kept for
// publishStats.
func (r *sourceRun) sampleStats(consumer sourceReader, now time.Time) {
	lost := r.lossPartitions()
	var lags []metrics.PartitionLag
	if r.consumerLags != nil {
		lags = make([]metrics.PartitionLag, 0, len(r.parts))
		defer func() { r.consumerLags(lags) }()
	}
	first, reads := watermarkWindow(len(r.parts), &r.watermarkNext)
	for i, p := range r.parts {
		pp := p.position()
		st := &p.stats
		if !st.read || (i-first+len(r.parts))%len(r.parts) < reads {
			st.low, st.end, st.read = -1, -1, true
			if consumer != nil {
				if l, h, err := consumer.CachedWatermarks(p.tp.Topic, p.tp.Partition); err == nil {
					st.low, st.end = max(l, -1), max(h, -1)
				}
			}
		}
		low, end := st.low, st.end
		if known := p.knownEnd(end); end < 0 && known > 0 {
			end = known // a gone topic's partition shows the end it was last seen with
		}
		pos := pp.replicatedOffset(low, end, r.resetPolicy == "latest")
		lag := int64(-1)
		if end >= 0 {
			lag = max(end-pos, 0)
			if lags != nil {
				lags = append(lags, metrics.PartitionLag{Topic: p.tp.Topic, Partition: p.tp.Partition, Lag: lag})
			}
		}
		st.add(lagSample{at: now, pos: pos, lag: lag, acks: pp.acks, bytes: pp.bytes})
		status := st.status(lost[p.tp])
		if p.isGone() {
			status = r.goneStatus(p, pp, pos, end, status)
		}
		r.noticeUncommitted(p)

		var headTS time.Time
		if pp.head >= 0 && pp.headTS != noTimestamp {
			headTS = time.UnixMilli(pp.headTS)
		}
		headTS = st.seen.oldestUnreplicated(pos, end, headTS, now)
		p.metrics.setPositions(pos, end, headTS, now)
		if status == statusDeleted {
			// The state set has no series of its own for a partition about to leave the plan: one more per
			// partition is not worth it.
			p.metrics.setStatus(statusStop)
		} else {
			p.metrics.setStatus(status)
		}

		stat := kmtype.PartitionStat{Topic: p.tp.Topic, Partition: p.tp.Partition, RemoteTopic: *p.remote,
			ReplicatedOffset: pos, Status: status}
		setPosition(&stat, pos, end, headTS, pp.lastTS, now)
		// The task's own samples, not the compat gauges' rate: Kafka's rule counts that over at least 30 s, so
		// for half a minute after a run starts (a hand-over, a restart) it shows a fraction of the flow.
		stat.RecordsPerSecond, stat.BytesPerSecond = st.rates()
		st.last, st.ready = stat, true
	}
}

// A gone partition is drained once its position stood still over this many samples (a second apart).
const goneStillSamples = 3

// goneStatus is the status of a partition whose source topic is gone: deleted once nothing is in flight,
// everything acknowledged is committed and the position stood still over the last goneStillSamples samples
// (the source serves no more of it), else what the window says (it is still being drained). Once drained, the task shows
// what the topic took with it at once: the connector's lasting notice comes when its plan drops the partition,
// which may be a topic refresh interval later.
func (r *sourceRun) goneStatus(p *sourcePartition, pp partitionPosition, pos, end int64, status string) string {
	still := p.stats.n >= goneStillSamples
	for i := 1; still && i < goneStillSamples; i++ {
		still = p.stats.at(p.stats.n-1-i).pos == pos
	}
	if !still || pp.head >= 0 || p.inflightLen() > 0 || pp.acked != p.committed {
		return status
	}
	if end > pos {
		p.mu.Lock()
		readEnd := p.readEnd // how far ended pipelines read: the current one has nothing in flight
		p.mu.Unlock()
		var inFlight string
		if readEnd > pos {
			inFlight = fmt.Sprintf("; records %d to %d had been read and were in flight when a pipeline restarted: any of them the target wrote all the same are on it",
				pos, min(readEnd, end)-1)
		}
		msg := fmt.Sprintf("DATA NOT REPLICATED: %s topic %s partition %d was deleted before records %d to %d were confirmed replicated to %s; they cannot be read any more (this task replicated it until the source served no more of it%s)",
			r.sourceAlias, p.tp.Topic, p.tp.Partition, pos, end-1, r.targetAlias, inFlight)
		key := fmt.Sprintf("deleted:%s-%d:%d", p.tp.Topic, p.tp.Partition, pos)
		if !r.hasNotice(key) {
			r.log.Error(msg, "topic", p.tp.Topic, "partition", p.tp.Partition, "lost_from", pos, "lost_to", end-1)
		}
		r.notice(key, partitionNotice(NoticeDataNotReplicated, msg, p.tp.Topic, p.tp.Partition, pos, end-1))
	}
	return statusDeleted
}

// watermarkWindow returns which of n partitions a sample reads the watermarks of: reads of them from first
// on, wrapping around (all of them when n is at most sourceWatermarkSampleMax); next, the committer's cursor,
// moves on past them.
func watermarkWindow(n int, next *int) (first, reads int) {
	if n <= sourceWatermarkSampleMax {
		return 0, n
	}
	first = *next % n
	*next = (first + sourceWatermarkSampleMax) % n
	return first, sourceWatermarkSampleMax
}

// setPosition fills what a partition stat says of the position pos against the source's end (unknown when
// negative): the end and the lag in records, the lag in seconds (0 when caught up, else the age of the record at
// pos from headTS: its source timestamp, or when kmirror first saw it), and the source timestamp of the last
// replicated record.
func setPosition(stat *kmtype.PartitionStat, pos, end int64, headTS time.Time, lastTS int64, now time.Time) {
	if end >= 0 {
		lag := max(end-pos, 0)
		e := end
		stat.EndOffset, stat.LagRecords = &e, &lag
		switch {
		case lag == 0:
			secs := 0.0
			stat.LagSeconds = &secs
		case !headTS.IsZero():
			secs := max(now.Sub(headTS).Seconds(), 0)
			stat.LagSeconds = &secs
		}
	}
	if lastTS != noTimestamp {
		at := time.UnixMilli(lastTS).UTC()
		stat.LastReplicatedAt = &at
	}
}

// publishStats publishes the partitions' last samples; status, when set, replaces theirs (stop, as a run
// ends). ErrFenced means the run lost its unit.
func (r *sourceRun) publishStats(ctx context.Context, status string) error {
	now := time.Now()
	stats := make([]kmtype.PartitionStat, 0, len(r.parts))
	var sent []*sourcePartition
	for _, p := range r.parts {
		ps := &p.stats
		st := ps.last
		if !ps.ready {
			// Only the final report has something to say of a partition never sampled (unsampledStat).
			if status == "" {
				continue
			}
			var ok bool
			if st, ok = r.unsampledStat(p, now); !ok {
				continue
			}
		}
		if status != "" {
			st.Status = status
			st.RecordsPerSecond, st.BytesPerSecond = 0, 0
		} else if sameStat(st, ps.published) && now.Sub(ps.publishedAt) < sourceRepublishInterval {
			continue
		}
		stats = append(stats, st)
		sent = append(sent, p)
	}
	if err := r.env.PublishPartitionStats(ctx, stats); err != nil {
		return err
	}
	for i, p := range sent {
		p.stats.published, p.stats.publishedAt = stats[i], now
	}
	return nil
}

// sameStat tells whether two publications of a partition say the same.
func sameStat(a, b kmtype.PartitionStat) bool {
	return a.Topic == b.Topic && a.Partition == b.Partition && a.RemoteTopic == b.RemoteTopic &&
		a.ReplicatedOffset == b.ReplicatedOffset && samePtr(a.EndOffset, b.EndOffset) && samePtr(a.LagRecords, b.LagRecords) &&
		samePtr(a.LagSeconds, b.LagSeconds) && a.RecordsPerSecond == b.RecordsPerSecond && a.BytesPerSecond == b.BytesPerSecond &&
		samePtr(a.LastReplicatedAt, b.LastReplicatedAt) && a.Status == b.Status
}

func samePtr[T comparable](a, b *T) bool { return a == b || (a != nil && b != nil && *a == *b) }

// publishFinalStats leaves the partitions' last positions behind as the run ends, marked stop: the task no
// longer replicates them here. A fenced run writes nothing.
func (r *sourceRun) publishFinalStats() {
	if !r.env.Lease().Valid() {
		return
	}
	finalCtx, cancel := context.WithTimeout(r.env.StopContext(), 5*time.Second) // within the stop budget
	defer cancel()
	if err := r.publishStats(finalCtx, statusStop); err != nil && !errors.Is(err, kmtype.ErrFenced) {
		r.log.Debug("could not publish the partitions' final stats", "error", err)
	}
}

// statsTick is the committer's stats work at now: sample every tick, publish every other.
func (r *sourceRun) statsTick(ctx context.Context, consumer sourceReader, now time.Time, publish bool) error {
	r.sampleStats(consumer, now)
	if !publish {
		return nil
	}
	err := r.publishStats(ctx, "")
	if err == nil {
		err = r.publishPipeline(ctx, now)
	}
	if err != nil {
		if errors.Is(err, kmtype.ErrFenced) || ctx.Err() != nil {
			return err
		}
		r.limit.Log(ctx, r.log, slog.LevelWarn, "partition-stats", "publishing partition stats failed, will retry", "error", err)
		return nil
	}
	r.limit.Resolved(ctx, r.log, "partition-stats", "publishing partition stats works again")
	return nil
}
