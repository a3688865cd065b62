package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/provenance"
)

const identityPolicy = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"

// lastHeader returns the value of r's last header named key.
func lastHeader(r kafkatest.Record, key string) ([]byte, bool) {
	for i := len(r.Headers) - 1; i >= 0; i-- {
		if r.Headers[i].Key == key {
			return r.Headers[i].Value, true
		}
	}
	return nil, false
}

// TestProvenanceHeader: a record copied without a provenance header gets one naming the source cluster by
// alias and id, after its own headers; one that has a header keeps it unchanged; with
// kmirror.provenance.enabled false, the copy has the source's headers only.
func TestProvenanceHeader(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	prefix := "prov" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 2)
	sent := makeRecords(topics, 200, 0)
	foreign := provenance.Encode(provenance.Origin{Alias: "C", ClusterID: "someOtherCluster"})
	for i := range sent {
		if i%5 == 0 {
			sent[i].Headers = append(sent[i].Headers, kafka.Header{Key: provenance.Header, Value: foreign})
		}
	}
	kafkatest.Produce(t, "A", sent)
	idA, err := kafkatest.Admin(t, "A").ClusterID(t.Context())
	require.NoError(t, err)

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", nil))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	got := awaitCount(t, prefixA, topics, sent, 2*time.Minute)
	requireExactCopy(t, sent, got)
	want := "A@" + idA
	for _, rs := range got {
		for _, r := range rs {
			v, ok := lastHeader(r, provenance.Header)
			require.True(t, ok, "every copy carries the provenance header")
			seq, _ := strconv.Atoi(string(r.Headers[0].Value))
			if seq%5 == 0 {
				require.Equal(t, string(foreign), string(v), "record %d had a header: kept unchanged", seq)
				require.Len(t, r.Headers, 4, "record %d: no second provenance header", seq)
			} else {
				require.Equal(t, want, string(v), "record %d", seq)
				require.Equal(t, provenance.Header, r.Headers[len(r.Headers)-1].Key, "the stamp follows the record's own headers")
			}
		}
	}

	// Switched off: exactly the source's headers.
	off := "provoff" + uniqueAlias("")
	offTopics := createSourceTopics(t, off, 1)
	offSent := makeRecords(offTopics, 50, 0)
	kafkatest.Produce(t, "A", offSent)
	code, body = k.do(http.MethodPut, "/connectors/mm2-"+off+"/config", mirrorConfig(t, off+".*", map[string]any{
		mirrorconfig.ProvenanceEnabledConfig: "false"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	offGot := awaitCount(t, prefixA, offTopics, offSent, 2*time.Minute)
	for k, rs := range groupByPartition(offSent) {
		for i, r := range rs {
			require.Equal(t, fmt.Sprint(r.Headers), fmt.Sprint(offGot[k][i].Headers), "provenance off: record %d of %s [%d]", i, k.topic, k.partition)
		}
	}
}

// activeRecords are n records for topic on cluster, each naming its origin and sequence in its "seq" header
// and its value.
func activeRecords(cluster, topic string, partitions, n, from int) []kafkatest.Record {
	out := make([]kafkatest.Record, 0, n)
	for i := from; i < from+n; i++ {
		id := fmt.Sprintf("%s-%d", cluster, i)
		out = append(out, kafkatest.Record{Topic: topic, Partition: int32(i % partitions), Key: []byte(id), Value: []byte("value-" + id),
			Timestamp: recordsBase.Add(time.Duration(i) * time.Millisecond), Headers: []kafka.Header{{Key: "seq", Value: []byte(id)}}})
	}
	return out
}

// identityFlow is the config of a connector copying topic from cluster from to cluster to under
// IdentityReplicationPolicy, with extra.
func identityFlow(t *testing.T, topic, from, to string, extra map[string]any) map[string]any {
	cfg := mirrorConfig(t, topic, map[string]any{
		"source.cluster.alias": from, "target.cluster.alias": to,
		"source.cluster.bootstrap.servers": kafkatest.Bootstrap(t, from),
		"target.cluster.bootstrap.servers": kafkatest.Bootstrap(t, to),
		"replication.policy.class":         identityPolicy,
		"sync.topic.configs.enabled":       "false",
		"tasks.max":                        "2",
	})
	for key, v := range extra {
		cfg[key] = v
	}
	return cfg
}

// committedThrough tells whether connector name has committed the last offset of every partition that end
// lists the end offsets of (eos: or the one before it, as a partition may end with a transaction marker).
func (k *kmirror) committedThrough(t *testing.T, name, topic string, end []int64, eos bool) bool {
	_, offs := k.do(http.MethodGet, "/connectors/"+name+"/offsets", nil)
	all, _ := offs.(map[string]any)["offsets"].([]any)
	// Heartbeats topics are replicated whatever the filter says, and other tests may have left some on the
	// shared clusters: only the topic's partitions count.
	list := slices.DeleteFunc(slices.Clone(all), func(o any) bool {
		return o.(map[string]any)["partition"].(map[string]any)["topic"] != topic
	})
	if len(list) != len(end) {
		return false
	}
	for _, o := range list {
		p := mustInt(t, o.(map[string]any)["partition"].(map[string]any)["partition"])
		off := mustInt(t, o.(map[string]any)["offset"].(map[string]any)["offset"])
		if off != end[p]-1 && (!eos || off != end[p]-2) {
			return false
		}
	}
	return true
}

// TestActiveActiveIdentityNoLoop: two connectors A→B and B→A under IdentityReplicationPolicy on the same topic,
// producers on both sides while they run. Every record of either side ends up exactly once on both clusters,
// in its partition's order, and once both connectors have committed every offset of both topics the clusters
// hold exactly what was produced: no record came back to the cluster it was produced on.
func TestActiveActiveIdentityNoLoop(t *testing.T) {
	t.Parallel()
	activeActive(t, startKmirror(t, ""), nil)
}

// TestActiveActiveIdentityNoLoopExactlyOnce is TestActiveActiveIdentityNoLoop in exactly-once mode, where a
// skip behind records of an open transaction counts only once the transaction commits.
func TestActiveActiveIdentityNoLoopExactlyOnce(t *testing.T) {
	t.Parallel()
	activeActive(t, startKmirror(t, "", withExactlyOnce), map[string]any{
		"exactly.once.support": "required", "source.consumer.isolation.level": "read_committed"})
}

// activeActive runs two identity-policy flows A→B and B→A, with extra in both connectors' configs, and
// audits both clusters (TestActiveActiveIdentityNoLoop).
func activeActive(t *testing.T, k *kmirror, extra map[string]any) {
	topic := kafkatest.TopicName(t, "orders")
	const parts = 3
	kafkatest.CreateTopic(t, "A", topic, parts, nil)
	kafkatest.CreateTopic(t, "B", topic, parts, nil)
	ab, ba := "mm2-ab-"+topic, "mm2-ba-"+topic

	sentA := activeRecords("A", topic, parts, 3000, 0)
	sentB := activeRecords("B", topic, parts, 3000, 0)
	kafkatest.Produce(t, "A", sentA[:1000])
	kafkatest.Produce(t, "B", sentB[:1000])
	for _, c := range []struct{ name, from, to string }{{ab, "A", "B"}, {ba, "B", "A"}} {
		code, body := k.do(http.MethodPut, "/connectors/"+c.name+"/config", identityFlow(t, topic, c.from, c.to, extra))
		require.Equal(t, http.StatusCreated, code, "%v", body)
	}
	k.awaitStates(ab, "RUNNING RUNNING RUNNING", 60*time.Second)
	k.awaitStates(ba, "RUNNING RUNNING RUNNING", 60*time.Second)
	for i := 1000; i < 3000; i += 500 { // both sides keep producing while the flows run
		kafkatest.Produce(t, "A", sentA[i:i+500])
		kafkatest.Produce(t, "B", sentB[i:i+500])
	}
	total := len(sentA) + len(sentB)

	// Both connectors have dealt with every record of both topics: their committed offsets reach the end of
	// every partition. Anything copied back would have been read by then, and copied again.
	ends := func(cluster string) []int64 { return kafkatest.PartitionEnds(t, cluster, topic, parts) }
	// In exactly-once mode a partition may end with a transaction marker, which no consumer reads.
	_, eos := extra["exactly.once.support"]
	deadline := time.Now().Add(3 * time.Minute)
	for {
		endA, endB := ends("A"), ends("B")
		if k.committedThrough(t, ab, topic, endA, eos) && k.committedThrough(t, ba, topic, endB, eos) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the connectors did not commit every offset within 3 minutes: ends A %v, B %v", endA, endB)
		}
		time.Sleep(200 * time.Millisecond)
	}

	for _, cluster := range []string{"A", "B"} {
		// read_committed: copies written in exactly-once mode end in transaction markers, which no record reaches.
		n, missing, duplicated := auditOrigins(t, cluster, topic, parts, sentA, sentB)
		t.Logf("cluster %s: %d records, %d missing, %d duplicated, 0 reordered", cluster, n, missing, duplicated)
		require.Zero(t, missing, "cluster %s", cluster)
		require.Zero(t, duplicated, "cluster %s", cluster)
		require.Equal(t, total, n, "cluster %s holds exactly what was produced on both sides", cluster)
	}

	// The audit above proves each flow skipped the other's copies. The counter shows the skips too, but only
	// since its task's current run: a task restarted by a reassignment (heartbeats topics other tests' flows
	// leave on the shared clusters change the topic list) or a lost lease starts its series again.
	for _, c := range []struct{ name, source string }{{ab, "A"}, {ba, "B"}} {
		skipped := k.provenanceSkipped(c.name)
		t.Logf("%s skipped %.0f copies on %s, as its tasks' current runs count", c.name, skipped, c.source)
		require.Positive(t, skipped, "%s counts the copies it skipped on %s", c.name, c.source)
	}
	logReach(t, topic, parts, len(sentA))
}

// auditOrigins reads topic on cluster (read_committed: copies written in exactly-once mode end in transaction
// markers, which no record reaches) and checks every record of sent (activeRecords) there: in its origin's
// order in each partition, a copy carrying the provenance header naming its origin, a record of cluster's own
// without one (never copied back). It returns how many records the topic holds, and how many of sent are
// missing and duplicated.
func auditOrigins(t *testing.T, cluster, topic string, parts int, sent ...[]kafkatest.Record) (n, missing, duplicated int) {
	got, err := tryReadCommittedOn(t, cluster, topic)
	require.NoError(t, err)
	seen := map[string]int{}
	for p := range parts {
		last := map[string]int{} // origin -> last sequence seen in this partition
		for _, r := range got[int32(p)] {
			n++
			id := string(r.Headers()[0].Value)
			seen[id]++
			var origin string
			var seq int
			_, err := fmt.Sscanf(id, "%1s-%d", &origin, &seq)
			require.NoError(t, err)
			if prev, ok := last[origin]; ok {
				require.Greater(t, seq, prev, "cluster %s partition %d: %s out of order", cluster, p, id)
			}
			last[origin] = seq
			v, stamped := r.LastHeader(provenance.Header)
			if origin == cluster {
				require.False(t, stamped, "cluster %s: %s was produced here and never copied back", cluster, id)
				continue
			}
			require.True(t, stamped, "a copy carries the provenance header")
			o, err := provenance.Decode(v)
			require.NoError(t, err)
			require.Equal(t, origin, o.Alias, "cluster %s: %s names its origin", cluster, id)
		}
	}
	for _, rs := range sent {
		for _, r := range rs {
			switch seen[string(r.Headers[0].Value)] {
			case 0:
				missing++
			case 1:
			default:
				duplicated++
			}
		}
	}
	return n, missing, duplicated
}

// provenanceSkipped is how many records connector's tasks skipped as the cycle guard's (its
// kmirror_provenance_skipped_records_total series summed).
func (k *kmirror) provenanceSkipped(connector string) float64 {
	var skipped float64
	if f, ok := k.scrape()["kmirror_provenance_skipped_records_total"]; ok {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "connector" && l.GetValue() == connector {
					skipped += m.GetCounter().GetValue()
				}
			}
		}
	}
	return skipped
}

// TestProvenanceHeaderCost measures what the header costs on the target's disk: the same records copied with
// and without it, the remote partitions' segment files compared. One header in record batch v2 is a varint of
// the name's length, the name, a varint of the value's length and the value (the header count's varint is one
// byte with or without it); the record's length varint stays two bytes for records of this size.
func TestProvenanceHeaderCost(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "") // skips under -short, as every test that needs the harness
	dir := os.Getenv("KMIRROR_HARNESS_DIR")
	if dir == "" {
		t.Fatal("KMIRROR_HARNESS_DIR is not set: run the tests with ./scripts/test, which starts the harness")
	}
	const n = 20_000
	on, off := "coston"+uniqueAlias(""), "costoff"+uniqueAlias("")
	segments := map[string]int64{}
	for _, c := range []struct {
		prefix string
		enable string
	}{{on, "true"}, {off, "false"}} {
		topics := createSourceTopics(t, c.prefix, 1)
		sent := make([]kafkatest.Record, n)
		for i := range sent {
			sent[i] = kafkatest.Record{Topic: topics[0].name, Key: fmt.Appendf(nil, "key-%06d", i),
				Value: bytes.Repeat([]byte{'v'}, 300), Timestamp: recordsBase.Add(time.Duration(i) * time.Millisecond)}
		}
		kafkatest.Produce(t, "A", sent)
		code, body := k.do(http.MethodPut, "/connectors/mm2-"+c.prefix+"/config", mirrorConfig(t, c.prefix+".*", map[string]any{
			mirrorconfig.ProvenanceEnabledConfig: c.enable}))
		require.Equal(t, http.StatusCreated, code, "%v", body)
		awaitCount(t, prefixA, topics, sent, 2*time.Minute)
		files, err := filepath.Glob(filepath.Join(dir, "B", "data", prefixA(topics[0].name)+"-0", "*.log"))
		require.NoError(t, err)
		require.NotEmpty(t, files)
		for _, f := range files {
			st, err := os.Stat(f)
			require.NoError(t, err)
			segments[c.prefix] += st.Size()
		}
	}
	idA, err := kafkatest.Admin(t, "A").ClusterID(t.Context())
	require.NoError(t, err)
	value := len(provenance.Encode(provenance.Origin{Alias: "A", ClusterID: idA}))
	predicted := 1 + len(provenance.Header) + 1 + value
	perRecord := float64(segments[on]-segments[off]) / n
	t.Logf("header %s=%q: %d records, target segments %d bytes with the header, %d without: %.2f bytes per record (encoding: %d)",
		provenance.Header, "A@"+idA, n, segments[on], segments[off], perRecord, predicted)
	// More bytes may take a few more batches of the producer's batch.size (61 bytes each): within a byte.
	require.InDelta(t, float64(predicted), perRecord, 1.0)
}
