package store

import (
	"context"
	"fmt"

	"github.com/kmirror/kmirror/kmtype"
)

// OppositeRanges answers, for partitions a flow reads (each query's RangeKey: the flow's source and target
// aliases, a source topic and partition), which offsets of those partitions the opposite flows wrote: the
// offset-map ranges stored for the reverse cluster pair whose connector wrote into a topic of the same name
// (connector_topics), as target offsets. Only ranges ending at or after each query's Offset are returned,
// ordered by partition (in the order asked) and offset. A connector that renames topics (the default
// replication policy) writes into other partitions than the ones it read, which the topic check leaves out.
func (s *Store) OppositeRanges(ctx context.Context, queries []kmtype.RangeQuery) ([]kmtype.TargetRange, error) {
	if len(queries) == 0 {
		return nil, nil
	}
	sa, ta, topics, parts, offs := splitQueries(queries)
	// The reverse pair: the opposite flow's source is this flow's target.
	rows, err := s.pool.Query(ctx, `
		SELECT q.t, q.p, r.target_start, r.target_start + (r.source_end - r.source_start)
		FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::bigint[]) WITH ORDINALITY AS q(sa, ta, t, p, x, i)
		JOIN offset_ranges r ON r.source_alias = q.ta AND r.target_alias = q.sa AND r.topic = q.t AND r.partition = q.p
			AND r.target_start + (r.source_end - r.source_start) >= q.x
		WHERE EXISTS (SELECT 1 FROM connector_topics ct WHERE ct.connector_name = r.connector_name AND ct.topic = q.t)
		ORDER BY q.i, r.target_start`, sa, ta, topics, parts, offs)
	if err != nil {
		return nil, fmt.Errorf("read opposite offset ranges: %w", err)
	}
	defer rows.Close()
	var out []kmtype.TargetRange
	for rows.Next() {
		var r kmtype.TargetRange
		if err := rows.Scan(&r.Topic, &r.Partition, &r.Start, &r.End); err != nil {
			return nil, fmt.Errorf("read opposite offset ranges: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read opposite offset ranges: %w", err)
	}
	return out, nil
}
