package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mm2offsets"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/tasks"
)

// Altering the offsets of an exactly-once MirrorSourceConnector (PATCH and DELETE /connectors/{c}/offsets).
//
// In exactly-once mode the offsets topic on the target is where a task resumes (doc_transactions.go), so a
// change written only to PostgreSQL would be overridden by the topic. As Connect does for an exactly-once
// source connector, the change is written to the offsets topic in one transaction, after the transactional
// ids of the connector's former tasks are fenced, so that no zombie commits older offsets after it; PostgreSQL's
// copy is updated afterwards by the runtime (tasks/fence.go, serveOffsetRequests). A reset writes a tombstone
// for every partition either copy knows.

// offsetsWriteTimeout bounds the Kafka side of an offsets change, below the REST API's wait for it, so that an
// unreachable target is answered with its cause rather than a timeout.
const offsetsWriteTimeout = 20 * time.Second

// offsetsTransactionalID is the transactional.id of the producer that writes altered offsets: one per
// connector, so that a second writer (a former owner of the connector unit) is fenced by the next. It cannot
// be a task's (those end in a number).
func offsetsTransactionalID(connector string) string {
	return transactionalIDPrefix + connector + "-offsets"
}

// WritesOffsets implements connectors.OffsetsPlugin: on a worker with exactly-once source support, a
// MirrorSourceConnector keeps its offsets in the offsets topic on the target too.
func (p *Plugin) WritesOffsets() bool { return p.eos.Enabled() }

// WriteOffsets implements connectors.OffsetsPlugin: on a worker with exactly-once source support, a
// MirrorSourceConnector's altered or reset offsets are written to its offsets topic on the target.
func (p *Plugin) WriteOffsets(ctx context.Context, env tasks.OffsetsEnv, connector string, cfg connectors.Config, offsets []kmtype.Offset, reset bool) error {
	records, err := offsetsTopicRecords(connector, offsets)
	if err != nil {
		return err
	}
	w, err := newOffsetsWrite(cfg, connector, env.Logger())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, offsetsWriteTimeout)
	defer cancel()
	if err := w.write(ctx, env, records, reset); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("the offsets could not be written to the offsets topic %s on the target cluster %s within %s; nothing was changed: %w",
				w.topic, w.targetAlias, offsetsWriteTimeout, err)
		}
		return fmt.Errorf("the offsets could not be written to the offsets topic %s on the target cluster %s; nothing was changed: %w", w.topic, w.targetAlias, err)
	}
	return nil
}

// offsetsTopicRecord is one record of the offsets topic: a key and its value, nil for a tombstone.
type offsetsTopicRecord struct {
	key, value []byte
}

// offsetsTopicRecords turns the requested offsets (validated by the REST API as MirrorSourceConnector's
// alterOffsets does) into offsets topic records in Java MM2's key form.
func offsetsTopicRecords(connector string, offsets []kmtype.Offset) ([]offsetsTopicRecord, error) {
	out := make([]offsetsTopicRecord, 0, len(offsets))
	for _, o := range offsets {
		part, err := mirrorPartition(o.Partition)
		if err != nil {
			return nil, err
		}
		rec := offsetsTopicRecord{key: mm2offsets.Key(connector, part)}
		if o.Offset != nil {
			n, err := intValue(o.Offset["offset"])
			if err != nil {
				return nil, fmt.Errorf("source offset of %s: %w", part, err)
			}
			rec.value = mm2offsets.Value(n)
		}
		out = append(out, rec)
	}
	return out, nil
}

// mirrorPartition reads a MirrorSourceConnector source partition {cluster, topic, partition}.
func mirrorPartition(m map[string]any) (mm2offsets.Partition, error) {
	cluster, _ := m["cluster"].(string)
	topic, _ := m["topic"].(string)
	n, err := intValue(m["partition"])
	if err != nil || cluster == "" || topic == "" || n < 0 || n > 1<<31-1 {
		return mm2offsets.Partition{}, fmt.Errorf("source partition %v is not a MirrorSourceConnector partition {cluster, topic, partition}", m)
	}
	return mm2offsets.Partition{Cluster: cluster, Topic: topic, Partition: int32(n)}, nil
}

// intValue reads an integer as the store and the REST API hand it over.
func intValue(v any) (int64, error) {
	if n, ok := jsonInt(v); ok {
		return n, nil
	}
	return 0, fmt.Errorf("%v is not an integer", v)
}

// offsetsWrite is one change of a connector's offsets topic.
type offsetsWrite struct {
	connector     string
	topic         string
	targetAlias   string
	producerProps map[string]string // target producer (transactional.id set per use)
	adminProps    map[string]string
	consumerProps map[string]string // read_committed, to find what a reset must delete
	log           *slog.Logger
}

func newOffsetsWrite(cfg connectors.Config, connector string, log *slog.Logger) (*offsetsWrite, error) {
	w := &offsetsWrite{connector: connector, topic: mm2offsets.Topic(cfg.SourceAlias()), targetAlias: cfg.TargetAlias(), log: log}
	if t := strings.TrimSpace(cfg.MirrorSource().OffsetsStorageTopic); t != "" {
		w.topic = t // as the tasks do (newSourceTxns)
	}
	var err error
	if w.producerProps, err = cfg.ClientProps(clientconfig.ReplicationProducer, connector, -1); err != nil {
		return nil, err
	}
	if w.adminProps, err = cfg.ClientProps(clientconfig.TargetAdmin, connector, -1); err != nil {
		return nil, err
	}
	if w.consumerProps, err = cfg.ClientProps(clientconfig.CheckpointsConsumer, connector, -1); err != nil {
		return nil, err
	}
	w.consumerProps["isolation.level"] = "read_committed"
	// A transactional producer: librdkafka wants its delivery timeout within the transaction timeout, and the
	// socket timeout at most 100 ms above it. A few records need neither the user's long timeouts nor more.
	w.producerProps["enable.idempotence"] = "true"
	w.producerProps["message.timeout.ms"] = strconv.FormatInt(offsetsWriteTimeout.Milliseconds(), 10)
	w.producerProps["transaction.timeout.ms"] = "60000"
	if n, err := strconv.ParseInt(w.producerProps["socket.timeout.ms"], 10, 64); err == nil && n > 60000 {
		w.producerProps["socket.timeout.ms"] = "60000"
	}
	return w, nil
}

// write fences the connector's former tasks, then writes records (and, with reset, a tombstone for every
// partition the topic or PostgreSQL holds an offset of) in one transaction.
func (w *offsetsWrite) write(ctx context.Context, env tasks.OffsetsEnv, records []offsetsTopicRecord, reset bool) error {
	admin, err := kafka.NewAdmin(w.adminProps, w.log)
	if err != nil {
		return err
	}
	defer admin.Close()
	partitions, err := ensureOffsetsTopic(ctx, admin, w.topic, w.targetAlias)
	if err != nil {
		return err
	}
	// No task of the connector runs (it is STOPPED), but a zombie of one could still commit offsets after this
	// change: fence every task id the connector's former task sets used.
	if err := env.FenceTaskSet(ctx, func(ctx context.Context, ids []int) error {
		return kafka.FenceTransactionalIDs(ctx, w.producerProps, transactionalIDs(w.connector, ids), w.log)
	}); err != nil {
		return fmt.Errorf("fence the connector's former tasks: %w", err)
	}
	if reset {
		if records, err = w.tombstones(ctx, env); err != nil {
			return err
		}
	}
	if len(records) == 0 {
		return nil
	}
	props := maps.Clone(w.producerProps)
	props["transactional.id"] = offsetsTransactionalID(w.connector)
	producer, err := kafka.NewProducer(props, w.log, func(kafka.Delivery) {})
	if err != nil {
		return err
	}
	defer producer.Close()
	return w.commit(ctx, producer, partitions, records, reset)
}

// offsetsProducer is the transactional producer an offsets change is written with; *kafka.Producer answers it.
type offsetsProducer interface {
	InitTransactions(ctx context.Context) error
	BeginTransaction() error
	Produce(topic string, partition int32, key, value []byte, headers []kafka.Header, ts time.Time, opaque any) error
	CommitTransaction(ctx context.Context) error
	AbortTransaction(ctx context.Context) error
}

var _ offsetsProducer = (*kafka.Producer)(nil)

// commit writes records to the offsets topic of partitions partitions in one transaction: all of them, or none.
func (w *offsetsWrite) commit(ctx context.Context, producer offsetsProducer, partitions int, records []offsetsTopicRecord, reset bool) error {
	if err := producer.InitTransactions(ctx); err != nil {
		return err
	}
	if err := producer.BeginTransaction(); err != nil {
		return err
	}
	for _, rec := range records {
		if err := producer.Produce(w.topic, mm2offsets.PartitionFor(rec.key, partitions), rec.key, rec.value, nil, time.Time{}, nil); err != nil {
			return errors.Join(err, producer.AbortTransaction(context.WithoutCancel(ctx)))
		}
	}
	// The commit flushes the records; one that failed fails the commit, and the transaction is aborted.
	if err := producer.CommitTransaction(ctx); err != nil {
		if kafka.TxnRequiresAbort(err) {
			return errors.Join(err, producer.AbortTransaction(context.WithoutCancel(ctx)))
		}
		return err
	}
	w.log.Info("wrote the altered offsets to the offsets topic", "topic", w.topic, "records", len(records), "reset", reset)
	return nil
}

// tombstones are the records of a reset: a tombstone for every partition of the connector the offsets topic
// (read_committed, as a task reads it) or PostgreSQL's copy has an offset of.
func (w *offsetsWrite) tombstones(ctx context.Context, env tasks.OffsetsEnv) ([]offsetsTopicRecord, error) {
	c := mm2offsets.NewCollector(w.connector, "")
	if _, err := kafka.ReadTopic(ctx, w.consumerProps, w.topic, w.log, func(rec kafka.Record) error {
		c.Add(rec.Key(), rec.Value())
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read the offsets topic %s: %w", w.topic, err)
	}
	stored, err := env.ReadOffsets(ctx)
	if err != nil {
		return nil, err
	}
	return w.tombstonesFor(c, stored), nil
}

// tombstonesFor returns a tombstone for every partition of the connector that the offsets topic (read into c) or
// PostgreSQL's copy (stored) has an offset of, once each.
func (w *offsetsWrite) tombstonesFor(c *mm2offsets.Collector, stored []kmtype.Offset) []offsetsTopicRecord {
	seen := map[mm2offsets.Partition]bool{}
	var out []offsetsTopicRecord
	add := func(p mm2offsets.Partition) {
		if !seen[p] {
			seen[p] = true
			out = append(out, offsetsTopicRecord{key: mm2offsets.Key(w.connector, p)})
		}
	}
	for _, o := range c.Offsets() {
		add(o.Source)
	}
	for _, o := range stored {
		if p, err := mirrorPartition(o.Partition); err == nil {
			add(p)
		}
	}
	return out
}
