package source

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/tasks"
)

// txnRun builds the part of a source run that newSourceTxns works on, from a connector config, the way
// prepare does: translated client settings, pipeline defaults, the delivery timeout capped by a 3 s settle
// window.
func txnRun(t *testing.T, extra map[string]string) *sourceRun {
	t.Helper()
	raw := map[string]string{
		"name": "mm2", "connector.class": mirrorconfig.SourceConnectorClass, "source.cluster.alias": "A", "target.cluster.alias": "B",
		"source.cluster.bootstrap.servers": "a:9092", "target.cluster.bootstrap.servers": "b:9092", connectors.TaskClassKey: connectors.SourceTaskClass,
	}
	for k, v := range extra {
		raw[k] = v
	}
	p, _ := mirrorconfig.LookupPlugin(mirrorconfig.SourceConnectorClass)
	cfg, err := connectors.ParseConfig(p, raw, clientconfig.Options{})
	require.NoError(t, err)
	log := slog.New(slog.DiscardHandler)
	r := &sourceRun{t: &sourceTask{id: tasks.TaskID{Connector: "mm2", Task: 2}, cfg: newConfig(cfg), log: log, eos: true}, log: log, sourceAlias: "A", targetAlias: "B"}
	r.consumerProps, err = cfg.ClientProps(clientconfig.ReplicationConsumer, "mm2", 2)
	require.NoError(t, err)
	r.producerProps, err = cfg.ClientProps(clientconfig.ReplicationProducer, "mm2", 2)
	require.NoError(t, err)
	PipelineDefaults(r.consumerProps, r.producerProps, 1)
	connectors.CapDelivery(r.producerProps, 3*time.Second, log)
	return r
}

// The transactional producer gets the task's stable transactional.id (no worker, no epoch: a new owner must
// fence the old one), idempotence, a transaction timeout librdkafka accepts (at least the delivery timeout, the
// socket timeout within it), and the source consumer reads committed records unless told otherwise.
func TestSourceTxnsSettings(t *testing.T) {
	r := txnRun(t, nil)
	x, err := r.newSourceTxns(2)
	require.NoError(t, err)
	require.Equal(t, "kmirror-mm2-2", x.txnID)
	require.Equal(t, "kmirror-mm2-2", r.producerProps["transactional.id"])
	require.Equal(t, "true", r.producerProps["enable.idempotence"])
	require.Equal(t, "2000", r.producerProps["message.timeout.ms"], "capped below the 3 s settle window")
	require.Equal(t, "2000", r.producerProps["transaction.timeout.ms"], "poll boundary: the delivery timeout")
	require.Equal(t, "2100", r.producerProps["socket.timeout.ms"])
	require.Equal(t, "20", r.producerProps["retry.backoff.ms"])
	require.Equal(t, "read_committed", r.consumerProps["isolation.level"])
	require.Equal(t, "read_committed", x.offsetsProps["isolation.level"])
	require.Equal(t, "b:9092", x.offsetsProps["bootstrap.servers"], "the offsets topic is on the target")
	require.Equal(t, "mm2-offsets.A.internal", x.offsetsTopic)
	require.Equal(t, mirrorconfig.TransactionBoundaryPoll, x.boundary)
	require.Equal(t, defaultMaxPollRecords, x.maxPollRecords)

	// An interval boundary keeps its transaction open for the interval: the timeout grows by it.
	r = txnRun(t, map[string]string{"transaction.boundary": "Interval", "transaction.boundary.interval.ms": "750",
		"source.consumer.isolation.level": "read_uncommitted", "offsets.storage.topic": "my-offsets", "consumer.max.poll.records": "50"})
	x, err = r.newSourceTxns(2)
	require.NoError(t, err)
	require.Equal(t, mirrorconfig.TransactionBoundaryInterval, x.boundary)
	require.Equal(t, 750*time.Millisecond, x.interval)
	require.Equal(t, "2750", r.producerProps["transaction.timeout.ms"])
	require.Equal(t, "read_uncommitted", r.consumerProps["isolation.level"], "an explicit read_uncommitted stands (and is logged)")
	require.Equal(t, "my-offsets", x.offsetsTopic, "Connect's per-connector offsets topic")
	require.Equal(t, 50, x.maxPollRecords)

	// A config stored with connector-defined boundaries does not run with others.
	_, err = txnRun(t, map[string]string{"transaction.boundary": "connector"}).newSourceTxns(2)
	require.ErrorContains(t, err, "does not define transaction boundaries")
}

// A poll boundary commits as soon as the consumer has nothing fetched; an interval one waits at most until the
// interval ends; without a transaction open the loop waits as usual.
func TestSourceTxnsPollTimeout(t *testing.T) {
	x := &sourceTxns{boundary: mirrorconfig.TransactionBoundaryPoll}
	require.Equal(t, 100*time.Millisecond, x.pollTimeout(100*time.Millisecond))
	x.open, x.began = true, time.Now()
	require.Zero(t, x.pollTimeout(100*time.Millisecond))
	x.boundary, x.interval = mirrorconfig.TransactionBoundaryInterval, time.Second
	require.Equal(t, 100*time.Millisecond, x.pollTimeout(100*time.Millisecond))
	x.began = time.Now().Add(-950 * time.Millisecond)
	require.LessOrEqual(t, x.pollTimeout(100*time.Millisecond), 50*time.Millisecond)
	x.began = time.Now().Add(-2 * time.Second)
	require.Zero(t, x.pollTimeout(100*time.Millisecond))
}

// A task of a connector that requires exactly-once does not run on a worker without the support: no silent
// fallback to at-least-once. "requested" runs either way.
func TestSourceTaskRequiresExactlyOnceWorker(t *testing.T) {
	r := txnRun(t, map[string]string{"exactly.once.support": "Required"})
	r.t.eos = false
	_, err := r.t.prepare(t.Context(), nil)
	require.ErrorContains(t, err, "this worker does not have exactly-once source support enabled")
	r.t.eos = true
	require.NoError(t, r.t.requireExactlyOnce())
	r = txnRun(t, map[string]string{"exactly.once.support": "requested"})
	r.t.eos = false
	require.NoError(t, r.t.requireExactlyOnce())
}

type leaseOnlyEnv struct {
	tasks.TaskEnv
	valid bool
}

func (e *leaseOnlyEnv) Lease() tasks.Lease { return fixedLease{e.valid} }

type fixedLease struct{ valid bool }

func (l fixedLease) Valid() bool { return l.valid }
func (l fixedLease) ValidFor() time.Duration {
	if l.valid {
		return time.Hour
	}
	return 0
}
func (fixedLease) Revoked() <-chan struct{} { return nil }
func (fixedLease) Settle() time.Duration    { return 3 * time.Second }

// A fence seen while the run's lease is valid restarts the pipeline (whose InitTransactions fences the other
// producer in turn) a few times, then fails the task naming the transactional id; without a valid lease the
// run ends fenced; other errors pass through unchanged. The chaos suite's stalled worker, resuming, fenced the
// task's new owner by aborting its own timed-out transaction: the new owner failed before this.
func TestSourceTxnsFencedWhileOwning(t *testing.T) {
	r := txnRun(t, nil)
	x, err := r.newSourceTxns(2)
	require.NoError(t, err)
	env := &leaseOnlyEnv{valid: true}
	r.env = env

	other := errors.New("something else")
	require.Same(t, other, x.fenced(r, other))
	require.NoError(t, x.fenced(r, nil))
	// A fatal error that is no fence (INVALID_TRANSACTION_TIMEOUT, say) keeps its own message and handling.
	fatal := fmt.Errorf("init: %w", kafkatest.FatalProduceError())
	require.Same(t, fatal, x.fenced(r, fatal))

	for i := range maxFences {
		err := x.fenced(r, fmt.Errorf("produce: %w", kafkatest.FencedError()))
		var pe *pipelineError
		require.ErrorAs(t, err, &pe, "fence %d", i+1)
		require.ErrorContains(t, err, "kmirror-mm2-2")
	}
	err = x.fenced(r, kafkatest.FencedError())
	var pe *pipelineError
	require.False(t, errors.As(err, &pe), "the fence after %d within %s fails the task", maxFences, fenceWindow)
	require.ErrorContains(t, err, "transactional.id kmirror-mm2-2")

	env.valid = false
	require.ErrorIs(t, x.fenced(r, kafkatest.FencedError()), errLeaseRevoked)
}
