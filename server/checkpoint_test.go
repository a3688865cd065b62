package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mirror"
)

// checkpointConfig is a MirrorCheckpointConnector config for clusters A and B under the given source alias.
func checkpointConfig(t *testing.T, alias, groups string, extra map[string]any) map[string]any {
	cfg := map[string]any{
		"connector.class":                      "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
		"source.cluster.alias":                 alias,
		"target.cluster.alias":                 "B",
		"source.cluster.bootstrap.servers":     kafkatest.Bootstrap(t, "A"),
		"target.cluster.bootstrap.servers":     kafkatest.Bootstrap(t, "B"),
		"groups":                               groups,
		"emit.checkpoints.interval.seconds":    "1",
		"refresh.groups.interval.seconds":      "1",
		"checkpoints.topic.replication.factor": "1",
	}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

// ckRecords builds n records for one partition whose values carry the partition and a sequence number.
func ckRecords(topic string, partition int32, from, n int) []*kgo.Record {
	out := make([]*kgo.Record, n)
	for i := range n {
		out[i] = &kgo.Record{Topic: topic, Partition: partition, Key: []byte(strconv.Itoa(from + i)),
			Value: []byte(fmt.Sprintf("p%d-%d", partition, from+i))}
	}
	return out
}

// produceTransactions writes records to a partition in committed transactions of varying size, so the log
// holds a transaction marker after each one.
func produceTransactions(t *testing.T, topic string, partition int32, from, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkatest.Bootstrap(t, "A")), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionalID(fmt.Sprintf("%s-%d-%d", topic, partition, from)))
	require.NoError(t, err)
	defer cl.Close()
	ctx := context.Background()
	recs := ckRecords(topic, partition, from, n)
	for i := 0; i < len(recs); {
		size := min(1+i%7, len(recs)-i)
		require.NoError(t, cl.BeginTransaction())
		require.NoError(t, cl.ProduceSync(ctx, recs[i:i+size]...).FirstErr())
		require.NoError(t, cl.EndTransaction(ctx, kgo.TryCommit))
		i += size
	}
}

func producePlain(t *testing.T, topic string, partition int32, from, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkatest.Bootstrap(t, "A")), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	require.NoError(t, cl.ProduceSync(context.Background(), ckRecords(topic, partition, from, n)...).FirstErr())
}

// commitGroup commits offsets for a consumer group on A, as a consumer that read up to them would.
func commitGroup(t *testing.T, group string, offsets map[kafkatest.Partition]int64) {
	t.Helper()
	admin := kafkatest.Admin(t, "A")
	var list []kafka.GroupOffset
	for p, o := range offsets {
		list = append(list, kafka.GroupOffset{Topic: p.Topic, Partition: p.Partition, Offset: o, Metadata: "meta-" + strconv.FormatInt(o, 10)})
	}
	// A group's coordinator may be loading or moving (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS): retry as
	// a consumer's commit would.
	var err error
	require.Eventually(t, func() bool {
		err = admin.AlterGroupOffsets(context.Background(), group, list)
		return err == nil || !kafka.IsRetriable(err)
	}, 30*time.Second, 200*time.Millisecond, "commit offsets of %s: %v", group, err)
	require.NoError(t, err, "commit offsets of %s", group)
}

// groupOffset is one partition of GET /connectors/{c}/groups/{g}/offsets.
type groupOffset struct {
	topic        string
	partition    int32
	source       int64
	target       int64
	translated   bool
	exact        bool
	targetTopic  string
	basis        string
	checkpointed bool
}

func (k *kmirror) groupOffsets(connector, group string) map[kafkatest.Partition]groupOffset {
	k.t.Helper()
	code, body := k.do(http.MethodGet, "/connectors/"+connector+"/groups/"+url.PathEscape(group)+"/offsets", nil)
	if code == http.StatusNotFound {
		return nil
	}
	require.Equal(k.t, http.StatusOK, code, "%v", body)
	out := map[kafkatest.Partition]groupOffset{}
	for _, e := range body.(map[string]any)["offsets"].([]any) {
		m := e.(map[string]any)
		o := groupOffset{topic: m["source_topic"].(string), partition: int32(mustInt(k.t, m["partition"])), source: mustInt(k.t, m["source_offset"]),
			exact: m["exact"].(bool), targetTopic: m["target_topic"].(string), basis: m["basis"].(string)}
		if v := m["target_offset"]; v != nil {
			o.target, o.translated = mustInt(k.t, v), true
		}
		o.checkpointed, _ = m["checkpoint_emitted"].(bool)
		out[kafkatest.Partition{Topic: o.topic, Partition: o.partition}] = o
	}
	return out
}

// awaitTranslation waits until the group's every partition in want shows the committed source offset,
// translated exactly and checkpointed.
func (k *kmirror) awaitTranslation(connector, group string, want map[kafkatest.Partition]int64, within time.Duration) map[kafkatest.Partition]groupOffset {
	k.t.Helper()
	var last map[kafkatest.Partition]groupOffset
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		last = k.groupOffsets(connector, group)
		ok := len(last) == len(want)
		for p, c := range want {
			o := last[p]
			ok = ok && o.source == c && o.translated && o.exact && o.checkpointed
		}
		if ok {
			return last
		}
		time.Sleep(200 * time.Millisecond)
	}
	k.t.Fatalf("group %s never translated exactly: want %v, last %+v", group, want, last)
	return nil
}

// auditResume checks that a consumer starting on B at the translated offset reads exactly the source records
// at or after the committed offset: none missing, none twice, in order.
func auditResume(t *testing.T, remote string, p kafkatest.Partition, committed, translated int64) {
	t.Helper()
	want := readValuesFrom(t, "A", p.Topic, p.Partition, committed)
	got := readValuesFrom(t, "B", remote, p.Partition, translated)
	missing, dups, reordered := auditSeqs(want, got)
	require.Zero(t, missing+dups+reordered, "%s [%d] from source offset %d / target offset %d: %d missing, %d duplicated, %d reordered (want %d records, got %d)",
		p.Topic, p.Partition, committed, translated, missing, dups, reordered, len(want), len(got))
}

// readValuesFrom reads the values of a partition's records at or after offset, up to its end (which may be a
// transaction marker rather than a record).
func readValuesFrom(t *testing.T, cluster, topic string, partition int32, from int64) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []string
	_, err := kafka.ReadTopic(ctx, map[string]string{"bootstrap.servers": kafkatest.Bootstrap(t, cluster)}, topic, slog.New(slog.DiscardHandler),
		func(r kafka.Record) error {
			if r.Partition() == partition && r.Offset() >= from {
				out = append(out, string(r.Value()))
			}
			return nil
		})
	require.NoError(t, err, "read %s on %s", topic, cluster)
	return out
}

// auditSeqs compares the values a consumer reads with the values it should read.
func auditSeqs(want, got []string) (missing, dups, reordered int) {
	pos := map[string]int{}
	for i, v := range want {
		pos[v] = i
	}
	seen := map[string]bool{}
	last := -1
	for _, v := range got {
		i, ok := pos[v]
		switch {
		case !ok || seen[v]:
			dups++ // a record the consumer had read on the source already, or a second copy
		case i < last:
			reordered++
		}
		if ok {
			seen[v] = true
			last = max(last, i)
		}
	}
	for _, v := range want {
		if !seen[v] {
			missing++
		}
	}
	return missing, dups, reordered
}

func TestCheckpointTranslatesExactlyAcrossMarkersAndRestarts(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	alias := uniqueAlias("A")
	plain := kafkatest.TopicName(t, "ckplain")
	txn := kafkatest.TopicName(t, "cktxn")
	kafkatest.CreateTopic(t, "A", plain, 3, nil)
	kafkatest.CreateTopic(t, "A", txn, 3, nil)
	for p := range int32(3) {
		producePlain(t, plain, p, 0, 2000)
		produceTransactions(t, txn, p, 0, 300)
	}
	group := "orders-app-" + alias
	other := "other-app-" + alias // consumes only a topic the connectors exclude
	excluded := kafkatest.TopicName(t, "ckexcluded")
	kafkatest.CreateTopic(t, "A", excluded, 1, nil)
	producePlain(t, excluded, 0, 0, 10)
	commitGroup(t, other, map[kafkatest.Partition]int64{{Topic: excluded, Partition: 0}: 5})

	txnEnd := kafkatest.PartitionEnds(t, "A", txn, 3)
	committed := map[kafkatest.Partition]int64{
		{Topic: plain, Partition: 0}: 0,
		{Topic: plain, Partition: 1}: 1234,
		{Topic: plain, Partition: 2}: 2000, // at the log end
		{Topic: txn, Partition: 0}:   17,   // somewhere inside the transactions
		{Topic: txn, Partition: 1}:   txnEnd[1] - 1,
		{Topic: txn, Partition: 2}:   txnEnd[2], // past the trailing transaction marker
	}
	commitGroup(t, group, committed)

	topics := plain + "|" + txn
	src := mirrorConfig(t, topics, map[string]any{"source.cluster.alias": alias, "tasks.max": "2"})
	code, body := k.do(http.MethodPut, "/connectors/src-"+alias+"/config", src)
	require.Equal(t, http.StatusCreated, code, "%v", body)
	ck := checkpointConfig(t, alias, ".*-"+alias, map[string]any{"topics": topics, "tasks.max": "4",
		"sync.group.offsets.enabled": "true", "sync.group.offsets.interval.seconds": "1"})
	code, body = k.do(http.MethodPut, "/connectors/ck-"+alias+"/config", ck)
	require.Equal(t, http.StatusCreated, code, "%v", body)

	// One group has a committed offset on a replicated topic: one task, whatever tasks.max says.
	k.awaitStates("ck-"+alias, "RUNNING RUNNING", 60*time.Second)
	code, body = k.do(http.MethodGet, "/connectors/ck-"+alias+"/tasks", nil)
	require.Equal(t, http.StatusOK, code)
	require.Len(t, body, 1)
	require.Equal(t, group, body.([]any)[0].(map[string]any)["config"].(map[string]any)["task.assigned.groups"])

	remote := func(topic string) string { return alias + "." + topic }
	got := k.awaitTranslation("ck-"+alias, group, committed, 90*time.Second)
	for p, c := range committed {
		o := got[p]
		require.Equal(t, remote(p.Topic), o.targetTopic)
		require.Equal(t, "offset_map", o.basis)
		auditResume(t, remote(p.Topic), p, c, o.target)
	}
	code, _ = k.do(http.MethodGet, "/connectors/ck-"+alias+"/groups/"+other+"/offsets", nil)
	require.Equal(t, http.StatusNotFound, code, "a group whose only topic is excluded gets no checkpoint")

	// The checkpoints on B say the same, in MM2's format, and Java's RemoteClusterUtils reads them; sync.group.offsets
	// committed them to the group on B.
	requireCheckpoints(t, alias, group, got)
	// The checkpoints topic is the connector's active topic, as Connect records the topics its tasks write.
	wantTopics := map[string]any{"ck-" + alias: map[string]any{"topics": []any{alias + ".checkpoints.internal"}}}
	require.Eventually(t, func() bool {
		_, body := k.do(http.MethodGet, "/connectors/ck-"+alias+"/topics", nil)
		return assert.ObjectsAreEqual(wantTopics, body)
	}, 10*time.Second, 100*time.Millisecond)
	java := javaTranslateOffsets(t, "B", alias, group)
	require.Len(t, java, len(got))
	for p, o := range got {
		require.Equal(t, o.target, java[kafkatest.Partition{Topic: remote(p.Topic), Partition: p.Partition}], "Java's translateOffsets for %v", p)
	}
	requireTargetGroupOffsets(t, group, got, 30*time.Second)

	// More records, a group that moved on, and a kmirror restart in between: translations stay exact.
	k.stop()
	for p := range int32(3) {
		producePlain(t, plain, p, 2000, 500)
		produceTransactions(t, txn, p, 300, 100)
	}
	txnEnd = kafkatest.PartitionEnds(t, "A", txn, 3)
	moved := map[kafkatest.Partition]int64{
		{Topic: plain, Partition: 0}: 150,
		{Topic: plain, Partition: 1}: 2222,
		{Topic: plain, Partition: 2}: 2500,
		{Topic: txn, Partition: 0}:   170,
		{Topic: txn, Partition: 1}:   txnEnd[1] - 1,
		{Topic: txn, Partition: 2}:   txnEnd[2],
	}
	commitGroup(t, group, moved)
	k2 := startKmirror(t, k.dbURL)
	got = k2.awaitTranslation("ck-"+alias, group, moved, 90*time.Second)
	for p, c := range moved {
		auditResume(t, remote(p.Topic), p, c, got[p].target)
	}
	requireCheckpoints(t, alias, group, got)
}

// requireCheckpoints reads the checkpoints topic on B and checks that the latest checkpoint of every
// partition of the group is the translation the API shows.
func requireCheckpoints(t *testing.T, alias, group string, want map[kafkatest.Partition]groupOffset) {
	t.Helper()
	latest := map[string]mirror.Checkpoint{}
	for _, r := range kafkatest.ReadAll(t, "B", alias+".checkpoints.internal", 0) {
		c, err := mirror.DecodeCheckpoint(r.Key, r.Value)
		require.NoError(t, err)
		if c.Group == group {
			latest[c.Topic+"/"+strconv.Itoa(int(c.Partition))] = c
		}
	}
	for p, o := range want {
		c, ok := latest[o.targetTopic+"/"+strconv.Itoa(int(p.Partition))]
		require.True(t, ok, "no checkpoint for %v", p)
		require.Equal(t, o.source, c.UpstreamOffset)
		require.Equal(t, o.target, c.DownstreamOffset)
		require.Equal(t, "meta-"+strconv.FormatInt(o.source, 10), c.Metadata, "the upstream commit metadata is kept")
	}
}

// requireTargetGroupOffsets waits until the group's committed offsets on B are the translations.
func requireTargetGroupOffsets(t *testing.T, group string, want map[kafkatest.Partition]groupOffset, within time.Duration) {
	t.Helper()
	admin := kafkatest.Admin(t, "B")
	var last []kafka.GroupOffset
	require.Eventually(t, func() bool {
		got, failed, err := admin.GroupOffsets(context.Background(), []string{group})
		if err != nil || failed[group] != nil {
			return false
		}
		last = got[group]
		have := map[string]int64{}
		for _, o := range last {
			have[o.Topic+"/"+strconv.Itoa(int(o.Partition))] = o.Offset
		}
		for p, o := range want {
			if have[o.targetTopic+"/"+strconv.Itoa(int(p.Partition))] != o.target {
				return false
			}
		}
		return true
	}, within, 200*time.Millisecond, "target group offsets never synced: %+v", last)
}

func TestCheckpointLeavesActiveTargetGroupsAloneAndSaysWhenThereAreNoGroups(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	alias := uniqueAlias("A")
	topic := kafkatest.TopicName(t, "ckactive")
	kafkatest.CreateTopic(t, "A", topic, 1, nil)
	producePlain(t, topic, 0, 0, 100)
	active := "active-" + alias
	commitGroup(t, active, map[kafkatest.Partition]int64{{Topic: topic, Partition: 0}: 60})

	// No group matches: zero tasks, and the status says why, naming the topic filter in force (its default
	// when none is set).
	code, body := k.do(http.MethodPut, "/connectors/none-"+alias+"/config", checkpointConfig(t, alias, "nothing-matches-"+alias, nil))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates("none-"+alias, "RUNNING", 60*time.Second)
	var notices string
	require.Eventually(t, func() bool {
		_, body := k.do(http.MethodGet, "/connectors/none-"+alias+"/notices", nil)
		notices = fmt.Sprint(body)
		return strings.Contains(notices, "no_groups")
	}, 30*time.Second, 100*time.Millisecond, "no notice that no group matches")
	require.Contains(t, notices, `(topics=".*")`, "the default topic filter is named")

	// A member of the group consumes on B: sync.group.offsets must not touch its offsets.
	code, body = k.do(http.MethodPut, "/connectors/src-"+alias+"/config", mirrorConfig(t, topic, map[string]any{"source.cluster.alias": alias}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	remote := alias + "." + topic
	require.Eventually(t, func() bool { return kafkatest.EndOffsets(t, "B", remote, 1) == 100 }, 60*time.Second, 100*time.Millisecond,
		"the topic was never replicated")
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkatest.Bootstrap(t, "B")), kgo.ConsumerGroup(active), kgo.ConsumeTopics(remote),
		kgo.DisableAutoCommit())
	require.NoError(t, err)
	defer cl.Close()
	go func() {
		for ctx := context.Background(); !cl.PollFetches(ctx).IsClientClosed(); {
		}
	}()
	require.Eventually(t, func() bool {
		st, err := kafkatest.Admin(t, "B").DescribeGroups(context.Background(), []string{active})
		return err == nil && st[active].Members == 1
	}, 60*time.Second, 100*time.Millisecond, "the consumer on B never joined")

	code, body = k.do(http.MethodPut, "/connectors/ck-"+alias+"/config", checkpointConfig(t, alias, active, map[string]any{"topics": topic,
		"sync.group.offsets.enabled": "true", "sync.group.offsets.interval.seconds": "1"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitTranslation("ck-"+alias, active, map[kafkatest.Partition]int64{{Topic: topic, Partition: 0}: 60}, 90*time.Second)
	admin := kafkatest.Admin(t, "B")
	require.Never(t, func() bool {
		got, _, err := admin.GroupOffsets(context.Background(), []string{active})
		return err == nil && len(got[active]) > 0
	}, 4*time.Second, 200*time.Millisecond, "offsets were committed to a group with an active member on the target")

	// Once the member leaves, the group is empty and gets the translated offsets.
	cl.Close()
	require.Eventually(t, func() bool {
		got, _, err := admin.GroupOffsets(context.Background(), []string{active})
		return err == nil && len(got[active]) == 1 && got[active][0].Offset == 60
	}, 60*time.Second, 200*time.Millisecond, "offsets never synced to the emptied group")
}

func TestCheckpointValidation(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	for key, value := range map[string]string{
		"groups":                              "(unclosed",
		"group.filter.class":                  "com.example.MyGroupFilter",
		"emit.checkpoints.interval.seconds":   "-1",
		"sync.group.offsets.interval.seconds": "-5",
		"refresh.groups.interval.seconds":     "-1",
	} {
		cfg := checkpointConfig(t, "A", ".*", nil)
		cfg[key] = value
		code, body := k.do(http.MethodPut, "/connector-plugins/MirrorCheckpointConnector/config/validate", cfg)
		require.Equal(t, http.StatusOK, code, "%v", body)
		var errs []string
		for _, c := range body.(map[string]any)["configs"].([]any) {
			v := c.(map[string]any)["value"].(map[string]any)
			if v["name"] == key {
				for _, e := range v["errors"].([]any) {
					errs = append(errs, e.(string))
				}
			}
		}
		require.NotEmpty(t, errs, "%s=%s must be a validation error naming the key", key, value)
	}
}

func TestCheckpointTranslatesExactlyOverCompactionGaps(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	alias := uniqueAlias("A")
	topic := kafkatest.TopicName(t, "ckcompact")
	kafkatest.CreateTopic(t, "A", topic, 1, map[string]string{
		"cleanup.policy": "compact", "segment.ms": "100", "min.cleanable.dirty.ratio": "0.01", "min.compaction.lag.ms": "0",
	})
	// 600 records over 20 keys and, every 50th, a key of its own that survives compaction (so the compacted log
	// has gaps between survivors, not only before the last 20), then records that roll the segment, so the
	// cleaner compacts the first one.
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkatest.Bootstrap(t, "A")), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	var recs []*kgo.Record
	for i := range 600 {
		key := "k" + strconv.Itoa(i%20)
		if i%50 == 0 {
			key = "u" + strconv.Itoa(i)
		}
		recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(key), Value: []byte("p0-" + strconv.Itoa(i))})
	}
	require.NoError(t, cl.ProduceSync(context.Background(), recs...).FirstErr())
	var offsets []int64
	require.Eventually(t, func() bool {
		// Each append after segment.ms rolls the segment; the cleaner then compacts the closed ones.
		_ = cl.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Key: []byte("roll"), Value: []byte("roll-" + time.Now().String())}).FirstErr()
		offsets = offsets[:0]
		for _, r := range kafkatest.ReadAll(t, "A", topic, 0) {
			offsets = append(offsets, r.Offset)
		}
		return len(offsets) > 0 && len(offsets) < 300
	}, 3*time.Minute, time.Second, "the topic was never compacted")
	// Positions: inside a gap, on a surviving record, and at the end.
	gap := int64(-1)
	for i := 1; i < len(offsets); i++ {
		if offsets[i] > offsets[i-1]+1 {
			gap = offsets[i-1] + 1
			break
		}
	}
	require.GreaterOrEqual(t, gap, int64(0), "no gap in %v", offsets)
	end := kafkatest.EndOffsets(t, "A", topic, 1)
	group := "compacted-" + alias
	code, body := k.do(http.MethodPut, "/connectors/src-"+alias+"/config", mirrorConfig(t, topic, map[string]any{"source.cluster.alias": alias}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	code, body = k.do(http.MethodPut, "/connectors/ck-"+alias+"/config", checkpointConfig(t, alias, group, map[string]any{"topics": topic}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	remote := alias + "." + topic
	p := kafkatest.Partition{Topic: topic, Partition: 0}
	for _, c := range []int64{gap, offsets[len(offsets)/2], end} {
		commitGroup(t, group, map[kafkatest.Partition]int64{p: c})
		got := k.awaitTranslation("ck-"+alias, group, map[kafkatest.Partition]int64{p: c}, 90*time.Second)
		auditResume(t, remote, p, c, got[p].target)
	}
}

func TestCheckpointFallsBackToOffsetSyncs(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	m := startMirroredGroup(t, k, "cksyncs", 1000, 500)
	alias, topic, group, p := m.alias, m.topic, m.group, m.p

	// As if the topic had been replicated by Java MM2 (or kmirror's history pruned): only offset syncs remain.
	conn, err := pgx.Connect(context.Background(), k.dbURL)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), "DELETE FROM offset_ranges WHERE source_alias = $1", alias)
	require.NoError(t, err)
	commitGroup(t, group, map[kafkatest.Partition]int64{p: 777})
	var o groupOffset
	require.Eventually(t, func() bool {
		o = k.groupOffsets("ck-"+alias, group)[p]
		return o.source == 777 && o.basis == "offset_syncs"
	}, 60*time.Second, 200*time.Millisecond, "no fallback to offset syncs: %+v", o)
	require.False(t, o.exact, "a translation from offset syncs is approximate")
	require.True(t, o.translated)
	require.LessOrEqual(t, o.target, int64(777), "never ahead of the true position")
	// A consumer resuming there misses nothing; it re-reads the records between the offset sync MM2's sparse
	// history kept and its true position (the topic's offsets are the same on both sides here).
	want := readValuesFrom(t, "A", topic, 0, 777)
	got := readValuesFrom(t, "B", alias+"."+topic, 0, o.target)
	missing, dups, reordered := auditSeqs(want, got)
	require.Zero(t, missing+reordered, "missing %d, reordered %d", missing, reordered)
	require.Equal(t, int(777-o.target), dups, "re-read records")
	t.Logf("offset-sync fallback: group at 777 resumes at %d, re-reading %d records", o.target, dups)
}

func TestCheckpointSurvivesADeletedOrUnwritableCheckpointsTopic(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	m := startMirroredGroup(t, k, "ckdeleted", 100, 40)
	alias, group, p := m.alias, m.group, m.p

	// Deleted: the task creates the topic again and writes every checkpoint again.
	checkpoints := alias + ".checkpoints.internal"
	admin := kafkatest.Admin(t, "B")
	require.NoError(t, admin.DeleteTopics(context.Background(), []string{checkpoints}))
	commitGroup(t, group, map[kafkatest.Partition]int64{p: 60})
	got := k.awaitTranslation("ck-"+alias, group, map[kafkatest.Partition]int64{p: 60}, 90*time.Second)
	requireCheckpoints(t, alias, group, got)

	// Not writable (the broker refuses every checkpoint): the status says so while the task retries, and it
	// recovers once the topic takes records again.
	require.NoError(t, admin.AlterTopicConfigs(context.Background(), checkpoints, []kafka.ConfigOp{{Name: "max.message.bytes", Value: "16"}}))
	commitGroup(t, group, map[kafkatest.Partition]int64{p: 80})
	notices := func() string {
		_, body := k.do(http.MethodGet, "/connectors/ck-"+alias+"/notices", nil)
		return fmt.Sprint(body)
	}
	require.Eventually(t, func() bool { return strings.Contains(notices(), "checkpoints_problem") }, 60*time.Second, 100*time.Millisecond,
		"no notice that checkpoints cannot be written")
	require.Equal(t, "RUNNING RUNNING", k.states("ck-"+alias), "the task never fails for it")
	require.NoError(t, admin.AlterTopicConfigs(context.Background(), checkpoints, []kafka.ConfigOp{{Name: "max.message.bytes", Delete: true}}))
	got = k.awaitTranslation("ck-"+alias, group, map[kafkatest.Partition]int64{p: 80}, 90*time.Second)
	requireCheckpoints(t, alias, group, got)
	require.Eventually(t, func() bool { return !strings.Contains(notices(), "checkpoints_problem") }, 30*time.Second, 100*time.Millisecond,
		"the notice stays after checkpoints are written again")
	require.Equal(t, "RUNNING RUNNING", k.states("ck-"+alias))
}

// mirroredGroup is a one-partition topic on A with records and a group committed in it, replicated by a source
// connector src-<alias> and translated by a checkpoint connector ck-<alias>, once the first translation is in.
type mirroredGroup struct {
	alias, topic, group string
	p                   kafkatest.Partition
}

func startMirroredGroup(t *testing.T, k *kmirror, name string, records int, committed int64) mirroredGroup {
	t.Helper()
	alias := uniqueAlias("A")
	m := mirroredGroup{alias: alias, topic: kafkatest.TopicName(t, name), group: name + "-" + alias}
	m.p = kafkatest.Partition{Topic: m.topic, Partition: 0}
	kafkatest.CreateTopic(t, "A", m.topic, 1, nil)
	producePlain(t, m.topic, 0, 0, records)
	commitGroup(t, m.group, map[kafkatest.Partition]int64{m.p: committed})
	code, body := k.do(http.MethodPut, "/connectors/src-"+alias+"/config", mirrorConfig(t, m.topic, map[string]any{"source.cluster.alias": alias}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	code, body = k.do(http.MethodPut, "/connectors/ck-"+alias+"/config", checkpointConfig(t, alias, m.group, map[string]any{"topics": m.topic}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitTranslation("ck-"+alias, m.group, map[kafkatest.Partition]int64{m.p: committed}, 90*time.Second)
	return m
}
