package source

// The provenance header and the cycle guard on the source task's record path (package connectors/provenance,
// docs/provenance.md): every record copied carries the header naming the cluster it was first produced on,
// and a record whose header names the target cluster is not copied back into it. Both data paths decide the
// same way: the Go path here, per record; the C path in C (cpath.c), reporting its skips in each batch.

import (
	"context"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/cpath"
	"github.com/kmirror/kmirror/connectors/provenance"
)

// runProvenance is a run's provenance state: the current pipeline's guard (nil: provenance is off), and the
// source and target clusters' ids as far as the run has learned them ("" unknown).
type runProvenance struct {
	guard          *provenance.Guard
	sourceID, tgID string
}

// learnOrigins sets up the run's guard (r.prov.guard) for a pipeline, asking both clusters for their ids where the
// task does not know them yet; nil when the connector switched provenance off. A cluster whose id cannot be
// read is named by its alias alone: the guard then compares by alias, and a later pipeline asks again.
func (r *sourceRun) learnOrigins(ctx context.Context, sourceAdmin, targetAdmin clusterAdmin) {
	if !r.t.cfg.Kmirror.ProvenanceEnabled {
		r.prov.guard = nil
		return
	}
	for _, c := range []struct {
		admin clusterAdmin
		id    *string
		side  string
	}{{sourceAdmin, &r.prov.sourceID, "source"}, {targetAdmin, &r.prov.tgID, "target"}} {
		if *c.id != "" || c.admin == nil {
			continue
		}
		id, err := c.admin.ClusterID(ctx)
		if err != nil {
			r.log.Warn("cluster id unknown: the provenance header and the cycle guard name the cluster by its alias", "cluster", c.side, "error", err)
			continue
		}
		*c.id = id
	}
	r.prov.guard = provenance.NewGuard(provenance.Origin{Alias: r.sourceAlias, ClusterID: r.prov.sourceID},
		provenance.Origin{Alias: r.targetAlias, ClusterID: r.prov.tgID})
}

// guardC hands the run's guard to a C pipeline, which decides in C what the guard decides.
func (r *sourceRun) guardC(pl cPipeline) {
	if r.prov.guard != nil {
		t := r.prov.guard.Target()
		pl.SetProvenance(provenance.Header, r.prov.guard.Stamp(), t.Alias, t.ClusterID)
	}
}

// skipsRecord applies the guard to one consumed record of partition p on the Go path: it stamps a record
// without the header, and reports whether the record came from the target cluster, in which case the caller
// drops it and the partition counts it as dealt with once every earlier record is (partition_skip.go). A record
// without the header, or one that came back into the cluster its header names, came from the target when an
// opposite flow wrote it (headerless.go). It also reports true, skipping nothing, when ctx ended meanwhile.
func (r *sourceRun) skipsRecord(ctx context.Context, reader sourceReader, p *sourcePartition, rec kafka.Record) bool {
	if r.prov.guard == nil {
		return false
	}
	v, ok := rec.LastHeader(provenance.Header)
	action := r.prov.guard.Decide(v, ok)
	if came := action == provenance.Copy && r.cameBack(v); action == provenance.Stamp || came {
		skip, stop := r.headerlessSkip(ctx, reader, p, rec.Offset(), came)
		if stop {
			return true // the pipeline ends: the record is read again by the next one
		}
		if skip {
			action = provenance.Skip // an opposite flow's copy (headerless.go)
		}
	} else if action == provenance.Skip {
		r.oppositeStamps(p)
	}
	switch action {
	case provenance.Stamp:
		rec.AddHeader(kafka.Header{Key: provenance.Header, Value: r.prov.guard.Stamp()})
	case provenance.Skip:
		off := rec.Offset()
		p.next = off + 1
		r.skipped(p, off, 1)
		return true
	}
	return false
}

// cameBack tells whether a header value names the source cluster: the record was copied out of it and back
// into it, by a flow that does not guard (an opposite flow with provenance off copies kmirror's copies back).
func (r *sourceRun) cameBack(v []byte) bool {
	o, err := provenance.Decode(v)
	return err == nil && provenance.Same(o, provenance.Origin{Alias: r.sourceAlias, ClusterID: r.prov.sourceID})
}

// skippedC applies what the C path reports of the guard's skips in one batch entry.
func (r *sourceRun) skippedC(p *sourcePartition, f cpath.Forwarded) {
	if f.Skipped == 0 {
		return
	}
	p.next = f.Next
	r.skipped(p, f.Last, f.Skipped)
}

func (r *sourceRun) skipped(p *sourcePartition, last int64, n int) {
	p.skipRun(last, n)
	if p.metrics.on() {
		p.metrics.m.Skipped(n)
	}
}
