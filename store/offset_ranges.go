package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/kmirror/kmirror/kmtype"
)

// CommitProgress stores offsets and the offset-map ranges that cover them for the run holding claim, in one
// transaction; ErrFenced once the run no longer holds its unit.
func (s *Store) CommitProgress(ctx context.Context, c Claim, offsets []kmtype.Offset, ranges []kmtype.OffsetRange) error {
	keys, parts, offs, err := encodeOffsets(offsets)
	if err != nil {
		return fmt.Errorf("commit offsets of %s-%d: %w", c.Connector, c.Task, err)
	}
	ids := make([]string, len(offsets))
	for i, o := range offsets {
		ids[i] = o.SourceID
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := holdClaim(ctx, tx, c); err != nil {
			return err
		}
		if len(offsets) > 0 {
			if err := commitOffsets(ctx, tx, c.Connector, keys, parts, offs, ids); err != nil {
				return err
			}
		}
		return putRanges(ctx, tx, c.Connector, ranges)
	})
	if err != nil {
		return fmt.Errorf("commit offsets of %s-%d: %w", c.Connector, c.Task, err)
	}
	return nil
}

func putRanges(ctx context.Context, tx pgx.Tx, connector string, ranges []kmtype.OffsetRange) error {
	if len(ranges) == 0 {
		return nil
	}
	n := len(ranges)
	sa, ta, topics, ids := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	parts := make([]int32, n)
	unmapped, uncommitted := make([]bool, n), make([]bool, n)
	starts, ends, tstarts, nexts, gaps := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	for i, r := range ranges {
		if r.Rewind {
			// Rare (an offset moved back, a re-created topic): supersede before storing.
			if _, err := tx.Exec(ctx, `
				DELETE FROM offset_ranges WHERE source_alias = $1 AND target_alias = $2 AND topic = $3 AND partition = $4
				AND source_start <> $5
				AND (source_id <> $6 OR source_start > $5 OR target_start + (source_end - source_start) >= $7)`,
				r.SourceAlias, r.TargetAlias, r.Topic, r.Partition, r.SourceStart, r.SourceID, r.TargetStart); err != nil {
				return fmt.Errorf("supersede offset ranges: %w", err)
			}
			if _, err := tx.Exec(ctx, `
				UPDATE offset_ranges SET source_end = $5 - 1, source_next = $5
				WHERE source_alias = $1 AND target_alias = $2 AND topic = $3 AND partition = $4
				AND source_start < $5 AND source_end >= $5`,
				r.SourceAlias, r.TargetAlias, r.Topic, r.Partition, r.SourceStart); err != nil {
				return fmt.Errorf("supersede offset ranges: %w", err)
			}
		}
		sa[i], ta[i], topics[i], parts[i], ids[i] = r.SourceAlias, r.TargetAlias, r.Topic, r.Partition, r.SourceID
		starts[i], ends[i], tstarts[i], nexts[i] = r.SourceStart, r.SourceEnd, r.TargetStart, max(r.SourceNext, r.SourceEnd+1)
		gaps[i], unmapped[i], uncommitted[i] = min(max(r.GapBefore, 0), r.SourceStart), r.UnmappedBefore, r.Uncommitted
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO offset_ranges (source_alias, target_alias, topic, partition, source_start, source_end, target_start, source_next, source_id, gap_before, unmapped_before, uncommitted, connector_name, updated_at)
		SELECT sa, ta, t, p, s, e, ts, nx, i, g, um, uc, $1, now()
		FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::text[], $11::bigint[], $12::boolean[], $13::boolean[]) AS u(sa, ta, t, p, s, e, ts, nx, i, g, um, uc)
		ON CONFLICT (source_alias, target_alias, topic, partition, source_start) DO UPDATE
		SET source_end = EXCLUDED.source_end, target_start = EXCLUDED.target_start, source_next = EXCLUDED.source_next,
		    source_id = EXCLUDED.source_id, gap_before = EXCLUDED.gap_before, unmapped_before = EXCLUDED.unmapped_before, uncommitted = EXCLUDED.uncommitted, connector_name = EXCLUDED.connector_name, updated_at = now()`,
		connector, sa, ta, topics, parts, starts, ends, tstarts, nexts, ids, gaps, unmapped, uncommitted)
	if err != nil {
		return fmt.Errorf("store offset ranges: %w", err)
	}
	return nil
}

// LastOffsetRanges returns the newest stored range of each partition that has one.
func (s *Store) LastOffsetRanges(ctx context.Context, keys []kmtype.RangeKey) (map[kmtype.RangeKey]kmtype.OffsetRange, error) {
	out := map[kmtype.RangeKey]kmtype.OffsetRange{}
	if len(keys) == 0 {
		return out, nil
	}
	sa, ta, topics, parts := splitKeys(keys)
	rows, err := s.pool.Query(ctx, `
		SELECT r.source_alias, r.target_alias, r.topic, r.partition, r.source_id, r.source_start, r.source_end, r.target_start, r.source_next, r.gap_before, r.unmapped_before, r.uncommitted, r.updated_at
		FROM unnest($1::text[], $2::text[], $3::text[], $4::int[]) AS q(sa, ta, t, p)
		CROSS JOIN LATERAL (SELECT * FROM offset_ranges r
			WHERE r.source_alias = q.sa AND r.target_alias = q.ta AND r.topic = q.t AND r.partition = q.p
			ORDER BY r.source_start DESC LIMIT 1) r`, sa, ta, topics, parts)
	if err != nil {
		return nil, fmt.Errorf("read offset ranges: %w", err)
	}
	ranges, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (kmtype.OffsetRange, error) {
		var r kmtype.OffsetRange
		err := row.Scan(&r.SourceAlias, &r.TargetAlias, &r.Topic, &r.Partition, &r.SourceID, &r.SourceStart, &r.SourceEnd, &r.TargetStart, &r.SourceNext, &r.GapBefore, &r.UnmappedBefore, &r.Uncommitted, &r.UpdatedAt)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("read offset ranges: %w", err)
	}
	for _, r := range ranges {
		out[r.RangeKey] = r
	}
	return out, nil
}

func splitKeys(keys []kmtype.RangeKey) (sa, ta, topics []string, parts []int32) {
	for _, k := range keys {
		sa, ta, topics, parts = append(sa, k.SourceAlias), append(ta, k.TargetAlias), append(topics, k.Topic), append(parts, k.Partition)
	}
	return sa, ta, topics, parts
}

// splitQueries is splitKeys for range queries, with their offsets.
func splitQueries(queries []kmtype.RangeQuery) (sa, ta, topics []string, parts []int32, offs []int64) {
	for _, q := range queries {
		sa, ta, topics, parts = append(sa, q.SourceAlias), append(ta, q.TargetAlias), append(topics, q.Topic), append(parts, q.Partition)
		offs = append(offs, q.Offset)
	}
	return sa, ta, topics, parts, offs
}

// PruneOffsetRanges deletes a partition's ranges that end below logStart (no group can be positioned there any
// more; the newest range is always kept) and all but the newest keep ranges.
func (s *Store) PruneOffsetRanges(ctx context.Context, k kmtype.RangeKey, logStart int64, keep int) (int64, error) {
	tag, err := s.pool.Exec(ctx, `
		WITH newest AS (
			SELECT source_start FROM offset_ranges
			WHERE source_alias = $1 AND target_alias = $2 AND topic = $3 AND partition = $4
			ORDER BY source_start DESC LIMIT $6)
		DELETE FROM offset_ranges WHERE source_alias = $1 AND target_alias = $2 AND topic = $3 AND partition = $4
		AND source_start < (SELECT max(source_start) FROM newest)
		AND (source_end < $5 OR source_start < (SELECT min(source_start) FROM newest))`,
		k.SourceAlias, k.TargetAlias, k.Topic, k.Partition, logStart, keep)
	if err != nil {
		return 0, fmt.Errorf("prune offset ranges of %s %s-%d: %w", k.SourceAlias, k.Topic, k.Partition, err)
	}
	return tag.RowsAffected(), nil
}
