package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mm2file"
	"github.com/kmirror/kmirror/connectors/mm2offsets"
	"github.com/kmirror/kmirror/server"
)

// TestMM2FileTakesOverFromJavaMM2 replaces a running dedicated-mode Java MirrorMaker 2 by kmirror started with
// the same mm2.properties: MM2 replicates a 3-partition topic while records keep arriving and is stopped
// cleanly in the middle of it; kmirror declares the file's connectors, takes MM2's committed source offsets
// before its first record, says so in an info notice, and carries on. Per-record audit: nothing missing,
// nothing reordered, nothing duplicated (a clean stop commits everything MM2 wrote). The file emits
// checkpoints and syncs group offsets: a consumer group committing on A is translated by MM2, then by kmirror
// without going back, and exactly once kmirror replicated what it reads (checked against the records on B,
// the group's synced offsets on B and Java's RemoteClusterUtils.translateOffsets).
func TestMM2FileTakesOverFromJavaMM2(t *testing.T) {
	t.Parallel()
	testMM2FileTakeover(t, false)
}

// TestMM2FileTakesOverFromKilledJavaMM2 is the same after kill -9, with MM2 flushing offsets every second: the
// only records written twice are those MM2 wrote past its last commit.
func TestMM2FileTakesOverFromKilledJavaMM2(t *testing.T) {
	t.Parallel()
	testMM2FileTakeover(t, true)
}

func testMM2FileTakeover(t *testing.T, crash bool) {
	const partitions = 3
	src, dst := uniqueAlias("mfs"), uniqueAlias("mft")
	topic := kafkatest.TopicName(t, "mf")
	kafkatest.CreateTopic(t, "A", topic, partitions, nil)
	remote := src + "." + topic
	next := make([]int, partitions)
	produced := 0
	extra := ""
	group := "g-" + src
	if crash {
		extra = dst + ".offset.flush.interval.ms = 1000"
	} else {
		// Later keys win in a .properties file: these replace the defaults of startJavaMM2.
		extra = strings.Join([]string{"emit.checkpoints.enabled = true", "emit.checkpoints.interval.seconds = 1",
			"sync.group.offsets.enabled = true", "sync.group.offsets.interval.seconds = 1", "refresh.groups.interval.seconds = 1",
			"groups = " + regexp.QuoteMeta(group)}, "\n")
	}

	// 1. Java MM2 replicates, then stops (or dies) while records keep arriving.
	kafkatest.Produce(t, "A", handoverRecords(topic, partitions, next, 1000))
	produced += 1000 * partitions
	mm2 := startJavaMM2(t, src, dst, regexp.QuoteMeta(topic), extra)
	for deadline := time.Now().Add(3 * time.Minute); kafkatest.EndOffsets(t, "B", remote, partitions) < int64(produced); {
		mm2.alive()
		if time.Now().After(deadline) {
			t.Fatalf("Java MM2 did not replicate %d records within 3 minutes:\n%s", produced, logTail(mm2.log, 40))
		}
		time.Sleep(200 * time.Millisecond)
	}
	var mm2Synced map[kafkatest.Partition]int64
	if !crash {
		mm2Synced = javaMM2TranslatesGroup(t, mm2, group, topic, partitions)
	}
	if crash {
		// Let periodic flushes commit every partition, so that the crash leaves offsets behind for all of them.
		for deadline := time.Now().Add(time.Minute); slices.Contains(javaCommitted(t, src, topic, partitions), -1); {
			mm2.alive()
			require.False(t, time.Now().After(deadline), "Java MM2 did not commit offsets for every partition within a minute")
			time.Sleep(200 * time.Millisecond)
		}
	}
	batch := handoverRecords(topic, partitions, next, 1500)
	produced += len(batch)
	var wg sync.WaitGroup
	var produceErr error
	bootstrapA := kafkatest.Bootstrap(t, "A")
	wg.Go(func() { produceErr = producePaced(bootstrapA, batch, 60, 50*time.Millisecond) })
	before := kafkatest.EndOffsets(t, "B", remote, partitions)
	for deadline := time.Now().Add(30 * time.Second); kafkatest.EndOffsets(t, "B", remote, partitions) == before; {
		mm2.alive()
		require.False(t, time.Now().After(deadline), "Java MM2 replicated none of the new records within 30 s")
		time.Sleep(10 * time.Millisecond)
	}
	if crash {
		mm2.kill()
	} else {
		mm2.stop()
	}
	wg.Wait()
	require.NoError(t, produceErr)
	onB := kafkatest.PartitionEnds(t, "B", remote, partitions)
	committed := javaCommitted(t, src, topic, partitions)
	require.NotContains(t, committed, int64(-1), "Java MM2 committed an offset for every partition")
	beyond := int64(0)
	for p := range partitions {
		beyond += onB[p] - (committed[p] + 1)
	}
	t.Logf("Java MM2 stopped (crash %v): on B %v, its committed offsets %v, %d records written past them", crash, onB, committed, beyond)

	// 2. kmirror starts with the very same file.
	f, err := mm2file.Load(mm2.props)
	require.NoError(t, err)
	k := startKmirror(t, "", func(c *server.Config) { c.MM2 = &server.MM2Properties{File: f} })
	name := src + "->" + dst + ".MirrorSourceConnector"
	path := "/connectors/" + url.PathEscape(name)
	code, body := k.do(http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, code, "%v", body)
	require.Equal(t, mm2.props, body.(map[string]any)["declared_by"])
	took := body.(map[string]any)["taken_over"].(map[string]any)
	require.Equal(t, mm2offsets.Topic(src), took["topic"])
	// MM2 replicates heartbeats topics whatever its filter says, and other tests' flows may have left some on
	// the shared cluster A: their partitions are imported beside the topic's.
	imported := mustInt(t, took["partitions"])
	require.GreaterOrEqual(t, imported, int64(partitions))
	code, _ = k.do(http.MethodDelete, path, nil)
	require.Equal(t, http.StatusConflict, code, "a declared connector is changed through its file only")
	require.Equal(t, fmt.Sprintf("took over from Java MM2: offsets of %d partitions imported from %s at %s", imported, mm2offsets.Topic(src),
		took["at"]), took["message"])
	requireTakeoverNotice(t, k, name, took)
	checkpoints := url.PathEscape(src + "->" + dst + ".MirrorCheckpointConnector")
	if crash {
		// The file sets emit.checkpoints.enabled=false, which Connect's validation refuses for the checkpoint
		// connector: MM2's herder does not create it, and neither does kmirror.
		code, _ = k.do(http.MethodGet, "/connectors/"+checkpoints, nil)
		require.Equal(t, http.StatusNotFound, code)
	} else {
		code, body = k.do(http.MethodGet, "/connectors/"+checkpoints, nil)
		require.Equal(t, http.StatusOK, code, "%v", body)
		took = body.(map[string]any)["taken_over"].(map[string]any)
		require.Equal(t, fmt.Sprintf("took over from Java MM2: continues from the checkpoints of 1 group (%d partitions) found on %s.checkpoints.internal at %s",
			partitions, src, took["at"]), took["message"])
		requireTakeoverNotice(t, k, src+"->"+dst+".MirrorCheckpointConnector", took)
		kmirrorContinuesGroup(t, k, checkpoints, src, group, mm2Synced)
	}

	kafkatest.Produce(t, "A", handoverRecords(topic, partitions, next, 500))
	produced += 500 * partitions
	want := next[0]
	perPartition, total := awaitRemoteSequences(t, remote, partitions, want)
	for p, a := range perPartition {
		t.Logf("partition %d: %d records on B for %d produced: %d missing, %d duplicated, %d reordered", p, a.records, want, a.missing, a.duplicated, a.reordered)
	}
	t.Logf("audit: %d produced, %d on B: %d missing, %d duplicated, %d reordered; MM2 wrote %d records past its committed offsets",
		produced, total.records, total.missing, total.duplicated, total.reordered, beyond)
	require.Zero(t, total.missing)
	require.Zero(t, total.reordered)
	require.LessOrEqual(t, int64(total.duplicated), beyond, "only records MM2 wrote past its commit may arrive twice")
	if !crash {
		require.Zero(t, total.duplicated, "a clean stop commits everything MM2 wrote")
		kmirrorTranslatesGroupExactly(t, k, checkpoints, src, group, topic, remote, next)
	}
}

// requireTakeoverNotice waits until the connector runs and checks that its status stays Connect's clean
// RUNNING while its notices hold the takeover its info shows, as a fact (level info), not a problem.
func requireTakeoverNotice(t *testing.T, k *kmirror, name string, took map[string]any) {
	t.Helper()
	path := "/connectors/" + url.PathEscape(name)
	require.Eventually(t, func() bool {
		states := strings.Fields(k.states(url.PathEscape(name)))
		return len(states) > 1 && !slices.ContainsFunc(states, func(s string) bool { return s != "RUNNING" })
	}, 90*time.Second, 100*time.Millisecond, "%s and its tasks never all ran: %s", name, k.states(url.PathEscape(name)))
	code, body := k.do(http.MethodGet, path+"/status", nil)
	require.Equal(t, http.StatusOK, code, "%v", body)
	require.NotContains(t, body.(map[string]any)["connector"], "trace", "the takeover is no problem: the status has no trace")
	code, body = k.do(http.MethodGet, path+"/notices", nil)
	require.Equal(t, http.StatusOK, code, "%v", body)
	units := body.(map[string]any)["units"].([]any)
	require.NotEmpty(t, units)
	require.Nil(t, units[0].(map[string]any)["task"])
	require.Contains(t, units[0].(map[string]any)["notices"], map[string]any{"kind": "took_over_from_mm2", "level": "info",
		"topic": took["topic"], "message": took["message"]})
	t.Logf("%s's notice: %s", name, took["message"])
}

// javaMM2TranslatesGroup commits offsets for group on A while Java MM2 runs and waits until MM2 has synced them
// to B; it returns what MM2 synced.
func javaMM2TranslatesGroup(t *testing.T, mm2 *javaMM2, group, topic string, partitions int) map[kafkatest.Partition]int64 {
	t.Helper()
	committed := map[kafkatest.Partition]int64{}
	for p := range partitions {
		committed[kafkatest.Partition{Topic: topic, Partition: int32(p)}] = int64(700 + p)
	}
	commitGroup(t, group, committed)
	admin := kafkatest.Admin(t, "B")
	var synced map[kafkatest.Partition]int64
	for deadline := time.Now().Add(2 * time.Minute); len(synced) < partitions; {
		mm2.alive()
		require.False(t, time.Now().After(deadline), "Java MM2 did not sync the offsets of %s to B within 2 minutes: %v\n%s", group, synced, logTail(mm2.log, 40))
		time.Sleep(200 * time.Millisecond)
		got, failed, err := admin.GroupOffsets(context.Background(), []string{group})
		if err != nil || failed[group] != nil {
			continue
		}
		synced = map[kafkatest.Partition]int64{}
		for _, o := range got[group] {
			synced[kafkatest.Partition{Topic: topic, Partition: o.Partition}] = o.Offset
		}
	}
	t.Logf("Java MM2 synced group %s committed at %v on A to %v on B", group, committed, synced)
	return synced
}

// kmirrorContinuesGroup checks that kmirror's checkpoint connector, started on MM2's checkpoints and offset
// syncs, translates the group where it stands without going back behind what MM2 synced and without passing
// the exact position (a consumer may read a record again after the switch, never miss one), and that the
// checkpoints a consumer on B reads never went backwards across the switch.
func kmirrorContinuesGroup(t *testing.T, k *kmirror, connector, src, group string, mm2Synced map[kafkatest.Partition]int64) {
	t.Helper()
	var last map[kafkatest.Partition]groupOffset
	first := map[kafkatest.Partition]groupOffset{}
	for deadline := time.Now().Add(90 * time.Second); ; {
		last = k.groupOffsets(connector, group)
		ok := len(last) == len(mm2Synced)
		for p := range mm2Synced {
			if o := last[p]; o.translated {
				if _, seen := first[p]; !seen {
					first[p] = o
				}
			}
			ok = ok && last[p].translated && last[p].target >= mm2Synced[p]
		}
		if ok {
			break
		}
		require.False(t, time.Now().After(deadline), "kmirror never translated group %s at least as far as MM2 synced it (%v): first %+v, last %+v",
			group, mm2Synced, first, last)
		time.Sleep(200 * time.Millisecond)
	}
	for p, o := range last {
		require.LessOrEqual(t, o.target, o.source, "%v: the translation passes the committed position (B holds each record once, at its source offset)", p)
		t.Logf("%v committed at %d on A: MM2 synced %d, kmirror first translated to %d (basis %s, checkpointed %v), then %d (basis %s, exact %v, checkpointed %v)",
			p, o.source, mm2Synced[p], first[p].target, first[p].basis, first[p].checkpointed, o.target, o.basis, o.exact, o.checkpointed)
	}
	latest := map[int32]mirror.Checkpoint{}
	for _, r := range kafkatest.ReadAll(t, "B", src+".checkpoints.internal", 0) {
		c, err := mirror.DecodeCheckpoint(r.Key, r.Value)
		require.NoError(t, err)
		if c.Group != group {
			continue
		}
		if prev, ok := latest[c.Partition]; ok && c.UpstreamOffset >= prev.UpstreamOffset {
			require.GreaterOrEqual(t, c.DownstreamOffset, prev.DownstreamOffset, "a checkpoint of partition %d went backwards: %+v after %+v", c.Partition, c, prev)
		}
		latest[c.Partition] = c
	}
	t.Logf("the checkpoints of %s on %s.checkpoints.internal never went backwards; latest %v", group, src, latest)
}

// kmirrorTranslatesGroupExactly moves the group into what kmirror replicated and checks the translation: exact
// in the API, a consumer resuming on B at it reads exactly the records after the group's last on A, the
// checkpoints topic and the group's synced offsets on B hold it, and Java's translateOffsets agrees.
func kmirrorTranslatesGroupExactly(t *testing.T, k *kmirror, connector, src, group, topic, remote string, next []int) {
	t.Helper()
	moved := map[kafkatest.Partition]int64{}
	for p := range next {
		moved[kafkatest.Partition{Topic: topic, Partition: int32(p)}] = int64(next[p] - 200 + p)
	}
	commitGroup(t, group, moved)
	got := k.awaitTranslation(connector, group, moved, 90*time.Second)
	for p, c := range moved {
		auditResume(t, remote, p, c, got[p].target)
		t.Logf("%v committed at %d on A after the takeover: kmirror translates to %d exactly (basis %s); a consumer resuming there reads every later record once", p, c, got[p].target, got[p].basis)
	}
	requireCheckpoints(t, src, group, got)
	requireTargetGroupOffsets(t, group, got, 60*time.Second)
	java := javaTranslateOffsets(t, "B", src, group)
	require.Len(t, java, len(got), "Java's translateOffsets: %v", java)
	for p, o := range got {
		require.Equal(t, o.target, java[kafkatest.Partition{Topic: o.targetTopic, Partition: p.Partition}], "Java's translateOffsets for %v: %v", p, java)
	}
	t.Logf("Java RemoteClusterUtils.translateOffsets agrees: %v", java)
}

// javaCommitted reads the source offsets Java MM2 committed for topic's partitions (-1: none yet).
func javaCommitted(t *testing.T, src, topic string, partitions int) []int64 {
	t.Helper()
	col := mm2offsets.NewCollector(mm2offsets.DefaultConnector, src)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := kafka.ReadTopic(ctx, map[string]string{"bootstrap.servers": kafkatest.Bootstrap(t, "B")}, mm2offsets.Topic(src),
		slog.New(slog.DiscardHandler), func(r kafka.Record) error {
			col.Add(r.Key(), r.Value())
			return nil
		})
	require.NoError(t, err)
	out := make([]int64, partitions)
	for i := range out {
		out[i] = -1
	}
	for _, o := range col.Offsets() {
		if o.Source.Topic == topic {
			out[o.Source.Partition] = o.Offset
		}
	}
	return out
}
