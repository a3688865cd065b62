package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mm2file"
	"github.com/kmirror/kmirror/connectors/mm2offsets"
	"github.com/kmirror/kmirror/server"
)

// TestMM2FileTakesOverFromJavaMM2 replaces a running dedicated-mode Java MirrorMaker 2 by kmirror started with
// the same mm2.properties: MM2 replicates a 3-partition topic while records keep arriving and is stopped
// cleanly in the middle of it; kmirror declares the file's connectors, takes MM2's committed source offsets
// before its first record, and carries on. Per-record audit: nothing missing, nothing reordered, nothing
// duplicated (a clean stop commits everything MM2 wrote).
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
	if crash {
		extra = dst + ".offset.flush.interval.ms = 1000"
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
	code, _ = k.do(http.MethodDelete, path, nil)
	require.Equal(t, http.StatusConflict, code, "a declared connector is changed through its file only")
	// The file sets emit.checkpoints.enabled=false, which Connect's validation refuses for the checkpoint
	// connector: MM2's herder does not create it, and neither does kmirror.
	code, _ = k.do(http.MethodGet, "/connectors/"+url.PathEscape(src+"->"+dst+".MirrorCheckpointConnector"), nil)
	require.Equal(t, http.StatusNotFound, code)

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
	}
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
