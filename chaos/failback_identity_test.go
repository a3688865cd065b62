package chaos

import (
	"regexp"
	"testing"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// identityPolicy is MM2's IdentityReplicationPolicy: a topic keeps its name on the other cluster.
const identityPolicy = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"

// TestFailbackIdentity fails over from A to B (planned: A's producers stopped first) and back as TestFailback
// does, with both flows under IdentityReplicationPolicy: B's producers write to the same topic A's records were
// copied into, and the consumer group reads on in it, in one partition out of three inside A's copies, in one
// exactly at the end B had at the failover, in one among B's own records.
// Expected: A holds every record of the topic on B, none twice, and none of B's copies of A's records again;
// the group resumes on A with 0 records skipped and 0 read again (audited record by record against what it
// read on B), and the report calls every partition exact.
func TestFailbackIdentity(t *testing.T) {
	defaultPassOnly(t)
	failbackIdentity(t, true)
}

// TestFailbackIdentityNotDrained is TestFailbackIdentity with A's producers still writing through the failover,
// so that A holds records that never reached B. A group past the boundary has not read those, and they lie on
// A before B's copies it has read: no offset is exact there.
// Expected: as in TestFailbackIdentity for A's records; the group skips 0 records, and re-reads records only
// in partitions the report does not call exact.
func TestFailbackIdentityNotDrained(t *testing.T) {
	defaultPassOnly(t)
	failbackIdentity(t, false)
}

func failbackIdentity(t *testing.T, planned bool) {
	v := vol()
	policy := map[string]string{mirrorconfig.ReplicationPolicyClassConfig: identityPolicy}
	fc := newFailoverCaseWith(t, "foi", policy)
	s := fc.s
	s.prod.Run(v.rate)
	s.awaitFlowing(time.Minute)
	fc.consumeOnA(v.settle)
	if planned {
		s.prod.Stop()
	}
	moved := fc.failover(60_000, v.deadline)
	if !planned {
		s.prod.Stop()
	}
	if planned && moved.NotReplicatedOffsets != 0 {
		t.Fatalf("the planned failover left %d offsets of A not replicated", moved.NotReplicatedOffsets)
	}
	atFailover := map[int32]int64{}
	for _, g := range moved.Groups {
		for _, gp := range g.Partitions {
			if gp.TargetOffset != nil {
				atFailover[gp.Partition] = *gp.TargetOffset
			}
		}
	}
	boundary := map[int32]int64{}
	for _, e := range moved.TargetEnds {
		if e.Topic == s.topic {
			boundary[e.Partition] = e.Offset
		}
	}
	if len(boundary) != sourcePartitions {
		t.Fatalf("the failover recorded B's end of %d partitions of %s, want %d: %v", len(boundary), s.topic, sourcePartitions, moved.TargetEnds)
	}

	// On B: producers write to the shared topic; the group reads on and commits.
	const after = 30
	produceOn(t, "B", s.topic, "after", after)
	positions := make([]int64, sourcePartitions)
	var commit []kafka.GroupOffset
	for p := range sourcePartitions {
		from, end := atFailover[int32(p)], boundary[int32(p)]
		switch p % 3 {
		case 0: // inside A's copies
			positions[p] = from + (end-from)/2
		case 1: // every copy of A's records read, none of B's own
			positions[p] = end
		default: // among B's own records
			positions[p] = end + after/3
		}
		commit = append(commit, kafka.GroupOffset{Topic: s.topic, Partition: int32(p), Offset: positions[p]})
	}
	if err := newAdmin(t, "B").AlterGroupOffsets(t.Context(), fc.group, commit); err != nil {
		t.Fatalf("commit group %s on B: %v", fc.group, err)
	}

	ba, ckBA := createBack(t, s, regexp.QuoteMeta(s.topic), regexp.QuoteMeta(s.topic), fc.group, policy)
	awaitFollowed(t, s.c, ckBA, fc.group, v.deadline)
	rep := awaitOperation(t, s.c, ba, "failback", map[string]any{"failover_of": s.name, "checkpoint_connector": ckBA, "drain_timeout_ms": 60_000}, v.deadline)

	onA := groupOn(t, "A", fc.group, s.topic)
	// Record by record: A against B, and the group's resume on A against what it read on B.
	exactIn := map[int32]bool{}
	for _, g := range rep.Groups {
		for _, gp := range g.Partitions {
			exactIn[gp.Partition] = gp.Exact && gp.Committed
		}
	}
	var missing, twice, copied, skipped, reread, rereadExact int
	for p := range sourcePartitions {
		recsA, recsB := kafkatest.ReadAll(t, "A", s.topic, int32(p)), kafkatest.ReadAll(t, "B", s.topic, int32(p))
		onAByValue := map[string]int{}
		for _, r := range recsA {
			onAByValue[string(r.Value)]++
		}
		read := map[string]bool{}
		for _, r := range recsB {
			v := string(r.Value)
			switch n := onAByValue[v]; {
			case n == 0:
				missing++
			case n > 1:
				twice += n - 1
			}
			if r.Offset >= boundary[int32(p)] {
				copied++
			}
			if r.Offset < positions[p] {
				read[v] = true
			}
		}
		for _, r := range recsA {
			switch v := string(r.Value); {
			case r.Offset < onA[int32(p)] && !read[v]:
				skipped++
			case r.Offset >= onA[int32(p)] && read[v]:
				reread++
				if exactIn[int32(p)] {
					rereadExact++
				}
			}
		}
		t.Logf("partition %d: B's end at the failover %d, group on B at %d, resumes on A at %d (exact %v)", p, boundary[int32(p)], positions[p], onA[int32(p)], exactIn[int32(p)])
	}
	exact := exactCommitted(rep)
	t.Logf("SUMMARY %s: A's offsets not replicated at the failover %d; started from %v; B's records past the failover copied to A: %d (produced %d); "+
		"B's records missing on A %d, on A twice %d; group resumes on A: %d skipped, %d read again (%d in partitions reported exact); "+
		"exact and committed partitions in the report %d of %d",
		t.Name(), moved.NotReplicatedOffsets, rep.StartedFrom, copied, after*sourcePartitions, missing, twice, skipped, reread, rereadExact, exact, sourcePartitions)
	if copied != after*sourcePartitions || missing > 0 || twice > 0 {
		t.Errorf("A against B: %d of B's records past the failover, want %d; %d missing on A, %d twice", copied, after*sourcePartitions, missing, twice)
	}
	if skipped > 0 || rereadExact > 0 {
		t.Errorf("the group resumes on A with %d skipped and %d read again in partitions reported exact; want 0, 0", skipped, rereadExact)
	}
	if planned && (reread > 0 || exact != sourcePartitions) {
		t.Errorf("after a planned failover the group resumes on A with %d read again, %d partitions exact; want 0, %d", reread, exact, sourcePartitions)
	}
}
