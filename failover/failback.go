package failover

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
)

// A failback runs on the B→A source connector, after a failover of the A→B one (FailoverOf). Before the steps
// of a failover (drain, stop, groups) it starts the B→A connector from the end offsets of B's own topics that
// the failover recorded (its report's target_ends), so that only what was produced on B after the failover is
// copied to A, never what B held before; and when it moves the groups, a position on B in a topic that came
// from A (A.orders) is translated back to the topic on A (orders) through the A→B offset map, read backwards.

// startReverse sets the B→A connector's offsets to the failover's recorded ends (keeping any it has already
// replicated past them) and starts it.
func (o *operation) startReverse(ctx context.Context, rep *Report) error {
	prev, err := o.store.LatestFailover(ctx, o.f.FailoverOf, store.KindFailover)
	if err != nil {
		return fmt.Errorf("read the failover of %s: %w", o.f.FailoverOf, err)
	}
	if prev.State != store.FailoverSucceeded || prev.Report == nil {
		return publicf("failover_of: connector %s has no succeeded failover to fail back from", o.f.FailoverOf)
	}
	var before Report
	if err := json.Unmarshal(prev.Report, &before); err != nil {
		return fmt.Errorf("read the report of failover %d: %w", prev.ID, err)
	}
	if before.TargetAlias != o.flow.SourceAlias || before.SourceAlias != o.flow.TargetAlias {
		return publicf("connector %s replicates from %s to %s, not back from %s to %s as a failback of %s must",
			o.f.Connector, o.flow.SourceAlias, o.flow.TargetAlias, before.TargetAlias, before.SourceAlias, o.f.FailoverOf)
	}
	o.undone = &before
	if _, err := o.stop(ctx); err != nil {
		return err
	}
	committed, err := o.committed(ctx)
	if err != nil {
		return err
	}
	var offsets []kmtype.Offset
	for _, e := range before.TargetEnds {
		if !o.flow.Topics.Accepts(e.Topic) || e.Offset == 0 {
			continue // nothing of it predates the failover: all of it is copied
		}
		last := e.Offset - 1 // the last record B held at the failover: replicated already, as far as this connector goes
		if c, ok := committed[partitionID(e.Topic, e.Partition)]; ok && c >= last {
			continue
		}
		offsets = append(offsets, kmtype.Offset{
			Partition: map[string]any{"cluster": o.flow.SourceAlias, "topic": e.Topic, "partition": e.Partition},
			Offset:    map[string]any{"offset": last},
		})
		rep.StartedFrom = append(rep.StartedFrom, TopicPartitionOffset{Topic: e.Topic, Partition: e.Partition, Offset: e.Offset})
	}
	if err := o.setOffsets(ctx, offsets); err != nil {
		return err
	}
	if err := o.store.SetTargetState(ctx, o.f.Connector, store.TargetStarted); err != nil {
		return fmt.Errorf("start connector %s: %w", o.f.Connector, err)
	}
	o.log.Info("the reverse connector starts from the failover's positions", "failover", prev.ID, "partitions_set", len(offsets))
	// Its tasks publish where they stand within a few seconds; the drain waits on what they committed.
	return o.awaitRunning(ctx)
}

// offsetsRequestTimeout bounds the wait for the worker holding the stopped connector to write its offsets.
const offsetsRequestTimeout = time.Minute

// setOffsets sets the stopped connector's offsets. With exactly-once source support its tasks resume from the
// offsets topic on the target, which would override a change made in PostgreSQL alone: the change is then
// filed for the worker holding the connector to write there first, as PATCH /connectors/{c}/offsets does.
func (o *operation) setOffsets(ctx context.Context, offsets []kmtype.Offset) error {
	if len(offsets) == 0 {
		return nil
	}
	if !o.offsetsInKafka {
		if err := o.store.AlterOffsets(ctx, o.f.Connector, offsets, false); err != nil {
			return fmt.Errorf("set the offsets of connector %s to the failover's positions: %w", o.f.Connector, err)
		}
		return nil
	}
	id, err := o.store.RequestOffsets(ctx, o.f.Connector, offsets, false)
	if err != nil {
		return fmt.Errorf("file the offsets of connector %s at the failover's positions: %w", o.f.Connector, err)
	}
	deadline := time.Now().Add(offsetsRequestTimeout)
	for {
		state, failure, err := o.store.OffsetRequestOutcome(ctx, id)
		switch {
		case err != nil:
			return fmt.Errorf("read offsets request %d: %w", id, err)
		case state == store.OffsetRequestDone:
			return nil
		case state == store.OffsetRequestFailed:
			return publicf("the offsets of connector %s could not be set to the failover's positions: %s", o.f.Connector, failure)
		}
		if !time.Now().Before(deadline) {
			state, err := o.store.ExpireOffsetRequest(ctx, id)
			if err != nil {
				return fmt.Errorf("withdraw offsets request %d: %w", id, err)
			}
			if state != store.OffsetRequestDone {
				return publicf("the offsets of connector %s were not written to its offsets topic within %s (state %s): "+
					"a worker with exactly-once source support must hold the stopped connector", o.f.Connector, offsetsRequestTimeout, state)
			}
			return nil
		}
		if err := o.pause(ctx, PhaseStarting); err != nil {
			return err
		}
	}
}

// awaitRunning waits, briefly, until the connector has tasks again after its start.
func (o *operation) awaitRunning(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		drained, err := o.store.ConnectorDrained(ctx, o.f.Connector)
		if err != nil {
			return err
		}
		if !drained {
			return nil
		}
		if err := o.pause(ctx, PhaseStarting); err != nil {
			return err
		}
	}
	return publicf("connector %s did not start within a minute", o.f.Connector)
}

// translateBack translates a position on this flow's source (B) in a topic that came from its target (A.orders,
// from A) to the topic on A it came from, through the offset map of the flow that copied it (A→B), read from
// the target side; and a position in a topic both clusters share by name (IdentityReplicationPolicy) through
// the boundary the failover recorded (translateShared). ok is false when neither applies or the maps know
// nothing of it.
func (o *operation) translateBack(ctx context.Context, flow *flow, p *GroupPosition) (bool, error) {
	src, remote := flow.Policy.TopicSource(p.SourceTopic)
	if !remote || src != flow.TargetAlias {
		return o.translateShared(ctx, flow, p)
	}
	key := kmtype.RangeKey{SourceAlias: flow.TargetAlias, TargetAlias: flow.SourceAlias, Topic: flow.Policy.OriginalTopic(p.SourceTopic), Partition: p.Partition}
	r, err := o.store.OffsetRangeAtTarget(ctx, key, p.SourceOffset)
	if err != nil || r == nil {
		return false, err
	}
	d, exact := sourceOffsetOf(r, p.SourceOffset)
	p.TargetTopic, p.TargetOffset, p.Exact, p.Basis = key.Topic, &d, exact, kmtype.BasisOffsetMap
	return true, nil
}

// sourceOffsetOf translates target, a position on the target of the range r that starts last at or before it,
// to the source: where a consumer resumes on the source to read what it would have read on the target from
// target on.
func sourceOffsetOf(r *kmtype.OffsetRange, target int64) (offset int64, exact bool) {
	at := target - r.TargetStart
	offset, exact = r.SourceStart+at, !r.Uncommitted
	if end := r.SourceEnd - r.SourceStart; at > end {
		// Past the range: right after it the next record is at SourceNext; further on, the target holds
		// records the map does not know, which resuming at SourceNext reads again rather than skip.
		offset, exact = r.SourceNext, exact && at == end+1
	}
	return offset, exact
}
