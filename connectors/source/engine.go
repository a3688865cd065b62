package source

import (
	"context"

	"github.com/kmirror/kmirror/connectors/kafka"
)

// engineProducer is what the pipeline skeleton asks of a data path's target side, as it runs and as it ends:
// the Go path's *kafka.Producer and the C path's *cpath.Pipeline both answer it.
type engineProducer interface {
	loopClient
	purger
	// Outstanding is how many records are handed over and not yet reported.
	Outstanding() int
	// Flush waits until every record is reported or ctx ends, and returns how many are left.
	Flush(ctx context.Context) int
}

var (
	_ engineProducer = (*kafka.Producer)(nil)
	_ sourceReader   = (*kafka.Consumer)(nil)
	_ sourceReader   = (*cpathReader)(nil)
)

// pipelineWatches is what runs beside a pipeline's poll loop, on either data path: the commit loop, the
// identity watch and the overdue watch.
type pipelineWatches struct {
	committer                   chan error // the commit loop's result
	stopCommitter, stopWatching context.CancelFunc
	watched, overdueWatched     chan struct{}
}

// startWatches starts the commit loop, the identity watch and the overdue watch of a pipeline that reads
// through reader and writes through producer. The commit loop outlives ctx (it commits through the soft stop)
// until stopCommits; the watches end with ctx or stopWatches.
func (r *sourceRun) startWatches(ctx context.Context, syncs *offsetSyncer, reader sourceReader, sourceAdmin, targetAdmin *kafka.Admin,
	producer purger) *pipelineWatches {
	w := &pipelineWatches{committer: make(chan error, 1), watched: make(chan struct{}), overdueWatched: make(chan struct{})}
	var commitCtx, watchCtx context.Context
	commitCtx, w.stopCommitter = context.WithCancel(context.WithoutCancel(ctx))
	go func() { w.committer <- r.commitLoop(commitCtx, syncs, reader) }()
	watchCtx, w.stopWatching = context.WithCancel(ctx)
	go func() {
		defer close(w.watched)
		r.ids.watch(watchCtx, sourceAdmin, targetAdmin, reader)
	}()
	go func() {
		defer close(w.overdueWatched)
		r.watchOverdue(watchCtx, producer)
	}()
	return w
}

// stopWatches ends the identity and overdue watches, once the poll loop has returned.
func (w *pipelineWatches) stopWatches() {
	w.stopWatching()
	<-w.watched
	<-w.overdueWatched
}

// stopCommits ends the commit loop and returns its result, unless the poll loop already took it
// (committerDone, with committerErr).
func (w *pipelineWatches) stopCommits(committerErr error, committerDone bool) error {
	w.stopCommitter()
	if !committerDone {
		committerErr = <-w.committer
	}
	return committerErr
}

// drain is the soft stop of a pipeline's target side: everything in flight reaches the target (or fails)
// within the stop budget, and a revoked lease drops what is queued at once. After a delivery failure nothing
// the producer holds may be written: the next pipeline sends it again after the failed record (overdue.go).
// A failed or broken producer delivers nothing more: waiting would keep a failed task RUNNING until the stop
// budget or the delivery timeout ran out (records queued before a failed authentication was known). reported
// is called after each flush, for a data path that applies delivery reports itself. It returns how many
// records were dropped.
func (r *sourceRun) drain(producer engineProducer, reported func()) int {
	lease := r.env.Lease()
	flushCtx, cancelFlush := context.WithCancel(r.env.StopContext())
	defer cancelFlush()
	go func() {
		select {
		case <-lease.Revoked():
			cancelFlush()
		case <-flushCtx.Done():
		}
	}()
	left := producer.Outstanding()
	if r.failure.Load() == nil && producer.AuthFailure() == nil && producer.Fatal() == nil {
		left = producer.Flush(flushCtx)
	}
	reported()
	if left > 0 {
		if err := producer.Purge(true); err != nil {
			r.log.Warn("purge the producer", "error", err)
		}
		producer.Flush(r.env.StopContext()) // purged records report at once
		reported()
		r.log.Warn("records still unacknowledged at stop were dropped; they will be replicated again", "records", left)
	}
	return left
}
