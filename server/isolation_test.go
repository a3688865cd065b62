package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// TestSourceSkipsAbortedTransactionsByDefault: with default flags and no isolation.level set, the source
// consumer reads committed records only (a deliberate difference from MM2), so no record of an aborted source
// transaction reaches B: the per-record audit finds every committed record once, in order, and nothing else,
// and a group committed at any position of the source log translates exactly to where its next committed
// record is on B.
func TestSourceSkipsAbortedTransactionsByDefault(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	alias := uniqueAlias("A")
	topic := kafkatest.TopicName(t, "isodefault")
	kafkatest.CreateTopic(t, "A", topic, 2, nil)
	layouts := map[int32][]sourceTxn{
		0: {{5, true}, {4, false}, {3, true}, {2, false}, {3, false}, {6, true}, {3, false}},
		// Starts with a committed transaction: where a partition starts with an aborted one, the C data path
		// does not confirm that the records before its first committed record are none, and leaves groups
		// positioned there untranslated (never wrongly exact); the Go path translates them.
		1: {{2, true}, {3, false}, {4, true}, {2, false}, {1, true}, {2, true}},
	}
	logs := map[int32][]sourceLogRecord{}
	for p, l := range layouts {
		logs[p] = produceTxns(t, topic, p, "first", l)
	}

	src := mirrorConfig(t, topic, map[string]any{"source.cluster.alias": alias, "tasks.max": "1"})
	code, body := k.do(http.MethodPut, "/connectors/src-"+alias+"/config", src)
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates("src-"+alias, "RUNNING RUNNING", 60*time.Second)
	ck := checkpointConfig(t, alias, "xl-"+alias+"-.*", map[string]any{"topics": topic, "tasks.max": "1"})
	code, body = k.do(http.MethodPut, "/connectors/ck-"+alias+"/config", ck)
	require.Equal(t, http.StatusCreated, code, "%v", body)
	requireExactTranslations(t, k, alias, topic, logs, "defaults")

	more := map[int32][]sourceTxn{0: {{2, false}, {4, true}}, 1: {{3, true}, {2, false}}}
	for p, l := range more {
		logs[p] = append(logs[p], produceTxns(t, topic, p, "running", l)...)
	}
	requireExactTranslations(t, k, alias, topic, logs, "defaults, transactions written while running")
	for p := range int32(2) {
		for _, r := range kafkatest.ReadAll(t, "B", alias+"."+topic, p) {
			require.NotContains(t, string(r.Value), "aborted", "partition %d offset %d on B (read uncommitted)", p, r.Offset)
		}
	}
}

// TestReadUncommittedCopiesAbortedRecordsAndSaysSo: with source.consumer.isolation.level=read_uncommitted
// chosen, every record of the source, aborted ones included, reaches B once and in order (as MM2 copies them),
// each partition that holds transactions gets an aborted_records_replicated notice, and no translation of a
// group into such a partition is called exact, since a group may resume at a record it never saw on A.
func TestReadUncommittedCopiesAbortedRecordsAndSaysSo(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	alias := uniqueAlias("A")
	topic := kafkatest.TopicName(t, "isouncommitted")
	kafkatest.CreateTopic(t, "A", topic, 2, nil)
	layouts := map[int32][]sourceTxn{
		0: {{5, true}, {4, false}, {3, true}},
		1: {{2, true}, {3, false}, {4, true}},
	}
	logs := map[int32][]sourceLogRecord{}
	for p, l := range layouts {
		logs[p] = produceTxns(t, topic, p, "first", l)
	}
	plain := kafkatest.TopicName(t, "isoplain") // no transactions: nothing to say
	kafkatest.CreateTopic(t, "A", plain, 1, nil)
	producePlain(t, plain, 0, 0, 20)

	src := mirrorConfig(t, topic+"|"+plain, map[string]any{"source.cluster.alias": alias, "tasks.max": "1",
		"source.consumer.isolation.level": "read_uncommitted"})
	code, body := k.do(http.MethodPut, "/connectors/src-"+alias+"/config", src)
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates("src-"+alias, "RUNNING RUNNING", 60*time.Second)

	// Per-record audit: every source record, aborted ones too, once and in order.
	remote := alias + "." + topic
	for p := range int32(2) {
		var want []string
		for _, r := range logs[p] {
			want = append(want, r.value)
		}
		var got []string
		require.Eventually(t, func() bool {
			got = got[:0]
			for _, r := range kafkatest.ReadAll(t, "B", remote, p) {
				got = append(got, string(r.Value))
			}
			return len(got) >= len(want)
		}, time.Minute, 200*time.Millisecond, "partition %d on B", p)
		missing, dups, reordered := auditSeqs(want, got)
		require.Zero(t, missing+dups+reordered, "partition %d: %d missing, %d duplicated, %d reordered", p, missing, dups, reordered)
	}

	// A notice per partition of the transactional topic, none for the plain one.
	require.Eventually(t, func() bool {
		_, body := k.do(http.MethodGet, "/connectors/src-"+alias+"/notices", nil)
		n := 0
		for _, u := range body.(map[string]any)["units"].([]any) {
			for _, x := range u.(map[string]any)["notices"].([]any) {
				m := x.(map[string]any)
				if m["kind"] == "aborted_records_replicated" {
					require.Equal(t, topic, m["topic"], "%v", m)
					n++
				}
			}
		}
		return n == 2
	}, 30*time.Second, 200*time.Millisecond, "aborted_records_replicated for both partitions")

	// Groups inside an aborted transaction, on a record, at the end: translated, never exact.
	ck := checkpointConfig(t, alias, "xu-"+alias+"-.*", map[string]any{"topics": topic + "|" + plain, "tasks.max": "1"})
	code, body = k.do(http.MethodPut, "/connectors/ck-"+alias+"/config", ck)
	require.Equal(t, http.StatusCreated, code, "%v", body)
	ends := kafkatest.PartitionEnds(t, "A", topic, 2)
	positions := map[string]kafkatest.Partition{}
	commit := func(g string, p kafkatest.Partition, c int64) {
		positions[g] = p
		commitGroup(t, g, map[kafkatest.Partition]int64{p: c})
	}
	commit("xu-"+alias+"-aborted", kafkatest.Partition{Topic: topic, Partition: 0}, 7) // inside the aborted transaction
	commit("xu-"+alias+"-record", kafkatest.Partition{Topic: topic, Partition: 1}, 1)
	commit("xu-"+alias+"-end", kafkatest.Partition{Topic: topic, Partition: 1}, ends[1])
	commit("xu-"+alias+"-plain", kafkatest.Partition{Topic: plain, Partition: 0}, 10)
	for g, p := range positions {
		var o groupOffset
		require.Eventually(t, func() bool {
			o = k.groupOffsets("ck-"+alias, g)[p]
			return o.translated && o.checkpointed
		}, 90*time.Second, 200*time.Millisecond, "group %s translated", g)
		require.Equal(t, p.Topic == plain, o.exact, "group %s at %v: exact only where no transaction was read uncommitted (%+v)", g, p, o)
	}
}
