package connectors

import (
	"fmt"
	"time"

	"github.com/kmirror/kmirror/tasks"
)

// checkStall pauses forwarding while records wait and the target has acknowledged none, of any partition, for
// stallAfter: it is down or unreachable, and a catch-up burst queued meanwhile would only wait for it.
//
// It asked that of each partition alone until 2026-12-05. With many partitions per producer the target
// acknowledges a partition's batch only every few seconds while it acknowledges thousands of others
// (librdkafka 2.11.1 sends one partition per ProduceRequest): the whole task paused tens of times a run at
// the scale scenario, each time telling operators the target acknowledged nothing. A partition that alone
// gets no answer is the overdue watch's (source_overdue.go), and the C path's batch gate never queues more
// than one batch of it.
func (r *sourceRun) checkStall(now time.Time) {
	waiting, acks := false, uint64(0)
	for _, p := range r.parts {
		w, a := p.ackState()
		waiting = waiting || w
		acks += a
	}
	r.setStalled(r.stall.waited(now, waiting, acks) > r.stallAfter)
}

// stallClock times how long records have waited with no acknowledgement at all.
type stallClock struct {
	acks  uint64    // acknowledgements of every partition together, at the last check that saw them move
	since time.Time // when the task was last seen idle or acknowledging
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

// setStalled pauses forwarding (stalled) or resumes it, and says so when that changes.
func (r *sourceRun) setStalled(stalled bool) {
	if r.stalled.Swap(stalled) != stalled {
		if stalled {
			r.log.Warn("the target acknowledges nothing; forwarding paused until it does", "cluster", r.targetAlias, "after", r.stallAfter)
			r.notice("target", tasks.Notice{Kind: NoticeTargetUnreachable,
				Message: fmt.Sprintf("target cluster %s has acknowledged no record for %s (down or unreachable?); replication waits and retries", r.targetAlias, r.stallAfter)})
		} else {
			r.log.Info("the target acknowledges again; forwarding resumed", "cluster", r.targetAlias)
			r.clearNotice("target")
		}
	}
}
