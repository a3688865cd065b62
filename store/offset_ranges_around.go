package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kmirror/kmirror/kmtype"
)

// OffsetRangesAround answers many queries in one round trip, in the order asked.
func (s *Store) OffsetRangesAround(ctx context.Context, queries []kmtype.RangeQuery) ([]kmtype.RangesAround, error) {
	return s.rangesAround(ctx, queries, false)
}

// OffsetRangesAroundTarget answers queries whose Offset is a target offset, in one round trip and in the order
// asked: the last range of the partition starting at or before it in the target, and the range after that one.
// A partition's ranges ascend in target offsets as in source offsets (a rewind supersedes the ranges it would
// overlap), so both are found along the primary key.
func (s *Store) OffsetRangesAroundTarget(ctx context.Context, queries []kmtype.RangeQuery) ([]kmtype.RangesAround, error) {
	return s.rangesAround(ctx, queries, true)
}

// The conditions that pick a query's previous and next range (q.o its offset), by source or by target offset.
// Chosen in Go rather than in SQL, so that each query keeps its own plan along the primary key.
const (
	prevBySource = `r.source_start <= q.o`
	nextBySource = `r.source_start > q.o`
	prevByTarget = `r.target_start <= q.o`
	nextByTarget = `r.source_start > coalesce(p.source_start, -1)`
)

// rangesAround answers OffsetRangesAround (byTarget false) and OffsetRangesAroundTarget (true).
func (s *Store) rangesAround(ctx context.Context, queries []kmtype.RangeQuery, byTarget bool) ([]kmtype.RangesAround, error) {
	out := make([]kmtype.RangesAround, len(queries))
	if len(queries) == 0 {
		return out, nil
	}
	sa, ta, topics, parts, offs := splitQueries(queries)
	prevRange, nextRange := prevBySource, nextBySource
	if byTarget {
		prevRange, nextRange = prevByTarget, nextByTarget
	}
	rows, err := s.pool.Query(ctx, `
		SELECT q.i, p.source_id, p.source_start, p.source_end, p.target_start, p.source_next, p.gap_before, p.unmapped_before, p.uncommitted, p.updated_at,
		       n.source_id, n.source_start, n.source_end, n.target_start, n.source_next, n.gap_before, n.unmapped_before, n.uncommitted, n.updated_at
		FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::bigint[]) WITH ORDINALITY AS q(sa, ta, t, p, o, i)
		LEFT JOIN LATERAL (SELECT * FROM offset_ranges r
			WHERE r.source_alias = q.sa AND r.target_alias = q.ta AND r.topic = q.t AND r.partition = q.p AND `+prevRange+`
			ORDER BY r.source_start DESC LIMIT 1) p ON true
		LEFT JOIN LATERAL (SELECT * FROM offset_ranges r
			WHERE r.source_alias = q.sa AND r.target_alias = q.ta AND r.topic = q.t AND r.partition = q.p AND `+nextRange+`
			ORDER BY r.source_start LIMIT 1) n ON true`, sa, ta, topics, parts, offs)
	if err != nil {
		return nil, fmt.Errorf("read offset ranges: %w", err)
	}
	defer rows.Close()
	return out, scanRangesAround(rows, queries, out)
}

// scanRangesAround reads the rows of a ranges-around query (the query's ordinal, then the previous and the next
// range's columns) into out.
func scanRangesAround(rows pgx.Rows, queries []kmtype.RangeQuery, out []kmtype.RangesAround) error {
	for rows.Next() {
		var i int64
		var pid, nid *string
		var ps, pe, pt, pn, pg, ns, ne, nt, nn, ng *int64
		var pu, nu *time.Time
		var pm, nm, pc, nc *bool
		if err := rows.Scan(&i, &pid, &ps, &pe, &pt, &pn, &pg, &pm, &pc, &pu, &nid, &ns, &ne, &nt, &nn, &ng, &nm, &nc, &nu); err != nil {
			return fmt.Errorf("read offset ranges: %w", err)
		}
		k := queries[i-1].RangeKey
		if ps != nil {
			out[i-1].Prev = &kmtype.OffsetRange{RangeKey: k, SourceID: *pid, SourceStart: *ps, SourceEnd: *pe, TargetStart: *pt, SourceNext: *pn, GapBefore: *pg, UnmappedBefore: *pm, Uncommitted: *pc, UpdatedAt: *pu}
		}
		if ns != nil {
			out[i-1].Next = &kmtype.OffsetRange{RangeKey: k, SourceID: *nid, SourceStart: *ns, SourceEnd: *ne, TargetStart: *nt, SourceNext: *nn, GapBefore: *ng, UnmappedBefore: *nm, Uncommitted: *nc, UpdatedAt: *nu}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read offset ranges: %w", err)
	}
	return nil
}
