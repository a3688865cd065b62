package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/kmirror/kmirror/kmtype"
)

// Offset requests carry a PATCH or DELETE of a connector's offsets that must reach Kafka before PostgreSQL
// (migrations/006_task_fences.sql): the REST API files one (RequestOffsets) and waits for its outcome
// (OffsetRequestOutcome); the run holding the STOPPED connector's unit takes it (TakeOffsetRequest), writes
// Kafka, and finishes it (FinishOffsetRequest), which applies it to PostgreSQL in the same transaction that
// marks it done.

// OffsetRequest is one filed change of a connector's offsets.
type OffsetRequest struct {
	ID        int64
	Connector string
	Offsets   []kmtype.Offset // a nil Offset map is a tombstone
	Reset     bool            // every offset of the connector is deleted (Offsets is empty)
}

// States of an offset request.
const (
	OffsetRequestPending  = "pending"
	OffsetRequestApplying = "applying"
	OffsetRequestDone     = "done"
	OffsetRequestFailed   = "failed"
	OffsetRequestExpired  = "expired"
)

type offsetRequestEntry struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// RequestOffsets files a change of the connector's offsets, which must be STOPPED with no tasks (ErrNotStopped
// otherwise, ErrNotFound if it does not exist), and returns the request's id.
func (s *Store) RequestOffsets(ctx context.Context, connector string, offsets []kmtype.Offset, reset bool) (int64, error) {
	entries := make([]offsetRequestEntry, len(offsets))
	for i, o := range offsets {
		entries[i] = offsetRequestEntry{Partition: o.Partition, Offset: o.Offset}
	}
	body, err := json.Marshal(entries)
	if err != nil {
		return 0, fmt.Errorf("request offsets of %q: %w", connector, err)
	}
	var id int64
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockStopped(ctx, tx, connector); err != nil {
			return err
		}
		// Finished requests are kept a while for whoever still asks for their outcome, not forever.
		if _, err := tx.Exec(ctx, `DELETE FROM offset_requests WHERE connector_name = $1 AND state IN ('done', 'failed', 'expired')
			AND created_at < now() - interval '1 hour'`, connector); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "INSERT INTO offset_requests (connector_name, offsets, reset) VALUES ($1, $2, $3) RETURNING id",
			connector, body, reset).Scan(&id); err != nil {
			return err
		}
		return notify(ctx, tx, "offsets")
	})
	if err != nil {
		return 0, fmt.Errorf("request offsets of %q: %w", connector, err)
	}
	return id, nil
}

// OffsetRequestOutcome returns the request's state and, when it failed, why.
func (s *Store) OffsetRequestOutcome(ctx context.Context, id int64) (state, failure string, err error) {
	err = s.pool.QueryRow(ctx, "SELECT state, error FROM offset_requests WHERE id = $1", id).Scan(&state, &failure)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", fmt.Errorf("offset request %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return "", "", fmt.Errorf("offset request %d: %w", id, err)
	}
	return state, failure, nil
}

// ExpireOffsetRequest gives up a request nobody took yet, so that nobody applies it after its requester
// stopped waiting; it returns the request's state afterwards (OffsetRequestExpired unless it was taken).
func (s *Store) ExpireOffsetRequest(ctx context.Context, id int64) (string, error) {
	var state string
	err := s.pool.QueryRow(ctx, `
		WITH expired AS (UPDATE offset_requests SET state = 'expired' WHERE id = $1 AND state = 'pending' RETURNING state)
		SELECT coalesce((SELECT state FROM expired), (SELECT state FROM offset_requests WHERE id = $1), '')`, id).Scan(&state)
	if err != nil {
		return "", fmt.Errorf("expire offset request %d: %w", id, err)
	}
	return state, nil
}

// TakeOffsetRequest hands the run holding the connector unit c the oldest pending request of its connector
// (nil if none) and marks it applying. Requests of a connector are applied one at a time, in order.
func (s *Store) TakeOffsetRequest(ctx context.Context, c Claim) (*OffsetRequest, error) {
	var req *OffsetRequest
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := holdClaim(ctx, tx, c); err != nil {
			return err
		}
		var body string
		r := OffsetRequest{Connector: c.Connector}
		err := tx.QueryRow(ctx, `
			UPDATE offset_requests SET state = 'applying'
			WHERE id = (SELECT id FROM offset_requests WHERE connector_name = $1 AND state = 'pending' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
			RETURNING id, offsets::text, reset`, c.Connector).Scan(&r.ID, &body, &r.Reset)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		var entries []offsetRequestEntry
		if err := decodeJSON(body, &entries); err != nil {
			return err
		}
		for _, e := range entries {
			r.Offsets = append(r.Offsets, kmtype.Offset{Partition: e.Partition, Offset: e.Offset})
		}
		req = &r
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("take an offset request of %q: %w", c.Connector, err)
	}
	return req, nil
}

// FinishOffsetRequest ends a request the run holding c took. Without failure the request's offsets are
// applied to PostgreSQL's copy (as AlterOffsets does) in the transaction that marks it done; a connector that
// is no longer STOPPED fails it instead. With failure, nothing changes in PostgreSQL and the request fails
// with failure's text, which the REST API answers with.
func (s *Store) FinishOffsetRequest(ctx context.Context, c Claim, req *OffsetRequest, failure error) error {
	keys, parts, offs, err := encodeOffsets(req.Offsets)
	if err != nil {
		return fmt.Errorf("finish offset request %d: %w", req.ID, err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := holdClaim(ctx, tx, c); err != nil {
			return err
		}
		if failure == nil {
			failure = lockStopped(ctx, tx, c.Connector)
		}
		if failure == nil {
			if err := alterOffsets(ctx, tx, c.Connector, keys, parts, offs, req.Reset); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "UPDATE offset_requests SET state = 'done' WHERE id = $1", req.ID)
			return err
		}
		_, err := tx.Exec(ctx, "UPDATE offset_requests SET state = 'failed', error = $2 WHERE id = $1", req.ID, failure.Error())
		return err
	})
	if err != nil {
		return fmt.Errorf("finish offset request %d: %w", req.ID, err)
	}
	return nil
}
