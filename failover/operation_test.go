package failover

import (
	"testing"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
)

// TestPartitionReports checks the ranges a report lists: what the source held past what was replicated,
// from its listed end or, when it did not answer, from the end last seen (never below what was replicated).
func TestPartitionReports(t *testing.T) {
	policy, err := mirror.NewReplicationPolicy(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	p0, p1, p2 := kafka.PartitionID{Topic: "orders", Partition: 0}, kafka.PartitionID{Topic: "orders", Partition: 1}, kafka.PartitionID{Topic: "orders", Partition: 2}
	o := &operation{flow: &flow{SourceAlias: "A", TargetAlias: "B", Policy: policy}, parts: []kafka.PartitionID{p0, p1, p2},
		lastSeen: map[kafka.PartitionID]int64{p0: 90, p1: 40}, remote: map[kafka.PartitionID]string{}}
	pos := map[kafka.PartitionID]int64{p0: 80, p1: 50, p2: 7}

	listed := &Report{}
	o.partitionReports(listed, pos, map[kafka.PartitionID]int64{p0: 100, p1: 50, p2: 7})
	if got := listed.Partitions[0]; got.TargetTopic != "A.orders" || got.EndBasis != "listed" || got.NotReplicated == nil ||
		*got.NotReplicated != (OffsetRange{From: 80, To: 99}) {
		t.Errorf("partition 0 with the source listed: %+v", got)
	}
	if got := listed.Partitions[1]; got.NotReplicated != nil {
		t.Errorf("partition 1 replicated to its end lists %+v", got.NotReplicated)
	}
	if listed.NotReplicatedOffsets != 20 {
		t.Errorf("not_replicated_offsets %d, want 20", listed.NotReplicatedOffsets)
	}

	unreachable := &Report{}
	o.partitionReports(unreachable, pos, nil)
	if got := unreachable.Partitions[0]; got.EndBasis != "last_seen" || *got.NotReplicated != (OffsetRange{From: 80, To: 89}) {
		t.Errorf("partition 0 with the source unreachable: %+v", got)
	}
	if got := unreachable.Partitions[1]; got.EndBasis != "last_seen" || *got.SourceEnd != 50 || got.NotReplicated != nil {
		t.Errorf("partition 1 replicated past the end last seen: %+v (the end was at least what was replicated)", got)
	}
	if got := unreachable.Partitions[2]; got.EndBasis != "unknown" || got.SourceEnd != nil || got.NotReplicated != nil {
		t.Errorf("partition 2 never seen: %+v", got)
	}
}
