package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// TestHeaderlessNotCopiedBack: A→B copies without the provenance header (kmirror.provenance.enabled=false) and
// B→A with it, both under IdentityReplicationPolicy on the same topic, producers on both sides. B→A tells
// A→B's copies apart by A→B's offset map: it copies none of them back, neither the headerless copies of A's
// records nor the copies of its own copies that A→B brings back to B. A ends with every record of both sides
// exactly once, in its partition's order; A's own records never come back.
func TestHeaderlessNotCopiedBack(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	topic := kafkatest.TopicName(t, "orders")
	const parts = 3
	kafkatest.CreateTopic(t, "A", topic, parts, nil)
	kafkatest.CreateTopic(t, "B", topic, parts, nil)
	ab, ba := "mm2-ab-"+topic, "mm2-ba-"+topic
	ends := func(cluster string) []int64 { return kafkatest.PartitionEnds(t, cluster, topic, parts) }
	await := func(what string, done func() bool) {
		deadline := time.Now().Add(3 * time.Minute)
		for !done() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 3 minutes (ends A %v, B %v)", what, ends("A"), ends("B"))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	sentA := activeRecords("A", topic, parts, 3000, 0)
	sentB := activeRecords("B", topic, parts, 3000, 0)
	kafkatest.Produce(t, "A", sentA[:1000])
	kafkatest.Produce(t, "B", sentB[:1000])
	// History: A→B runs alone first and writes headerless copies of A's records into B, as a flow did before
	// the header existed.
	code, body := k.do(http.MethodPut, "/connectors/"+ab+"/config", identityFlow(t, topic, "A", "B", map[string]any{mirrorconfig.ProvenanceEnabledConfig: "false"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(ab, "RUNNING RUNNING RUNNING", 60*time.Second)
	await("A→B copies A's history", func() bool { return k.committedThrough(t, ab, topic, ends("A"), false) })

	began := time.Now()
	code, body = k.do(http.MethodPut, "/connectors/"+ba+"/config", identityFlow(t, topic, "B", "A", nil))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(ba, "RUNNING RUNNING RUNNING", 60*time.Second)
	for i := 1000; i < 3000; i += 500 { // both sides keep producing while the flows run
		kafkatest.Produce(t, "A", sentA[i:i+500])
		kafkatest.Produce(t, "B", sentB[i:i+500])
	}
	// Both connectors have dealt with every record of both topics. A→B copies B→A's copies back into B (it
	// guards nothing), so B's partitions grow until B→A has skipped all of those.
	await("both flows commit every offset", func() bool {
		endA, endB := ends("A"), ends("B")
		return k.committedThrough(t, ab, topic, endA, false) && k.committedThrough(t, ba, topic, endB, false)
	})
	t.Logf("both flows settled %.1f s after B→A was created", time.Since(began).Seconds())

	n, missing, duplicated := auditOrigins(t, "A", topic, parts, sentA, sentB)
	endB := ends("B")
	var onB int64
	for _, e := range endB {
		onB += e
	}
	t.Logf("cluster A: %d records, %d missing, %d duplicated, 0 reordered; cluster B holds %d records", n, missing, duplicated, onB)
	require.Zero(t, missing)
	require.Zero(t, duplicated)
	require.Equal(t, len(sentA)+len(sentB), n, "A holds exactly what was produced on both sides")

	// The audit above is the proof that B→A skipped every record on B but B's own (A's records, and B's that
	// A→B brought back). The counter shows the skips too, but only since its task's current run: a task that
	// restarts (a lease lost on a loaded machine) starts its series again, as a Connect task's metrics do.
	skipped := k.provenanceSkipped(ba)
	t.Logf("B→A skipped %.0f of the %d records A→B wrote into B, as its tasks' current runs count", skipped, onB-int64(len(sentB)))
	require.Positive(t, skipped, "B→A counts the records it skipped")
	require.LessOrEqual(t, skipped, float64(onB-int64(len(sentB))), "B→A skipped only records A→B wrote into B")

	// What the wait costs: a record produced on B reaches A about headerlessHold later; one produced on A reaches
	// B (no rule on that side) at once.
	logReach(t, topic, parts, 3000)
}

// logReach logs how long one record produced on each cluster of an active-active pair on topic takes to reach
// the other (its partition's end offset there moves), from the record's return from the producer; seq is
// the record's sequence (activeRecords), past those produced before.
func logReach(t *testing.T, topic string, parts, seq int) {
	for _, c := range []struct{ from, to string }{{"B", "A"}, {"A", "B"}} {
		rec := activeRecords(c.from, topic, parts, 1, seq)
		part := int(rec[0].Partition)
		before := kafkatest.PartitionEnds(t, c.to, topic, parts)[part]
		began := time.Now()
		kafkatest.Produce(t, c.from, rec)
		for kafkatest.PartitionEnds(t, c.to, topic, parts)[part] == before {
			require.Less(t, time.Since(began), time.Minute, "the record produced on %s did not reach %s", c.from, c.to)
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("a record produced on %s reached %s after %v", c.from, c.to, time.Since(began).Round(time.Millisecond))
	}
}
