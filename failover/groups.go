package failover

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/offsetmap"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
)

// groups moves the groups of the checkpoint connectors of the flow to the target: a last read of their positions
// on the source (the checkpoint connector's last read when the source does not answer), translated with the
// offset map, committed to each group that has no member on the target.
func (o *operation) groups(ctx context.Context, rep *Report) error {
	cps, err := o.checkpointConnectors(ctx)
	if err != nil {
		return err
	}
	for _, cp := range cps {
		flow, err := o.flows.open(cp.Name, cp.Config)
		if err != nil {
			return fmt.Errorf("open the clusters of checkpoint connector %s: %w", cp.Name, err)
		}
		if flow.SourceAlias != o.flow.SourceAlias || flow.TargetAlias != o.flow.TargetAlias {
			flow.Close()
			if o.f.CheckpointConnector != "" {
				return publicf("checkpoint_connector: %s translates from %s to %s, not from %s to %s", cp.Name,
					flow.SourceAlias, flow.TargetAlias, o.flow.SourceAlias, o.flow.TargetAlias)
			}
			continue
		}
		rep.CheckpointConnectors = append(rep.CheckpointConnectors, cp.Name)
		err = o.moveGroups(ctx, rep, cp.Name, flow)
		flow.Close()
		if err != nil {
			return err
		}
	}
	if rep.CheckpointConnectors == nil {
		rep.CheckpointConnectors = []string{}
	}
	slices.SortFunc(rep.Groups, func(a, b GroupReport) int { return strings.Compare(a.Group, b.Group) })
	return nil
}

// checkpointConnectors returns the named checkpoint connector, or every MirrorCheckpointConnector (groups
// keeps those of the source connector's aliases).
func (o *operation) checkpointConnectors(ctx context.Context) ([]store.Connector, error) {
	isCheckpoint := func(c store.Connector) bool {
		p, ok := mirrorconfig.LookupPlugin(c.Config[mirrorconfig.ConnectorClassConfig])
		return ok && p.Class == mirrorconfig.CheckpointConnectorClass
	}
	if o.f.CheckpointConnector != "" {
		c, err := o.store.GetConnector(ctx, o.f.CheckpointConnector)
		if err != nil {
			return nil, fmt.Errorf("read checkpoint connector %s: %w", o.f.CheckpointConnector, err)
		}
		if !isCheckpoint(c) {
			return nil, publicf("checkpoint_connector: %s is not a MirrorCheckpointConnector", c.Name)
		}
		return []store.Connector{c}, nil
	}
	all, err := o.store.ListConnectors(ctx)
	if err != nil {
		return nil, fmt.Errorf("list connectors: %w", err)
	}
	var out []store.Connector
	for _, c := range all {
		if isCheckpoint(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// row is one group partition being moved.
type row struct {
	group string
	pos   GroupPosition
	meta  string
}

func (o *operation) moveGroups(ctx context.Context, rep *Report, cp string, flow *flow) error {
	summaries, err := o.store.ConnectorGroups(ctx, cp)
	if err != nil {
		return fmt.Errorf("read the groups of checkpoint connector %s: %w", cp, err)
	}
	if len(summaries) == 0 {
		return nil
	}
	groups := make([]string, len(summaries))
	for i, g := range summaries {
		groups[i] = g.Group
	}
	last := map[string][]kmtype.GroupOffset{}
	for _, g := range groups {
		offs, err := o.store.ConnectorGroupOffsets(ctx, cp, g)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("read the translations of group %s: %w", g, err)
		}
		last[g] = offs
	}
	readAt := time.Now()
	read, failed, err := map[string][]kafka.GroupOffset(nil), map[string]error(nil), error(nil)
	if rep.SourceReachable {
		read, failed, err = flow.Source.GroupOffsets(ctx, groups)
		if err != nil {
			o.log.Warn("could not read the groups' offsets on the source; using the checkpoint connector's last read", "error", err)
		}
	}
	var rows []row
	for _, g := range groups {
		if offs, ok := read[g]; ok && failed[g] == nil {
			for _, off := range offs {
				if off.Offset < 0 || !flow.Topics.Accepts(off.Topic) {
					continue
				}
				rows = append(rows, row{group: g, meta: off.Metadata, pos: GroupPosition{SourceTopic: off.Topic, Partition: off.Partition,
					SourceOffset: off.Offset, PositionFrom: PositionRead, ReadAt: formatTime(readAt), TargetTopic: flow.TargetTopic(off.Topic)}})
			}
			continue
		}
		for _, off := range last[g] {
			rows = append(rows, row{group: g, meta: off.Metadata, pos: GroupPosition{SourceTopic: off.Topic, Partition: off.Partition,
				SourceOffset: off.UpstreamOffset, PositionFrom: PositionLastRead, ReadAt: formatTime(off.ReadAt), TargetTopic: off.DownstreamTopic}})
		}
	}
	if err := o.translate(ctx, flow, rows, last); err != nil {
		return err
	}
	if err := o.progress(ctx, PhaseGroups); err != nil {
		return err
	}
	return o.commit(ctx, rep, flow, groups, rows)
}

// translate fills in each row's target offset: exactly from the offset map where it covers the position, else
// the checkpoint connector's own translation of the same position (MM2's offset syncs), else none.
func (o *operation) translate(ctx context.Context, flow *flow, rows []row, last map[string][]kmtype.GroupOffset) error {
	queries := make([]kmtype.RangeQuery, len(rows))
	for i, r := range rows {
		queries[i] = kmtype.RangeQuery{Offset: r.pos.SourceOffset, RangeKey: kmtype.RangeKey{SourceAlias: flow.SourceAlias, TargetAlias: flow.TargetAlias,
			Topic: r.pos.SourceTopic, Partition: r.pos.Partition}}
	}
	around, err := o.store.OffsetRangesAround(ctx, queries)
	if err != nil {
		return fmt.Errorf("read the offset map: %w", err)
	}
	opposite, err := o.oppositeRanges(ctx, flow, rows)
	if err != nil {
		return err
	}
	for i := range rows {
		p := &rows[i].pos
		p.Basis = kmtype.BasisNone
		if back, err := o.translateBack(ctx, flow, p); err != nil || back {
			if err != nil {
				return err
			}
			continue
		}
		// The map answers for the source's own records; where it cannot (a position older than its oldest kept
		// range), the checkpoint connector's translation below, which accounts for the opposite flow itself.
		ownPrev, ownNext := rangeOf(around[i].Prev), rangeOf(around[i].Next)
		if a, ok := offsetmap.Translate(ownPrev, ownNext, p.SourceOffset); ok {
			a = offsetmap.WithOpposite(a, ownPrev, ownNext, rangeOf(opposite[i].Prev), rangeOf(opposite[i].Next), p.SourceOffset)
			d := a.Offset
			p.TargetOffset, p.Exact, p.Basis = &d, a.Exact, kmtype.BasisOffsetMap
			continue
		}
		for _, l := range last[rows[i].group] {
			if l.Topic == p.SourceTopic && l.Partition == p.Partition && l.UpstreamOffset == p.SourceOffset && l.DownstreamOffset != nil {
				d := *l.DownstreamOffset
				p.TargetOffset, p.Exact, p.Basis = &d, l.Exact, l.Basis
			}
		}
	}
	return nil
}

// oppositeRanges reads, for each row whose topic keeps its name on the target (IdentityReplicationPolicy), the
// ranges of the opposite flow (target → source, a kmirror connector of the same database) around the row's
// position, read from that flow's target side: the source's partition then interleaves its own records with
// the copies of the target's, and a group that has not read some of those must find them on the target
// (offsetmap.WithOpposite). Rows of other topics get no ranges.
func (o *operation) oppositeRanges(ctx context.Context, flow *flow, rows []row) ([]kmtype.RangesAround, error) {
	out := make([]kmtype.RangesAround, len(rows))
	var queries []kmtype.RangeQuery
	var asked []int
	for i, r := range rows {
		if flow.TargetTopic(r.pos.SourceTopic) != r.pos.SourceTopic {
			continue
		}
		queries = append(queries, kmtype.RangeQuery{Offset: r.pos.SourceOffset, RangeKey: kmtype.RangeKey{SourceAlias: flow.TargetAlias,
			TargetAlias: flow.SourceAlias, Topic: r.pos.SourceTopic, Partition: r.pos.Partition}})
		asked = append(asked, i)
	}
	if len(queries) == 0 {
		return out, nil
	}
	around, err := o.store.OffsetRangesAroundTarget(ctx, queries)
	if err != nil {
		return nil, fmt.Errorf("read the offset map of the opposite flow: %w", err)
	}
	for j, i := range asked {
		out[i] = around[j]
	}
	return out, nil
}

func rangeOf(r *kmtype.OffsetRange) *offsetmap.Range {
	if r == nil {
		return nil
	}
	return &offsetmap.Range{SourceStart: r.SourceStart, SourceEnd: r.SourceEnd, TargetStart: r.TargetStart, SourceNext: r.SourceNext,
		GapBefore: r.GapBefore, UnmappedBefore: r.UnmappedBefore, Uncommitted: r.Uncommitted}
}

// commit writes the translated positions to the groups on the target that have no member there, never moving
// a committed offset back, and records what it did.
func (o *operation) commit(ctx context.Context, rep *Report, flow *flow, groups []string, rows []row) error {
	states, err := flow.Target.DescribeGroups(ctx, groups)
	if err != nil {
		return fmt.Errorf("describe the groups on the target cluster: %w", err)
	}
	byGroup := map[string][]*row{}
	for i := range rows {
		byGroup[rows[i].group] = append(byGroup[rows[i].group], &rows[i])
	}
	for _, g := range groups {
		st := states[g]
		gr := GroupReport{Group: g, TargetState: st.State, TargetMembers: st.Members, Partitions: []GroupPosition{}}
		mine := byGroup[g]
		slices.SortFunc(mine, func(a, b *row) int {
			return cmp.Or(strings.Compare(a.pos.SourceTopic, b.pos.SourceTopic), cmp.Compare(a.pos.Partition, b.pos.Partition))
		})
		switch {
		case st.Members > 0 || (st.Exists && st.State != "Empty" && st.State != "Dead"):
			gr.Action = ActionActive
		default:
			gr.Action, gr.Error = o.commitGroup(ctx, flow, g, st.Exists, mine)
		}
		for _, r := range mine {
			gr.Partitions = append(gr.Partitions, r.pos)
		}
		rep.Groups = append(rep.Groups, gr)
	}
	return nil
}

// commitGroup commits one idle group's translated positions; it returns the group's action and, when it
// failed, why.
func (o *operation) commitGroup(ctx context.Context, flow *flow, g string, exists bool, rows []*row) (string, string) {
	current := map[kafka.PartitionID]int64{}
	if exists {
		have, failed, err := flow.Target.GroupOffsets(ctx, []string{g})
		if err = cmp.Or(err, failed[g]); err != nil {
			return ActionFailed, fmt.Sprintf("reading its offsets on the target failed: %v", err)
		}
		for _, off := range have[g] {
			current[kafka.PartitionID{Topic: off.Topic, Partition: off.Partition}] = off.Offset
		}
	}
	var write []kafka.GroupOffset
	var writing []*row
	for _, r := range rows {
		id := kafka.PartitionID{Topic: r.pos.TargetTopic, Partition: r.pos.Partition}
		if cur, ok := current[id]; ok {
			c := cur
			r.pos.PreviousTargetOffset = &c
		}
		if r.pos.TargetOffset == nil {
			continue
		}
		if r.pos.PreviousTargetOffset != nil && *r.pos.PreviousTargetOffset >= *r.pos.TargetOffset {
			r.pos.Committed = *r.pos.PreviousTargetOffset == *r.pos.TargetOffset
			continue
		}
		write = append(write, kafka.GroupOffset{Topic: r.pos.TargetTopic, Partition: r.pos.Partition, Offset: *r.pos.TargetOffset, Metadata: r.meta})
		writing = append(writing, r)
	}
	if len(write) == 0 {
		if slices.ContainsFunc(rows, func(r *row) bool { return r.pos.Committed }) {
			return ActionCommitted, ""
		}
		return ActionNone, ""
	}
	if err := flow.Target.AlterGroupOffsets(ctx, g, write); err != nil {
		if kafka.IsGroupActive(err) {
			return ActionActive, ""
		}
		return ActionFailed, fmt.Sprintf("committing its offsets on the target failed: %v", err)
	}
	for _, r := range writing {
		r.pos.Committed = true
	}
	return ActionCommitted, ""
}
