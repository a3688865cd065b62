package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/offsetmap"
	"github.com/kmirror/kmirror/lograte"
	"github.com/kmirror/kmirror/metrics"
	"github.com/kmirror/kmirror/tasks"
)

// How often a source task commits acknowledged offsets to PostgreSQL: often enough that a crash re-sends
// little more than what was in flight, rarely enough that commits stay off the hot path.
const sourceCommitInterval = 100 * time.Millisecond

// How often delayed offset syncs are promoted, so that quiet partitions get an exact sync for their last record
// (MM2 does it on every offset flush, 60 s by default).
const sourceSyncPromoteInterval = 10 * time.Second

// sourceTask is MirrorSourceTask: it replicates its assigned source partitions to the same partitions of the
// remote topics, committing each partition's progress only over records the target acknowledged.
type sourceTask struct {
	id      tasks.TaskID
	cfg     config
	log     *slog.Logger
	syncs   *producerPool     // the worker's shared offset-sync producers
	admins  *adminPool        // the worker's shared admin clients of C-path tasks
	metrics *metrics.Registry // nil without metrics
	eos     bool              // the worker has exactly-once source support: replicate in transactions
	// dataPath is the worker's --data-path: DataPathC moves records in C (source_cpath.go) unless eos.
	dataPath DataPath
	procs    *cpathProcs // the worker's GOMAXPROCS for C pipelines (nil: left alone)
	// consumerStatsMax, producerStatsMax: a replication consumer or producer knowing of more partitions runs
	// without librdkafka statistics (source_client_stats.go); at most 0: no limit.
	consumerStatsMax, producerStatsMax int
}

// pipelineError is a failure that a fresh consumer and producer may not repeat (a fatal idempotent-producer
// state, a delivery that timed out); the task restarts its pipeline from the acknowledged offsets.
type pipelineError struct{ err error }

func (e *pipelineError) Error() string { return e.err.Error() }
func (e *pipelineError) Unwrap() error { return e.err }

func (t *sourceTask) Run(ctx context.Context, env tasks.TaskEnv) (err error) {
	r, err := t.prepare(ctx, env)
	if err != nil {
		return err
	}
	defer func() { r.end(err) }()
	if err := env.Running(ctx); err != nil {
		return err
	}
	backoff := time.Second
	for {
		began := time.Now()
		err := r.replicate(ctx)
		if r.txns != nil {
			err = r.txns.fenced(r, err)
		}
		var pe *pipelineError
		switch {
		case ctx.Err() != nil && !errors.Is(err, errLeaseRevoked):
			return err
		case errors.Is(err, errLeaseRevoked):
			return tasks.ErrFenced
		case errors.Is(err, errRecreated):
			continue // at once: the pipeline starts the re-created topics over
		case !errors.As(err, &pe):
			return err
		}
		if time.Since(began) > time.Minute {
			backoff = time.Second // it worked for a while: this is a new failure, not the same one again
		}
		delay := backoff
		if errors.Is(err, errDeliveryOverdue) {
			// A slow target, not a refusing one: a longer wait only adds lag (and a source topic deleted meanwhile
			// takes its unreplicated records with it). The allowance itself paces these restarts.
			delay = overdueRestartDelay
		} else {
			backoff = min(2*backoff, 30*time.Second)
		}
		r.limit.Log(ctx, r.log, slog.LevelWarn, "pipeline", "replication pipeline failed; restarting it from the acknowledged offsets", "error", err, "delay", delay)
		r.notice("pipeline", tasks.Notice{Kind: NoticePipelineRestarted, Message: fmt.Sprintf("replication restarted after: %v", err)})
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
	}
}

var (
	// errRecreated ends a pipeline whose source topics were re-created, so the next one starts them over.
	errRecreated = errors.New("source topics were re-created")
	// errLeaseRevoked ends a pipeline whose run lost its unit: it must write nothing more.
	errLeaseRevoked = errors.New("the run's lease was revoked")
	// errLeaseLapsed ends a pipeline whose lease ended while it handed a record to its producer.
	errLeaseLapsed = errors.New("this worker's lease ended while the record was being handed to the producer, so what the producer held was dropped; replicating again from the last acknowledged record")
	// errUnconfirmedDelivery: the producer reported a record written without the target saying so (see
	// kafka.Delivery.Unconfirmed).
	errUnconfirmedDelivery = errors.New("the target acknowledged a later record of the partition while this one's request had no answer, so whether this one was written is unknown; replicating again from the last record the target confirmed")
)

// sourceRun is everything one run of a source task shares between its poll loop, its delivery handler and its
// committer.
type sourceRun struct {
	t           *sourceTask
	env         tasks.TaskEnv
	log         *slog.Logger
	sourceAlias string
	targetAlias string
	resetPolicy string // what to do without a usable offset: earliest, latest or error

	parts    []*sourcePartition
	bySource map[string][]*sourcePartition // source topic -> by partition number
	byRemote map[string][]*sourcePartition // remote topic -> by partition number

	consumerProps, producerProps, syncProps map[string]string
	syncTopic                               string
	offsetLagMax                            int64
	pollTimeout                             time.Duration

	failure atomic.Pointer[error] // the first delivery failure of the current pipeline
	// produceMu is held by the Go path's poll loop while it hands a record to the producer, and by halt while
	// it sets failure and purges: no record is produced after a purge (source_overdue.go).
	produceMu  sync.Mutex
	recreated  atomic.Pointer[identityCheck] // source topics found re-created; the pipeline restarts
	producer   atomic.Pointer[kafka.Producer]
	stalled    atomic.Bool   // a partition has had records in flight without acknowledgement for stallAfter
	stallAfter time.Duration // a quarter of the producer's delivery timeout
	// Owned by checkStall: how long records have waited with no acknowledgement at all, and whether that has
	// passed stallAfter (the target_unreachable notice is up).
	stall       stallClock
	unreachable bool
	// overdueAfter is a little less than it: a record unacknowledged that long ends the pipeline
	// (source_overdue.go); 0 in exactly-once mode, where a timed-out record aborts its transaction instead.
	overdueAfter time.Duration
	remoteIDs    map[string]string // remote topic -> the topic id it had when first seen
	sourceAdmin  *kafka.Admin      // the current pipeline's admin client on the source (shares the consumer's)
	limit        *lograte.Limiter
	taskMetrics  taskMetrics // offset commit time and records in flight (zero without metrics)
	txns         *sourceTxns // exactly-once mode (source_transactions.go); nil without it

	// Capacity advice: where the poll loop's time goes, and the replication clients' last statistics.
	clock                            pipelineClock
	producerFigures, consumerFigures clientFigures

	// consumerStatsOff, producerStatsOff: the replication consumer or producer runs without librdkafka statistics
	// (source_client_stats.go); consumerLags then takes Java's records-lag from sampleStats (nil without metrics).
	consumerStatsOff   bool
	producerStatsOff   bool
	consumerLags       func([]metrics.PartitionLag)
	removeConsumerLags func() // at the run's end
	watermarkNext      int    // the committer's: the next partition whose watermarks sampleStats reads (watermarkWindow)

	noticeMu    sync.Mutex
	notices     map[string]tasks.Notice
	noticeOrder []string    // notice keys, oldest first (may hold keys already cleared)
	hasNotices  atomic.Bool // lets the hot path skip the lock when there is nothing to clear
	dirty       atomic.Bool // notices changed since the committer last published them
}

// sourceReader is what a task asks of its source consumer besides records: the consumer of the Go path
// (*kafka.Consumer) and the C data path's pipeline (cpathReader) both answer it.
type sourceReader interface {
	Watermarks(topic string, partition int32, timeout time.Duration) (low, high int64, err error)
	CachedWatermarks(topic string, partition int32) (low, high int64, err error)
	Seek(topic string, partition int32, offset int64) error
}

// errAbandoned means a record was not handed to the producer because the pipeline is stopping or broken.
var errAbandoned = errors.New("record abandoned")

func (t *sourceTask) prepare(ctx context.Context, env tasks.TaskEnv) (*sourceRun, error) {
	if err := t.requireExactlyOnce(); err != nil {
		return nil, err
	}
	policy, err := mirror.NewReplicationPolicy(t.cfg.Raw)
	if err != nil {
		return nil, err
	}
	assigned, err := mirror.DecodeAssignedPartitions(t.cfg.Raw[mirror.TaskAssignedPartitionsConfig])
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", mirror.TaskAssignedPartitionsConfig, err)
	}
	index, _ := strconv.Atoi(t.cfg.Raw[mirror.TaskIndexConfig])
	r := &sourceRun{
		t: t, env: env, log: t.log,
		sourceAlias: t.cfg.SourceAlias(), targetAlias: t.cfg.TargetAlias(),
		bySource: map[string][]*sourcePartition{}, byRemote: map[string][]*sourcePartition{},
		offsetLagMax: t.cfg.OffsetLagMax,
		pollTimeout:  min(time.Duration(t.cfg.ConsumerPollTimeoutMs)*time.Millisecond, 100*time.Millisecond),
		notices:      map[string]tasks.Notice{},
		remoteIDs:    map[string]string{},
		limit:        lograte.New(30 * time.Second),
	}
	if r.consumerProps, err = t.cfg.ClientProps(clientconfig.ReplicationConsumer, t.id.Connector, index); err != nil {
		return nil, err
	}
	// The consumer never resets a position by itself: a fetch out of range means data the task did not
	// replicate is gone, and the task must say so (outOfRange) before moving on.
	r.resetPolicy = r.consumerProps["auto.offset.reset"]
	switch r.resetPolicy {
	case "smallest", "beginning":
		r.resetPolicy = "earliest"
	case "largest", "end":
		r.resetPolicy = "latest"
	case "earliest", "latest", "error":
	default:
		r.resetPolicy = "earliest"
	}
	r.consumerProps["auto.offset.reset"] = "error"
	if statsOff(assigned, t.consumerStatsMax) {
		r.consumerStatsOff = true
		r.noteConsumerStatsOff(knownPartitions(assigned))
	}
	if statsOff(assigned, t.producerStatsMax) {
		r.producerStatsOff = true
		r.noteProducerStatsOff(knownPartitions(assigned))
	}
	if r.producerProps, err = t.cfg.ClientProps(clientconfig.ReplicationProducer, t.id.Connector, index); err != nil {
		return nil, err
	}
	PipelineDefaults(r.consumerProps, r.producerProps, t.cfg.TasksMax)
	connectors.CapDelivery(r.producerProps, env.Lease().Settle(), r.log)
	if ms, err := strconv.ParseInt(r.producerProps["message.timeout.ms"], 10, 64); err == nil {
		r.stallAfter = time.Duration(ms) * time.Millisecond / 4
		if !t.eos {
			r.overdueAfter = overdueAllowance(time.Duration(ms) * time.Millisecond)
		}
	}
	if !t.eos {
		requireGapless(r.producerProps, r.log)
	}
	if t.eos {
		if r.txns, err = r.newSourceTxns(index); err != nil {
			return nil, err
		}
	}
	if t.cfg.EmitOffsetSyncsEnabled {
		// One producer per connector and worker, shared by its tasks (producerPool): no task index in its
		// client.id, so the tasks' properties are identical.
		if r.syncProps, err = t.cfg.ClientProps(clientconfig.OffsetSyncsProducer, t.id.Connector, -1); err != nil {
			return nil, err
		}
		r.syncTopic = policy.OffsetSyncsTopic(r.targetAlias)
		if t.cfg.OffsetSyncsTopicLocation == mirrorconfig.OffsetSyncsLocationTarget {
			r.syncTopic = policy.OffsetSyncsTopic(r.sourceAlias)
		}
	}

	stored, err := r.storedOffsets(ctx)
	if err != nil {
		return nil, err
	}
	for _, tp := range assigned {
		off, ok := stored[tp]
		if !ok {
			off = storedOffset{offset: -1}
		}
		p := newSourcePartition(tp, policy.FormatRemoteTopic(r.sourceAlias, tp.Topic), off.offset, off.sourceID)
		r.parts = append(r.parts, p)
		r.bySource[tp.Topic] = place(r.bySource[tp.Topic], p)
		r.byRemote[*p.remote] = place(r.byRemote[*p.remote], p)
	}
	if err := r.loadRanges(ctx); err != nil {
		return nil, err
	}
	r.loadSeenEnds(ctx)
	for _, p := range r.parts { // last: nothing fails after, so the run's end removes every series it made
		p.metrics = t.partitionMetrics(r.sourceAlias, r.targetAlias, p)
	}
	r.taskMetrics = t.newTaskMetrics()
	return r, nil
}

// rangeKey names a partition in the offset map.
func (r *sourceRun) rangeKey(p *sourcePartition) tasks.RangeKey {
	return tasks.RangeKey{SourceAlias: r.sourceAlias, TargetAlias: r.targetAlias, Topic: p.tp.Topic, Partition: p.tp.Partition}
}

// loadRanges lets each partition's offset map continue its last stored range, when that range belongs to the
// source incarnation the partition's offset does.
func (r *sourceRun) loadRanges(ctx context.Context) error {
	keys := make([]tasks.RangeKey, len(r.parts))
	for i, p := range r.parts {
		keys[i] = r.rangeKey(p)
	}
	last, err := r.env.LastOffsetRanges(ctx, keys)
	if err != nil {
		return fmt.Errorf("read the offset map: %w", err)
	}
	for i, p := range r.parts {
		l, ok := last[keys[i]]
		if ok {
			p.hasRanges, p.rangesChanged = true, true // stored by an earlier run: the first prune looks at them
		}
		if !ok || (p.sourceID != "" && l.SourceID != "" && l.SourceID != p.sourceID) {
			continue
		}
		p.continueRanges(offsetmap.Range{SourceStart: l.SourceStart, SourceEnd: l.SourceEnd, TargetStart: l.TargetStart, SourceNext: l.SourceNext,
			GapBefore: l.GapBefore, UnmappedBefore: l.UnmappedBefore, Uncommitted: l.Uncommitted})
	}
	if r.readsUncommitted() {
		for _, p := range r.parts {
			p.readUncommitted()
		}
	}
	return nil
}

// Memory budgets of one connector's replication pipelines, divided among its tasks.max tasks, and the bounds of
// each task's share.
const (
	producerQueueBudgetKiB = 64 << 10 // librdkafka producer queues (Java: buffer.memory per producer)
	prefetchBudgetKiB      = 32 << 10 // consumer prefetch queues
	producerQueueMinKiB    = 8 << 10
	producerQueueMaxKiB    = 32 << 10 // Java's buffer.memory default
	prefetchMinKiB         = 4 << 10
	prefetchMaxKiB         = 16 << 10
)

// PipelineDefaults bounds a task's memory where the user said nothing: librdkafka would otherwise let a
// producer queue grow to 1 GiB and each consumer prefetch 64 MiB. A connector's tasks share a budget of 64
// MiB of producer queue and 32 MiB of prefetch, so that RSS does not grow with tasks.max: each task gets its
// share, at most Java's buffer.memory default (32 MiB) and 16 MiB of prefetch (one or two tasks), at least
// 8 MiB and 4 MiB (eight tasks and more; the benchmark measured no throughput lost there, and 30% less RSS
// than with 32 and 16 MiB per task). The producer queue has no message-count cap, so bytes alone bound it as
// in Java. When the prefetch queue is full the consumer retries after 10 ms rather than librdkafka's 1 s,
// which would stall the pipeline whenever the target is a little slower than the source. The benchmark's bare
// pipe calls this too, so that both run with the same client settings.
func PipelineDefaults(consumer, producer map[string]string, tasks int) {
	tasks = max(tasks, 1)
	setDefault(producer, strconv.Itoa(min(max(producerQueueBudgetKiB/tasks, producerQueueMinKiB), producerQueueMaxKiB)), "queue.buffering.max.kbytes")
	setDefault(producer, "0", "queue.buffering.max.messages")
	setDefault(consumer, strconv.Itoa(min(max(prefetchBudgetKiB/tasks, prefetchMinKiB), prefetchMaxKiB)), "queued.max.messages.kbytes")
	setDefault(consumer, "10", "fetch.queue.backoff.ms")
}

// setDefault sets props[names[0]] to value unless the user set it under any of its librdkafka names.
func setDefault(props map[string]string, value string, names ...string) {
	for _, n := range names {
		if _, ok := props[n]; ok {
			return
		}
	}
	props[names[0]] = value
}

func place(s []*sourcePartition, p *sourcePartition) []*sourcePartition {
	for int(p.tp.Partition) >= len(s) {
		s = append(s, nil)
	}
	s[p.tp.Partition] = p
	return s
}

func lookup(m map[string][]*sourcePartition, topic string, partition int32) *sourcePartition {
	s := m[topic]
	if partition < 0 || int(partition) >= len(s) {
		return nil
	}
	return s[partition]
}

// storedOffset is a partition's committed offset and the source incarnation it belongs to.
type storedOffset struct {
	offset   int64
	sourceID string
}

// storedOffsets reads the connector's committed offsets for this flow's source cluster.
func (r *sourceRun) storedOffsets(ctx context.Context) (map[mirror.TopicPartition]storedOffset, error) {
	all, err := r.env.ReadOffsets(ctx)
	if err != nil {
		return nil, fmt.Errorf("read stored offsets: %w", err)
	}
	out := make(map[mirror.TopicPartition]storedOffset, len(all))
	for _, o := range all {
		cluster, _ := o.Partition["cluster"].(string)
		topic, _ := o.Partition["topic"].(string)
		part, okP := jsonInt(o.Partition["partition"])
		off, okO := jsonInt(o.Offset["offset"])
		if cluster != r.sourceAlias || topic == "" || !okP || !okO {
			continue
		}
		out[mirror.TopicPartition{Topic: topic, Partition: int32(part)}] = storedOffset{offset: off, sourceID: o.SourceID}
	}
	return out, nil
}

// replicate runs one pipeline — consumer, producer, committer — until ctx is done (nil), the pipeline breaks
// (*pipelineError), source topics were re-created (errRecreated), the lease was revoked (errLeaseRevoked) or
// the task must fail (any other error). It always commits what was acknowledged.
func (r *sourceRun) replicate(ctx context.Context) (err error) {
	if r.usesCPath() {
		return r.replicateC(ctx)
	}
	r.failure.Store(nil)
	r.recreated.Store(nil)
	consumerStats, removeConsumerStats := r.t.clientStats(clientconfig.ReplicationConsumer, r.consumerProps, r.statsEvery(clientconfig.ReplicationConsumer), r.consumerFigures.record)
	defer removeConsumerStats() // after the consumer closed: no statistics come later
	consumer, err := kafka.NewConsumer(r.consumerProps, r.log, consumerStats...)
	if err != nil {
		return err
	}
	defer consumer.Close()
	sourceAdmin, err := consumer.Admin()
	if err != nil {
		return err
	}
	defer sourceAdmin.Close()
	sourceAdmin.Timeout = taskAdminTimeout
	r.sourceAdmin = sourceAdmin

	syncs, err := r.startSyncs()
	if err != nil {
		return err
	}
	if syncs != nil {
		defer syncs.close()
	}
	producerStats, removeProducerStats := r.t.clientStats(clientconfig.ReplicationProducer, r.producerProps, r.statsEvery(clientconfig.ReplicationProducer), r.producerFigures.record)
	defer removeProducerStats()
	producer, err := kafka.NewProducer(r.producerProps, r.log, func(d kafka.Delivery) { r.delivered(d, syncs) }, producerStats...)
	if err != nil {
		return err
	}
	r.producer.Store(producer)
	defer r.producer.Store(nil)
	r.stalled.Store(false)
	r.stall = stallClock{} // the committer that owns it starts below; the notice stays until acks say otherwise
	targetAdmin, err := producer.Admin()
	if err != nil {
		producer.Close()
		return err
	}
	targetAdmin.Timeout = taskAdminTimeout
	closeProducer := func() {
		targetAdmin.Close()
		producer.Close()
	}
	r.awaitRemotesWritable(ctx, targetAdmin)
	if r.txns != nil {
		if err := r.txns.startPipeline(ctx, r, producer, targetAdmin, syncs); err != nil {
			closeProducer()
			return err
		}
	}

	starts, err := r.startOffsets(ctx, sourceAdmin)
	if err != nil {
		closeProducer()
		return err
	}
	for i, p := range r.parts {
		p.startAt = starts[i].Offset
	}
	if err := consumer.Assign(starts); err != nil {
		closeProducer()
		return err
	}
	r.log.Info("replicating", "partitions", len(r.parts), "source", r.sourceAlias, "target", r.targetAlias, "data_path", "go")
	if r.log.Enabled(ctx, slog.LevelDebug) {
		for _, s := range starts {
			r.log.Debug("partition starts", "topic", s.Topic, "partition", s.Partition, "offset", s.Offset)
		}
	}

	commitCtx, stopCommitter := context.WithCancel(context.WithoutCancel(ctx))
	committer := make(chan error, 1)
	go func() { committer <- r.committer(commitCtx, syncs, consumer) }()
	watchCtx, stopWatching := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		r.watchIdentities(watchCtx, sourceAdmin, targetAdmin, consumer)
	}()
	overdueWatched := make(chan struct{})
	go func() {
		defer close(overdueWatched)
		r.watchOverdue(watchCtx, producer)
	}()

	loopErr, committerErr, committerDone := r.pollLoop(ctx, consumer, producer, committer)
	stopWatching()
	<-watched
	<-overdueWatched

	// Soft stop: let everything in flight reach the target (or fail), then commit it. The stop budget ends the
	// wait; a revoked lease ends it at once, dropping what is queued.
	lease := r.env.Lease()
	flushCtx, cancelFlush := context.WithCancel(r.env.StopContext())
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
	// After a delivery failure nothing the producer holds may be written: the next pipeline sends it again
	// after the failed record (source_overdue.go). A failed or broken producer delivers nothing more: waiting
	// would keep a failed task RUNNING until the stop budget or the delivery timeout ran out (records queued
	// before a failed authentication was known), as the C path found (replicateC).
	if left > 0 {
		if err := producer.Purge(true); err != nil {
			r.log.Warn("purge the producer", "error", err)
		}
		producer.Flush(context.Background()) // purged records report at once
		r.log.Warn("records still unacknowledged at stop were dropped; they will be replicated again", "records", left)
	}
	cancelFlush()
	if r.txns != nil {
		r.txns.endPipeline(ctx, r, producer, loopErr == nil && left == 0)
	}
	closeProducer()
	stopCommitter()
	if !committerDone {
		committerErr = <-committer
	}
	return r.settle(ctx, loopErr, committerErr, syncs)
}

// settle ends a pipeline whose producer has closed and whose committer has stopped: it sends the last offset
// syncs, commits what was acknowledged, and returns what ended the pipeline (see replicate).
func (r *sourceRun) settle(ctx context.Context, loopErr, committerErr error, syncs *offsetSyncer) error {
	finalCtx, cancelFinal := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancelFinal()
	if syncs != nil {
		r.promoteSyncs(syncs)
		syncs.flush(finalCtx)
	}
	if err := r.commit(finalCtx); err != nil && committerErr == nil && !errors.Is(err, context.Canceled) {
		committerErr = err
	}
	if loopErr != nil {
		if f := r.failure.Load(); f != nil && kafka.IsGapless(loopErr) {
			return *f // the producer stopped for the failed delivery, which says why
		}
		return loopErr
	}
	if check := r.recreated.Load(); check != nil {
		r.restartRecreated(check.recreated, false)
		return errRecreated
	}
	if f := r.failure.Load(); f != nil {
		return *f
	}
	if errors.Is(committerErr, tasks.ErrFenced) {
		return committerErr
	}
	if committerErr != nil && !errors.Is(committerErr, context.Canceled) {
		return &pipelineError{err: committerErr}
	}
	return nil
}

// loopClient is what loopEnds asks of the target producer of either data path.
type loopClient interface {
	Fatal() error
	AuthFailure() error
}

// loopEnds tells whether a poll loop (pollLoop, or the C path's) must stop before its next step, and with what:
// a delivery failure or re-created topics (the replicate function reports them once everything is flushed), a
// fatal producer, a failed authentication, or a committer that stopped (whose result it has then taken).
func (r *sourceRun) loopEnds(producer loopClient, committer <-chan error) (stop bool, loopErr, committerErr error, committerDone bool) {
	if r.failure.Load() != nil || r.recreated.Load() != nil {
		return true, nil, nil, false
	}
	if err := producer.Fatal(); err != nil {
		return true, &pipelineError{err: fmt.Errorf("target producer: %w", err)}, nil, false
	}
	if err := producer.AuthFailure(); err != nil {
		// Not a pipeline restart: new clients with the same credentials fail the same way.
		return true, fmt.Errorf("authenticate to target cluster %s: %w", r.targetAlias, err), nil, false
	}
	select {
	case err := <-committer:
		if err == nil {
			err = errors.New("committer stopped")
		}
		return true, err, err, true
	default:
	}
	return false, nil, nil, false
}

// startSyncs makes the offset-sync producer when the connector emits syncs (nil otherwise; the caller closes
// it).
func (r *sourceRun) startSyncs() (*offsetSyncer, error) {
	if r.syncTopic == "" {
		return nil, nil
	}
	syncs, err := newOffsetSyncer(r.t.syncs, r.syncProps, r.syncTopic, r.log)
	if err != nil {
		return nil, err
	}
	for _, p := range r.parts {
		p.withOffsetSyncs(r.offsetLagMax)
	}
	return syncs, nil
}

// startOffsets is where each partition of a new pipeline of either data path starts: after its last
// acknowledged record, or where auto.offset.reset says. The ids of the source topics are checked first, at
// the last moment before the consumer is assigned: a topic re-created since its offsets were acknowledged
// starts over (they belong to the deleted topic), and the check must not precede a start that waited for
// the target — librdkafka would go on reading the new topic at the old topic's offsets as if nothing had
// happened. A source that cannot answer yet is no reason not to start: the identity watch checks again.
func (r *sourceRun) startOffsets(ctx context.Context, sourceAdmin *kafka.Admin) ([]kafka.Start, error) {
	if check, err := r.checkSources(ctx, sourceAdmin, nil, true); err != nil {
		r.limit.Log(ctx, r.log, slog.LevelWarn, "identity-source", "checking source topic ids failed", "error", err)
	} else {
		r.restartRecreated(check.recreated, true)
	}
	starts := make([]kafka.Start, 0, len(r.parts))
	for _, p := range r.parts {
		acked := p.reset()
		start := kafka.Start{Topic: p.tp.Topic, Partition: p.tp.Partition, Offset: acked + 1}
		if acked < 0 {
			switch r.resetPolicy {
			case "latest":
				start.Offset = kafka.OffsetEnd
			case "error":
				return nil, fmt.Errorf("%s topic %s partition %d has no stored offset and the consumer's auto.offset.reset is none: set an offset with PATCH /connectors/%s/offsets",
					r.sourceAlias, p.tp.Topic, p.tp.Partition, r.t.id.Connector)
			default:
				start.Offset = kafka.OffsetBeginning
			}
		}
		starts = append(starts, start)
	}
	r.resolveBeginnings(ctx, sourceAdmin, starts)
	return starts, nil
}

// pollLoop moves records from the consumer to the producer until ctx is done or something breaks. It hands a
// record over only while the run's lease is valid. When it returns because the committer stopped, it returns
// the committer's result too (committerDone), which it has taken from the channel.
func (r *sourceRun) pollLoop(ctx context.Context, consumer *kafka.Consumer, producer *kafka.Producer, committer <-chan error) (loopErr, committerErr error, committerDone bool) {
	lease := r.env.Lease()
	var lastPositions time.Time
	for ctx.Err() == nil {
		if stop, loopErr, committerErr, committerDone := r.loopEnds(producer, committer); stop {
			return loopErr, committerErr, committerDone
		}
		if !lease.Valid() {
			start := time.Now()
			err := r.awaitLease(ctx, lease, producer)
			r.clock.targetWait(time.Since(start))
			if err != nil {
				return err, nil, false
			}
			continue
		}
		if r.stalled.Load() {
			// The target has acknowledged nothing for a while: queueing more now would only give the producer
			// records that outlive the stuck ones, and if those time out, the newer ones would land first.
			time.Sleep(10 * time.Millisecond)
			r.clock.targetWait(10 * time.Millisecond)
			continue
		}

		pollStart, timed := r.clock.pollStart()
		wait := r.pollWait()
		rec, ok, err := consumer.Poll(wait)
		r.clock.pollEnd(pollStart, timed, ok, wait)
		if err != nil {
			if err := r.consumeError(ctx, consumer, err); err != nil {
				return err, nil, false
			}
			continue
		}
		if !ok {
			if r.txns != nil {
				if err := r.txns.idle(ctx, r, producer); err != nil {
					return err, nil, false
				}
			}
			if now := time.Now(); now.Sub(lastPositions) >= sourcePositionInterval {
				lastPositions = now
				r.readPositions(consumer)
			}
			continue
		}
		p := lookup(r.bySource, rec.Topic(), rec.Partition())
		if p == nil {
			continue // not ours (cannot happen with assign, but never forward a stray record)
		}
		r.clearNotice("source")
		off, ts, valueBytes := rec.Offset(), rec.Timestamp(), len(rec.Value())
		if p.next < 0 && r.firstRecord(consumer, p, off) {
			continue // read again from the start
		}
		if r.txns != nil {
			if err := r.txns.beforeForward(producer); err != nil {
				return err, nil, false
			}
		}
		p.next = off + 1
		p.forwarded(off, unixMilli(ts), rec.Size(), valueBytes)
		if err := r.forward(ctx, producer, rec, p); err != nil {
			p.unforward()
			if errors.Is(err, errAbandoned) {
				return nil, nil, false
			}
			return err, nil, false
		}
		p.metrics.fetched(valueBytes, ts)
		if r.txns != nil {
			if err := r.txns.forwarded(ctx, r, producer, p, off); err != nil {
				return err, nil, false
			}
		}
		if !lease.Valid() {
			// The lease ended while the record was being handed over (the process stalled in between): it may
			// have been queued after the lease ended, so nothing queued may be sent now, and the pipeline ends.
			r.leaseLapsed(p, off, producer)
		}
	}
	return nil, nil, false
}

// leaseLapsed ends the pipeline because its lease ended while the record at offset of p was being handed to
// the producer, dropping what the producer holds.
func (r *sourceRun) leaseLapsed(p *sourcePartition, offset int64, producer purger) {
	r.halt(&pipelineError{err: fmt.Errorf("replicate %s topic %s partition %d offset %d to %s topic %s: %w",
		r.sourceAlias, p.tp.Topic, p.tp.Partition, offset, r.targetAlias, *p.remote, errLeaseLapsed)}, producer)
}

// halt ends the pipeline with err, if nothing ended it before, and drops everything its producer holds
// (nil: nothing to drop yet): records behind a failed or overdue one must not reach the target before it,
// since the next pipeline sends it again, and neither may a record produced after the purge
// (source_overdue.go). It reports whether err is the pipeline's failure.
func (r *sourceRun) halt(err error, producer purger) bool {
	r.produceMu.Lock()
	defer r.produceMu.Unlock()
	if !r.failure.CompareAndSwap(nil, &err) {
		return false
	}
	if producer != nil {
		if err := producer.Purge(true); err != nil {
			r.log.Warn("purge the producer", "error", err)
		}
	}
	return true
}

// How long a pipeline start waits for remote partitions that cannot take writes yet (see awaitRemotesWritable).
const remoteWritableWait = 5 * time.Second

// awaitRemotesWritable waits, up to remoteWritableWait, until the leader of every remote partition answers for
// it. A remote topic the connector has just created exists in the target's metadata before its leader has
// created the logs (seconds, on a busy broker), and writing to a partition in that moment is how a record can
// be lost: the producer's first request is refused, its answer comes too late, a later request is accepted
// as the producer's first, and librdkafka then reports the earlier records written (kafka.Delivery.Unconfirmed).
// The task would send them again, after the later ones; waiting here keeps their order. A partition still not
// writable after the wait is left to the producer's retries.
func (r *sourceRun) awaitRemotesWritable(ctx context.Context, admin *kafka.Admin) {
	ids := make([]kafka.PartitionID, 0, len(r.parts))
	for _, p := range r.parts {
		ids = append(ids, kafka.PartitionID{Topic: *p.remote, Partition: p.tp.Partition})
	}
	deadline := time.Now().Add(remoteWritableWait)
	backoff := 50 * time.Millisecond
	for {
		waitCtx, cancel := context.WithDeadline(ctx, deadline)
		logs, failed, err := admin.LogOffsets(waitCtx, ids, false, false)
		cancel()
		if err == nil && len(failed) == 0 && len(logs) == len(ids) {
			return
		}
		if ctx.Err() != nil || time.Now().Add(backoff).After(deadline) {
			r.log.Info("remote partitions not all writable yet; replicating anyway (the producer retries them)",
				"partitions", len(ids), "answered", len(logs), "waited", remoteWritableWait)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

// resolveBeginnings turns the logical start "beginning" of starts into the partitions' log start offsets, in
// one batched request, so that each partition starts at an offset the task knows: the first record the consumer
// returns can then be checked against it (firstRecord), and no logical-offset lookup is
// left to the consumer, whose failure it would report as an auto.offset.reset error with the partition
// stopped. A partition the source cannot answer for keeps the logical start.
func (r *sourceRun) resolveBeginnings(ctx context.Context, admin *kafka.Admin, starts []kafka.Start) {
	var fromBeginning []kafka.PartitionID
	for _, s := range starts {
		if s.Offset == kafka.OffsetBeginning {
			fromBeginning = append(fromBeginning, kafka.PartitionID{Topic: s.Topic, Partition: s.Partition})
		}
	}
	if len(fromBeginning) == 0 {
		return
	}
	logs, _, err := admin.LogOffsets(ctx, fromBeginning, r.consumerProps["isolation.level"] == "read_committed", true)
	if err != nil {
		r.limit.Log(ctx, r.log, slog.LevelWarn, "log-starts", "reading the log start offsets of new partitions failed; the consumer looks them up itself", "error", err)
		return
	}
	for i, s := range starts {
		if s.Offset != kafka.OffsetBeginning {
			continue
		}
		if lo, ok := logs[kafka.PartitionID{Topic: s.Topic, Partition: s.Partition}]; ok && lo.Start >= 0 {
			starts[i].Offset = lo.Start
		}
	}
}

// firstRecord checks a partition's first record of the pipeline against where the pipeline started the
// partition. Compaction, transaction markers and aborted transactions legitimately put it past the start;
// anything else means the consumer skipped records, which nothing downstream could notice: the offsets after
// them are acknowledged as usual. So the first time in a pipeline, the task drops the record
// and reads the partition again from its start. If the re-read's first record is the same one, the records in
// between are not in the log for this consumer, and it goes on; if it is an earlier one, the consumer had
// skipped records, which the log now says. It returns whether the record was dropped.
func (r *sourceRun) firstRecord(consumer *kafka.Consumer, p *sourcePartition, off int64) bool {
	want := p.startAt
	if want == kafka.OffsetBeginning {
		low, _, err := consumer.CachedWatermarks(p.tp.Topic, p.tp.Partition)
		if err != nil || low < 0 {
			return false
		}
		want = low
	}
	if want < 0 {
		return false
	}
	if p.firstPast >= 0 {
		if off < p.firstPast {
			r.log.Warn("the consumer had skipped records at the partition's start: reading it again returned them",
				"topic", p.tp.Topic, "partition", p.tp.Partition, "start", want, "first_read", p.firstPast, "first_reread", off)
		}
		return false
	}
	if off <= want {
		return false
	}
	if err := consumer.Seek(p.tp.Topic, p.tp.Partition, want); err != nil {
		r.log.Warn("first record of the partition is past its start position, and seeking back failed: continuing from it",
			"topic", p.tp.Topic, "partition", p.tp.Partition, "start", want, "first", off, "error", err)
		return false
	}
	p.firstPast = off
	r.log.Debug("first record of the partition is past its start position: reading the partition again from its start",
		"topic", p.tp.Topic, "partition", p.tp.Partition, "start", want, "first", off)
	return true
}

// How often an idle poll loop reads the consumer's positions for the offset map: a group committed past a
// trailing transaction marker translates exactly once the task has read past it.
const sourcePositionInterval = time.Second

// readPositions hands each partition the consumer's position. The poll loop calls it when the consumer had
// nothing to return, so every record below a position has been forwarded already.
func (r *sourceRun) readPositions(consumer *kafka.Consumer) {
	starts := make([]kafka.Start, len(r.parts))
	for i, p := range r.parts {
		starts[i] = kafka.Start{Topic: p.tp.Topic, Partition: p.tp.Partition}
	}
	pos, err := consumer.Position(starts)
	if err != nil {
		return // a later idle moment tries again; nothing depends on it but exactness past markers
	}
	for i, p := range r.parts {
		if next, ok := pos[starts[i]]; ok {
			p.readThrough(next)
		}
	}
}

// awaitLease pauses replication while the lease is not valid: the worker's heartbeats are not being
// confirmed, so its units may move soon. It returns nil once the lease is valid again, and errLeaseRevoked
// (after dropping everything queued and in flight) if it is revoked.
func (r *sourceRun) awaitLease(ctx context.Context, lease tasks.Lease, producer purger) error {
	r.log.Warn("writes paused: this worker's heartbeats have not been confirmed for a while (is the database reachable?)")
	r.notice("lease", tasks.Notice{Kind: NoticeWritesPaused, Message: "writes paused: this worker's heartbeats to the database have not been confirmed for a while; replication resumes when they are"})
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-lease.Revoked():
			if err := producer.Purge(true); err != nil {
				r.log.Warn("purge the producer", "error", err)
			}
			r.log.Warn("this run lost its unit; stopping without writing anything more")
			return errLeaseRevoked
		case <-tick.C:
			if lease.Valid() {
				r.clearNotice("lease")
				r.log.Info("writes resumed: heartbeats are confirmed again")
				return nil
			}
		}
	}
}

// purger drops what a replication producer holds: *kafka.Producer, and the C data path's pipeline.
type purger interface{ Purge(inFlight bool) error }

// forward hands one record to the producer, waiting while librdkafka's queue is full.
func (r *sourceRun) forward(ctx context.Context, producer *kafka.Producer, rec kafka.Record, p *sourcePartition) error {
	offset, size := rec.Offset(), len(rec.Value())
	var waitStart time.Time // set once the queue was found full
	for {
		r.produceMu.Lock()
		if r.failure.Load() != nil {
			r.produceMu.Unlock()
			return errAbandoned
		}
		err := producer.Forward(rec, p.remote)
		r.produceMu.Unlock()
		if !waitStart.IsZero() {
			r.clock.targetWait(time.Since(waitStart))
			waitStart = time.Now()
		}
		if err == nil {
			return nil
		}
		if !errors.Is(err, kafka.ErrQueueFull) {
			if f := producer.Fatal(); f != nil && kafka.IsFatal(err) {
				err = f // "Local: Fatal error" says nothing; the producer's fatal error says why (a fence, say)
			}
			return r.refusedError(p, offset, size, err)
		}
		if r.failure.Load() != nil || ctx.Err() != nil {
			return errAbandoned
		}
		// The queue drains as deliveries arrive on the producer's own goroutine.
		if waitStart.IsZero() {
			waitStart = time.Now()
		}
		time.Sleep(time.Millisecond)
	}
}

// deliveryFailed records the pipeline's first delivery failure: a failed report (deliveryErr) or one that
// came without a target offset before any confirmed one (deliveryErr nil), of the record at upstream, and
// drops what the producer holds (halt).
func (r *sourceRun) deliveryFailed(p *sourcePartition, upstream int64, deliveryErr error, producer purger) {
	var err error
	if deliveryErr != nil {
		err = fmt.Errorf("replicate %s topic %s partition %d offset %d to %s topic %s: %w%s",
			r.sourceAlias, p.tp.Topic, p.tp.Partition, upstream, r.targetAlias, *p.remote, deliveryErr, r.refusedByBrokerAdvice(p, deliveryErr))
		if kafka.IsRetriable(deliveryErr) || kafka.IsPurged(deliveryErr) || kafka.IsFatal(deliveryErr) {
			err = &pipelineError{err: err}
		}
	} else {
		// No delivery of the partition from this producer has been confirmed yet: the broker may have had no
		// state for the producer and taken the later request as its first. Counting this one as written would
		// then lose it; the pipeline sends it again instead, which at worst duplicates it.
		err = &pipelineError{err: fmt.Errorf("replicate %s topic %s partition %d offset %d to %s topic %s: %w",
			r.sourceAlias, p.tp.Topic, p.tp.Partition, upstream, r.targetAlias, *p.remote, errUnconfirmedDelivery)}
	}
	r.halt(err, producer)
}

// delivered handles one delivery report of the replication producer.
func (r *sourceRun) delivered(d kafka.Delivery, syncs *offsetSyncer) {
	if r.txns != nil && r.txns.delivered(r, d) {
		return
	}
	p := lookup(r.byRemote, d.Topic, d.Partition)
	if p == nil {
		r.log.Error("delivery report for a partition this task does not replicate", "topic", d.Topic, "partition", d.Partition)
		return
	}
	if d.Err == nil && d.Unconfirmed && r.txns == nil {
		// When the partition already had a delivery with an offset from this producer, the broker holds the
		// producer's state and would have refused the later request had this one not been written: the
		// implicit acknowledgement is true. Its target offset is unknown, so the offset map leaves it out. (In
		// exactly-once mode the transaction is aborted instead: its records count only when it commits.)
		if rec, ok := p.ackUnmapped(); ok {
			p.metrics.acked(rec.ts, rec.size, d.At)
			return
		}
	}
	if d.Err != nil || d.Unconfirmed {
		upstream := p.fail()
		var pr purger
		cause := d.Err
		if kp := r.producer.Load(); kp != nil {
			pr = kp
			if cause != nil && kafka.IsFatal(cause) && kp.Fatal() != nil {
				cause = kp.Fatal() // why the producer is unusable; a new pipeline's producer replaces it
			}
		}
		r.deliveryFailed(p, upstream, cause, pr)
		return
	}
	acked, rec, sync, send := p.ack(d.Offset)
	if acked {
		p.metrics.acked(rec.ts, rec.size, d.At)
	}
	if send {
		syncs.send(sync)
	}
}

// consumeError decides what a consumer error means: nil to go on, or the error that ends the pipeline.
func (r *sourceRun) consumeError(ctx context.Context, consumer sourceReader, err error) error {
	var pe *kafka.PartitionError
	if errors.As(err, &pe) {
		switch {
		case kafka.IsOffsetOutOfRange(pe.Err):
			return r.outOfRange(ctx, consumer, pe)
		case kafka.IsUnknownTopic(pe.Err):
			r.notice("topic:"+pe.Topic, tasks.Notice{Kind: NoticeSourceTopicMissing, Topic: pe.Topic,
				Message: fmt.Sprintf("source topic %s no longer exists on %s; its partitions leave this task at the connector's next topic refresh", pe.Topic, r.sourceAlias)})
			return nil
		case kafka.IsAuthorization(pe.Err):
			return fmt.Errorf("read %s topic %s: %w", r.sourceAlias, pe.Topic, pe.Err)
		}
		r.limit.Log(ctx, r.log, slog.LevelWarn, "consume:"+pe.Topic, "consumer error", "topic", pe.Topic, "partition", pe.Partition, "error", pe.Err)
		return nil
	}
	if kafka.IsOffsetOutOfRange(err) {
		return r.outOfRange(ctx, consumer, nil)
	}
	if kafka.IsAuthorization(err) {
		return fmt.Errorf("read from %s: %w", r.sourceAlias, err)
	}
	if kafka.IsAuthentication(err) {
		return fmt.Errorf("authenticate to source cluster %s: %w", r.sourceAlias, err)
	}
	if kafka.IsUnknownTopic(err) {
		// A partition the consumer no longer finds, not an unreachable cluster: the identity watch names the
		// partitions whose topic is gone within sourceIdentityInterval.
		r.limit.Log(ctx, r.log, slog.LevelWarn, "source-unknown", "a source partition is unknown to the consumer (its topic deleted?)", "cluster", r.sourceAlias, "error", err)
		return nil
	}
	if kafka.IsRetriable(err) {
		r.limit.Log(ctx, r.log, slog.LevelWarn, "source", "source cluster error, retrying", "cluster", r.sourceAlias, "error", err)
		r.notice("source", tasks.Notice{Kind: NoticeSourceUnreachable, Message: fmt.Sprintf("source cluster %s: %v (retrying)", r.sourceAlias, err)})
		return nil
	}
	r.limit.Log(ctx, r.log, slog.LevelWarn, "consume", "consumer error", "error", err)
	return nil
}

// outOfRange handles a fetch position that is no longer in the source log. librdkafka does not always say
// which partition it was (the error can arrive as a client-wide event), so every assigned partition whose
// next offset lies outside its log is handled. The records in between are lost to replication: the task says
// so in its status and the log, then continues where the consumer's auto.offset.reset says (MM2's default:
// earliest), or fails when it is none. A position out of range is also how a re-created topic shows when its
// new log is shorter than the old one: the topic id tells, and then the pipeline starts the topic over instead.
func (r *sourceRun) outOfRange(ctx context.Context, consumer sourceReader, only *kafka.PartitionError) error {
	if check, err := r.checkSources(ctx, r.sourceAdmin, nil, false); err == nil && len(check.recreated) > 0 {
		r.recreated.Store(&check)
		return nil
	}
	for _, p := range r.parts {
		if only != nil && (p.tp.Topic != only.Topic || p.tp.Partition != only.Partition) {
			continue
		}
		want := p.next
		if want < 0 {
			acked, _ := p.progress()
			switch {
			case acked >= 0:
				want = acked + 1
			case p.startAt >= 0:
				want = p.startAt // the log start it was assigned at: retention moved past it before the first fetch
			default:
				continue // started from the log's logical beginning or end: nothing can be missing
			}
		}
		low, high, err := consumer.Watermarks(p.tp.Topic, p.tp.Partition, 10*time.Second)
		if err != nil {
			if kafka.IsUnknownTopic(err) {
				continue
			}
			return &pipelineError{err: err}
		}
		if want >= low && want <= high {
			continue
		}
		if err := r.skipGap(consumer, p, want, low, high); err != nil {
			return err
		}
	}
	return nil
}

func (r *sourceRun) skipGap(consumer sourceReader, p *sourcePartition, want, low, high int64) error {
	var what string
	kind, first, last := NoticeDataNotReplicated, want, low-1
	if want < low {
		what = fmt.Sprintf("records %d to %d of %s topic %s partition %d were deleted (retention) before they were replicated",
			want, low-1, r.sourceAlias, p.tp.Topic, p.tp.Partition)
	} else {
		kind, first, last = NoticeSourceTruncated, high, want-1
		what = fmt.Sprintf("%s topic %s partition %d now ends at offset %d, before the next offset to replicate (%d): the log was truncated (an unclean leader election?)",
			r.sourceAlias, p.tp.Topic, p.tp.Partition, high, want)
	}
	if r.resetPolicy == "error" {
		return fmt.Errorf("%s; the consumer's auto.offset.reset is none, so the task stops: move the connector's offset with PATCH /connectors/%s/offsets to continue", what, r.t.id.Connector)
	}
	next := low
	if r.resetPolicy == "latest" {
		next = high
	}
	msg := fmt.Sprintf("DATA NOT REPLICATED: %s; continuing at offset %d (auto.offset.reset=%s)", what, next, r.resetPolicy)
	r.log.Error(msg, "topic", p.tp.Topic, "partition", p.tp.Partition)
	r.notice(fmt.Sprintf("gap:%s-%d:%d", p.tp.Topic, p.tp.Partition, want), partitionNotice(kind, msg, p.tp.Topic, p.tp.Partition, first, last))
	if err := consumer.Seek(p.tp.Topic, p.tp.Partition, next); err != nil {
		return &pipelineError{err: err}
	}
	p.next = next
	return nil
}

// committer commits acknowledged offsets every sourceCommitInterval, promotes delayed offset syncs every
// sourceSyncPromoteInterval, and samples and publishes the partitions' stats (against the end offsets consumer
// saw), until ctx is done or a commit or publication is fenced.
func (r *sourceRun) committer(ctx context.Context, syncs *offsetSyncer, consumer sourceReader) error {
	tick := time.NewTicker(sourceCommitInterval)
	defer tick.Stop()
	promote := time.NewTicker(sourceSyncPromoteInterval)
	defer promote.Stop()
	prune := time.NewTicker(sourcePruneInterval)
	defer prune.Stop()
	stats := time.NewTicker(sourceStatsInterval)
	defer stats.Stop()
	samples := 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-stats.C:
			// The first sample is published at once: a pipeline that just started shows its lag within a second.
			publish := samples%int(sourcePublishInterval/sourceStatsInterval) == 0
			samples++
			if err := r.statsTick(ctx, consumer, now, publish); err != nil {
				return err
			}
		case <-promote.C:
			if syncs != nil {
				r.promoteSyncs(syncs)
			}
		case <-prune.C:
			r.pruneRanges(ctx)
		case now := <-tick.C:
			r.checkStall(now)
			r.sampleInFlight(now)
			began := time.Now()
			if err := r.commit(ctx); err != nil {
				if errors.Is(err, tasks.ErrFenced) || ctx.Err() != nil {
					return err
				}
				r.limit.Log(ctx, r.log, slog.LevelWarn, "commit", "commit offsets failed, will retry", "error", err)
				continue
			}
			r.taskMetrics.committed(began) // only successful rounds, as Connect times them
			r.limit.Resolved(ctx, r.log, "commit", "committing offsets works again")
		}
	}
}

// How often a source task prunes its partitions' offset maps below their log start offsets.
const sourcePruneInterval = time.Minute

// pruneRanges bounds the offset map: no group can be positioned below a partition's log start offset. It
// prunes only partitions where that can delete something (needsPrune): one statement per partition, every
// minute, for 10,000 partitions was a steady load on PostgreSQL for idle partitions.
func (r *sourceRun) pruneRanges(ctx context.Context) {
	for _, p := range r.parts {
		p.mu.Lock()
		logStart := p.logStart
		p.mu.Unlock()
		if !p.needsPrune(logStart) {
			continue
		}
		if err := r.env.PruneOffsetRanges(ctx, r.rangeKey(p), logStart, offsetmap.MaxRangesPerPartition); err != nil {
			r.limit.Log(ctx, r.log, slog.LevelWarn, "prune", "pruning the offset map failed, will retry", "error", err)
			return
		}
		p.pruned(logStart)
	}
}

// promoteSyncs sends every partition's delayed offset sync, so that quiet partitions get an exact sync for
// their last record (MM2 promotes delayed syncs on each offset flush).
func (r *sourceRun) promoteSyncs(syncs *offsetSyncer) {
	for _, p := range r.parts {
		if sync, ok := p.delayedSync(); ok {
			syncs.send(sync)
		}
	}
}

// commit stores every partition's acknowledged progress, records newly active topics, and publishes the
// task's notices when they changed.
func (r *sourceRun) commit(ctx context.Context) error {
	var offsets []tasks.Offset
	var topics []string
	var advanced, newlyActive []*sourcePartition
	var acks []int64
	var ranges []tasks.OffsetRange
	var snaps []offsetmap.Snapshot
	var mapped []*sourcePartition
	for _, p := range r.parts {
		acked, delivered, snap := p.progressWithRanges()
		id, idDirty := p.identity()
		if len(snap.Ranges) > 0 {
			k := r.rangeKey(p)
			for _, rg := range snap.Ranges {
				ranges = append(ranges, tasks.OffsetRange{RangeKey: k, SourceID: id, SourceStart: rg.SourceStart, SourceEnd: rg.SourceEnd,
					TargetStart: rg.TargetStart, SourceNext: rg.SourceNext, GapBefore: rg.GapBefore, UnmappedBefore: rg.UnmappedBefore, Uncommitted: rg.Uncommitted, Rewind: rg.Rewind})
			}
			snaps, mapped = append(snaps, snap), append(mapped, p)
		}
		if acked > p.committed || (idDirty && acked >= 0) {
			offsets = append(offsets, tasks.Offset{
				Partition: map[string]any{"cluster": r.sourceAlias, "topic": p.tp.Topic, "partition": p.tp.Partition},
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
		if err := r.env.CommitProgress(ctx, offsets, ranges); err != nil {
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
		if err := r.env.RecordTopics(ctx, topics); err != nil {
			return err
		}
		for _, p := range newlyActive {
			p.tracked = true
		}
	}
	if r.dirty.Swap(false) {
		if err := r.env.Report(ctx, r.noticeList()); err != nil {
			r.dirty.Store(true)
			return err
		}
	}
	return nil
}

// maxNotices bounds the notices a task shows: loss notices of a long run (many retention gaps) must not grow
// its status without limit; the oldest go first.
const maxNotices = 20

// notice sets one of the task's status notices (by key); the committer publishes them.
func (r *sourceRun) notice(key string, n tasks.Notice) {
	r.noticeMu.Lock()
	defer r.noticeMu.Unlock()
	if _, ok := r.notices[key]; !ok {
		r.noticeOrder = append(r.noticeOrder, key)
		for len(r.notices) >= maxNotices && len(r.noticeOrder) > 0 {
			oldest := r.noticeOrder[0]
			r.noticeOrder = r.noticeOrder[1:]
			if oldest != key {
				delete(r.notices, oldest)
			}
		}
	}
	if old, ok := r.notices[key]; !ok || old.Message != n.Message || old.Kind != n.Kind {
		r.notices[key] = n
		r.hasNotices.Store(true)
		r.dirty.Store(true)
	}
}

// hasNotice tells whether the notice of key is shown.
func (r *sourceRun) hasNotice(key string) bool {
	r.noticeMu.Lock()
	defer r.noticeMu.Unlock()
	_, ok := r.notices[key]
	return ok
}

// clearNotice removes a notice, e.g. "source unreachable" once records flow again. It is on the hot path,
// so it looks before it locks.
func (r *sourceRun) clearNotice(key string) {
	if !r.hasNotices.Load() {
		return
	}
	r.noticeMu.Lock()
	defer r.noticeMu.Unlock()
	if _, ok := r.notices[key]; ok {
		delete(r.notices, key)
		r.hasNotices.Store(len(r.notices) > 0)
		r.dirty.Store(true)
	}
}

// noticeList returns the notices in the order of their keys, so that the status reads the same every time.
func (r *sourceRun) noticeList() []tasks.Notice {
	r.noticeMu.Lock()
	defer r.noticeMu.Unlock()
	keys := slices.Sorted(maps.Keys(r.notices))
	out := make([]tasks.Notice, 0, len(keys))
	for _, k := range keys {
		out = append(out, r.notices[k])
	}
	return out
}

// jsonInt reads an integer from a decoded JSON offset map (json.Number, float64 or an int type).
func jsonInt(v any) (int64, bool) {
	switch n := v.(type) {
	case interface{ Int64() (int64, error) }:
		i, err := n.Int64()
		return i, err == nil
	case float64:
		return int64(n), n == float64(int64(n))
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int:
		return int64(n), true
	}
	return 0, false
}
