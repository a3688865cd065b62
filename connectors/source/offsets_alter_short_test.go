package source

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/mm2offsets"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/tasks"
)

func offsetsConfig(t *testing.T, extra map[string]string) connectors.Config {
	t.Helper()
	raw := map[string]string{
		"name": "mm2", "connector.class": mirrorconfig.SourceConnectorClass, "source.cluster.alias": "A", "target.cluster.alias": "B",
		"source.cluster.bootstrap.servers": "127.0.0.1:1", "target.cluster.bootstrap.servers": "127.0.0.1:1",
		"producer.override.socket.timeout.ms": "120000",
	}
	for k, v := range extra {
		raw[k] = v
	}
	p, _ := mirrorconfig.LookupPlugin(mirrorconfig.SourceConnectorClass)
	cfg, err := connectors.ParseConfig(p, raw, clientconfig.Options{})
	require.NoError(t, err)
	return cfg
}

// An offsets change goes to the offsets topic the tasks read (MM2's, or the configured one) through a
// transactional producer whose timeouts fit its transaction, reading the topic as a task does (committed only).
func TestOffsetsWriteUsesTheTasksTopicAndATransactionalProducer(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	w, err := newOffsetsWrite(offsetsConfig(t, nil), "mm2", log)
	require.NoError(t, err)
	require.Equal(t, "mm2-offsets.A.internal", w.topic)
	require.Equal(t, "B", w.targetAlias)
	require.Equal(t, "true", w.producerProps["enable.idempotence"])
	require.Equal(t, "20000", w.producerProps["message.timeout.ms"], "within the REST API's wait")
	require.Equal(t, "60000", w.producerProps["transaction.timeout.ms"])
	require.Equal(t, "60000", w.producerProps["socket.timeout.ms"], "at most 100 ms above the transaction timeout")
	require.Equal(t, "read_committed", w.consumerProps["isolation.level"])
	require.NotEmpty(t, w.adminProps["bootstrap.servers"])

	w, err = newOffsetsWrite(offsetsConfig(t, map[string]string{mirrorconfig.OffsetsStorageTopicConfig: " my-offsets "}), "mm2", log)
	require.NoError(t, err)
	require.Equal(t, "my-offsets", w.topic)
}

// A request whose offsets are not MirrorSourceConnector's is refused before any client is opened.
func TestWriteOffsetsRefusesForeignPartitions(t *testing.T) {
	p := New(slog.New(slog.DiscardHandler), nil)
	err := p.WriteOffsets(context.Background(), offsetsEnvOnly{}, "mm2", offsetsConfig(t, nil),
		[]kmtype.Offset{{Partition: map[string]any{"file": "x"}}}, false)
	require.ErrorContains(t, err, "is not a MirrorSourceConnector partition")
}

// offsetsEnvOnly is an OffsetsEnv nothing may be asked of (nil methods panic).
type offsetsEnvOnly struct{ tasks.OffsetsEnv }

// txnRecorder is a transactional producer that keeps what a committed transaction wrote.
type txnRecorder struct {
	open                    bool
	pending, committed      []offsetsTopicRecord
	partitions              []int32
	produceErr, commitErr   error
	produced, aborts, inits int
}

func (p *txnRecorder) InitTransactions(context.Context) error { p.inits++; return nil }
func (p *txnRecorder) BeginTransaction() error                { p.open = true; return nil }
func (p *txnRecorder) Produce(_ string, partition int32, key, value []byte, _ []kafka.Header, _ time.Time, _ any) error {
	p.produced++
	if p.produceErr != nil && p.produced == 2 {
		return p.produceErr
	}
	p.pending = append(p.pending, offsetsTopicRecord{key: key, value: value})
	p.partitions = append(p.partitions, partition)
	return nil
}
func (p *txnRecorder) CommitTransaction(context.Context) error {
	if p.commitErr != nil {
		return p.commitErr
	}
	p.committed, p.pending, p.open = append(p.committed, p.pending...), nil, false
	return nil
}
func (p *txnRecorder) AbortTransaction(context.Context) error {
	p.aborts++
	p.pending, p.open = nil, false
	return nil
}

// An offsets change is one transaction: every record is written, each to the partition Java's MM2 would pick,
// or none is (a record the producer refuses aborts the rest).
func TestOffsetsChangeIsOneTransaction(t *testing.T) {
	ctx := context.Background()
	w, err := newOffsetsWrite(offsetsConfig(t, nil), "mm2", slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	recs, err := offsetsTopicRecords("mm2", []kmtype.Offset{
		committedOffset("A", "t", 0, 41, ""), committedOffset("A", "t", 1, 7, ""), committedOffset("A", "u", 0, 3, ""),
	})
	require.NoError(t, err)

	p := &txnRecorder{}
	require.NoError(t, w.commit(ctx, p, 25, recs, false))
	require.Equal(t, recs, p.committed)
	for i, rec := range recs {
		require.Equal(t, mm2offsets.PartitionFor(rec.key, 25), p.partitions[i])
	}

	p = &txnRecorder{produceErr: errors.New("queue full")}
	require.ErrorContains(t, w.commit(ctx, p, 25, recs, false), "queue full")
	require.Empty(t, p.committed, "nothing of a refused change is written")
	require.Equal(t, 1, p.aborts)

	p = &txnRecorder{commitErr: errors.New("coordinator unavailable")}
	require.ErrorContains(t, w.commit(ctx, p, 25, recs, false), "coordinator unavailable")
	require.Empty(t, p.committed)
}

// A reset deletes every partition's offset that either copy knows: the offsets topic's (this connector's, not
// another's sharing the topic) and PostgreSQL's, each once.
func TestResetTombstonesEveryPartitionEitherCopyKnows(t *testing.T) {
	w, err := newOffsetsWrite(offsetsConfig(t, nil), "mm2", slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	c := mm2offsets.NewCollector("mm2", "")
	for _, p := range []mm2offsets.Partition{{Cluster: "A", Topic: "t", Partition: 0}, {Cluster: "A", Topic: "t", Partition: 1}} {
		c.Add(mm2offsets.Key("mm2", p), mm2offsets.Value(5))
	}
	c.Add(mm2offsets.Key("other", mm2offsets.Partition{Cluster: "A", Topic: "x", Partition: 0}), mm2offsets.Value(5))
	stored := []kmtype.Offset{committedOffset("A", "t", 1, 9, ""), committedOffset("A", "u", 0, 2, ""), {Partition: map[string]any{"file": "f"}}}

	got := map[string]bool{}
	for _, rec := range w.tombstonesFor(c, stored) {
		require.Nil(t, rec.value, "a tombstone")
		require.False(t, got[string(rec.key)], "%s twice", rec.key)
		got[string(rec.key)] = true
	}
	require.Equal(t, map[string]bool{
		`["mm2",{"cluster":"A","partition":0,"topic":"t"}]`: true,
		`["mm2",{"cluster":"A","partition":1,"topic":"t"}]`: true,
		`["mm2",{"cluster":"A","partition":0,"topic":"u"}]`: true,
	}, got)
}
