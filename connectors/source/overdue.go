package source

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Why a pipeline ends before librdkafka gives up on a record.
//
// When a record of librdkafka's idempotent producer reaches message.timeout.ms, librdkafka fails it, bumps the
// producer's epoch and goes on sending the partition's records queued behind it: those land on the target, and
// the failed record, which the next pipeline sends again, lands after them. Nothing is lost (offsets are
// committed only over acknowledged records) but the partition's order is broken. The delivery report of the
// failed record cannot win that race: the epoch bump is local and immediate. It was seen in CI (chaos
// TestKillWorker, 192 records reordered after a request took longer than the 2 s delivery timeout a 6 s worker
// TTL allows).
//
// So a pipeline must end, and drop everything its producer holds, before any record can reach that timeout.
// The overdue watch checks every partition's oldest unacknowledged record every few tens of milliseconds and,
// when one has waited overdueAfter — the delivery timeout less an eighth of it, at least 250 ms — halts the
// pipeline: under the produce lock, so that no record is produced after it, it records the failure and purges
// the producer. What the target then holds of the pipeline's records is an in-order prefix of them (a request
// in flight may still land, which at worst duplicates records). The purge itself cannot open a gap:
// enable.gapless.guarantee makes the producer refuse to go on after any failed request that could leave one,
// and nothing is produced after a purge. librdkafka times records out between message.timeout.ms and a second
// later (its scan runs once a second), so the margin is at least the allowance's eighth less a tick: only a
// watch kept from running that long (250 ms under the suite's 6 s worker TTL, over a second under the default
// 20 s) while librdkafka's threads run could still lose the race. Half the timeout was tried first, then three
// quarters, with the poll loop purging: under the load of the whole test suite, acknowledgements that took
// that long restarted pipelines for nothing (a target broker back from a kill -9 duplicated 2,609 records where
// it used to duplicate about a hundred), and a restart's backoff is replication lag.

// overdueRestartDelay is how long a task waits before it restarts a pipeline the overdue watch ended, instead
// of the growing backoff of other pipeline failures.
const overdueRestartDelay = 100 * time.Millisecond

// errDeliveryOverdue ends a pipeline in which a record waited overdueAfter for its delivery report.
var errDeliveryOverdue = errors.New("the target has not acknowledged the record, and the producer is about to give up on it; replicating again from the last acknowledged record, so that no later record of the partition is written before it")

// overdueAllowance is how long a record may wait for its delivery report under a delivery timeout of timeout
// (message.timeout.ms): the timeout less an eighth of it, at least 250 ms, and never less than half of it.
func overdueAllowance(timeout time.Duration) time.Duration {
	return max(timeout-max(timeout/8, 250*time.Millisecond), timeout/2)
}

// watchOverdue runs the overdue watch over the current pipeline until ctx is done: a late record halts the
// pipeline (a pipelineError; producer purged). It runs beside the committer, not in it: a commit blocked on
// PostgreSQL must not stop the watch.
func (r *sourceRun) watchOverdue(ctx context.Context, producer purger) {
	r.stalls.watchOverdue(ctx, func() bool { return r.failure.Load() != nil }, func(err error) bool { return r.halt(err, producer) })
}

// watchOverdue checks every partition's oldest unacknowledged record until ctx is done or failed tells that the
// pipeline already failed, and calls halt when one has waited overdueAfter; halt reports whether its error
// became the pipeline's failure.
func (w *stallWatch) watchOverdue(ctx context.Context, failed func() bool, halt func(error) bool) {
	if w.overdueAfter <= 0 {
		return
	}
	tick := time.NewTicker(overdueTick(w.overdueAfter))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			if failed() {
				return
			}
			for _, p := range w.parts {
				offset, late := p.overdue(now, w.overdueAfter)
				if !late {
					continue
				}
				err := &pipelineError{err: fmt.Errorf("replicate %s topic %s partition %d offset %d to %s topic %s: no delivery report after %s: %w",
					w.sourceAlias, p.tp.Topic, p.tp.Partition, offset, w.targetAlias, *p.remote, w.overdueAfter, errDeliveryOverdue)}
				if halt(err) {
					w.log.Warn("a record waited too long for the target's acknowledgement; restarting the pipeline before the producer could time it out and write later records first",
						"topic", p.tp.Topic, "partition", p.tp.Partition, "offset", offset, "after", w.overdueAfter)
				}
				return
			}
		}
	}
}

// overdueTick is how often the overdue watch checks: a fortieth of the allowance, within 10 to 50 ms. Its
// answer comes at most one tick late.
func overdueTick(after time.Duration) time.Duration {
	return min(max(after/40, 10*time.Millisecond), 50*time.Millisecond)
}
