package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/provenance"
)

// sourceTopic is a topic created on cluster A for a replication test.
type sourceTopic struct {
	name       string
	partitions int
}

func createSourceTopics(t *testing.T, prefix string, partitions ...int) []sourceTopic {
	t.Helper()
	var out []sourceTopic
	for i, n := range partitions {
		name := kafkatest.TopicName(t, fmt.Sprintf("%s%d", prefix, i))
		kafkatest.CreateTopic(t, "A", name, n, nil)
		out = append(out, sourceTopic{name: name, partitions: n})
	}
	return out
}

// recordsBase is the timestamp of the first test record. It must be recent: the brokers' time-based retention
// (7 days) deletes records whose timestamps are older, a few minutes after they are written.
var recordsBase = time.Now().Add(-time.Hour).Truncate(time.Second)

// makeRecords builds n records spread over the topics' partitions: keyed, with headers (a duplicate key and a
// null value among them), every tenth a tombstone, every seventh keyless, timestamps from a fixed base.
func makeRecords(topics []sourceTopic, n, from int) []kafkatest.Record {
	base := recordsBase
	out := make([]kafkatest.Record, 0, n)
	for i := from; i < from+n; i++ {
		tp := topics[i%len(topics)]
		r := kafkatest.Record{
			Topic: tp.name, Partition: int32((i / len(topics)) % tp.partitions),
			Key:       []byte("key-" + strconv.Itoa(i)),
			Value:     []byte(fmt.Sprintf("value-%d-%s", i, strings.Repeat("x", i%50))),
			Timestamp: base.Add(time.Duration(i) * time.Millisecond),
			Headers:   []kafka.Header{{Key: "seq", Value: []byte(strconv.Itoa(i))}, {Key: "seq", Value: []byte("dup")}, {Key: "nil", Value: nil}},
		}
		if i%10 == 9 {
			r.Value = nil
		}
		if i%7 == 3 {
			r.Key = nil
		}
		out = append(out, r)
	}
	return out
}

func mirrorConfig(t *testing.T, topicsRegex string, extra map[string]any) map[string]any {
	cfg := map[string]any{
		"connector.class":                       "org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"source.cluster.alias":                  "A",
		"target.cluster.alias":                  "B",
		"source.cluster.bootstrap.servers":      kafkatest.Bootstrap(t, "A"),
		"target.cluster.bootstrap.servers":      kafkatest.Bootstrap(t, "B"),
		"topics":                                topicsRegex,
		"replication.factor":                    "1",
		"offset-syncs.topic.replication.factor": "1",
		"sync.topic.acls.enabled":               "false",
		"refresh.topics.interval.seconds":       "1",
	}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

// partitionKey names a partition of a topic.
type partitionKey struct {
	topic     string
	partition int32
}

// groupByPartition splits records by topic-partition, keeping their order.
func groupByPartition(rs []kafkatest.Record) map[partitionKey][]kafkatest.Record {
	out := map[partitionKey][]kafkatest.Record{}
	for _, r := range rs {
		k := partitionKey{r.Topic, r.Partition}
		out[k] = append(out[k], r)
	}
	return out
}

// readRemote reads every partition of every remote topic on B up to its current end.
func readRemote(t *testing.T, remote func(string) string, topics []sourceTopic) map[partitionKey][]kafkatest.Record {
	t.Helper()
	want := map[string]int{}
	for _, tp := range topics {
		want[remote(tp.name)] = tp.partitions
	}
	got := kafkatest.ReadPartitions(t, "B", want, 0)
	out := map[partitionKey][]kafkatest.Record{}
	for _, tp := range topics {
		for p := range tp.partitions {
			out[partitionKey{tp.name, int32(p)}] = got[kafkatest.Partition{Topic: remote(tp.name), Partition: int32(p)}]
		}
	}
	return out
}

func countRecords(m map[partitionKey][]kafkatest.Record) int {
	n := 0
	for _, rs := range m {
		n += len(rs)
	}
	return n
}

// sameRecord tells whether b is a copy of a: the same key, value, timestamp and headers, plus the provenance
// header kmirror adds after a's own when a has none (TestProvenanceHeader checks its value).
func sameRecord(a, b kafkatest.Record) bool {
	return bytes.Equal(a.Key, b.Key) && (a.Key == nil) == (b.Key == nil) &&
		bytes.Equal(a.Value, b.Value) && (a.Value == nil) == (b.Value == nil) &&
		a.Timestamp.UnixMilli() == b.Timestamp.UnixMilli() && fmt.Sprint(a.Headers) == fmt.Sprint(withoutStamp(a, b.Headers))
}

// withoutStamp returns the headers of a copy of sent without the provenance header kmirror added to it.
func withoutStamp(sent kafkatest.Record, hs []kafka.Header) []kafka.Header {
	for _, h := range sent.Headers {
		if h.Key == provenance.Header {
			return hs // it had one: kept as it was
		}
	}
	if n := len(hs); n > 0 && hs[n-1].Key == provenance.Header {
		return hs[:n-1]
	}
	return hs
}

// requireExactCopy checks that every source partition arrived exactly once, in order, in the same partition.
func requireExactCopy(t *testing.T, sent []kafkatest.Record, got map[partitionKey][]kafkatest.Record) {
	t.Helper()
	for k, want := range groupByPartition(sent) {
		have := got[k]
		require.Len(t, have, len(want), "records of %s [%d]", k.topic, k.partition)
		for i := range want {
			require.True(t, sameRecord(want[i], have[i]), "record %d of %s [%d]: want %+v, have %+v", i, k.topic, k.partition, want[i], have[i])
		}
	}
}

// awaitCount waits until every partition of the remote topics holds at least as many records as was sent to
// its source partition, and returns what they hold.
func awaitCount(t *testing.T, remote func(string) string, topics []sourceTopic, sent []kafkatest.Record, within time.Duration) map[partitionKey][]kafkatest.Record {
	t.Helper()
	want := groupByPartition(sent)
	deadline := time.Now().Add(within)
	for {
		// End offsets are cheap to watch; read the records only once there are enough of them.
		ends := map[partitionKey]int64{}
		for _, tp := range topics {
			for p, end := range kafkatest.PartitionEnds(t, "B", remote(tp.name), tp.partitions) {
				ends[partitionKey{tp.name, int32(p)}] = end
			}
		}
		enough := true
		for k, rs := range want {
			if ends[k] < int64(len(rs)) {
				enough = false
			}
		}
		if enough {
			got := readRemote(t, remote, topics)
			complete := true
			for k, rs := range want {
				if len(got[k]) < len(rs) {
					complete = false
				}
			}
			if complete {
				return got
			}
		}
		if time.Now().After(deadline) {
			got := readRemote(t, remote, topics)
			t.Fatalf("not every record replicated within %s: have %d of %d", within, countRecords(got), len(sent))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func prefixA(topic string) string { return "A." + topic }

func TestSourceReplicatesEveryRecordOnceInOrder(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	prefix := "rep" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 8, 2, 2)
	sent := makeRecords(topics, 100_000, 0)
	kafkatest.Produce(t, "A", sent[:50_000])

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", map[string]any{"tasks.max": "4"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING RUNNING RUNNING RUNNING", 60*time.Second)

	// Records produced while the connector runs are replicated as well.
	kafkatest.Produce(t, "A", sent[50_000:])
	got := awaitCount(t, prefixA, topics, sent, 3*time.Minute)
	requireExactCopy(t, sent, got)

	// Remote topics have the source's partition counts.
	for _, tp := range topics {
		n, err := kafkatest.Admin(t, "B").PartitionCount(t.Context(), prefixA(tp.name))
		require.NoError(t, err)
		require.Equal(t, tp.partitions, n)
	}

	// Task planning: 4 tasks, 12 partitions dealt round-robin, visible at GET /tasks.
	_, tasksBody := k.do(http.MethodGet, "/connectors/"+name+"/tasks", nil)
	assigned := 0
	for _, tk := range tasksBody.([]any) {
		cfg := tk.(map[string]any)["config"].(map[string]any)
		tps, err := mirror.DecodeAssignedPartitions(cfg["task.assigned.partitions"].(string))
		require.NoError(t, err)
		require.Len(t, tps, 3, "12 partitions over 4 tasks")
		assigned += len(tps)
	}
	require.Equal(t, 12, assigned)

	// Committed offsets in MM2's shape: the last replicated upstream offset of every partition.
	require.Eventually(t, func() bool {
		_, offs := k.do(http.MethodGet, "/connectors/"+name+"/offsets", nil)
		list := offs.(map[string]any)["offsets"].([]any)
		if len(list) != 12 {
			return false
		}
		for _, o := range list {
			part := o.(map[string]any)["partition"].(map[string]any)
			off := o.(map[string]any)["offset"].(map[string]any)["offset"]
			k := partitionKey{part["topic"].(string), int32(mustInt(t, part["partition"]))}
			if part["cluster"] != "A" || mustInt(t, off) != int64(len(groupByPartition(sent)[k])-1) {
				return false
			}
		}
		return true
	}, 30*time.Second, 100*time.Millisecond, "offsets reach the last record of every partition")

	// Active topics.
	_, topicsBody := k.do(http.MethodGet, "/connectors/"+name+"/topics", nil)
	active := topicsBody.(map[string]any)[name].(map[string]any)["topics"].([]any)
	require.Len(t, active, 3)

	requireOffsetSyncsMatch(t, topics, sent, got)
}

// requireOffsetSyncsMatch decodes the offset syncs on A and checks each against the data: the record at the
// synced upstream offset is the record at the synced downstream offset.
func requireOffsetSyncsMatch(t *testing.T, topics []sourceTopic, sent []kafkatest.Record, got map[partitionKey][]kafkatest.Record) {
	t.Helper()
	ours := map[string]bool{}
	for _, tp := range topics {
		ours[tp.name] = true
	}
	bySource := groupByPartition(sent)
	n := 0
	for _, r := range kafkatest.ReadAll(t, "A", "mm2-offset-syncs.B.internal", 0) {
		s, err := mirror.DecodeOffsetSync(r.Key, r.Value)
		require.NoError(t, err)
		if !ours[s.Topic] {
			continue
		}
		k := partitionKey{s.Topic, s.Partition}
		require.Less(t, s.UpstreamOffset, int64(len(bySource[k])))
		require.Less(t, s.DownstreamOffset, int64(len(got[k])))
		require.True(t, sameRecord(bySource[k][s.UpstreamOffset], got[k][s.DownstreamOffset]), "offset sync %+v", s)
		n++
	}
	require.Positive(t, n, "offset syncs were emitted for the replicated partitions")
}

func mustInt(t *testing.T, v any) int64 {
	t.Helper()
	switch n := v.(type) {
	case interface{ Int64() (int64, error) }:
		i, err := n.Int64()
		require.NoError(t, err)
		return i
	case float64:
		return int64(n)
	}
	t.Fatalf("not a number: %#v", v)
	return 0
}

func TestSourceMoreTasksThanPartitionsAndIdentityPolicy(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	prefix := "idn" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 3, 2)
	sent := makeRecords(topics, 5_000, 0)
	kafkatest.Produce(t, "A", sent)

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", map[string]any{
		"tasks.max":                "20",
		"replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
	}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING"+strings.Repeat(" RUNNING", 5), 60*time.Second)
	identity := func(s string) string { return s }
	got := awaitCount(t, identity, topics, sent, 2*time.Minute)
	requireExactCopy(t, sent, got)
}

func TestSourcePicksUpNewTopicsAndPartitions(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	prefix := "grw" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 2)
	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", map[string]any{"tasks.max": "8"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING RUNNING", 60*time.Second)

	// A new topic, and a partition added to the first one, are replicated without a restart.
	topics = append(topics, createSourceTopics(t, prefix+"new", 3)...)
	require.NoError(t, kafkatest.Admin(t, "A").CreatePartitions(t.Context(), topics[0].name, 4))
	kafkatest.AwaitPartitions(t, "A", topics[0].name, 4)
	topics[0].partitions = 4
	kafkatest.AwaitPartitions(t, "B", prefixA(topics[0].name), 4)
	kafkatest.AwaitPartitions(t, "B", prefixA(topics[1].name), 3)
	k.awaitStates(name, "RUNNING"+strings.Repeat(" RUNNING", 7), 60*time.Second)

	sent := makeRecords(topics, 7_000, 0)
	kafkatest.Produce(t, "A", sent)
	got := awaitCount(t, prefixA, topics, sent, 2*time.Minute)
	requireExactCopy(t, sent, got)
}

func TestSourceLifecycleWhileReplicating(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	prefix := "lfc" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 4)
	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", map[string]any{"tasks.max": "2"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING RUNNING", 60*time.Second)

	all := makeRecords(topics, 20_000, 0)
	kafkatest.Produce(t, "A", all[:5_000])

	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/pause", nil)
	require.Equal(t, http.StatusAccepted, code)
	k.awaitStates(name, "PAUSED PAUSED PAUSED", 30*time.Second)
	kafkatest.Produce(t, "A", all[5_000:10_000])

	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/resume", nil)
	require.Equal(t, http.StatusAccepted, code)
	k.awaitStates(name, "RUNNING RUNNING RUNNING", 30*time.Second)
	awaitCount(t, prefixA, topics, all[:10_000], 2*time.Minute)

	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/stop", nil)
	require.Equal(t, http.StatusNoContent, code)
	k.awaitStates(name, "STOPPED", 30*time.Second)
	_, tasksBody := k.do(http.MethodGet, "/connectors/"+name+"/tasks", nil)
	require.Empty(t, tasksBody, "STOPPED has no tasks")
	kafkatest.Produce(t, "A", all[10_000:15_000])

	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/resume", nil)
	require.Equal(t, http.StatusAccepted, code)
	k.awaitStates(name, "RUNNING RUNNING RUNNING", 30*time.Second)

	code, _ = k.do(http.MethodPost, "/connectors/"+name+"/restart?includeTasks=true", nil)
	require.Equal(t, http.StatusAccepted, code)
	kafkatest.Produce(t, "A", all[15_000:])
	k.awaitStates(name, "RUNNING RUNNING RUNNING", 30*time.Second)
	got := awaitCount(t, prefixA, topics, all, 2*time.Minute)
	requireExactCopy(t, all, got)

	code, _ = k.do(http.MethodDelete, "/connectors/"+name, nil)
	require.Equal(t, http.StatusNoContent, code)
	code, _ = k.do(http.MethodGet, "/connectors/"+name, nil)
	require.Equal(t, http.StatusNotFound, code)
}

// TestSourceOffsetsMoveWhereItResumes: PATCH and DELETE /offsets on a stopped connector decide where its tasks
// resume, in MM2's {cluster, topic, partition} -> {offset} shape.
func TestSourceOffsetsMoveWhereItResumes(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	prefix := "off" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 1)
	all := makeRecords(topics, 100, 0)
	kafkatest.Produce(t, "A", all)

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPost, "/connectors", map[string]any{
		"name": name, "config": mirrorConfig(t, prefix+".*", nil), "initial_state": "STOPPED",
	})
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "STOPPED", 30*time.Second)

	// Resume after offset 59: the remote topic gets records 60..99 only.
	code, body = k.do(http.MethodPatch, "/connectors/"+name+"/offsets", map[string]any{"offsets": []any{map[string]any{
		"partition": map[string]any{"cluster": "A", "topic": topics[0].name, "partition": 0},
		"offset":    map[string]any{"offset": 59},
	}}})
	require.Equal(t, http.StatusOK, code, "%v", body)
	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/resume", nil)
	require.Equal(t, http.StatusAccepted, code)
	got := awaitCount(t, prefixA, topics, all[60:], time.Minute)
	requireExactCopy(t, all[60:], got)

	// DELETE resets them: the task starts over from the beginning (auto.offset.reset=earliest).
	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/stop", nil)
	require.Equal(t, http.StatusNoContent, code)
	k.awaitStates(name, "STOPPED", 30*time.Second)
	code, body = k.do(http.MethodDelete, "/connectors/"+name+"/offsets", nil)
	require.Equal(t, http.StatusOK, code, "%v", body)
	_, offs := k.do(http.MethodGet, "/connectors/"+name+"/offsets", nil)
	require.Empty(t, offs.(map[string]any)["offsets"])
	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/resume", nil)
	require.Equal(t, http.StatusAccepted, code)
	want := append(append([]kafkatest.Record{}, all[60:]...), all...)
	got = awaitCount(t, prefixA, topics, want, time.Minute)
	requireExactCopy(t, want, got)
}
