package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/mm2offsets"
	"github.com/kmirror/kmirror/server"
)

func withExactlyOnce(c *server.Config) { c.ExactlyOnceSource = mirrorconfig.ExactlyOnceSourceEnabled }

// validationErrors PUTs config to the validate endpoint of MirrorSourceConnector and returns the errors per key.
func validationErrors(t *testing.T, k *kmirror, config map[string]any) (int, map[string][]string) {
	t.Helper()
	code, body := k.do(http.MethodPut, "/connector-plugins/MirrorSourceConnector/config/validate", config)
	require.Equal(t, http.StatusOK, code, "%v", body)
	out := map[string][]string{}
	for _, c := range body.(map[string]any)["configs"].([]any) {
		v := c.(map[string]any)["value"].(map[string]any)
		for _, e := range v["errors"].([]any) {
			out[v["name"].(string)] = append(out[v["name"].(string)], e.(string))
		}
	}
	return int(mustInt(t, body.(map[string]any)["error_count"])), out
}

// TestExactlyOnceValidation checks the /validate answers of exactly.once.support and transaction.boundary on
// a worker with and without exactly-once source support, as Connect's distributed herder gives them.
func TestExactlyOnceValidation(t *testing.T) {
	t.Parallel()
	dbURL := ""
	off := startKmirror(t, dbURL)
	on := startKmirror(t, off.dbURL, withExactlyOnce)
	base := map[string]any{"connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector", "name": "eos",
		"source.cluster.alias": "A", "target.cluster.alias": "B", "exactly.once.support": "required",
		"source.consumer.isolation.level":  "read_committed",
		"source.cluster.bootstrap.servers": "a:9092", "target.cluster.bootstrap.servers": "b:9092"}
	with := func(kv ...string) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}

	n, errs := validationErrors(t, off, base)
	require.Equal(t, 1, n, "%v", errs)
	require.Len(t, errs["exactly.once.support"], 1)
	require.Contains(t, errs["exactly.once.support"][0], "This worker does not have exactly-once source support enabled.")

	n, errs = validationErrors(t, on, base)
	require.Zero(t, n, "%v", errs)

	// Without read_committed, MirrorSourceConnector does not support exactly-once; its own message is shown.
	n, errs = validationErrors(t, on, with("source.consumer.isolation.level", "read_uncommitted"))
	require.Equal(t, 1, n, "%v", errs)
	require.Contains(t, errs["exactly.once.support"][0], "MirrorSourceConnector can only provide exactly-once guarantees when its source consumer is configured with isolation.level set to 'read_committed'")

	// MM2 does not define transaction boundaries.
	n, errs = validationErrors(t, on, with("transaction.boundary", "connector"))
	require.Equal(t, 1, n, "%v", errs)
	require.Equal(t, []string{"The connector does not support connector-defined transaction boundaries with the given configuration. Please reconfigure it to use a different transaction boundary definition."}, errs["transaction.boundary"])

	n, errs = validationErrors(t, on, with("transaction.boundary", "interval", "transaction.boundary.interval.ms", "200"))
	require.Zero(t, n, "%v", errs)

	n, errs = validationErrors(t, on, with("producer.override.transactional.id", "mine"))
	require.Equal(t, 1, n, "%v", errs)
	require.Contains(t, errs["producer.override.transactional.id"][0], "kmirror sets the replication producer's transactional.id itself")

	// A create is refused with the same message.
	code, body := off.do(http.MethodPut, "/connectors/eos/config", base)
	require.Equal(t, http.StatusBadRequest, code, "%v", body)
	require.Contains(t, body.(map[string]any)["message"], "This worker does not have exactly-once source support enabled.")
}

// readCommitted reads every partition of topic on B with read_committed, to its current last stable offset.
func readCommitted(t *testing.T, topic string) map[int32][]kafka.Record {
	t.Helper()
	out, err := tryReadCommitted(t, topic)
	require.NoError(t, err)
	return out
}

// tryReadCommitted is readCommitted for a condition that is polled: the remote topic may not exist yet, and a
// require inside require.Eventually's condition would fail the test from another goroutine, leaving the
// condition unanswered until the wait ran out (a flake seen under the full suite's load).
func tryReadCommitted(t *testing.T, topic string) (map[int32][]kafka.Record, error) {
	return tryReadCommittedOn(t, "B", topic)
}

// tryReadCommittedOn is tryReadCommitted on either cluster.
func tryReadCommittedOn(t *testing.T, cluster, topic string) (map[int32][]kafka.Record, error) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out := map[int32][]kafka.Record{}
	_, err := kafka.ReadTopic(ctx, map[string]string{"bootstrap.servers": kafkatest.Bootstrap(t, cluster), "isolation.level": "read_committed"},
		topic, slog.New(slog.DiscardHandler), func(r kafka.Record) error {
			out[r.Partition()] = append(out[r.Partition()], r)
			return nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// TestExactlyOnceReplicatesInTransactions replicates a source topic that holds an aborted transaction, on a
// worker with exactly-once source support: B, read with read_committed, holds every committed record of A
// exactly once and in order, none of the aborted ones, and the offsets topic mm2-offsets.A.internal holds each
// partition's last offset in Connect's format, which kmirror's PostgreSQL copy repeats.
func TestExactlyOnceReplicatesInTransactions(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "", withExactlyOnce)
	prefix := "eos" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 3)
	topic := topics[0].name
	sent := makeRecords(topics, 3000, 0)
	kafkatest.Produce(t, "A", sent[:1500])

	// An aborted transaction on A between the two halves: read_committed replication skips it.
	tp, err := kafka.NewProducer(map[string]string{"bootstrap.servers": kafkatest.Bootstrap(t, "A"), "transactional.id": "eos-test-" + prefix,
		"enable.idempotence": "true"}, slog.New(slog.DiscardHandler), func(kafka.Delivery) {})
	require.NoError(t, err)
	require.NoError(t, tp.InitTransactions(t.Context()))
	require.NoError(t, tp.BeginTransaction())
	for p := range int32(3) {
		for range 10 {
			require.NoError(t, tp.Produce(topic, p, []byte("aborted"), []byte("aborted"), nil, time.Time{}, nil))
		}
	}
	tp.Flush(t.Context())
	require.NoError(t, tp.AbortTransaction(t.Context()))
	tp.Close()

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", map[string]any{
		"tasks.max": "2", "exactly.once.support": "required", "source.consumer.isolation.level": "read_committed"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING RUNNING", 60*time.Second)
	kafkatest.Produce(t, "A", sent[1500:])

	requireCommittedCopy(t, prefixA(topic), sent, "every committed record reaches B")

	// The offsets topic: the last source offset of each partition (500 records, then 10 aborted ones and
	// their abort marker, then 500 more: the last record is at 500+10+1+499 = 1010).
	c := mm2offsets.NewCollector(name, "A")
	_, err = kafka.ReadTopic(t.Context(), map[string]string{"bootstrap.servers": kafkatest.Bootstrap(t, "B"), "isolation.level": "read_committed"},
		mm2offsets.Topic("A"), slog.New(slog.DiscardHandler), func(r kafka.Record) error { c.Add(r.Key(), r.Value()); return nil })
	require.NoError(t, err)
	offs := c.Offsets()
	require.Len(t, offs, 3, "%+v", c.Stats())
	for _, o := range offs {
		require.Equal(t, topic, o.Source.Topic)
		require.Equal(t, int64(1010), o.Offset, "partition %d", o.Source.Partition)
		require.False(t, o.NonCanonical, "Java MM2's key bytes")
	}
	n, err := kafkatest.Admin(t, "B").PartitionCount(t.Context(), mm2offsets.Topic("A"))
	require.NoError(t, err)
	require.Equal(t, mm2offsets.DefaultPartitions, n)

	// PostgreSQL's copy catches up with the committed transactions.
	require.Eventually(t, func() bool {
		_, offs := k.do(http.MethodGet, "/connectors/"+name+"/offsets", nil)
		list := offs.(map[string]any)["offsets"].([]any)
		var at []int64
		for _, o := range list {
			at = append(at, mustInt(t, o.(map[string]any)["offset"].(map[string]any)["offset"]))
		}
		return len(at) == 3 && !slices.ContainsFunc(at, func(v int64) bool { return v != 1010 })
	}, 30*time.Second, 100*time.Millisecond)

	// A soft stop commits the open transaction; the next process resumes from the offsets topic: records
	// produced meanwhile arrive once, nothing is sent twice.
	k.stop()
	more := makeRecords(topics, 600, 3000)
	kafkatest.Produce(t, "A", more)
	k2 := startKmirror(t, k.dbURL, withExactlyOnce)
	k2.awaitStates(name, "RUNNING RUNNING RUNNING", 60*time.Second)
	requireCommittedCopy(t, prefixA(topic), append(sent, more...), "the records produced while stopped reach B, exactly once across the restart")
}

// TestExactlyOnceTargetRefusesTransactions: a transaction timeout above the broker's
// transaction.max.timeout.ms makes the target refuse InitTransactions. The task fails, naming the cause,
// instead of replicating without transactions.
func TestExactlyOnceTargetRefusesTransactions(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "", withExactlyOnce)
	prefix := "eosrefused" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 1)
	kafkatest.Produce(t, "A", makeRecords(topics, 10, 0))
	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", map[string]any{
		"tasks.max": "1", "exactly.once.support": "required", "source.consumer.isolation.level": "read_committed",
		"producer.override.transaction.timeout.ms": "3600000"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING FAILED", 60*time.Second)
	_, st := k.do(http.MethodGet, "/connectors/"+name+"/status", nil)
	trace := st.(map[string]any)["tasks"].([]any)[0].(map[string]any)["trace"].(string)
	require.Contains(t, trace, "did not initialize transactions for transactional.id kmirror-"+name+"-0")
	require.Contains(t, trace, "Transaction timeout is larger than the maximum value allowed by the broker")
	require.NotContains(t, trace, "fenced", "a refused transaction timeout is no fence (it was once taken for one, and restarted four times)")
	// Nothing was written without a transaction.
	require.Empty(t, readCommitted(t, prefixA(topics[0].name)))
}

// requireCommittedCopy waits until remote, read with read_committed, holds as many records per partition as sent,
// and then requires exactly sent's values, in order: nothing missing, duplicated or reordered.
func requireCommittedCopy(t *testing.T, remote string, sent []kafkatest.Record, what string) {
	t.Helper()
	want := groupByPartition(sent)
	var got map[int32][]kafka.Record
	require.Eventually(t, func() bool {
		var err error
		if got, err = tryReadCommitted(t, remote); err != nil {
			return false
		}
		for pk, rs := range want {
			if len(got[pk.partition]) < len(rs) {
				return false
			}
		}
		return true
	}, 2*time.Minute, 500*time.Millisecond, what)
	for pk, rs := range want {
		have := got[pk.partition]
		require.Len(t, have, len(rs), "%s: partition %d exactly once", what, pk.partition)
		for i := range rs {
			require.Equal(t, rs[i].Value, have[i].Value(), "%s: partition %d record %d", what, pk.partition, i)
		}
	}
}
