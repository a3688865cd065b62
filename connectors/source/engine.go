package source

import (
	"context"
	"log/slog"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/tasks"
)

// engine is one data path of a source run: what the Go path (goEngine, gopath.go) and the C path (cEngine,
// cpath.go) truly differ in. The run skeleton (replicate) does everything else once: offset syncs, start
// positions, the watches, the loop head (loopEnds, the lease, the stall pause), the soft stop and settle, with
// exactly-once as hooks (txnHooks). The two differ in which clients they make and in what order (the Go path's
// consumer and producer carry their own admin clients, and the producer's delivery handler needs the offset
// syncer; the C path makes its pipeline first, so that its producer's id request overlaps the admin work, and
// takes pooled admin clients), in how partitions are assigned (the C path waits for its producer's id first),
// and in how records move: the Go engine forwards record by record and its producer reports deliveries on a
// goroutine of its own, the C engine steps in C and applies each batch's facts, reports included, itself.
type engine interface {
	engineProducer
	// name is the data path's name in the logs (data_path).
	name() string
	// openSource makes the source side's clients and returns the admin client beside them on the source.
	openSource() (clusterAdmin, error)
	// openTarget makes the target side's clients and returns the admin client beside them on the target.
	openTarget(syncs *offsetSyncer) (clusterAdmin, error)
	// assign starts each of the run's partitions at starts (in r.parts' order).
	assign(ctx context.Context, starts []kafka.Start) error
	// reader answers the committer and the identity watch about the source partitions.
	reader() sourceReader
	// interruptOn makes a step waiting for room in the producer's queue give up once ctx ends; stop undoes it.
	interruptOn(ctx context.Context) (stop func() bool)
	// step moves records once, while the lease is valid: it returns stop when the loop must end without an
	// error (a record abandoned because the pipeline is stopping or broken), and the error that ends it.
	step(ctx context.Context, lease tasks.Lease) (stop bool, err error)
	// pause is one moment of the stall pause: nothing more is handed over, deliveries are still served.
	pause(ctx context.Context) error
	// reported applies the delivery reports a flush of the soft stop left, for an engine that applies them
	// itself.
	reported()
	// txnProducer is the transactional producer exactly-once mode drives (nil: the engine has none).
	txnProducer() txnProducer
	// closeProducer closes the target side's clients once the soft stop is over.
	closeProducer()
	// close closes everything the engine made; it may be called more than once.
	close()
}

// clusterAdmin is what a pipeline asks of the admin clients beside its clients: topic ids and partition
// counts, log offsets, the cluster's id (provenance.go), and (exactly-once) the offsets topic. *kafka.Admin
// answers it.
type clusterAdmin interface {
	topicIDReader
	TopicShapes(ctx context.Context, topics []string) (map[string]kafka.TopicShape, error)
	LogOffsets(ctx context.Context, parts []kafka.PartitionID, readCommitted, starts bool) (map[kafka.PartitionID]kafka.LogOffsets, map[kafka.PartitionID]error, error)
	PartitionCount(ctx context.Context, topic string) (int, error)
	CreateTopics(ctx context.Context, topics []kafka.NewTopic) (map[string]error, error)
	ClusterID(ctx context.Context) (string, error)
}

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
	_ clusterAdmin   = (*kafka.Admin)(nil)
	_ engine         = (*goEngine)(nil)
	_ engine         = (*cEngine)(nil)
)

// newEngine returns the engine of this run's data path (usesCPath).
func (r *sourceRun) newEngine() engine {
	r.rule.onC = r.usesCPath()
	if r.rule.onC {
		return &cEngine{r: r, clients: cpathClients{}}
	}
	return &goEngine{r: r, clients: kafkaClients{}}
}

// replicate runs one pipeline — consumer, producer, committer — until ctx is done (nil), the pipeline breaks
// (*pipelineError), source topics were re-created (errRecreated), the lease was revoked (errLeaseRevoked) or
// the task must fail (any other error). It always commits what was acknowledged.
func (r *sourceRun) replicate(ctx context.Context) error {
	r.discoverOpposite(ctx) // before the engine is chosen: the rule for headerless records needs the Go engine
	return r.replicateWith(ctx, r.newEngine())
}

// replicateWith is replicate on engine e.
func (r *sourceRun) replicateWith(ctx context.Context, e engine) error {
	r.failure.Store(nil)
	r.ids.recreated.Store(nil)
	defer e.close()
	sourceAdmin, err := e.openSource()
	if err != nil {
		return err
	}
	r.sourceAdmin = sourceAdmin
	syncs, err := r.startSyncs()
	if err != nil {
		return err
	}
	if syncs != nil {
		defer syncs.close()
	}
	targetAdmin, err := e.openTarget(syncs)
	if err != nil {
		return err
	}
	r.stalls.pipelineStarts() // before the committer that owns its clock starts below
	r.awaitRemotesWritable(ctx, targetAdmin)
	r.learnOrigins(ctx, sourceAdmin, targetAdmin)
	if err := r.txn.startPipeline(ctx, r, e.txnProducer(), targetAdmin, syncs); err != nil {
		return err
	}
	starts, err := r.startOffsets(ctx, sourceAdmin)
	if err != nil {
		return err
	}
	for i, p := range r.parts {
		p.startAt = starts[i].Offset
	}
	if err := e.assign(ctx, starts); err != nil {
		return err
	}
	r.log.Info("replicating", "partitions", len(r.parts), "source", r.sourceAlias, "target", r.targetAlias, "data_path", e.name())
	if r.log.Enabled(ctx, slog.LevelDebug) {
		for _, s := range starts {
			r.log.Debug("partition starts", "topic", s.Topic, "partition", s.Partition, "offset", s.Offset)
		}
	}

	watches := r.startWatches(ctx, syncs, e.reader(), sourceAdmin, targetAdmin, e)
	loopErr, committerErr, committerDone := r.pollLoop(ctx, e, watches.committer)
	watches.stopWatches()

	// Soft stop: let everything in flight reach the target (or fail), then commit it.
	left := r.drain(ctx, e, e.reported)
	r.txn.endPipeline(ctx, r, e.txnProducer(), loopErr == nil && left == 0)
	e.closeProducer()
	committerErr = watches.stopCommits(committerErr, committerDone)
	e.close()
	return r.settle(ctx, loopErr, committerErr, syncs)
}

// pollLoop steps the engine until ctx is done or something breaks. It hands records over only while the
// run's lease is valid, and none while the target acknowledges nothing (the stall pause). When it returns
// because the committer stopped, it returns the committer's result too (committerDone), which it has taken
// from the channel.
func (r *sourceRun) pollLoop(ctx context.Context, e engine, committer <-chan error) (loopErr, committerErr error, committerDone bool) {
	lease := r.env.Lease()
	defer e.interruptOn(ctx)()
	for ctx.Err() == nil {
		if stop, loopErr, committerErr, committerDone := r.loopEnds(e, committer); stop {
			return loopErr, committerErr, committerDone
		}
		if !lease.Valid() {
			start := time.Now()
			err := r.awaitLease(ctx, lease, e)
			r.clock.targetWait(time.Since(start))
			if err != nil {
				return err, nil, false
			}
			continue
		}
		if r.stalls.stalled.Load() {
			// The target has acknowledged nothing for a while: queueing more now would only give the producer
			// records that outlive the stuck ones, and if those time out, the newer ones would land first.
			if err := e.pause(ctx); err != nil {
				return err, nil, false
			}
			continue
		}
		if stop, err := e.step(ctx, lease); stop || err != nil {
			return err, nil, false
		}
	}
	return nil, nil, false
}

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
func (r *sourceRun) startWatches(ctx context.Context, syncs *offsetSyncer, reader sourceReader, sourceAdmin, targetAdmin clusterAdmin,
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

// drain is the soft stop of a pipeline's target side: everything in flight reaches the target (or fails),
// within the stop budget when the run stops and within the settle window when the pipeline restarts (a
// producer that reports nothing must not hold the restart up for as long as the run lives), and a revoked
// lease drops what is queued at once. After a delivery failure nothing the producer holds may be written: the
// next pipeline sends it again after the failed record (overdue.go). A failed or broken producer delivers
// nothing more: waiting would keep a failed task RUNNING until the stop budget or the delivery timeout ran out
// (records queued before a failed authentication was known). reported is called after each flush, for a data
// path that applies delivery reports itself. It returns how many records were dropped.
func (r *sourceRun) drain(ctx context.Context, producer engineProducer, reported func()) int {
	lease := r.env.Lease()
	flushCtx, cancelFlush := r.settleContext(ctx)
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
		// librdkafka reports purged records from its broker threads, which took up to tens of seconds on a
		// starved machine: the wait has the same bound as the flush, with a window of its own.
		purgeCtx, cancelPurge := r.settleContext(ctx)
		defer cancelPurge()
		unreported := producer.Flush(purgeCtx)
		reported()
		r.log.Warn("records still unacknowledged at stop were dropped; they will be replicated again", "records", left)
		if unreported > 0 {
			r.log.Warn("the target producer has not reported every dropped record; closing it anyway", "records", unreported)
		}
	}
	return left
}
