package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mm2offsets"
)

// eosConfig is an exactly-once MirrorSourceConnector's config for the topics of prefix.
func eosConfig(t *testing.T, prefix, tasksMax string) map[string]any {
	return mirrorConfig(t, prefix+".*", map[string]any{
		"tasks.max": tasksMax, "exactly.once.support": "required", "source.consumer.isolation.level": "read_committed"})
}

// setTarget stops or resumes a connector and waits for the states it should reach.
func setTarget(t *testing.T, k *kmirror, name, action, states string) {
	t.Helper()
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/"+action, nil)
	require.Contains(t, []int{http.StatusNoContent, http.StatusAccepted}, code, "%v", body)
	k.awaitStates(name, states, 60*time.Second)
}

// committedOffsets reads the connector's offsets from the offsets topic on B (read_committed), by partition.
func committedOffsets(t *testing.T, name string) map[int32]int64 {
	t.Helper()
	c := mm2offsets.NewCollector(name, "A")
	_, err := kafka.ReadTopic(t.Context(), map[string]string{"bootstrap.servers": kafkatest.Bootstrap(t, "B"), "isolation.level": "read_committed"},
		mm2offsets.Topic("A"), slog.New(slog.DiscardHandler), func(r kafka.Record) error { c.Add(r.Key(), r.Value()); return nil })
	require.NoError(t, err)
	out := map[int32]int64{}
	for _, o := range c.Offsets() {
		out[o.Source.Partition] = o.Offset
	}
	return out
}

// storedOffsets reads the connector's offsets from GET /connectors/{c}/offsets, by partition.
func storedOffsets(t *testing.T, k *kmirror, name string) map[int32]int64 {
	t.Helper()
	code, body := k.do(http.MethodGet, "/connectors/"+name+"/offsets", nil)
	require.Equal(t, http.StatusOK, code, "%v", body)
	out := map[int32]int64{}
	for _, o := range body.(map[string]any)["offsets"].([]any) {
		part := o.(map[string]any)["partition"].(map[string]any)
		out[int32(mustInt(t, part["partition"]))] = mustInt(t, o.(map[string]any)["offset"].(map[string]any)["offset"])
	}
	return out
}

// TestExactlyOnceFencesFormerTaskSet: when the task set changes (two tasks, then one), the transactional ids of
// the former tasks are fenced before the new set replicates. A zombie of former task 1 (an owner that stalled
// with a transaction open) holds a record of partition 1 in an open transaction; once the connector runs one
// task, which now owns partition 1, the zombie's commit fails and B, read with read_committed, holds every
// record exactly once and nothing of the zombie. (Without the fence the zombie's open transaction also holds
// back partition 1's last stable offset, so read_committed readers see nothing past it until it commits.)
func TestExactlyOnceFencesFormerTaskSet(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "", withExactlyOnce)
	prefix := "eosfence" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 4)
	remote := prefixA(topics[0].name)
	sent := makeRecords(topics, 400, 0)
	kafkatest.Produce(t, "A", sent[:200])
	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", eosConfig(t, prefix, "2"))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING RUNNING", 60*time.Second)
	requireCommittedCopy(t, remote, sent[:200], "two tasks replicate")

	setTarget(t, k, name, "stop", "STOPPED")
	zombie, err := kafka.NewProducer(map[string]string{"bootstrap.servers": kafkatest.Bootstrap(t, "B"),
		"transactional.id": "kmirror-" + name + "-1", "enable.idempotence": "true",
		"transaction.timeout.ms": "600000"}, // the coordinator's own timeout must not be what aborts it
		slog.New(slog.DiscardHandler), func(kafka.Delivery) {})
	require.NoError(t, err)
	defer zombie.Close()
	require.NoError(t, zombie.InitTransactions(t.Context()))
	require.NoError(t, zombie.BeginTransaction())
	require.NoError(t, zombie.Produce(remote, 1, []byte("zombie"), []byte("zombie"), nil, time.Time{}, nil))
	require.Zero(t, zombie.Flush(t.Context()), "the zombie's record reached B, in its open transaction")

	// One task: partition 1 moves from former task 1 to task 0.
	code, body = k.do(http.MethodPut, "/connectors/"+name+"/config", eosConfig(t, prefix, "1"))
	require.Equal(t, http.StatusOK, code, "%v", body)
	setTarget(t, k, name, "resume", "RUNNING RUNNING")
	kafkatest.Produce(t, "A", sent[200:])
	requireCommittedCopy(t, remote, sent, "one task replicates the rest")

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err = zombie.CommitTransaction(ctx)
	require.Error(t, err, "the zombie of former task 1 must be fenced")
	t.Logf("the zombie's commit: %v", err)
	requireCommittedCopy(t, remote, sent, "nothing of the zombie is visible")

	// A change while running (one task, then three): the former task drains, one task of the new set fences
	// its id, the others wait for that; nothing is lost or repeated.
	code, body = k.do(http.MethodPut, "/connectors/"+name+"/config", eosConfig(t, prefix, "3"))
	require.Equal(t, http.StatusOK, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING RUNNING RUNNING", 60*time.Second)
	more := makeRecords(topics, 400, 400)
	kafkatest.Produce(t, "A", more)
	requireCommittedCopy(t, remote, append(sent, more...), "three tasks replicate the rest")
}

// TestExactlyOnceOffsetsPatchAndReset: in exactly-once mode PATCH and DELETE /connectors/{c}/offsets reach the
// offsets topic on the target (which a task resumes from) as well as PostgreSQL. After a PATCH back to
// earlier offsets, the resumed connector replicates again from exactly there; after a DELETE, from the
// beginning. B is audited record by record with read_committed.
func TestExactlyOnceOffsetsPatchAndReset(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "", withExactlyOnce)
	prefix := "eosoffsets" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 2)
	topic := topics[0].name
	remote := prefixA(topic)
	sent := makeRecords(topics, 200, 0) // 100 per partition, at source offsets 0..99
	kafkatest.Produce(t, "A", sent)
	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", eosConfig(t, prefix, "1"))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING", 60*time.Second)
	requireCommittedCopy(t, remote, sent, "the first copy")
	require.Eventually(t, func() bool { return len(storedOffsets(t, k, name)) == 2 }, 30*time.Second, 100*time.Millisecond)

	setTarget(t, k, name, "stop", "STOPPED")
	offset := func(partition, offset int) map[string]any {
		return map[string]any{"partition": map[string]any{"cluster": "A", "topic": topic, "partition": partition},
			"offset": map[string]any{"offset": offset}}
	}
	code, body = k.do(http.MethodPatch, "/connectors/"+name+"/offsets", map[string]any{"offsets": []any{offset(0, 49), offset(1, 89)}})
	require.Equal(t, http.StatusOK, code, "%v", body)
	require.Equal(t, "The offsets for this connector have been altered successfully", body.(map[string]any)["message"])
	require.Equal(t, map[int32]int64{0: 49, 1: 89}, committedOffsets(t, name), "the offsets topic holds the altered offsets")
	require.Equal(t, map[int32]int64{0: 49, 1: 89}, storedOffsets(t, k, name), "so does PostgreSQL's copy")

	setTarget(t, k, name, "resume", "RUNNING RUNNING")
	byPart := groupByPartition(sent)
	want := append(append(append([]kafkatest.Record{}, sent...), byPart[partitionKey{topic, 0}][50:]...), byPart[partitionKey{topic, 1}][90:]...)
	requireCommittedCopy(t, remote, want, "replication resumes right after the altered offsets")

	setTarget(t, k, name, "stop", "STOPPED")
	code, body = k.do(http.MethodDelete, "/connectors/"+name+"/offsets", nil)
	require.Equal(t, http.StatusOK, code, "%v", body)
	require.Equal(t, "The offsets for this connector have been reset successfully", body.(map[string]any)["message"])
	require.Empty(t, committedOffsets(t, name), "the offsets topic holds tombstones")
	require.Empty(t, storedOffsets(t, k, name))

	setTarget(t, k, name, "resume", "RUNNING RUNNING")
	want = append(want, sent...)
	requireCommittedCopy(t, remote, want, "replication starts over from the beginning")
}

// TestExactlyOnceOffsetsTargetUnreachable: a PATCH whose offsets cannot reach the offsets topic fails, naming
// the target, and changes nothing.
func TestExactlyOnceOffsetsTargetUnreachable(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "", withExactlyOnce)
	prefix := "eosoffsetsdown" + uniqueAlias("")
	name := "mm2-" + prefix
	cfg := eosConfig(t, prefix, "1")
	cfg["target.cluster.bootstrap.servers"] = "127.0.0.1:1"
	code, body := k.do(http.MethodPost, "/connectors", map[string]any{"name": name, "config": cfg, "initial_state": "STOPPED"})
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "STOPPED", 30*time.Second)
	code, body = k.do(http.MethodPatch, "/connectors/"+name+"/offsets", map[string]any{"offsets": []any{map[string]any{
		"partition": map[string]any{"cluster": "A", "topic": "t", "partition": 0}, "offset": map[string]any{"offset": 5}}}})
	require.Equal(t, http.StatusInternalServerError, code, "%v", body)
	msg := body.(map[string]any)["message"].(string)
	t.Logf("PATCH answered: %s", msg)
	require.Contains(t, msg, "Failed to alter the offsets of connector "+name)
	require.Contains(t, msg, "target cluster B")
	require.Empty(t, storedOffsets(t, k, name))
}
