package source

import (
	"fmt"
	"time"

	"github.com/kmirror/kmirror/kmtype"
)

// checkStall pauses forwarding while any partition has waited stallAfter for an acknowledgement, and says the
// target acknowledges nothing (a warning and the target_unreachable notice) only while records have waited
// that long with no acknowledgement of any partition.
//
// The pause is backpressure as much as an outage guard: with many partitions per producer (librdkafka 2.11.1
// sends one partition per ProduceRequest) a slow target acknowledges a partition's batch only every few
// seconds, and without the pause the scale scenario's pipelines opened batches faster than the target took
// them, restarting 53 times a run on overdue records against 7 with it (docs/benchmarks.md, 2026-12-05). But
// the notice said the target acknowledged nothing whenever one partition waited, 86 times in such a run while
// the target acknowledged thousands of others; it now says so only when it is true.
func (r *sourceRun) checkStall(now time.Time) {
	var longest time.Duration
	var slowest *sourcePartition
	waiting, acks := false, uint64(0)
	for _, p := range r.parts {
		d, w, a := p.ackWait(now)
		if d > longest {
			longest, slowest = d, p
		}
		waiting = waiting || w
		acks += a
	}
	unreachable := r.stall.waited(now, waiting, acks) > r.stallAfter
	r.setUnreachable(unreachable)
	held := longest > r.stallAfter
	paused := held || unreachable
	if r.stalled.Swap(paused) != paused && held && !unreachable {
		r.log.Debug("forwarding paused while a partition waits for its acknowledgement", "topic", slowest.tp.Topic,
			"partition", slowest.tp.Partition, "waited", longest)
	}
}

// stallClock times how long records have waited with no acknowledgement: of one partition (sourcePartition's)
// or of any (the task's).
type stallClock struct {
	acks  uint64    // acknowledgements counted at the last check that saw them move
	since time.Time // when the checks last saw nothing waiting or acknowledgements moving
}

// waited tells how long records have waited with no acknowledgement, as seen by periodic checks: 0 when none
// wait or acks moved since the last check.
func (c *stallClock) waited(now time.Time, waiting bool, acks uint64) time.Duration {
	if !waiting || acks != c.acks || c.since.IsZero() {
		c.acks, c.since = acks, now
		return 0
	}
	return now.Sub(c.since)
}

// setUnreachable says that the target acknowledges nothing, or that it does again, when that changes.
func (r *sourceRun) setUnreachable(unreachable bool) {
	if r.unreachable == unreachable {
		return
	}
	r.unreachable = unreachable
	if unreachable {
		r.log.Warn("the target acknowledges nothing; forwarding paused until it does", "cluster", r.targetAlias, "after", r.stallAfter)
		r.notice("target", kmtype.Notice{Kind: NoticeTargetUnreachable,
			Message: fmt.Sprintf("target cluster %s has acknowledged no record for %s (down or unreachable?); replication waits and retries", r.targetAlias, r.stallAfter)})
	} else {
		r.log.Info("the target acknowledges again; forwarding resumed", "cluster", r.targetAlias)
		r.clearNotice("target")
	}
}
