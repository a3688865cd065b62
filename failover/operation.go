package failover

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
)

// Phases of a running operation, as GET /connectors/{c}/failover shows them.
const (
	PhaseDraining = "draining" // waiting until the source connector has replicated what the source held
	PhaseStopping = "stopping" // the source connector is told to stop; waiting for its tasks' last commits
	PhaseGroups   = "groups"   // translating and committing the groups' positions on the target
	PhaseStarting = "starting" // a failback: starting the B→A connector from the failover's positions
)

// drainPoll is how often the drain looks at the replicated positions; stopTimeout bounds the wait for the
// source connector's tasks to stop (they have their own stop budget, well below).
const (
	drainPoll   = 250 * time.Millisecond
	stopTimeout = 2 * time.Minute
)

const timeLayout = "2006-01-02T15:04:05.000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// operation is one failover being run.
type operation struct {
	store    *store.Store
	flows    flows
	f        store.Failover
	log      *slog.Logger
	progress func(ctx context.Context, phase string) error
	// offsetsInKafka says source connectors keep their offsets in the offsets topic on the target too
	// (exactly-once source support).
	offsetsInKafka bool

	flow  *flow
	parts []kafka.PartitionID // the source connector's partitions, sorted
	// lastSeen is each partition's source end offset as the source connector last saw it.
	lastSeen map[kafka.PartitionID]int64
	remote   map[kafka.PartitionID]string
	// undone is, for a failback, the report of the failover it undoes.
	undone *Report
}

func (o *operation) run(ctx context.Context) (*Report, error) {
	c, err := o.store.GetConnector(ctx, o.f.Connector)
	if err != nil {
		return nil, fmt.Errorf("read connector %s: %w", o.f.Connector, err)
	}
	if o.flow, err = o.flows.open(c.Name, c.Config); err != nil {
		return nil, fmt.Errorf("open the clusters of connector %s: %w", c.Name, err)
	}
	defer o.flow.Close()
	if o.flow.Class != mirrorconfig.SourceConnectorClass {
		return nil, publicf("connector %s is not a MirrorSourceConnector", c.Name)
	}
	rep := &Report{Kind: o.f.Kind, Connector: c.Name, FailoverOf: o.f.FailoverOf, SourceAlias: o.flow.SourceAlias, TargetAlias: o.flow.TargetAlias,
		StartedAt: formatTime(time.Now()), Partitions: []PartitionReport{}, Groups: []GroupReport{}, TargetEnds: []TopicPartitionOffset{}}
	if o.f.Kind == store.KindFailback {
		if err := o.progress(ctx, PhaseStarting); err != nil {
			return nil, err
		}
		if err := o.startReverse(ctx, rep); err != nil {
			return nil, err
		}
	}
	if err := o.loadPartitions(ctx); err != nil {
		return nil, err
	}

	if err := o.progress(ctx, PhaseDraining); err != nil {
		return nil, err
	}
	ends, reachable := o.sourceEnds(ctx)
	rep.SourceReachable = reachable
	if reachable {
		if rep.Drained, err = o.drain(ctx, ends); err != nil {
			return nil, err
		}
	}

	if err := o.progress(ctx, PhaseStopping); err != nil {
		return nil, err
	}
	if rep.SourceStopped, err = o.stop(ctx); err != nil {
		return nil, err
	}
	rep.StoppedAt = formatTime(time.Now())
	if rep.SourceReachable {
		// What the source holds now: records produced while the connector drained and stopped count too.
		if ends, rep.SourceReachable = o.sourceEnds(ctx); !rep.SourceReachable {
			o.log.Warn("the source cluster stopped answering during the failover; the report uses the end offsets last seen")
		}
	}
	pos, err := o.positions(ctx)
	if err != nil {
		return nil, err
	}
	o.partitionReports(rep, pos, ends)
	rep.TargetEnds = o.targetEnds(ctx)

	if err := o.progress(ctx, PhaseGroups); err != nil {
		return nil, err
	}
	if err := o.groups(ctx, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// loadPartitions finds the source connector's partitions: those its tasks published stats of, and those it
// has committed offsets for.
func (o *operation) loadPartitions(ctx context.Context) error {
	stats, err := o.store.ConnectorPartitionStats(ctx, o.f.Connector)
	if err != nil {
		return fmt.Errorf("read the partitions of connector %s: %w", o.f.Connector, err)
	}
	o.lastSeen, o.remote = map[kafka.PartitionID]int64{}, map[kafka.PartitionID]string{}
	seen := map[kafka.PartitionID]bool{}
	for _, st := range stats {
		id := kafka.PartitionID{Topic: st.Topic, Partition: st.Partition}
		seen[id] = true
		if st.EndOffset != nil {
			o.lastSeen[id] = *st.EndOffset
		}
		if st.RemoteTopic != "" {
			o.remote[id] = st.RemoteTopic
		}
	}
	committed, err := o.committed(ctx)
	if err != nil {
		return err
	}
	for id := range committed {
		seen[id] = true
	}
	// Topics the connector has not replicated a record of yet (a topic producers created on the source lately).
	if topics, err := o.flow.Source.Topics(ctx); err == nil {
		for t, n := range topics {
			if !o.flow.Topics.Accepts(t) || o.internal(t) {
				continue
			}
			if src, remote := o.flow.Policy.TopicSource(t); remote && src == o.flow.TargetAlias {
				continue // MM2's cycle detection: it came from the target, the connector does not copy it back
			}
			for p := range n {
				seen[kafka.PartitionID{Topic: t, Partition: int32(p)}] = true
			}
		}
	}
	for id := range seen {
		o.parts = append(o.parts, id)
	}
	slices.SortFunc(o.parts, func(a, b kafka.PartitionID) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return nil
}

// sourceEnds asks the source for its partitions' end offsets (the last stable offset, as kmirror's
// read_committed replication consumer sees the log); reachable is false when it does not answer for all.
func (o *operation) sourceEnds(ctx context.Context) (map[kafka.PartitionID]int64, bool) {
	if len(o.parts) == 0 {
		return map[kafka.PartitionID]int64{}, true
	}
	got, failed, err := o.flow.Source.LogOffsets(ctx, o.parts, true, false)
	if err != nil || len(failed) > 0 {
		o.log.Warn("the source cluster does not answer for its end offsets; failing over without draining", "error", cmp.Or(err, errors.Join(mapErrors(failed)...)))
		return nil, false
	}
	ends := make(map[kafka.PartitionID]int64, len(got))
	for id, lo := range got {
		ends[id] = lo.End
	}
	return ends, true
}

func mapErrors(m map[kafka.PartitionID]error) []error {
	out := make([]error, 0, len(m))
	for _, err := range m {
		out = append(out, err)
	}
	return out
}

// drain waits until every partition is replicated up to ends, or the drain timeout; drained tells which.
func (o *operation) drain(ctx context.Context, ends map[kafka.PartitionID]int64) (bool, error) {
	deadline := time.Now().Add(o.f.DrainTimeout)
	for {
		pos, err := o.positions(ctx)
		if err != nil {
			return false, err
		}
		behind := 0
		for id, end := range ends {
			if pos[id] < end {
				behind++
			}
		}
		if behind == 0 {
			return true, nil
		}
		if !time.Now().Before(deadline) {
			o.log.Warn("the drain timed out; stopping the source connector with partitions not replicated to the end", "partitions_behind", behind)
			return false, nil
		}
		if err := o.pause(ctx, PhaseDraining); err != nil {
			return false, err
		}
	}
}

// stop stops the source connector and waits until its tasks have let their units go, after their last
// commits; stopped is false when they did not within stopTimeout.
func (o *operation) stop(ctx context.Context) (bool, error) {
	if err := o.store.SetTargetState(ctx, o.f.Connector, store.TargetStopped); err != nil {
		return false, fmt.Errorf("stop connector %s: %w", o.f.Connector, err)
	}
	deadline := time.Now().Add(stopTimeout)
	for {
		drained, err := o.store.ConnectorDrained(ctx, o.f.Connector)
		if err != nil {
			return false, err
		}
		if drained {
			return true, nil
		}
		if !time.Now().Before(deadline) {
			o.log.Warn("the source connector's tasks did not stop in time; the report's positions may still move")
			return false, nil
		}
		if err := o.pause(ctx, PhaseStopping); err != nil {
			return false, err
		}
	}
}

// pause shows a sign of life in phase and waits one drainPoll.
func (o *operation) pause(ctx context.Context, phase string) error {
	if err := o.progress(ctx, phase); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(drainPoll):
		return nil
	}
}

// committed reads the source connector's committed offsets for its source cluster: the last source offset
// replicated of each partition.
func (o *operation) committed(ctx context.Context) (map[kafka.PartitionID]int64, error) {
	all, err := o.store.Offsets(ctx, o.f.Connector)
	if err != nil {
		return nil, fmt.Errorf("read the offsets of connector %s: %w", o.f.Connector, err)
	}
	out := map[kafka.PartitionID]int64{}
	for _, off := range all {
		// Connect's shape, {cluster, topic, partition} -> {offset}, read through JSON: the maps hold whatever
		// number type their decoder chose.
		var key struct {
			Cluster   string `json:"cluster"`
			Topic     string `json:"topic"`
			Partition *int32 `json:"partition"`
		}
		var val struct {
			Offset *int64 `json:"offset"`
		}
		if !reencode(off.Partition, &key) || !reencode(off.Offset, &val) || key.Cluster != o.flow.SourceAlias || key.Topic == "" ||
			key.Partition == nil || val.Offset == nil {
			continue
		}
		out[kafka.PartitionID{Topic: key.Topic, Partition: *key.Partition}] = *val.Offset
	}
	return out, nil
}

func reencode(from map[string]any, to any) bool {
	b, err := json.Marshal(from)
	return err == nil && json.Unmarshal(b, to) == nil
}

// positions returns, per partition, the first source offset whose record may not be on the target: after the
// last committed record, or past the gap the offset map knows to follow it (transaction markers, aborted or
// compacted records). A partition with nothing replicated is at 0 unless the map knows better.
func (o *operation) positions(ctx context.Context) (map[kafka.PartitionID]int64, error) {
	committed, err := o.committed(ctx)
	if err != nil {
		return nil, err
	}
	keys := make([]kmtype.RangeKey, 0, len(o.parts))
	for _, id := range o.parts {
		keys = append(keys, o.rangeKey(id))
	}
	last, err := o.store.LastOffsetRanges(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("read the offset map: %w", err)
	}
	out := make(map[kafka.PartitionID]int64, len(o.parts))
	for _, id := range o.parts {
		next := int64(0)
		if n, ok := committed[id]; ok {
			next = n + 1
		}
		if r, ok := last[o.rangeKey(id)]; ok && r.SourceEnd+1 >= next {
			next = max(next, r.SourceNext)
		}
		out[id] = next
	}
	return out, nil
}

func (o *operation) rangeKey(id kafka.PartitionID) kmtype.RangeKey {
	return kmtype.RangeKey{SourceAlias: o.flow.SourceAlias, TargetAlias: o.flow.TargetAlias, Topic: id.Topic, Partition: id.Partition}
}

// partitionReports fills in each partition's report: what is on the target, and the range that is not.
func (o *operation) partitionReports(rep *Report, pos, ends map[kafka.PartitionID]int64) {
	for _, id := range o.parts {
		p := PartitionReport{SourceTopic: id.Topic, Partition: id.Partition, TargetTopic: o.remote[id], ReplicatedTo: pos[id], EndBasis: "unknown"}
		if p.TargetTopic == "" {
			p.TargetTopic = o.flow.TargetTopic(id.Topic)
		}
		if end, ok := ends[id]; ok && ends != nil {
			p.SourceEnd, p.EndBasis = &end, "listed"
		} else if end, ok := o.lastSeen[id]; ok {
			// What the tasks last published can be older than what they replicated since: the end was at least
			// that far.
			end = max(end, p.ReplicatedTo)
			p.SourceEnd, p.EndBasis = &end, "last_seen"
		}
		if p.SourceEnd != nil && *p.SourceEnd > p.ReplicatedTo {
			r := OffsetRange{From: p.ReplicatedTo, To: *p.SourceEnd - 1}
			p.NotReplicated = &r
			rep.NotReplicatedOffsets += r.Count()
		}
		rep.Partitions = append(rep.Partitions, p)
	}
}

// targetEnds records the end offsets of the target's own topics: those not named as replicated from another
// cluster by the policy, and not internal.
func (o *operation) targetEnds(ctx context.Context) []TopicPartitionOffset {
	out := []TopicPartitionOffset{}
	topics, err := o.flow.Target.Topics(ctx)
	if err != nil {
		o.log.Warn("could not list the target's topics; the report has no target_ends", "error", err)
		return out
	}
	var parts []kafka.PartitionID
	for t, n := range topics {
		// A remote topic named apart (A.orders) is the copy of the source's; one whose name is its original
		// (IdentityReplicationPolicy) is shared with producers on the target, and its end is where they begin.
		if _, remote := o.flow.Policy.TopicSource(t); remote && o.flow.Policy.OriginalTopic(t) != t || o.internal(t) {
			continue
		}
		for p := range n {
			parts = append(parts, kafka.PartitionID{Topic: t, Partition: int32(p)})
		}
	}
	got, _, err := o.flow.Target.LogOffsets(ctx, parts, false, false)
	if err != nil {
		o.log.Warn("could not read the target's end offsets; the report has no target_ends", "error", err)
		return out
	}
	for id, lo := range got {
		out = append(out, TopicPartitionOffset{Topic: id.Topic, Partition: id.Partition, Offset: lo.End})
	}
	slices.SortFunc(out, func(a, b TopicPartitionOffset) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}

// internal tells a topic no connector replicates: Kafka's own, MM2's (heartbeats, checkpoints, offset syncs).
func (o *operation) internal(t string) bool {
	return strings.HasPrefix(t, "__") || strings.HasSuffix(t, ".internal") || t == o.flow.Policy.HeartbeatsTopic()
}

func partitionID(topic string, partition int32) kafka.PartitionID {
	return kafka.PartitionID{Topic: topic, Partition: partition}
}
