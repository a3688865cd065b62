package source

// The rule for records without the provenance header (docs/provenance.md, "Records without the header"): a
// source task B→A does not copy a headerless record of B's partition when the opposite flow, an A→B connector
// of the same kmirror, wrote it there, which that flow's offset map in PostgreSQL says (store.OppositeRanges).
// Such records are copies kmirror wrote without the header (kmirror.provenance.enabled=false on the opposite
// flow) and would otherwise go back into the cluster they came from.
//
// The opposite map is stored at that flow's commits, a moment after it wrote the records, while this task may
// read them at once. So a headerless record of a partition the opposite flow writes is decided only against a
// map loaded at least headerlessHold after the record was known to exist (the partition's high watermark then):
// by that time the opposite flow has acknowledged and committed what it wrote before, and its ranges say whether
// the record is one of its copies. The poll loop waits meanwhile, so the task's other partitions wait too; one
// wait settles every watched partition up to its high watermark, so the task moves on in steps of about that.
//
// The Go engine applies the rule; a task that needs it (some partition it reads has an opposite flow's ranges)
// runs on the Go engine (usesCPath), and a C pipeline that finds such ranges appear ends so that the next
// pipeline starts on the Go engine (errHeaderlessRule, a pipeline restart).

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/kmirror/kmirror/kmtype"
)

const (
	// headerlessHold is how long after a headerless record was known to exist the opposite flow's map must be
	// loaded before the record is decided: the opposite flow's acknowledgement and commit interval
	// (sourceCommitInterval) with a wide margin.
	headerlessHold = time.Second
	// headerlessDiscover is how often a task looks for opposite flows that began writing into its partitions.
	headerlessDiscover = 5 * time.Second
)

// errHeaderlessRule ends a C pipeline whose partitions an opposite flow began writing into: the next pipeline
// runs on the Go engine, which applies the rule for headerless records.
var errHeaderlessRule = errors.New("an opposite flow writes into the source partitions: replication continues on the Go engine")

// headerlessRule is a run's state of the rule. The poll loop owns it on the Go engine; on the C engine only the
// commit loop uses it (discoverOnC), to end the pipeline.
type headerlessRule struct {
	// needed says some partition of this run has an opposite flow's ranges: the run stays on the Go engine.
	needed bool
	// onC says the current pipeline runs on the C engine.
	onC     bool
	watched map[*sourcePartition]*oppositeWrites
	loaded  time.Time // when the map was last loaded
}

// oppositeWrites is what the opposite flows wrote into one partition.
type oppositeWrites struct {
	spans []kmtype.TargetRange // ascending, those ending at or after the partition's position when loaded
	// settled: every record below it is decided by spans (the map was loaded headerlessHold after it existed).
	settled int64
	// stamps says the latest evidence is that the opposite flow's copies carry the header (the guard skipped
	// one), not that it writes headerless ones (the map skipped one): records past settled are then decided by
	// the map as loaded, without the wait.
	stamps bool
}

// ruleFrom is where a partition's opposite ranges of interest begin: after its last acknowledged record (the
// committer's goroutine asks too, so not the poll loop's next).
func (p *sourcePartition) ruleFrom() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acked + 1
}

// load reads the opposite flows' ranges for every partition of the run; settle gives each partition's new
// settled offset (nil: unchanged). A partition with ranges becomes watched and stays so for the run.
func (r *sourceRun) loadOpposite(ctx context.Context, settle map[*sourcePartition]int64) error {
	queries := make([]kmtype.RangeQuery, len(r.parts))
	for i, p := range r.parts {
		queries[i] = kmtype.RangeQuery{RangeKey: kmtype.RangeKey{SourceAlias: r.sourceAlias, TargetAlias: r.targetAlias,
			Topic: p.tp.Topic, Partition: p.tp.Partition}, Offset: p.ruleFrom()}
	}
	r.rule.loaded = time.Now() // a failed look too: the next waits its turn
	got, err := r.env.OppositeRanges(ctx, queries)
	if err != nil {
		return err
	}
	for _, w := range r.rule.watched {
		w.spans = w.spans[:0]
	}
	for _, rg := range got {
		p := lookup(r.bySource, rg.Topic, rg.Partition)
		if p == nil {
			continue
		}
		w := r.rule.watched[p]
		if w == nil {
			if r.rule.watched == nil {
				r.rule.watched = map[*sourcePartition]*oppositeWrites{}
			}
			// Records read before the partition was watched were decided without the map: none is settled.
			w = &oppositeWrites{settled: -1}
			r.rule.watched[p] = w
			r.rule.needed = true
		}
		w.spans = append(w.spans, rg)
	}
	for p, s := range settle {
		if w := r.rule.watched[p]; w != nil {
			w.settled = max(w.settled, s)
		}
	}
	return nil
}

// discoverOpposite looks for opposite flows writing into the run's partitions before a pipeline picks its
// engine; nothing when provenance is off. A store error leaves the rule as it was: the next pipeline asks again.
func (r *sourceRun) discoverOpposite(ctx context.Context) {
	if !r.t.cfg.Kmirror.ProvenanceEnabled {
		return
	}
	if err := r.loadOpposite(ctx, nil); err != nil {
		r.limit.Log(ctx, r.log, slog.LevelWarn, "opposite", "read the opposite flows' offset maps", "error", err)
	}
}

// discoverOnC is the commit loop's look for opposite flows while a C pipeline runs: errHeaderlessRule once one
// writes into a partition of the run.
func (r *sourceRun) discoverOnC(ctx context.Context) error {
	if !r.rule.onC || !r.t.cfg.Kmirror.ProvenanceEnabled || time.Since(r.rule.loaded) < headerlessDiscover {
		return nil
	}
	r.discoverOpposite(ctx)
	if r.rule.needed {
		return &pipelineError{err: errHeaderlessRule}
	}
	return nil
}

// headerlessSkip decides a headerless record of partition p at offset off on the Go engine (or, came, one
// whose header names the source cluster): whether an opposite flow wrote it (skip it). It waits, for the
// partition's records past what the loaded map settles, until a map loaded headerlessHold later settles them;
// not for a headerless record while the opposite flow is seen to stamp its copies (oppositeStamps), since those
// past the map are then producers'. stop reports that ctx ended meanwhile: the record is neither copied nor
// skipped.
func (r *sourceRun) headerlessSkip(ctx context.Context, reader sourceReader, p *sourcePartition, off int64, came bool) (skip, stop bool) {
	if time.Since(r.rule.loaded) >= headerlessDiscover {
		if err := r.loadOpposite(ctx, nil); err != nil {
			r.limit.Log(ctx, r.log, slog.LevelWarn, "opposite", "read the opposite flows' offset maps", "error", err)
		}
	}
	w := r.rule.watched[p]
	if w == nil {
		return false, false
	}
	for off >= w.settled && (came || !w.stamps) {
		// Everything that exists now is settled by a map loaded headerlessHold from now.
		settle := make(map[*sourcePartition]int64, len(r.rule.watched))
		for q := range r.rule.watched {
			if _, high, err := reader.CachedWatermarks(q.tp.Topic, q.tp.Partition); err == nil && high >= 0 {
				settle[q] = high
			}
		}
		settle[p] = max(settle[p], off+1)
		t := time.NewTimer(headerlessHold)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, true
		case <-t.C:
		}
		if err := r.loadOpposite(ctx, settle); err != nil {
			if ctx.Err() != nil {
				return false, true
			}
			r.limit.Log(ctx, r.log, slog.LevelWarn, "opposite", "read the opposite flows' offset maps; the record waits", "error", err)
		}
	}
	skip = covered(w.spans, off)
	if skip {
		w.stamps = false // the opposite flow writes copies without the header: wait for its map again
	}
	return skip, false
}

// oppositeStamps notes that the guard skipped a record of p: the flow writing p's copies stamps them.
func (r *sourceRun) oppositeStamps(p *sourcePartition) {
	if w := r.rule.watched[p]; w != nil {
		w.stamps = true
	}
}

// covered tells whether off lies in one of the ascending spans.
func covered(spans []kmtype.TargetRange, off int64) bool {
	_, found := slices.BinarySearchFunc(spans, off, func(s kmtype.TargetRange, o int64) int {
		switch {
		case s.End < o:
			return -1
		case s.Start > o:
			return 1
		}
		return 0
	})
	return found
}
