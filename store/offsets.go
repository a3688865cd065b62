package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/kmirror/kmirror/kmtype"
)

// Offsets returns the connector's stored source offsets, ordered by partition. Numbers come back as
// json.Number so that 64-bit offsets keep every digit.
func (s *Store) Offsets(ctx context.Context, connector string) ([]kmtype.Offset, error) {
	rows, err := s.pool.Query(ctx, `SELECT partition::text, "offset"::text, coalesce(source_id, '') FROM source_offsets WHERE connector_name = $1 ORDER BY partition_key`, connector)
	if err != nil {
		return nil, fmt.Errorf("read offsets of %q: %w", connector, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (kmtype.Offset, error) {
		var p, o string
		var off kmtype.Offset
		if err := r.Scan(&p, &o, &off.SourceID); err != nil {
			return kmtype.Offset{}, err
		}
		if err := decodeJSON(p, &off.Partition); err != nil {
			return kmtype.Offset{}, err
		}
		return off, decodeJSON(o, &off.Offset)
	})
	if err != nil {
		return nil, fmt.Errorf("read offsets of %q: %w", connector, err)
	}
	return out, nil
}

func decodeJSON(s string, v any) error {
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	return d.Decode(v)
}

// CommitOffsets stores offsets for the run holding claim, in one transaction; ErrFenced once the run no longer
// holds its unit. An offset never moves backwards here: a commit below the stored offset of the same source
// incarnation is ignored (only the offsets API, or a new SourceID, moves an offset back).
func (s *Store) CommitOffsets(ctx context.Context, c Claim, offsets []kmtype.Offset) error {
	return s.CommitProgress(ctx, c, offsets, nil)
}

// commitOffsets upserts a run's offsets; one of the same source incarnation never moves backwards.
func commitOffsets(ctx context.Context, tx pgx.Tx, connector string, keys, parts, offs, ids []string) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO source_offsets (connector_name, partition_key, partition, "offset", source_id, updated_at)
		SELECT $1, k, p::jsonb, o::jsonb, nullif(i, ''), now() FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS u(k, p, o, i)
		ON CONFLICT (connector_name, partition_key) DO UPDATE
		SET partition = EXCLUDED.partition, "offset" = EXCLUDED."offset", source_id = EXCLUDED.source_id, updated_at = now()
		WHERE source_offsets.source_id IS DISTINCT FROM EXCLUDED.source_id
		   OR jsonb_typeof(source_offsets."offset"->'offset') IS DISTINCT FROM 'number'
		   OR jsonb_typeof(EXCLUDED."offset"->'offset') IS DISTINCT FROM 'number'
		   OR (source_offsets."offset"->>'offset')::numeric <= (EXCLUDED."offset"->>'offset')::numeric`,
		connector, keys, parts, offs, ids)
	return err
}

// AlterOffsets applies a user's offset changes (nil Offset deletes) while the connector is STOPPED with no
// tasks; ErrNotStopped otherwise, ErrNotFound if the connector does not exist. With reset, every offset of the
// connector is deleted first.
func (s *Store) AlterOffsets(ctx context.Context, connector string, offsets []kmtype.Offset, reset bool) error {
	keys, parts, offs, err := encodeOffsets(offsets)
	if err != nil {
		return fmt.Errorf("alter offsets of %q: %w", connector, err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockStopped(ctx, tx, connector); err != nil {
			return err
		}
		return alterOffsets(ctx, tx, connector, keys, parts, offs, reset)
	})
	if err != nil {
		return fmt.Errorf("alter offsets of %q: %w", connector, err)
	}
	return nil
}

// lockStopped locks the connector's row for the rest of the transaction and checks that it is STOPPED with no
// tasks: ErrNotFound, ErrNotStopped otherwise.
func lockStopped(ctx context.Context, tx pgx.Tx, connector string) error {
	var state TargetState
	var tasks int
	err := tx.QueryRow(ctx, `
		SELECT c.target_state, (SELECT count(*) FROM task_configs t WHERE t.connector_name = c.name)
		FROM connectors c WHERE c.name = $1 FOR UPDATE`, connector).Scan(&state, &tasks)
	if err == pgx.ErrNoRows {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	if state != TargetStopped || tasks != 0 {
		return ErrNotStopped
	}
	return nil
}

// alterOffsets applies encoded offset changes (an empty offset deletes); with reset, every offset of the
// connector is deleted first.
func alterOffsets(ctx context.Context, tx pgx.Tx, connector string, keys, parts, offs []string, reset bool) error {
	if reset {
		if _, err := tx.Exec(ctx, "DELETE FROM source_offsets WHERE connector_name = $1", connector); err != nil {
			return err
		}
	}
	var deletes []string
	var uk, up, uo []string
	for i, k := range keys {
		if offs[i] == "" {
			deletes = append(deletes, k)
			continue
		}
		uk, up, uo = append(uk, k), append(up, parts[i]), append(uo, offs[i])
	}
	if len(deletes) > 0 {
		if _, err := tx.Exec(ctx, "DELETE FROM source_offsets WHERE connector_name = $1 AND partition_key = ANY($2)", connector, deletes); err != nil {
			return err
		}
	}
	if err := upsertOffsets(ctx, tx, connector, uk, up, uo); err != nil {
		return err
	}
	return notify(ctx, tx, "offsets")
}

// upsertOffsets writes offsets set through the offsets API: they apply to whatever source incarnation the
// task finds (source_id NULL).
func upsertOffsets(ctx context.Context, tx pgx.Tx, connector string, keys, parts, offs []string) error {
	if len(keys) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO source_offsets (connector_name, partition_key, partition, "offset", updated_at)
		SELECT $1, k, p::jsonb, o::jsonb, now() FROM unnest($2::text[], $3::text[], $4::text[]) AS u(k, p, o)
		ON CONFLICT (connector_name, partition_key) DO UPDATE
		SET partition = EXCLUDED.partition, "offset" = EXCLUDED."offset", source_id = NULL, updated_at = now()`,
		connector, keys, parts, offs)
	return err
}

// encodeOffsets renders each offset as (partition key, partition JSON, offset JSON). The partition key is the
// canonical JSON of the partition (encoding/json sorts map keys), so equal partitions always share one row. A
// nil offset encodes as "".
func encodeOffsets(offsets []kmtype.Offset) (keys, parts, offs []string, err error) {
	keys = make([]string, len(offsets))
	offs = make([]string, len(offsets))
	for i, o := range offsets {
		p, err := json.Marshal(o.Partition)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("encode partition: %w", err)
		}
		keys[i] = string(p)
		if o.Offset != nil {
			v, err := json.Marshal(o.Offset)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("encode offset: %w", err)
			}
			offs[i] = string(v)
		}
	}
	return keys, keys, offs, nil
}
