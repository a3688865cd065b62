package server_test

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// TestSourceStartsPastRecordsTheConsumerCannotRead: a partition whose log begins with an aborted transaction,
// replicated read_committed. The task starts the partition at its log start (0), and the first record the
// consumer returns lies past it (21): the task reads the partition again from its start once, as it does for
// any first record past the start, then accepts that the records in between are not for this consumer. The
// target gets the committed records exactly once, in order, and the stored offset is the last of them.
func TestSourceStartsPastRecordsTheConsumerCannotRead(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	prefix := "txs" + uniqueAlias("")
	topic := kafkatest.TopicName(t, prefix)
	kafkatest.CreateTopic(t, "A", topic, 1, nil)

	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkatest.Bootstrap(t, "A")), kgo.TransactionalID(topic+"-txn"),
		kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	ctx := t.Context()
	transaction := func(n int, what string, end kgo.TransactionEndTry) {
		require.NoError(t, cl.BeginTransaction())
		for i := range n {
			res := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%s-%d", what, i)})
			require.NoError(t, res.FirstErr())
		}
		require.NoError(t, cl.EndTransaction(ctx, end))
	}
	transaction(20, "aborted", kgo.TryAbort)    // offsets 0-19, abort marker at 20
	transaction(10, "committed", kgo.TryCommit) // offsets 21-30, commit marker at 31

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, regexp.QuoteMeta(topic), map[string]any{
		"tasks.max": "1", "source.consumer.isolation.level": "read_committed"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING", 60*time.Second)

	got := kafkatest.Consume(t, "B", prefixA(topic), 1, 10, time.Minute)
	require.Len(t, got, 10, "committed records on B")
	for i, r := range got {
		require.Equal(t, fmt.Sprintf("committed-%d", i), string(r.Value), "record %d on B", i)
	}
	require.Eventually(t, func() bool {
		_, offs := k.do(http.MethodGet, "/connectors/"+name+"/offsets", nil)
		list := offs.(map[string]any)["offsets"].([]any)
		return len(list) == 1 && mustInt(t, list[0].(map[string]any)["offset"].(map[string]any)["offset"]) == 30
	}, 30*time.Second, 100*time.Millisecond, "the stored offset is the last committed record's")
	// Nothing more arrives: the re-read did not copy a record twice.
	require.Len(t, kafkatest.ReadAll(t, "B", prefixA(topic), 0), 10)
}
