package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/tasks"
)

// statusPaused is a partition of a paused connector: nothing is replicated, and the lag shows the backlog.
const statusPaused = "paused"

// How often a paused source task looks at its partitions and publishes them: well within the 10 s after
// which the partitions endpoint calls a report stale, and rarely enough that thousands of paused partitions
// cost two batched ListOffsets requests and one stats write every few seconds.
const pausedStatsInterval = 3 * time.Second

// The log start offsets, which only retention moves (a segment at a time), are asked for every
// pausedStartsEvery looks (so retention shows within 15 s): half the requests of the looks in between.
const pausedStartsEvery = 5

// The first unreplicated record of each partition is read once per position (its timestamp does not change
// while the connector is paused), at most pausedHeadReads partitions per look and waiting at most
// pausedHeadWait for them; the rest are read at the next looks.
const (
	pausedHeadReads = 500
	pausedHeadWait  = time.Second
)

// pausedHead is what a paused task knows of the first unreplicated record of a partition.
type pausedHead struct {
	pos   int64 // the position it was read (or tried) at; -1 never
	end   int64 // the end offset when it was tried without an answer (a retry waits for a new end)
	ts    int64 // the record's source timestamp (Unix ms), or noTimestamp when unknown
	found bool  // a record at or past pos was read
}

// RunPaused is the source task while its connector is PAUSED (tasks.PausedTask): it replicates nothing, never
// creates a producer and commits nothing, but keeps publishing where each partition stands against the source's
// end, so that the backlog is seen to grow, with status paused and no throughput; its metrics series stay.
func (t *sourceTask) RunPaused(ctx context.Context, env tasks.TaskEnv) (err error) {
	r, err := t.prepare(ctx, env)
	if err != nil {
		return err
	}
	defer func() { r.endPaused(err) }()
	return r.watchPaused(ctx)
}

// watchPaused looks at the partitions every pausedStatsInterval until ctx is done.
func (r *sourceRun) watchPaused(ctx context.Context) error {
	props := maps.Clone(r.consumerProps)
	// This consumer only reads the first unreplicated record of some partitions: small fetches, little prefetch.
	delete(props, "max.partition.fetch.bytes")
	props["fetch.message.max.bytes"] = "65536"
	props["queued.max.messages.kbytes"] = "1024"
	consumer, err := kafka.NewConsumer(props, r.log)
	if err != nil {
		return err
	}
	defer consumer.Close()
	admin, err := consumer.Admin()
	if err != nil {
		return err
	}
	defer admin.Close()
	admin.Timeout = 10 * time.Second
	readCommitted := props["isolation.level"] == "read_committed"

	w := &pausedWatch{consumer: consumerHeads{consumer}, admin: admin, readCommitted: readCommitted,
		ids: make([]kafka.PartitionID, len(r.parts)), heads: make(map[*sourcePartition]*pausedHead, len(r.parts)),
		starts: make(map[kafka.PartitionID]int64, len(r.parts))}
	for i, p := range r.parts {
		w.ids[i] = kafka.PartitionID{Topic: p.tp.Topic, Partition: p.tp.Partition}
		w.heads[p] = &pausedHead{pos: -1, end: -1, ts: noTimestamp}
	}
	r.log.Info("paused: watching the partitions' backlog", "partitions", len(r.parts), "source", r.sourceAlias)
	tick := time.NewTicker(pausedStatsInterval)
	defer tick.Stop()
	for {
		if err := r.pausedTick(ctx, w); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// pausedWatch is what a paused run keeps between its looks.
type pausedWatch struct {
	consumer      headReader      // reads first unreplicated records
	admin         sourceLogReader // asks for log offsets (shares the consumer's connections)
	readCommitted bool
	ids           []kafka.PartitionID
	heads         map[*sourcePartition]*pausedHead
	starts        map[kafka.PartitionID]int64 // log start offsets as last asked
	looks         int
}

// headReader reads the first unreplicated records of partitions; consumerHeads answers it for a *kafka.Consumer.
type headReader interface {
	Assign(starts []kafka.Start) error
	Poll(timeout time.Duration) (headRecord, bool, error)
}

// headRecord is what a paused task reads of a record.
type headRecord interface {
	Topic() string
	Partition() int32
	Offset() int64
	Timestamp() time.Time
}

// consumerHeads is a source consumer read as a headReader.
type consumerHeads struct{ c *kafka.Consumer }

func (h consumerHeads) Assign(starts []kafka.Start) error { return h.c.Assign(starts) }

func (h consumerHeads) Poll(timeout time.Duration) (headRecord, bool, error) {
	rec, ok, err := h.c.Poll(timeout)
	return rec, ok, err
}

// pausedTick samples every partition once and publishes them. Only a fenced publication is an error: a
// source that does not answer shows as a notice, and its partitions' reports go stale.
func (r *sourceRun) pausedTick(ctx context.Context, w *pausedWatch) error {
	askStarts := w.looks%pausedStartsEvery == 0
	logs, failed, err := w.admin.LogOffsets(ctx, r.liveIDs(ctx, w), w.readCommitted, askStarts)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		r.limit.Log(ctx, r.log, slog.LevelWarn, "paused-offsets", "paused: reading the source's offsets failed, will retry", "error", err)
		r.notice("source", kmtype.Notice{Kind: NoticeSourceUnreachable,
			Message: fmt.Sprintf("source cluster %s: %v (retrying); the paused partitions' backlog is not known meanwhile", r.sourceAlias, err)})
		return r.reportPausedNotices(ctx)
	}
	r.limit.Resolved(ctx, r.log, "paused-offsets", "paused: reading the source's offsets works again")
	r.clearNotice("source")
	w.looks++
	if len(failed) > 0 {
		r.log.Debug("paused: no offsets for some partitions", "partitions", len(failed))
	}
	for id, lo := range logs {
		start, ok := w.starts[id]
		switch {
		case askStarts:
			w.starts[id] = lo.Start
		case ok:
			lo.Start = start
			logs[id] = lo
		default:
			// No start known (its last ask failed): unknown for this look, and the next one asks again.
			delete(logs, id)
			w.looks = 0
		}
	}
	if askStarts {
		for id := range failed {
			delete(w.starts, id)
		}
	}
	r.readHeads(ctx, w.consumer, logs, w.heads)
	heads := w.heads

	now := time.Now()
	for _, p := range r.parts {
		pp := p.position() // a paused run forwards nothing: acked is the stored offset
		low, end := int64(-1), int64(-1)
		if lo, ok := logs[kafka.PartitionID{Topic: p.tp.Topic, Partition: p.tp.Partition}]; ok {
			low, end = lo.Start, lo.End
		}
		if known := p.knownEnd(end); end < 0 && known > 0 {
			end = known // deleted or re-created while paused: what was last seen of the topic it replicated
		}
		pos := pp.replicatedOffset(low, end, r.resetPolicy == "latest")
		stat := kmtype.PartitionStat{Topic: p.tp.Topic, Partition: p.tp.Partition, RemoteTopic: *p.remote,
			ReplicatedOffset: pos, Status: statusPaused}
		// Retention deleting the backlog of a connector paused too long is what an operator must see before the
		// resume, not after it: the partition is truncated, and the notice gives the offsets lost.
		lossKey := "paused-loss:" + p.tp.String()
		if pp.acked >= 0 && low > pos {
			stat.Status = statusTruncated
			r.notice(lossKey, partitionNotice(NoticeDataNotReplicated,
				fmt.Sprintf("records %d to %d of %s topic %s partition %d were deleted from the source (retention) while the connector was paused, before they were replicated",
					pos, low-1, r.sourceAlias, p.tp.Topic, p.tp.Partition), p.tp.Topic, p.tp.Partition, pos, low-1))
		} else {
			r.clearNotice(lossKey)
		}
		// As the running task: the lag in seconds is the age of the oldest record not yet replicated.
		var headTS time.Time
		if h := heads[p]; end > pos && h.found && h.pos == pos && h.ts != noTimestamp {
			headTS = time.UnixMilli(h.ts)
		}
		headTS = p.stats.seen.oldestUnreplicated(pos, end, headTS, now)
		setPosition(&stat, pos, end, headTS, pp.lastTS, now)
		p.metrics.setPositions(pos, end, headTS, now)
		p.metrics.setStatus(stat.Status)
		p.stats.last, p.stats.ready = stat, true
		// publishStats leaves an unchanged partition out until sourceRepublishInterval has passed, which at one look
		// every pausedStatsInterval could mean every third look and a report older than the endpoint's 10 s: every
		// other look republishes it. Counted in looks, not time: on a loaded machine a look's publication can come
		// well after its clock reading, and a time rule then skipped two looks in a row.
		if p.stats.publishedAt.Equal(p.stats.pausedSeen) {
			p.stats.publishedAt = time.Time{} // the previous look left it out
		}
		p.stats.pausedSeen = p.stats.publishedAt
	}
	if err := r.publishStats(ctx, ""); err != nil {
		if errors.Is(err, kmtype.ErrFenced) {
			return err
		}
		if ctx.Err() == nil {
			r.limit.Log(ctx, r.log, slog.LevelWarn, "partition-stats", "publishing partition stats failed, will retry", "error", err)
		}
		return nil
	}
	r.limit.Resolved(ctx, r.log, "partition-stats", "publishing partition stats works again")
	return r.reportPausedNotices(ctx)
}

// liveIDs returns the partitions to ask the source's offsets for: all of them but those whose source topic is
// gone or is not the one their offsets belong to (deleted and re-created while paused). A deleted topic's
// partition would fail the whole request; a re-created one's would show the new topic's end. Their stats keep
// the end offset last seen of the topic they replicated, which is what the resume judges the deletion on. When
// the topics cannot be described, every partition is asked for.
func (r *sourceRun) liveIDs(ctx context.Context, w *pausedWatch) []kafka.PartitionID {
	shapes, err := w.admin.TopicShapes(ctx, slices.Sorted(maps.Keys(r.bySource)))
	if err != nil {
		r.log.Debug("paused: cannot describe the source topics", "error", err)
		return w.ids
	}
	live := make([]kafka.PartitionID, 0, len(w.ids))
	for i, p := range r.parts {
		id, _ := p.identity()
		if shape, ok := shapes[p.tp.Topic]; ok && int(p.tp.Partition) < shape.Partitions && (id == "" || shape.ID == id) {
			live = append(live, w.ids[i])
		}
	}
	return live
}

// reportPausedNotices shows the task's notices in its status when they changed (the status stays PAUSED).
func (r *sourceRun) reportPausedNotices(ctx context.Context) error {
	if err := r.publishNotices(ctx, r.env.Report); err != nil {
		if errors.Is(err, kmtype.ErrFenced) {
			return err
		}
		if ctx.Err() == nil {
			r.limit.Log(ctx, r.log, slog.LevelWarn, "paused-notices", "reporting the task's notices failed, will retry", "error", err)
		}
	}
	return nil
}

// readHeads reads the first unreplicated record of the partitions with a backlog whose position has not been
// read yet, to learn its timestamp: up to pausedHeadReads partitions, waiting up to pausedHeadWait. A
// partition whose read returned nothing (its backlog only transaction markers, or a slow broker) is tried again
// once its end moves.
func (r *sourceRun) readHeads(ctx context.Context, consumer headReader, logs map[kafka.PartitionID]kafka.LogOffsets,
	heads map[*sourcePartition]*pausedHead) {
	wanted := map[*sourcePartition]int64{} // partition -> offset it is read from
	var starts []kafka.Start
	for _, p := range r.parts {
		lo, ok := logs[kafka.PartitionID{Topic: p.tp.Topic, Partition: p.tp.Partition}]
		if !ok {
			continue
		}
		pos := p.position().replicatedOffset(lo.Start, lo.End, r.resetPolicy == "latest")
		h := heads[p]
		if pos >= lo.End || (h.pos == pos && (h.found || h.end == lo.End)) {
			continue
		}
		if len(starts) == pausedHeadReads {
			break
		}
		// Below the log start the record is gone (retention): the oldest one left is the best the source has.
		from := max(pos, lo.Start)
		*h = pausedHead{pos: pos, end: lo.End, ts: noTimestamp}
		wanted[p] = from
		starts = append(starts, kafka.Start{Topic: p.tp.Topic, Partition: p.tp.Partition, Offset: from})
	}
	if len(starts) == 0 {
		return
	}
	if err := consumer.Assign(starts); err != nil {
		r.log.Debug("paused: assign to read the first unreplicated records", "error", err)
		return
	}
	defer func() {
		if err := consumer.Assign(nil); err != nil {
			r.log.Debug("paused: unassign", "error", err)
		}
	}()
	deadline := time.Now().Add(pausedHeadWait)
	for len(wanted) > 0 && ctx.Err() == nil {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		rec, ok, err := consumer.Poll(min(left, 100*time.Millisecond))
		if err != nil {
			var pe *kafka.PartitionError
			if errors.As(err, &pe) {
				delete(wanted, lookup(r.bySource, pe.Topic, pe.Partition)) // tried; again once the end moves
			}
			continue
		}
		if !ok {
			continue
		}
		p := lookup(r.bySource, rec.Topic(), rec.Partition())
		from, want := wanted[p]
		if !want || rec.Offset() < from {
			continue
		}
		h := heads[p]
		h.found = true
		if ts := rec.Timestamp(); !ts.IsZero() {
			h.ts = ts.UnixMilli()
		}
		delete(wanted, p)
	}
}

// endPaused finishes a paused run as end does a running one: unless it was fenced, it leaves the partitions'
// last positions behind marked stop (the next run, paused or not, reports at once), and it removes its series.
func (r *sourceRun) endPaused(err error) {
	revoked := false
	select {
	case <-r.env.Lease().Revoked():
		revoked = true
	default:
	}
	if !revoked && !errors.Is(err, kmtype.ErrFenced) {
		finalCtx, cancel := context.WithTimeout(r.env.StopContext(), 5*time.Second)
		defer cancel()
		if err := r.publishStats(finalCtx, statusStop); err != nil && !errors.Is(err, kmtype.ErrFenced) {
			r.log.Debug("could not publish the partitions' final stats", "error", err)
		}
	}
	for _, p := range r.parts {
		p.metrics.remove()
	}
	r.taskMetrics.remove()
}

var _ tasks.PausedTask = (*sourceTask)(nil)
