package failover

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/offsetmap"
	"github.com/kmirror/kmirror/kmtype"
)

// TestSharedOffset plays a failover and failback of a topic both clusters share by name and checks every
// position a group can hold on B: resuming on A at the translated offset skips no record the group has not
// read, and, when the answer is exact, reads none it has read. It is exact whenever A→B had replicated all of
// A and A took nothing after the failover.
//
// A holds n records; A→B copied the first k to B (at B's offsets 0..k-1, followed by a transaction marker when
// it wrote transactionally) and stopped: B's end then is the boundary. A may take x records more; B's producers
// write w records, which B→A copies to A after everything A holds.
func TestSharedOffset(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 20).Draw(t, "n")
		k := rapid.IntRange(1, n).Draw(t, "k")
		marker := rapid.Bool().Draw(t, "marker_on_b")
		x := rapid.IntRange(0, 3).Draw(t, "x")
		w := rapid.IntRange(0, 6).Draw(t, "w")
		reported := rapid.Bool().Draw(t, "drained_reported")

		// The records by identity: A's at A's offsets, and B's by their offsets on B.
		onA := []string{}
		for i := range n + x {
			onA = append(onA, fmt.Sprint("a", i))
		}
		onB := []string{}
		for i := range k {
			onB = append(onB, fmt.Sprint("a", i))
		}
		if marker {
			onB = append(onB, "") // a transaction marker: no record
		}
		boundary := int64(len(onB))
		for i := range w {
			onB = append(onB, fmt.Sprint("b", i))
			onA = append(onA, fmt.Sprint("b", i))
		}

		m := sharedMaps{boundary: boundary, drained: reported && k == n, aEnd: int64(n)}
		abRange := &kmtype.OffsetRange{SourceStart: 0, SourceEnd: int64(k - 1), TargetStart: 0, SourceNext: int64(k)}
		var ba *offsetmap.Range
		if w > 0 {
			ba = &offsetmap.Range{SourceStart: boundary, SourceEnd: boundary + int64(w) - 1, TargetStart: int64(n + x), SourceNext: boundary + int64(w)}
		}
		forward := func(c int64) (offsetmap.Answer, bool) {
			if ba == nil {
				return offsetmap.Answer{}, false
			}
			if ba.SourceStart <= c {
				return offsetmap.Translate(ba, nil, c)
			}
			return offsetmap.Translate(nil, ba, c)
		}
		m.fwdBoundary, m.fwdBoundaryOK = forward(boundary)

		for c := int64(0); c <= int64(len(onB)); c++ {
			mc := m
			mc.back = abRange
			mc.fwd, mc.fwdOK = forward(c)
			got, exact, ok := sharedOffset(c, mc)
			if !ok {
				t.Fatalf("position %d on B: no translation", c)
			}
			read := map[string]bool{}
			for _, id := range onB[:c] {
				read[id] = id != ""
			}
			for off, id := range onA {
				switch {
				case int64(off) < got && !read[id]:
					t.Fatalf("position %d on B resumes at %d on A: skips %s at %d, which the group has not read", c, got, id, off)
				case int64(off) >= got && read[id] && exact:
					t.Fatalf("position %d on B resumes at %d on A, exact: reads %s at %d again", c, got, id, off)
				}
			}
			if k == n && x == 0 && (reported || !marker || w > 0) && !exact {
				t.Fatalf("position %d on B resumes at %d on A, not exact where the maps allow it", c, got)
			}
		}
	})
}

// TestSharedOffsetUnplaced checks that a position the maps cannot place is not translated: below the first of
// A's copies, when there is no A→B range at or before it.
func TestSharedOffsetUnplaced(t *testing.T) {
	if _, _, ok := sharedOffset(3, sharedMaps{boundary: 10}); ok {
		t.Error("a position below A's copies translates")
	}
	if _, _, ok := sharedOffset(12, sharedMaps{boundary: 10}); ok {
		t.Error("a position past the boundary of a partition not drained, with no A→B range, translates")
	}
}

// TestTranslateSharedOnlyShared checks which positions the boundary rule applies to: not a topic of B's own under
// the default policy (A's orders is copied to A.orders, so orders on B is B's alone), not a partition the
// failover did not record (created on B since: all of it B's own), and nothing outside a failback. Those are left
// to the B→A offset map, before any offset map is read.
func TestTranslateSharedOnlyShared(t *testing.T) {
	undone := &Report{TargetEnds: []TopicPartitionOffset{{Topic: "orders", Partition: 0, Offset: 40}}}
	for _, c := range []struct {
		name   string
		config map[string]string
		undone *Report
		pos    GroupPosition
	}{
		{"default policy", map[string]string{}, undone, GroupPosition{SourceTopic: "orders", Partition: 0, SourceOffset: 10}},
		{"partition not recorded", identityConfig, undone, GroupPosition{SourceTopic: "orders", Partition: 1, SourceOffset: 10}},
		{"topic not recorded", identityConfig, undone, GroupPosition{SourceTopic: "payments", Partition: 0, SourceOffset: 10}},
		{"not a failback", identityConfig, nil, GroupPosition{SourceTopic: "orders", Partition: 0, SourceOffset: 10}},
	} {
		policy, err := mirror.NewReplicationPolicy(c.config)
		if err != nil {
			t.Fatal(err)
		}
		o := &operation{undone: c.undone} // no store: reading an offset map would panic
		p := c.pos
		shared, err := o.translateShared(t.Context(), &flow{SourceAlias: "B", TargetAlias: "A", Policy: policy}, &p)
		if shared || err != nil || p.TargetOffset != nil {
			t.Errorf("%s: translated by the boundary rule (%v, %v, %+v)", c.name, shared, err, p)
		}
	}
}

var identityConfig = map[string]string{mirrorconfig.ReplicationPolicyClassConfig: "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
	mirrorconfig.SourceClusterAliasConfig: "B"}
