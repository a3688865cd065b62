package server_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// TestFailoverOfActiveActivePairSkipsNothing: A→B and B→A keep topic orders under its name, so A's partition
// holds A's own records and the copies of B's, interleaved. A group on A has read A's first 50 records and
// the first 10 copies of B's. A failover of A→B moves the group to B: it must resume before every record it has
// not read there, B's own included (those the A→B map knows nothing of). Expected: no record skipped, none
// read again, the position reported exact.
func TestFailoverOfActiveActivePairSkipsNothing(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	topic := kafkatest.TopicName(t, "aafo")
	kafkatest.CreateTopic(t, "A", topic, 1, nil)
	kafkatest.CreateTopic(t, "B", topic, 1, nil)
	ends := func(cluster string) []int64 { return kafkatest.PartitionEnds(t, cluster, topic, 1) }
	settled := func(what string) {
		require.Eventually(t, func() bool {
			return k.committedThrough(t, "ab", topic, ends("A"), false) && k.committedThrough(t, "ba", topic, ends("B"), false)
		}, 2*time.Minute, 200*time.Millisecond, "%s: both flows commit every offset (ends A %v, B %v)", what, ends("A"), ends("B"))
	}

	// A's log becomes a0..a49, b0..b49, a50..a99; B's the same, each side's own records and the other's copies.
	onCluster := func(cluster string, from, n int) {
		recs := activeRecords(cluster, topic, 1, n, from)
		kafkatest.Produce(t, cluster, recs)
	}
	onCluster("A", 0, 50)
	// One task each: heartbeats topics other tests' flows left on the shared clusters are copied whatever the
	// filter says, and would add tasks.
	oneTask := map[string]any{"tasks.max": "1"}
	k.create("ab", identityFlow(t, regexp.QuoteMeta(topic), "A", "B", oneTask))
	k.create("ba", identityFlow(t, regexp.QuoteMeta(topic), "B", "A", oneTask))
	k.awaitStates("ab", "RUNNING RUNNING", time.Minute)
	k.awaitStates("ba", "RUNNING RUNNING", time.Minute)
	settled("A's first records")
	onCluster("B", 0, 50)
	settled("B's records")
	onCluster("A", 50, 50)
	settled("A's later records")
	logA, logB := kafkatest.ReadAll(t, "A", topic, 0), kafkatest.ReadAll(t, "B", topic, 0)
	require.Len(t, logA, 150)
	require.Len(t, logB, 150)

	group := "aa-app-" + topic[len(topic)-8:]
	k.create("checkpoints", checkpointConfig(t, "A", regexp.QuoteMeta(group), map[string]any{"replication.policy.class": identityPolicy}))
	const readOnA = 60
	commitGroup(t, group, map[kafkatest.Partition]int64{{Topic: topic, Partition: 0}: readOnA})
	awaitGroupFollowed(t, k, "checkpoints", group)

	code, body := k.do(http.MethodPost, "/connectors/ab/failover", map[string]any{"checkpoint_connector": "checkpoints", "drain_timeout_ms": 30_000})
	require.Equal(t, http.StatusAccepted, code, "%v", body)
	awaitOperationState(t, k, "ab", "failover", "succeeded")
	code, body = k.do(http.MethodGet, "/connectors/ab/failover", nil)
	require.Equal(t, http.StatusOK, code)
	p := body.(map[string]any)["report"].(map[string]any)["groups"].([]any)[0].(map[string]any)["partitions"].([]any)[0].(map[string]any)

	at := groupOffsetOnB(t, group, topic)
	read := map[string]bool{}
	for _, r := range logA[:readOnA] {
		read[string(r.Key)] = true
	}
	var skipped, again []string
	for i, r := range logB {
		switch {
		case int64(i) < at && !read[string(r.Key)]:
			skipped = append(skipped, string(r.Key))
		case int64(i) >= at && read[string(r.Key)]:
			again = append(again, string(r.Key))
		}
	}
	t.Logf("group at %d on A resumes at %d on B (exact %v): %d skipped, %d read again", readOnA, at, p["exact"], len(skipped), len(again))
	require.Empty(t, skipped, "records the group had not read on A lie before its position on B")
	require.Empty(t, again, "records the group had read on A lie after its position on B")
	require.Equal(t, true, p["exact"], "%v", p)
}

// groupOffsetOnB reads group's committed offset of topic's partition 0 on B.
func groupOffsetOnB(t *testing.T, group, topic string) int64 {
	t.Helper()
	got, errs, err := kafkatest.Admin(t, "B").GroupOffsets(context.Background(), []string{group})
	require.NoError(t, err)
	require.NoError(t, errs[group])
	for _, o := range got[group] {
		if o.Topic == topic && o.Partition == 0 {
			return o.Offset
		}
	}
	require.Fail(t, fmt.Sprintf("group %s has no offset of %s on B", group, topic))
	return 0
}
