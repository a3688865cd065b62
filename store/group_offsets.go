package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kmirror/kmirror/kmtype"
)

// PutGroupOffsets replaces the stored translations of groups with offsets, for the run holding claim;
// ErrFenced once it no longer holds its unit, ErrUnstorableText when a group id is not TextStorable (nothing
// is stored then).
func (s *Store) PutGroupOffsets(ctx context.Context, c Claim, groups []string, offsets []kmtype.GroupOffset) error {
	n := len(offsets)
	gs, topics, dtopics, bases := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	metas := make([][]byte, n)
	parts := make([]int32, n)
	ups := make([]int64, n)
	downs := make([]*int64, n)
	exact, emitted := make([]bool, n), make([]bool, n)
	readAt := make([]time.Time, n)
	replAt := make([]*time.Time, n)
	for i, o := range offsets {
		gs[i], topics[i], parts[i], ups[i], dtopics[i], downs[i] = o.Group, o.Topic, o.Partition, o.UpstreamOffset, o.DownstreamTopic, o.DownstreamOffset
		exact[i], bases[i], metas[i], readAt[i], replAt[i], emitted[i] = o.Exact, o.Basis, []byte(o.Metadata), o.ReadAt, o.ReplicatedAt, o.Emitted
	}
	for _, g := range groups {
		if !kmtype.TextStorable(g) {
			return fmt.Errorf("store group offsets of %s-%d: group %q: %w", c.Connector, c.Task, g, ErrUnstorableText)
		}
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := holdClaim(ctx, tx, c); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			DELETE FROM group_offsets g WHERE g.connector_name = $1 AND g.group_id = ANY($2)
			AND NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::text[], $5::int[]) AS u(g, t, p)
				WHERE u.g = g.group_id AND u.t = g.topic AND u.p = g.partition)`,
			c.Connector, groups, gs, topics, parts); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO group_offsets (connector_name, group_id, topic, partition, upstream_offset, downstream_topic, downstream_offset,
				exact, basis, metadata, read_at, replicated_at, emitted)
			SELECT $1, g, t, p, u, dt, d, x, b, m, ra, rp, e
			FROM unnest($2::text[], $3::text[], $4::int[], $5::bigint[], $6::text[], $7::bigint[], $8::bool[], $9::text[], $10::bytea[],
				$11::timestamptz[], $12::timestamptz[], $13::bool[]) AS u(g, t, p, u, dt, d, x, b, m, ra, rp, e)
			WHERE EXISTS (SELECT 1 FROM connectors WHERE name = $1)
			ON CONFLICT (connector_name, group_id, topic, partition) DO UPDATE
			SET upstream_offset = EXCLUDED.upstream_offset, downstream_topic = EXCLUDED.downstream_topic,
			    downstream_offset = EXCLUDED.downstream_offset, exact = EXCLUDED.exact, basis = EXCLUDED.basis,
			    metadata = EXCLUDED.metadata, read_at = EXCLUDED.read_at, replicated_at = EXCLUDED.replicated_at,
			    emitted = EXCLUDED.emitted`,
			c.Connector, gs, topics, parts, ups, dtopics, downs, exact, bases, metas, readAt, replAt, emitted)
		return err
	})
	if err != nil {
		return fmt.Errorf("store group offsets of %s-%d: %w", c.Connector, c.Task, err)
	}
	return nil
}

// GroupSummary is one group a checkpoint connector follows.
type GroupSummary struct {
	Group       string
	Partitions  int
	Approximate int // partitions whose translation is approximate or missing
	ReadAt      time.Time
}

// ConnectorGroups lists the groups the connector has translated, by name; ErrNotFound if the connector does
// not exist.
func (s *Store) ConnectorGroups(ctx context.Context, connector string) ([]GroupSummary, error) {
	if _, err := s.GetConnector(ctx, connector); err != nil {
		return nil, fmt.Errorf("read groups of %q: %w", connector, err)
	}
	rows, err := s.pool.Query(ctx, `
		SELECT group_id, count(*), count(*) FILTER (WHERE NOT exact OR downstream_offset IS NULL), min(read_at)
		FROM group_offsets WHERE connector_name = $1 GROUP BY group_id ORDER BY group_id`, connector)
	if err != nil {
		return nil, fmt.Errorf("read groups of %q: %w", connector, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (GroupSummary, error) {
		var g GroupSummary
		return g, r.Scan(&g.Group, &g.Partitions, &g.Approximate, &g.ReadAt)
	})
	if err != nil {
		return nil, fmt.Errorf("read groups of %q: %w", connector, err)
	}
	return out, nil
}

// ConnectorGroupOffsets returns a group's translations, by topic and partition; ErrNotFound if the connector
// does not exist or has no translation for the group.
func (s *Store) ConnectorGroupOffsets(ctx context.Context, connector, group string) ([]kmtype.GroupOffset, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT group_id, topic, partition, upstream_offset, downstream_topic, downstream_offset, exact, basis, metadata,
			read_at, replicated_at, emitted
		FROM group_offsets WHERE connector_name = $1 AND group_id = $2 ORDER BY topic, partition`, connector, group)
	if err != nil {
		return nil, fmt.Errorf("read offsets of group %q of %q: %w", group, connector, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (kmtype.GroupOffset, error) {
		var g kmtype.GroupOffset
		var meta []byte
		err := r.Scan(&g.Group, &g.Topic, &g.Partition, &g.UpstreamOffset, &g.DownstreamTopic, &g.DownstreamOffset, &g.Exact,
			&g.Basis, &meta, &g.ReadAt, &g.ReplicatedAt, &g.Emitted)
		g.Metadata = string(meta)
		return g, err
	})
	if err != nil {
		return nil, fmt.Errorf("read offsets of group %q of %q: %w", group, connector, err)
	}
	if len(out) == 0 {
		return nil, ErrNotFound
	}
	return out, nil
}
