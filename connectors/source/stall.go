package source

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/kmirror/kmirror/kmtype"
)

// stallWatch watches the acknowledgements of a run's partitions. The commit loop's check pauses forwarding
// while a partition has waited stallAfter and says the target is unreachable while nothing at all is
// acknowledged; the overdue watch (overdue.go) ends a pipeline before its producer could time a record out.
// The poll loops read stalled; the rest is owned by the check, or set up before a pipeline starts.
type stallWatch struct {
	parts                    []*sourcePartition
	notices                  *noticeBoard
	log                      *slog.Logger
	sourceAlias, targetAlias string

	stalled    atomic.Bool   // a partition has had records in flight without acknowledgement for stallAfter
	stallAfter time.Duration // a quarter of the producer's delivery timeout
	// Owned by checkStall: how long records have waited with no acknowledgement at all, and whether that has
	// passed stallAfter (the target_unreachable notice is up).
	stall       stallClock
	unreachable bool
	// overdueAfter is a little less than the delivery timeout: a record unacknowledged that long ends the
	// pipeline (overdue.go); 0 in exactly-once mode, where a timed-out record aborts its transaction instead.
	overdueAfter time.Duration
}

// pipelineStarts readies the watch for a new pipeline: forwarding not paused, the wait for any
// acknowledgement counted afresh. The target_unreachable notice stays until acknowledgements say otherwise.
func (w *stallWatch) pipelineStarts() {
	w.stalled.Store(false)
	w.stall = stallClock{}
}

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
func (w *stallWatch) checkStall(now time.Time) {
	var longest time.Duration
	var slowest *sourcePartition
	waiting, acks := false, uint64(0)
	for _, p := range w.parts {
		d, w, a := p.ackWait(now)
		if d > longest {
			longest, slowest = d, p
		}
		waiting = waiting || w
		acks += a
	}
	unreachable := w.stall.waited(now, waiting, acks) > w.stallAfter
	w.setUnreachable(unreachable)
	held := longest > w.stallAfter
	paused := held || unreachable
	if w.stalled.Swap(paused) != paused && held && !unreachable {
		w.log.Debug("forwarding paused while a partition waits for its acknowledgement", "topic", slowest.tp.Topic,
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
func (w *stallWatch) setUnreachable(unreachable bool) {
	if w.unreachable == unreachable {
		return
	}
	w.unreachable = unreachable
	if unreachable {
		w.log.Warn("the target acknowledges nothing; forwarding paused until it does", "cluster", w.targetAlias, "after", w.stallAfter)
		w.notices.notice("target", kmtype.Notice{Kind: NoticeTargetUnreachable,
			Message: fmt.Sprintf("target cluster %s has acknowledged no record for %s (down or unreachable?); replication waits and retries", w.targetAlias, w.stallAfter)})
	} else {
		w.log.Info("the target acknowledges again; forwarding resumed", "cluster", w.targetAlias)
		w.notices.clearNotice("target")
	}
}
