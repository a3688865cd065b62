package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/mm2offsets"
	"github.com/kmirror/kmirror/kmtype"
)

// Exactly-once replication: the state machine is described in doc_transactions.go.

// Defaults of exactly-once mode.
const (
	// A run tolerates maxFences fences within fenceWindow while its lease is valid (sourceTxns.fenced).
	maxFences   = 3
	fenceWindow = 10 * time.Minute

	// defaultTransactionInterval is transaction.boundary.interval.ms when unset. Connect falls back to the
	// worker's offset.flush.interval.ms (60 s); kmirror's workers have none (they commit every 100 ms), and a
	// minute-long transaction would hold every record back from read_committed consumers for a minute.
	defaultTransactionInterval = time.Second
	// defaultMaxPollRecords is the Java consumer's max.poll.records: a "poll" boundary ends a transaction
	// after this many records, as Connect's does after one poll() of MirrorSourceTask.
	defaultMaxPollRecords = 500
	// transactionalIDPrefix starts every transactional.id kmirror uses, so that one prefixed ACL
	// (TransactionalId, PREFIXED "kmirror-") authorizes them all.
	transactionalIDPrefix = "kmirror-"
	// maxInitFailures is how many times a run's first InitTransactions may time out before the task fails.
	maxInitFailures = 3
)

// offsetsRecord is the opaque of the offsets records a transaction carries: their delivery reports are not
// replicated records.
type offsetsRecord struct{}

// sourceTxns is a source run's exactly-once state: nil on a worker without exactly-once source support. The
// poll loop owns the transaction (begin, boundary, commit, abort); the delivery handler only stages and counts.
type sourceTxns struct {
	connector      string // the Connect connector name, the namespace of the offsets' keys
	txnID          string
	boundary       string // mirrorconfig.TransactionBoundaryPoll or ...Interval
	interval       time.Duration
	maxPollRecords int
	offsetsTopic   string
	offsetsProps   map[string]string // read_committed consumer of the offsets topic on the target
	adminProps     map[string]string // target admin, to create the offsets topic
	fenceProps     map[string]string // target producer, to fence the transactional ids of a former task set
	commitTimeout  time.Duration     // how long a commit (or abort, or init) may take
	log            *slog.Logger

	offsetsPartitions int           // of the offsets topic, known once the pipeline started
	initialized       bool          // some pipeline of this run initialized transactions
	fences            []time.Time   // when this run's producer was fenced while its lease was valid (fenceWindow)
	initFailures      int           // consecutive failed InitTransactions before the first success
	syncs             *offsetSyncer // the pipeline's offset syncs, sent once a transaction committed; nil if off
	// readTopic reads partitions of a topic on the target: kafka.ReadTopicPartitions, or a test double's.
	readTopic func(ctx context.Context, props map[string]string, topic string, partitions []int32, log *slog.Logger, fn func(kafka.Record) error) (kafka.TopicRead, error)

	// The open transaction, owned by the poll loop.
	open     bool
	began    time.Time
	batch    int                // records forwarded in the open transaction
	touched  []*sourcePartition // partitions with records in the open transaction
	produced int64              // records produced in the open transaction (replicated and offsets)

	// Delivery reports of the open transaction, counted by the delivery handler.
	reported atomic.Int64
	reports  chan struct{} // a report arrived (capacity 1: a wake-up, not a count)
}

// requireExactlyOnce refuses to run a task whose connector requires exactly-once on a worker without
// exactly-once source support (validation ran on another worker, or before this one was restarted without the
// switch): replicating at-least-once instead would be a silent fallback. The task fails, naming the fix.
func (t *sourceTask) requireExactlyOnce() error {
	level := strings.ToLower(strings.TrimSpace(t.cfg.ExactlyOnceSupport))
	if t.eos || level != mirrorconfig.ExactlyOnceRequired {
		return nil
	}
	return errors.New("exactly.once.support=required, but this worker does not have exactly-once source support enabled: " +
		"start every worker with --exactly-once-source-support=enabled (then restart the task), or set exactly.once.support=requested")
}

// transactionalID is the replication producer's transactional.id: Connect's ${groupId}-${connector}-${taskId}
// with kmirror's prefix for the group. It is the same for every owner of the task, whatever its worker or
// assignment epoch, so that a new owner's InitTransactions fences the old owner in Kafka and aborts what it
// left open. An epoch in the id would defeat that: the broker fences only producers of the same id.
func transactionalID(connector string, task int) string {
	return transactionalIDPrefix + connector + "-" + strconv.Itoa(task)
}

// transactionalIDs are the transactional ids of the connector's tasks.
func transactionalIDs(connector string, tasks []int) []string {
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = transactionalID(connector, t)
	}
	return ids
}

// newSourceTxns prepares exactly-once mode for a run: the transactional producer's settings, the consumer's
// isolation level, the offsets topic and the transaction boundary.
func (r *sourceRun) newSourceTxns(task int) (*sourceTxns, error) {
	cfg := r.t.cfg
	x := &sourceTxns{
		connector:      r.t.id.Connector,
		txnID:          transactionalID(r.t.id.Connector, task),
		boundary:       strings.ToLower(strings.TrimSpace(cfg.TransactionBoundary)),
		interval:       defaultTransactionInterval,
		maxPollRecords: defaultMaxPollRecords,
		offsetsTopic:   mm2offsets.Topic(r.sourceAlias),
		log:            r.log,
		reports:        make(chan struct{}, 1),
		readTopic:      kafka.ReadTopicPartitions,
	}
	switch x.boundary {
	case mirrorconfig.TransactionBoundaryPoll, mirrorconfig.TransactionBoundaryInterval:
	case mirrorconfig.TransactionBoundaryConnector:
		// Validation refuses it already (MM2 defines no boundaries); a config stored before must not run
		// with another boundary than it asked for.
		return nil, errors.New("transaction.boundary=connector: MirrorSourceConnector does not define transaction boundaries; use poll or interval")
	default:
		return nil, fmt.Errorf("transaction.boundary=%q: must be poll or interval", x.boundary)
	}
	if raw, ok := cfg.Raw[mirrorconfig.TransactionBoundaryIntervalMsConfig]; ok && strings.TrimSpace(raw) != "" {
		ms, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("transaction.boundary.interval.ms=%q: must be a number of milliseconds >= 0", raw)
		}
		x.interval = time.Duration(ms) * time.Millisecond
	}
	if n, err := strconv.Atoi(firstSet(cfg.Raw, "source.consumer.max.poll.records", "consumer.max.poll.records")); err == nil && n > 0 {
		x.maxPollRecords = n
	}
	if t := strings.TrimSpace(cfg.OffsetsStorageTopic); t != "" {
		x.offsetsTopic = t // Connect's per-connector offsets topic, on the target cluster as in Connect
	}

	// The producer: transactional and idempotent (librdkafka requires both). A transaction may stay open for
	// its boundary plus the delivery timeout (capped below the lease's settle window, CapDelivery); the
	// coordinator aborts one open longer, so a stalled owner's transaction dies before its task moves.
	msgTimeout, _ := strconv.ParseInt(r.producerProps["message.timeout.ms"], 10, 64)
	txnTimeout := max(msgTimeout, 1000)
	if x.boundary == mirrorconfig.TransactionBoundaryInterval {
		txnTimeout += x.interval.Milliseconds()
	}
	if v, ok := r.producerProps["transaction.timeout.ms"]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= msgTimeout {
			txnTimeout = n // the user's, when librdkafka can work with it
		}
	}
	r.producerProps["transactional.id"] = x.txnID
	r.producerProps["enable.idempotence"] = "true"
	r.producerProps["transaction.timeout.ms"] = strconv.FormatInt(txnTimeout, 10)
	// librdkafka refuses socket.timeout.ms above transaction.timeout.ms + 100.
	if n, err := strconv.ParseInt(r.producerProps["socket.timeout.ms"], 10, 64); err != nil || n > txnTimeout+100 {
		r.producerProps["socket.timeout.ms"] = strconv.FormatInt(min(60000, txnTimeout+100), 10)
	}
	// Right after a commit the coordinator answers the next transaction's AddPartitionsToTxn with
	// CONCURRENT_TRANSACTIONS until the markers are written; librdkafka retries with its exponential backoff
	// (100 ms doubling to 1 s), which held records back for up to a second per transaction. Java's producer
	// retries that case after 20 ms; these bounds do the same where the user set nothing.
	if _, set := r.producerProps["retry.backoff.ms"]; !set {
		r.producerProps["retry.backoff.ms"] = "20"
		setDefault(r.producerProps, "250", "retry.backoff.max.ms")
	}
	if n, err := strconv.Atoi(r.producerProps["max.in.flight.requests.per.connection"]); err == nil && n > 5 {
		r.producerProps["max.in.flight.requests.per.connection"] = "5" // the idempotent producer's limit
	}
	x.commitTimeout = time.Duration(txnTimeout)*time.Millisecond + 10*time.Second
	// The fence's producers reach the target as the replication producer does (each with its own id).
	x.fenceProps = maps.Clone(r.producerProps)

	// The source consumer reads committed records only, so that aborted and open transactions of the source
	// are never copied. A user's explicit read_uncommitted stands (Connect would run it too), but then
	// MirrorSourceConnector does not support exactly-once, and the log says so.
	if !mirrorconfig.ConsumerUsesReadCommitted(cfg.Raw) {
		if firstSet(cfg.Raw, "source.consumer.isolation.level", "consumer.isolation.level") != "" {
			r.log.Warn("exactly-once source support with a read_uncommitted source consumer: records of aborted and open source transactions are replicated (set source.consumer.isolation.level=read_committed)")
		} else {
			r.consumerProps["isolation.level"] = "read_committed"
		}
	}

	var err error
	if x.offsetsProps, err = cfg.ClientProps(clientconfig.CheckpointsConsumer, r.t.id.Connector, task); err != nil {
		return nil, err
	}
	x.offsetsProps["isolation.level"] = "read_committed"
	if x.adminProps, err = cfg.ClientProps(clientconfig.TargetAdmin, r.t.id.Connector, task); err != nil {
		return nil, err
	}
	r.log.Info("exactly-once source support: replicating in transactions", "transactional_id", x.txnID,
		"boundary", x.boundary, "interval", x.interval, "offsets_topic", x.offsetsTopic, "transaction_timeout_ms", txnTimeout)
	return x, nil
}

func firstSet(m map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := strings.TrimSpace(m[k]); v != "" {
			return v
		}
	}
	return ""
}

// startPipeline runs before a pipeline assigns its partitions: it makes sure the offsets topic exists, fences
// every older producer of the task's transactional.id (InitTransactions, which also aborts what they left
// open), and then reads the offsets of the last committed transactions, which say where each partition
// resumes. The order matters: read before the fence, a zombie could still commit after the read.
func (x *sourceTxns) startPipeline(ctx context.Context, r *sourceRun, producer txnProducer, admin clusterAdmin, syncs *offsetSyncer) error {
	x.open, x.batch, x.touched, x.produced, x.syncs = false, 0, nil, 0, syncs
	x.reported.Store(0)
	for _, p := range r.parts {
		p.abortedTxn()
		p.txnLast = -1
	}
	// A target that refuses transactions (no ACL for the transactional id, an invalid offsets topic) fails
	// the task at once, naming the cause, rather than replicate without the guarantee. One that does not answer
	// is retried by restarting the pipeline, except before the first success of the run: a target that never
	// initializes transactions (its transaction state log cannot be created: replication factor above its
	// brokers) fails the task after maxInitFailures attempts, each waiting the commit timeout.
	fail := func(err error) error {
		if !kafka.IsRetriable(err) && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		if !x.initialized {
			if x.initFailures++; x.initFailures >= maxInitFailures {
				return fmt.Errorf("%w (%d attempts)", err, x.initFailures)
			}
		}
		return &pipelineError{err: err}
	}
	n, err := ensureOffsetsTopic(ctx, admin, x.offsetsTopic, r.targetAlias)
	if err != nil {
		if kafka.IsRetriable(err) || errors.Is(err, context.DeadlineExceeded) {
			return &pipelineError{err: err} // the topic is the target's, not the transactions': retry
		}
		return err
	}
	x.offsetsPartitions = n
	// A changed task set is fenced in Kafka before any task of the new one initializes transactions: a zombie
	// of a task id whose partitions moved to this task could otherwise still commit them (tasks/fence.go).
	// Waiting for the former set to drain is bounded by the run; the fence itself by the commit timeout.
	var fenceErr error
	err = r.env.FenceTaskSet(ctx, func(ctx context.Context, ids []int) error {
		fenceCtx, cancel := context.WithTimeout(ctx, x.commitTimeout)
		defer cancel()
		fenceErr = kafka.FenceTransactionalIDs(fenceCtx, x.fenceProps, transactionalIDs(x.connector, ids), r.log)
		return fenceErr
	})
	switch {
	case err == nil:
	case ctx.Err() != nil || errors.Is(err, kmtype.ErrFenced):
		return err
	case fenceErr != nil:
		return fail(fmt.Errorf("exactly-once source support: the target cluster %s did not fence the transactional ids of the previous task set: %w", r.targetAlias, err))
	default:
		return &pipelineError{err: err} // PostgreSQL did not answer, or the fence took too long: try again
	}
	first := !x.initialized
	began := time.Now()
	initCtx, cancel := context.WithTimeout(ctx, x.commitTimeout)
	defer cancel()
	if !r.env.Lease().Valid() {
		return errLeaseRevoked // InitTransactions would fence the task's new owner
	}
	if err := producer.InitTransactions(initCtx); err != nil {
		return fail(fmt.Errorf("exactly-once source support: the target cluster %s did not initialize transactions for transactional.id %s: %w "+
			"(common causes: transaction.state.log.replication.factor above the number of brokers, no Write/Describe ACL on the transactional id, "+
			"a transaction.timeout.ms above the broker's transaction.max.timeout.ms)", r.targetAlias, x.txnID, err))
	}
	x.initialized, x.initFailures = true, 0
	inited := time.Now()
	readCtx, cancelRead := context.WithTimeout(ctx, x.commitTimeout)
	defer cancelRead()
	offsets, err := x.readOffsets(readCtx, r)
	if err != nil {
		return &pipelineError{err: err}
	}
	var ahead []string
	for _, p := range r.parts {
		if off, ok := offsets[p.tp]; ok {
			if acked, _ := p.progress(); first && off > acked {
				ahead = append(ahead, fmt.Sprintf("%s-%d: %d (PostgreSQL %d)", p.tp.Topic, p.tp.Partition, off, acked))
			}
			p.resumeFrom(off)
		}
	}
	if len(ahead) > 0 {
		// After a crash PostgreSQL's copy lags by up to a commit interval. Offsets set with PATCH or DELETE
		// change both copies (offsets_alter.go); a copy changed behind kmirror's back would look the same.
		r.log.Warn("the offsets topic is ahead of PostgreSQL's copy: resuming from the offsets topic (after a crash this is expected)",
			"topic", x.offsetsTopic, "partitions", ahead)
	}
	r.log.Info("transactions initialized: older producers of the task are fenced; resuming from the committed offsets",
		"transactional_id", x.txnID, "init_ms", inited.Sub(began).Milliseconds(), "read_offsets_ms", time.Since(inited).Milliseconds(),
		"committed_partitions", len(offsets))
	return nil
}

// ensureOffsetsTopic creates the offsets topic on the target if it is missing, as Connect's worker does
// (compacted, 25 partitions, the broker's default replication factor), and returns its partition count.
func ensureOffsetsTopic(ctx context.Context, admin clusterAdmin, topic, targetAlias string) (int, error) {
	n, err := admin.PartitionCount(ctx, topic)
	switch {
	case err == nil && n > 0:
		return n, nil
	case err != nil && !kafka.IsUnknownTopic(err):
		// The target does not answer (a broker restart): creating the topic would not either.
		return 0, fmt.Errorf("describe the offsets topic %s on %s: %w", topic, targetAlias, err)
	}
	res, err := admin.CreateTopics(ctx, []kafka.NewTopic{{Name: topic, Partitions: mm2offsets.DefaultPartitions, ReplicationFactor: -1,
		Config: map[string]string{"cleanup.policy": "compact"}}})
	if err != nil {
		return 0, fmt.Errorf("create the offsets topic %s on %s: %w", topic, targetAlias, err)
	}
	if err := res[topic]; err != nil && !kafka.IsTopicExists(err) {
		return 0, fmt.Errorf("create the offsets topic %s on %s: %w", topic, targetAlias, err)
	}
	if n, err = admin.PartitionCount(ctx, topic); err != nil {
		return 0, fmt.Errorf("describe the offsets topic %s on %s: %w", topic, targetAlias, err)
	}
	return n, nil
}

// readOffsets reads the task's committed source offsets from the offsets topic (read_committed: offsets of
// aborted transactions are not seen), last value per key wins, as Connect's KafkaOffsetBackingStore reads it.
func (x *sourceTxns) readOffsets(ctx context.Context, r *sourceRun) (map[mirror.TopicPartition]int64, error) {
	// Only the partitions of the task's own keys: every writer (kmirror, Java's producer) puts a key in the
	// partition of its murmur2 hash, and Java MM2 looks a partition up by those very key bytes.
	var parts []int32
	for _, p := range r.parts {
		key := mm2offsets.Key(x.connector, mm2offsets.Partition{Cluster: r.sourceAlias, Topic: p.tp.Topic, Partition: p.tp.Partition})
		if part := mm2offsets.PartitionFor(key, x.offsetsPartitions); !slices.Contains(parts, part) {
			parts = append(parts, part)
		}
	}
	c := mm2offsets.NewCollector(x.connector, r.sourceAlias)
	if _, err := x.readTopic(ctx, x.offsetsProps, x.offsetsTopic, parts, r.log, func(rec kafka.Record) error {
		c.Add(rec.Key(), rec.Value())
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read the committed offsets from %s on %s: %w", x.offsetsTopic, r.targetAlias, err)
	}
	if st := c.Stats(); st.Malformed > 0 {
		r.log.Warn("the offsets topic holds records that do not parse; their partitions have no offset there", "topic", x.offsetsTopic, "examples", st.MalformedExamples)
	}
	out := map[mirror.TopicPartition]int64{}
	for _, o := range c.Offsets() {
		out[mirror.TopicPartition{Topic: o.Source.Topic, Partition: o.Source.Partition}] = o.Offset
	}
	return out, nil
}
