package source

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/kmirror/kmirror/connectors/offsetmap"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/lograte"
)

// How often a source task commits acknowledged offsets to PostgreSQL: often enough that a crash re-sends
// little more than what was in flight, rarely enough that commits stay off the hot path.
const sourceCommitInterval = 100 * time.Millisecond

// How often delayed offset syncs are promoted, so that quiet partitions get an exact sync for their last record
// (MM2 does it on every offset flush, 60 s by default).
const sourceSyncPromoteInterval = 10 * time.Second

// How often a source task prunes its partitions' offset maps below their log start offsets.
const sourcePruneInterval = time.Minute

// sourceRoundTimeout bounds each round of the commit loop's database work. The loop also runs the stall check
// that pauses and resumes forwarding: a PostgreSQL connection that never answers (the fault suite saw one
// wait for a BEGIN for minutes after a stall of the server) must cost one round, not keep the pipeline paused.
const sourceRoundTimeout = 10 * time.Second

// committer stores a run's acknowledged progress: every partition's offset and the offset-map ranges behind
// it in one transaction, the remote topics that became active, and the task's notices when they changed. It
// also prunes the offset map below each partition's log start and sends the partitions' delayed offset syncs.
// One goroutine at a time uses it: the run's commit loop, then settle.
type committer struct {
	env         commitEnv
	parts       []*sourcePartition
	sourceAlias string
	targetAlias string
	notices     *noticeBoard
	log         *slog.Logger
	limit       *lograte.Limiter
}

// commitEnv is what the committer asks of the runtime; tasks.TaskEnv answers it.
type commitEnv interface {
	CommitProgress(ctx context.Context, offsets []kmtype.Offset, ranges []kmtype.OffsetRange) error
	RecordTopics(ctx context.Context, topics []string) error
	Report(ctx context.Context, notices []kmtype.Notice) error
	PruneOffsetRanges(ctx context.Context, key kmtype.RangeKey, logStart int64, keep int) error
}

// commitLoop commits acknowledged offsets every sourceCommitInterval, promotes delayed offset syncs every
// sourceSyncPromoteInterval, and samples and publishes the partitions' stats (against the end offsets consumer
// saw), until ctx is done or a commit or publication is fenced.
func (r *sourceRun) commitLoop(ctx context.Context, syncs *offsetSyncer, consumer sourceReader) error {
	tick := time.NewTicker(sourceCommitInterval)
	defer tick.Stop()
	promote := time.NewTicker(sourceSyncPromoteInterval)
	defer promote.Stop()
	prune := time.NewTicker(sourcePruneInterval)
	defer prune.Stop()
	stats := time.NewTicker(sourceStatsInterval)
	defer stats.Stop()
	// The first report comes at once, with the end offsets the pipeline's start read (resolveBeginnings).
	first := time.Now()
	if err := r.inRound(ctx, "stats", func(ctx context.Context) error { return r.statsTick(ctx, consumer, first, true) }); err != nil {
		return err
	}
	samples := 1
	for {
		var err error
		select {
		case <-ctx.Done():
			return nil
		case now := <-stats.C:
			publish := samples%int(sourcePublishInterval/sourceStatsInterval) == 0
			samples++
			err = r.inRound(ctx, "stats", func(ctx context.Context) error { return r.statsTick(ctx, consumer, now, publish) })
		case <-promote.C:
			if syncs != nil {
				r.commits.promoteSyncs(syncs)
			}
		case <-prune.C:
			err = r.inRound(ctx, "prune", func(ctx context.Context) error { r.commits.prune(ctx); return nil })
		case now := <-tick.C:
			r.stalls.checkStall(now)
			r.sampleInFlight(now)
			err = r.inRound(ctx, "commit", r.commitRound)
		}
		if err != nil {
			return err
		}
	}
}

// inRound runs one round of the commit loop's database work within sourceRoundTimeout. A round that runs out
// of time is a failed round, which the next one retries; it returns only what ends the loop.
func (r *sourceRun) inRound(ctx context.Context, what string, round func(context.Context) error) error {
	timeout := r.roundTimeout
	if timeout <= 0 {
		timeout = sourceRoundTimeout
	}
	roundCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := round(roundCtx)
	if err != nil && ctx.Err() == nil && roundCtx.Err() != nil && !errors.Is(err, kmtype.ErrFenced) {
		r.limit.Log(ctx, r.log, slog.LevelWarn, "round-"+what, "the database did not answer within the round's time; the next round retries",
			"round", what, "timeout", timeout)
		return nil
	}
	return err
}

// commitRound commits acknowledged offsets, then (on the C path) looks for opposite flows; it returns only
// what ends the commit loop.
func (r *sourceRun) commitRound(ctx context.Context) error {
	began := time.Now()
	if err := r.commits.commit(ctx); err != nil {
		if errors.Is(err, kmtype.ErrFenced) || ctx.Err() != nil {
			return err // inRound tells a round that ran out of time from the loop's end
		}
		r.limit.Log(ctx, r.log, slog.LevelWarn, "commit", "commit offsets failed, will retry", "error", err)
		return nil
	}
	r.taskMetrics.committed(began) // only successful rounds, as Connect times them
	r.limit.Resolved(ctx, r.log, "commit", "committing offsets works again")
	return r.discoverOnC(ctx)
}

// rangeKey names a partition in the offset map.
func (c *committer) rangeKey(p *sourcePartition) kmtype.RangeKey {
	return kmtype.RangeKey{SourceAlias: c.sourceAlias, TargetAlias: c.targetAlias, Topic: p.tp.Topic, Partition: p.tp.Partition}
}

// commit stores every partition's acknowledged progress, records newly active topics, and publishes the
// task's notices when they changed.
func (c *committer) commit(ctx context.Context) error {
	var offsets []kmtype.Offset
	var topics []string
	var advanced, newlyActive []*sourcePartition
	var acks []int64
	var ranges []kmtype.OffsetRange
	var snaps []offsetmap.Snapshot
	var mapped []*sourcePartition
	for _, p := range c.parts {
		acked, delivered, snap := p.progressWithRanges()
		id, idDirty := p.identity()
		if len(snap.Ranges) > 0 {
			k := c.rangeKey(p)
			for _, rg := range snap.Ranges {
				ranges = append(ranges, kmtype.OffsetRange{RangeKey: k, SourceID: id, SourceStart: rg.SourceStart, SourceEnd: rg.SourceEnd,
					TargetStart: rg.TargetStart, SourceNext: rg.SourceNext, GapBefore: rg.GapBefore, UnmappedBefore: rg.UnmappedBefore, Uncommitted: rg.Uncommitted, Rewind: rg.Rewind})
			}
			snaps, mapped = append(snaps, snap), append(mapped, p)
		}
		if acked > p.committed || (idDirty && acked >= 0) {
			offsets = append(offsets, kmtype.Offset{
				Partition: map[string]any{"cluster": c.sourceAlias, "topic": p.tp.Topic, "partition": p.tp.Partition},
				Offset:    map[string]any{"offset": acked},
				SourceID:  id,
			})
			advanced = append(advanced, p)
			acks = append(acks, acked)
		}
		if delivered && !p.tracked {
			topics = append(topics, *p.remote)
			newlyActive = append(newlyActive, p)
		}
	}
	if len(offsets) > 0 || len(ranges) > 0 {
		if err := c.env.CommitProgress(ctx, offsets, ranges); err != nil {
			return err
		}
		for i, p := range advanced {
			p.committed = acks[i]
			p.identityStored()
		}
		for i, p := range mapped {
			p.rangesStored(snaps[i])
		}
	}
	if len(topics) > 0 {
		slices.Sort(topics)
		topics = slices.Compact(topics)
		if err := c.env.RecordTopics(ctx, topics); err != nil {
			return err
		}
		for _, p := range newlyActive {
			p.tracked = true
		}
	}
	return c.notices.publishNotices(ctx, c.env.Report)
}

// prune bounds the offset map: no group can be positioned below a partition's log start offset. It
// prunes only partitions where that can delete something (needsPrune): one statement per partition, every
// minute, for 10,000 partitions was a steady load on PostgreSQL for idle partitions.
func (c *committer) prune(ctx context.Context) {
	for _, p := range c.parts {
		p.mu.Lock()
		logStart := p.logStart
		p.mu.Unlock()
		if !p.needsPrune(logStart) {
			continue
		}
		if err := c.env.PruneOffsetRanges(ctx, c.rangeKey(p), logStart, offsetmap.MaxRangesPerPartition); err != nil {
			c.limit.Log(ctx, c.log, slog.LevelWarn, "prune", "pruning the offset map failed, will retry", "error", err)
			return
		}
		p.pruned(logStart)
	}
}

// promoteSyncs sends every partition's delayed offset sync, so that quiet partitions get an exact sync for
// their last record (MM2 promotes delayed syncs on each offset flush).
func (c *committer) promoteSyncs(syncs *offsetSyncer) {
	for _, p := range c.parts {
		if sync, ok := p.delayedSync(); ok {
			syncs.send(sync)
		}
	}
}
