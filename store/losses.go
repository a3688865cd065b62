package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/kmirror/kmirror/kmtype"
)

// PutLoss records (or replaces) a lasting loss notice of the connector whose unit the run holding claim holds,
// and keeps only its newest keep notices. ErrFenced once the claim no longer holds the unit.
func (s *Store) PutLoss(ctx context.Context, c Claim, loss kmtype.Loss, keep int) error {
	n := s.hidden(Status{Notices: []kmtype.Notice{loss.Notice}}).Notices[0]
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := holdClaim(ctx, tx, c); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO connector_losses (connector_name, key, notice) VALUES ($1, $2, $3)
			ON CONFLICT (connector_name, key) DO UPDATE SET notice = EXCLUDED.notice`, c.Connector, loss.Key, n); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			DELETE FROM connector_losses WHERE connector_name = $1 AND key NOT IN (
				SELECT key FROM connector_losses WHERE connector_name = $1 ORDER BY created_at DESC, key DESC LIMIT $2)`,
			c.Connector, keep)
		return err
	})
	if err != nil {
		return fmt.Errorf("record a loss of %s: %w", c.Connector, err)
	}
	return nil
}

// Losses returns the connector's lasting loss notices, oldest first.
func (s *Store) Losses(ctx context.Context, connector string) ([]kmtype.Loss, error) {
	rows, err := s.pool.Query(ctx, `SELECT key, notice FROM connector_losses WHERE connector_name = $1 ORDER BY created_at, key`, connector)
	if err != nil {
		return nil, fmt.Errorf("read the losses of %q: %w", connector, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (kmtype.Loss, error) {
		var l kmtype.Loss
		return l, r.Scan(&l.Key, &l.Notice)
	})
	if err != nil {
		return nil, fmt.Errorf("read the losses of %q: %w", connector, err)
	}
	return out, nil
}
