package failover

import (
	"context"
	"fmt"

	"github.com/kmirror/kmirror/connectors/offsetmap"
	"github.com/kmirror/kmirror/kmtype"
)

// A topic both clusters share by name (IdentityReplicationPolicy: orders on A is copied to orders on B) holds,
// on B, A's copies followed by what B's producers wrote after the failover. The failover recorded B's end of
// each such partition once the A→B connector had stopped (its report's target_ends): below that boundary the
// records are A's copies, translated back through the A→B offset map read from its target side; at or past it
// they are B's own, copied to A by the failback's B→A connector and translated through its offset map.
//
// The boundary holds as long as B's producers began at the failover. Records B's producers wrote to the shared
// topic while A→B still ran lie below it too; they are not in the A→B map, so a position among them translates
// behind (re-read, never skipped) rather than exactly. A per-record provenance header would tell them apart.

// sharedMaps is what a position in a shared partition translates with.
type sharedMaps struct {
	// boundary is B's end offset of the partition recorded by the failover.
	boundary int64
	// back is the A→B range that starts last at or before the position on B, or the boundary when the position
	// is past it; nil when there is none.
	back *kmtype.OffsetRange
	// drained says the failover found every record A held (up to aEnd, its end after the A→B connector stopped)
	// replicated to B: a group that read all of A's copies on B resumes on A at aEnd, exactly.
	drained bool
	aEnd    int64
	// fwd and fwdBoundary are the B→A map's translations of the position and of the boundary.
	fwd, fwdBoundary     offsetmap.Answer
	fwdOK, fwdBoundaryOK bool
}

// sharedOffset translates c, a group's position on B in a shared partition, to A. ok is false when the maps
// cannot place it (a position below the first of A's copies).
func sharedOffset(c int64, m sharedMaps) (offset int64, exact, ok bool) {
	if c < m.boundary {
		if m.back == nil {
			return 0, false, false
		}
		offset, exact = sourceOffsetOf(m.back, c)
		return offset, exact, true
	}
	// base is where a group that read every copy of A's records and none of B's own resumes on A.
	base, baseExact := m.aEnd, true
	if !m.drained {
		if m.back == nil {
			return 0, false, false
		}
		base, baseExact = sourceOffsetOf(m.back, m.boundary)
	}
	// joined: the first of B's records copied to A sits right at base, so A holds nothing in between that the
	// group has not read (records A took after the failover, records A→B had not replicated).
	joined := m.fwdBoundaryOK && m.fwdBoundary.Offset == base
	switch {
	case c == m.boundary:
		return base, baseExact || joined && m.fwdBoundary.Exact, true
	case m.fwdOK && joined:
		return m.fwd.Offset, m.fwd.Exact && m.fwdBoundary.Exact, true
	case m.fwdOK:
		// A holds records between base and B's copies the group has not read: resuming at base reads them, and
		// reads some of B's records again, rather than skip any.
		return min(base, m.fwd.Offset), false, true
	default:
		// B's records past the boundary are not (all) on A yet: they come after base, read again in part.
		return base, false, true
	}
}

// translateShared translates p when its topic is shared by name and the failover recorded its partition's
// boundary; ok is false otherwise (a topic of B's own: the B→A map translates it as any other).
func (o *operation) translateShared(ctx context.Context, flow *flow, p *GroupPosition) (bool, error) {
	if o.undone == nil || flow.Policy.FormatRemoteTopic(flow.TargetAlias, p.SourceTopic) != p.SourceTopic {
		return false, nil // not a name A's topic of the same name is copied to (the default policy's A.orders)
	}
	boundary, ok := o.undone.targetEnd(p.SourceTopic, p.Partition)
	if !ok {
		// Not on B at the failover (a partition added since): all of it is B's own.
		return false, nil
	}
	back := kmtype.RangeKey{SourceAlias: flow.TargetAlias, TargetAlias: flow.SourceAlias, Topic: p.SourceTopic, Partition: p.Partition}
	atBoundary, err := o.store.OffsetRangeAtTarget(ctx, back, boundary)
	if err != nil || atBoundary == nil {
		return false, err // A→B never copied into it: a topic of B's own
	}
	m := sharedMaps{boundary: boundary, back: atBoundary}
	if p.SourceOffset < boundary {
		if m.back, err = o.store.OffsetRangeAtTarget(ctx, back, p.SourceOffset); err != nil {
			return false, err
		}
	}
	if pr, ok := o.undone.partition(p.SourceTopic, p.Partition); ok && o.undone.SourceStopped && pr.EndBasis == "listed" &&
		pr.SourceEnd != nil && pr.NotReplicated == nil {
		m.drained, m.aEnd = true, *pr.SourceEnd
	}
	fwd := kmtype.RangeKey{SourceAlias: flow.SourceAlias, TargetAlias: flow.TargetAlias, Topic: p.SourceTopic, Partition: p.Partition}
	around, err := o.store.OffsetRangesAround(ctx, []kmtype.RangeQuery{{RangeKey: fwd, Offset: p.SourceOffset}, {RangeKey: fwd, Offset: boundary}})
	if err != nil {
		return false, fmt.Errorf("read the offset map: %w", err)
	}
	m.fwd, m.fwdOK = offsetmap.Translate(rangeOf(around[0].Prev), rangeOf(around[0].Next), p.SourceOffset)
	m.fwdBoundary, m.fwdBoundaryOK = offsetmap.Translate(rangeOf(around[1].Prev), rangeOf(around[1].Next), boundary)
	d, exact, ok := sharedOffset(p.SourceOffset, m)
	p.TargetTopic, p.Basis = flow.TargetTopic(p.SourceTopic), kmtype.BasisOffsetMap
	if !ok {
		p.Basis = kmtype.BasisNone
		return true, nil
	}
	p.TargetOffset, p.Exact = &d, exact
	return true, nil
}

// targetEnd is the end offset of a target topic partition the report recorded.
func (r *Report) targetEnd(topic string, partition int32) (int64, bool) {
	for _, e := range r.TargetEnds {
		if e.Topic == topic && e.Partition == partition {
			return e.Offset, true
		}
	}
	return 0, false
}

// partition is the report of a source partition.
func (r *Report) partition(topic string, partition int32) (PartitionReport, bool) {
	for _, p := range r.Partitions {
		if p.SourceTopic == topic && p.Partition == partition {
			return p, true
		}
	}
	return PartitionReport{}, false
}
