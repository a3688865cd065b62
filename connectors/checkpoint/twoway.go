package checkpoint

import (
	"context"
	"fmt"

	"github.com/kmirror/kmirror/connectors/offsetmap"
	"github.com/kmirror/kmirror/kmtype"
)

// Two flows that keep a topic's name (IdentityReplicationPolicy), source → target and target → source, make
// the topic on each cluster hold that cluster's own records and the copies of the other's. A group reading the
// topic on the source has read some of both: the offset map of this pair answers for the source's own records,
// the map of the opposite flow, read from its target side, for the target's own (offsetmap.Combine). Both maps
// are in PostgreSQL whenever the opposite flow is a kmirror connector of the same database.

// oppositeQueries returns, for each row, the lookup of the opposite flow's map at the row's position (its index
// in the returned queries; -1 for a row whose topic is renamed on the target, whose copy there holds none of
// the target's own records).
func (r *checkpointRun) oppositeQueries(rows []kmtype.GroupOffset) ([]kmtype.RangeQuery, []int) {
	var queries rangeQueries
	lookup := make([]int, len(rows))
	for i, row := range rows {
		lookup[i] = -1
		if row.DownstreamTopic != row.Topic {
			continue
		}
		lookup[i] = queries.add(kmtype.RangeQuery{Offset: row.UpstreamOffset, RangeKey: kmtype.RangeKey{
			SourceAlias: r.targetAlias, TargetAlias: r.sourceAlias, Topic: row.Topic, Partition: row.Partition}})
	}
	return queries.list, lookup
}

// oppositeRanges reads the opposite flow's ranges for the rows; nil entries where there is nothing to ask.
func (r *checkpointRun) oppositeRanges(ctx context.Context, rows []kmtype.GroupOffset) ([]*kmtype.RangesAround, error) {
	out := make([]*kmtype.RangesAround, len(rows))
	queries, lookup := r.oppositeQueries(rows)
	if len(queries) == 0 {
		return out, nil
	}
	around, err := r.env.OffsetRangesAroundTarget(ctx, queries)
	if err != nil {
		return nil, fmt.Errorf("read the offset map of the opposite flow: %w", err)
	}
	for i, j := range lookup {
		if j >= 0 && (around[j].Prev != nil || around[j].Next != nil) {
			out[i] = &around[j]
		}
	}
	return out, nil
}

// mergeOpposite moves row's translation back to where the target's own records the group has not read begin,
// when that comes first. own is the map lookup the translation of the source's records used, opposite the
// opposite flow's ranges around the group's position.
func mergeOpposite(row *kmtype.GroupOffset, own kmtype.RangesAround, opposite kmtype.RangesAround) {
	theirs, ok := offsetmap.Opposite(rangeOf(opposite.Prev), rangeOf(opposite.Next), row.UpstreamOffset)
	if !ok {
		return
	}
	if row.DownstreamOffset == nil {
		// Neither the map nor the syncs know the source's records on the target: only the target's own count,
		// and nothing tells that no copy of the source's lies before them.
		d := theirs.Offset
		row.DownstreamOffset, row.Exact, row.Basis = &d, false, basisMap
		src := opposite.Prev
		if src == nil {
			src = opposite.Next
		}
		at := src.UpdatedAt
		row.ReplicatedAt = &at
		return
	}
	mine := offsetmap.Side{Answer: offsetmap.Answer{Offset: *row.DownstreamOffset, Exact: row.Exact}}
	if row.Basis == basisMap {
		mine.Last, mine.LastKnown = offsetmap.LastBefore(rangeOf(own.Prev), rangeOf(own.Next), row.UpstreamOffset)
	}
	a := offsetmap.Combine(mine, theirs)
	row.DownstreamOffset, row.Exact = &a.Offset, a.Exact
}
