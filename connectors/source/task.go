package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/offsetmap"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/lograte"
	"github.com/kmirror/kmirror/metrics"
	"github.com/kmirror/kmirror/tasks"
)

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
	// dataPath is the worker's --data-path: DataPathC moves records in C (cpath.go) unless eos.
	dataPath DataPath
	procs    *cpathProcs // the worker's GOMAXPROCS for C pipelines (nil: left alone)
	// consumerStatsMax, producerStatsMax: a replication consumer or producer knowing of more partitions runs
	// without librdkafka statistics (client_stats.go); at most 0: no limit.
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
		err = r.txn.fenced(r, err)
		var pe *pipelineError
		switch {
		case ctx.Err() != nil && !errors.Is(err, errLeaseRevoked):
			return err
		case errors.Is(err, errLeaseRevoked):
			return kmtype.ErrFenced
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
		r.notice("pipeline", kmtype.Notice{Kind: NoticePipelineRestarted, Message: fmt.Sprintf("replication restarted after: %v", err)})
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
	settleWait                              time.Duration // each wait of a restarting pipeline's end (0: pipelineSettleWait)
	roundTimeout                            time.Duration // each commit-loop round's database work (0: sourceRoundTimeout)

	failure atomic.Pointer[error] // the first delivery failure of the current pipeline
	// produceMu is held by the Go path's poll loop while it hands a record to the producer, and by halt while
	// it sets failure and purges: no record is produced after a purge (overdue.go).
	produceMu   sync.Mutex
	producer    atomic.Pointer[goProducer] // the Go engine's, for its delivery handler
	ids         *identityWatch             // source and remote topic identities (identity.go)
	stalls      *stallWatch                // stall and overdue watch (stall.go, overdue.go)
	sourceAdmin clusterAdmin               // the current pipeline's admin client on the source (shares the consumer's)
	limit       *lograte.Limiter
	taskMetrics taskMetrics // offset commit time and records in flight (zero without metrics)
	txn         txnHooks    // exactly-once mode's (sourceTxns, transactions.go) or at-least-once's

	prov runProvenance  // the provenance header and cycle guard (provenance.go)
	rule headerlessRule // the rule for records without the header (headerless.go)

	// Capacity advice: where the poll loop's time goes, and the replication clients' last statistics.
	clock                            pipelineClock
	producerFigures, consumerFigures clientFigures

	// consumerStatsOff, producerStatsOff: the replication consumer or producer runs without librdkafka statistics
	// (client_stats.go); consumerLags then takes Java's records-lag from sampleStats (nil without metrics).
	consumerStatsOff   bool
	producerStatsOff   bool
	consumerLags       func([]metrics.PartitionLag)
	removeConsumerLags func() // at the run's end
	watermarkNext      int    // the committer's: the next partition whose watermarks sampleStats reads (watermarkWindow)

	noticeBoard // the notices the task shows; the committer publishes them
	commits     *committer
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
		limit:        lograte.New(30 * time.Second),
	}
	r.stalls = &stallWatch{notices: &r.noticeBoard, log: r.log, sourceAlias: r.sourceAlias, targetAlias: r.targetAlias}
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
		r.stalls.stallAfter = time.Duration(ms) * time.Millisecond / 4
		if !t.eos {
			r.stalls.overdueAfter = overdueAllowance(time.Duration(ms) * time.Millisecond)
		}
	}
	if !t.eos {
		requireGapless(r.producerProps, r.log)
	}
	r.txn = atLeastOnce{}
	if t.eos {
		if r.txn, err = r.newSourceTxns(index); err != nil {
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
	r.stalls.parts = r.parts
	r.ids = &identityWatch{parts: r.parts, bySource: r.bySource, byRemote: r.byRemote, sourceAlias: r.sourceAlias, targetAlias: r.targetAlias,
		notices: &r.noticeBoard, log: r.log, limit: r.limit, remoteIDs: map[string]string{}}
	r.commits = &committer{env: env, parts: r.parts, sourceAlias: r.sourceAlias, targetAlias: r.targetAlias, notices: &r.noticeBoard,
		log: r.log, limit: r.limit}
	if err := r.loadRanges(ctx); err != nil {
		return nil, err
	}
	r.ids.loadSeenEnds(ctx, env)
	for _, p := range r.parts { // last: nothing fails after, so the run's end removes every series it made
		p.metrics = t.partitionMetrics(r.sourceAlias, r.targetAlias, p)
	}
	r.taskMetrics = t.newTaskMetrics()
	return r, nil
}

// loadRanges lets each partition's offset map continue its last stored range, when that range belongs to the
// source incarnation the partition's offset does.
func (r *sourceRun) loadRanges(ctx context.Context) error {
	keys := make([]kmtype.RangeKey, len(r.parts))
	for i, p := range r.parts {
		keys[i] = r.commits.rangeKey(p)
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
	return clusterOffsets(all, r.sourceAlias), nil
}

// clusterOffsets picks, from a connector's stored offsets, those of the source cluster alias by partition;
// an entry that is not a MirrorSourceConnector offset (no topic, partition or offset) is passed over.
func clusterOffsets(all []kmtype.Offset, alias string) map[mirror.TopicPartition]storedOffset {
	out := make(map[mirror.TopicPartition]storedOffset, len(all))
	for _, o := range all {
		cluster, _ := o.Partition["cluster"].(string)
		topic, _ := o.Partition["topic"].(string)
		part, okP := jsonInt(o.Partition["partition"])
		off, okO := jsonInt(o.Offset["offset"])
		if cluster != alias || topic == "" || !okP || !okO {
			continue
		}
		out[mirror.TopicPartition{Topic: topic, Partition: int32(part)}] = storedOffset{offset: off, sourceID: o.SourceID}
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
