package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// taskTraces returns the traces of the connector's tasks.
func (k *kmirror) taskTraces(name string) string {
	_, body := k.do(http.MethodGet, "/connectors/"+name+"/status", nil)
	m, ok := body.(map[string]any)
	if !ok {
		return ""
	}
	var traces []string
	for _, tk := range m["tasks"].([]any) {
		if tr, ok := tk.(map[string]any)["trace"].(string); ok {
			traces = append(traces, tr)
		}
	}
	return strings.Join(traces, "\n")
}

// TestSourceReportsDataDeletedBeforeReplication: records deleted on the source (as retention does) while the
// connector was stopped cannot be replicated; the task says so in its status, with the offsets, and goes on.
func TestSourceReportsDataDeletedBeforeReplication(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	prefix := "gap" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 1)
	all := makeRecords(topics, 300, 0)
	kafkatest.Produce(t, "A", all[:100])

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", nil))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING", 60*time.Second)
	awaitCount(t, prefixA, topics, all[:100], time.Minute)

	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/stop", nil)
	require.Equal(t, http.StatusNoContent, code)
	k.awaitStates(name, "STOPPED", 30*time.Second)
	kafkatest.Produce(t, "A", all[100:200])
	require.NoError(t, kafkatest.Admin(t, "A").DeleteRecordsBefore(t.Context(), topics[0].name, 0, 150))
	kafkatest.Produce(t, "A", all[200:])

	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/resume", nil)
	require.Equal(t, http.StatusAccepted, code)
	require.Eventually(t, func() bool {
		return strings.Contains(k.taskTraces(name), "records 100 to 149 of A topic "+topics[0].name+" partition 0 were deleted")
	}, time.Minute, 100*time.Millisecond, "the gap shows in the task status: %q", k.taskTraces(name))
	require.Equal(t, "RUNNING RUNNING", k.states(name), "the task goes on with the records that exist")
	// The same fact, typed, for dashboards and metrics.
	_, body = k.do(http.MethodGet, "/connectors/"+name+"/notices", nil)
	var typed []any
	for _, u := range body.(map[string]any)["units"].([]any) {
		typed = append(typed, u.(map[string]any)["notices"].([]any)...)
	}
	require.Len(t, typed, 1, "one notice: %v", body)
	n := typed[0].(map[string]any)
	require.Equal(t, "data_not_replicated", n["kind"])
	require.Equal(t, topics[0].name, n["topic"])
	require.Equal(t, int64(0), mustInt(t, n["partition"]))
	require.Equal(t, int64(100), mustInt(t, n["first_offset"]))
	require.Equal(t, int64(149), mustInt(t, n["last_offset"]))

	// Everything still on the source is replicated, in order, after the gap.
	want := append(append([]kafkatest.Record{}, all[:100]...), all[150:]...)
	got := awaitCount(t, prefixA, topics, want, time.Minute)
	requireExactCopy(t, want, got)
}

// TestSourceReportsRecreatedTopic: a source topic deleted and created again (while the connector is stopped)
// has a new topic id; the task starts the new topic at its beginning, so none of its records is lost even
// where its offsets overlap the old topic's. The stopped connector kept the partition's row and watched its end
// (200, caught up): nothing was lost, so no notice is shown at all.
func TestSourceReportsRecreatedTopic(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	prefix := "rec" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 1)
	first := makeRecords(topics, 200, 0)
	kafkatest.Produce(t, "A", first)

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", nil))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING", 60*time.Second)
	awaitCount(t, prefixA, topics, first, time.Minute)

	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/stop", nil)
	require.Equal(t, http.StatusNoContent, code)
	k.awaitStates(name, "STOPPED", 30*time.Second)
	var why string
	require.Eventually(t, func() bool {
		var ok bool
		ok, why = k.partitions(name).lagIs(topics[0].name, "stop", map[int32]int64{0: 0})
		return ok
	}, 30*time.Second, 100*time.Millisecond, "the stop keeps the partition's row, caught up: %s", lazy(func() string { return why }))
	admin := kafkatest.Admin(t, "A")
	require.NoError(t, admin.DeleteTopics(t.Context(), []string{topics[0].name}))
	require.Eventually(t, func() bool {
		_, err := admin.PartitionCount(t.Context(), topics[0].name)
		return err != nil
	}, 30*time.Second, 100*time.Millisecond)
	kafkatest.CreateTopic(t, "A", topics[0].name, 1, nil)
	// More records than the old topic had, so that the stored offset (199) lies inside the new topic's range:
	// an offset alone would resume at 200 and skip the new topic's first 200 records.
	second := makeRecords(topics, 300, 1000)
	kafkatest.Produce(t, "A", second)

	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/resume", nil)
	require.Equal(t, http.StatusAccepted, code)

	want := append(append([]kafkatest.Record{}, first...), second...)
	got := awaitCount(t, prefixA, topics, want, time.Minute)
	requireExactCopy(t, want, got)
	trace := k.taskTraces(name)
	require.NotContains(t, trace, "DATA NOT REPLICATED", "nothing was lost, so no loss is reported")
	require.NotContains(t, trace, "re-created", "the end seen while stopped says nothing was lost: no notice")
	offs := k.committedRecords(name)
	require.Equal(t, int64(len(second)), offs, "the committed offset is the new topic's")
}

// TestSourceFailsOnRecordTooLargeForTarget: a record the target producer cannot send is not skipped; the task
// fails with a trace that names the record and the setting to change.
func TestSourceFailsOnRecordTooLargeForTarget(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	prefix := "big" + uniqueAlias("")
	name := kafkatest.TopicName(t, prefix)
	kafkatest.CreateTopic(t, "A", name, 1, map[string]string{"max.message.bytes": "4194304"})
	big := kafkatest.Record{Topic: name, Key: []byte("big"), Value: []byte(strings.Repeat("x", 2<<20))}
	require.NoError(t, kafkatest.ProduceTo(kafkatest.Bootstrap(t, "A"), []kafkatest.Record{big}, map[string]string{"message.max.bytes": "4194304"}))

	conn := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+conn+"/config", mirrorConfig(t, prefix+".*", nil))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(conn, "RUNNING FAILED", time.Minute)
	trace := k.taskTraces(conn)
	require.Contains(t, trace, "replicate A topic "+name+" partition 0 offset 0")
	require.Contains(t, trace, "max.request.size")
	_, offsets := k.do(http.MethodGet, "/connectors/"+conn+"/offsets", nil)
	require.Empty(t, offsets.(map[string]any)["offsets"], "nothing was committed past the record")
}
