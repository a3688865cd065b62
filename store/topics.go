package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// RecordTopics adds topics to the set the connector has produced to (KIP-558 topic tracking).
func (s *Store) RecordTopics(ctx context.Context, connector string, topics []string) error {
	if len(topics) == 0 {
		return nil
	}
	_, err := s.pool.Exec(ctx, `
		INSERT INTO connector_topics (connector_name, topic)
		SELECT $1, t FROM unnest($2::text[]) AS t WHERE EXISTS (SELECT 1 FROM connectors WHERE name = $1)
		ON CONFLICT DO NOTHING`, connector, topics)
	if err != nil {
		return fmt.Errorf("record topics of %q: %w", connector, err)
	}
	return nil
}

// ConnectorTopics returns the topics the connector has produced to, sorted.
func (s *Store) ConnectorTopics(ctx context.Context, connector string) ([]string, error) {
	rows, err := s.pool.Query(ctx, "SELECT topic FROM connector_topics WHERE connector_name = $1 ORDER BY topic", connector)
	if err != nil {
		return nil, fmt.Errorf("read topics of %q: %w", connector, err)
	}
	ts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read topics of %q: %w", connector, err)
	}
	return ts, nil
}

// ResetConnectorTopics forgets the topics the connector has produced to; ErrNotFound if it does not exist.
func (s *Store) ResetConnectorTopics(ctx context.Context, connector string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM connectors WHERE name = $1)", connector).Scan(&exists); err != nil {
			return fmt.Errorf("reset topics of %q: %w", connector, err)
		}
		if !exists {
			return fmt.Errorf("reset topics of %q: %w", connector, ErrNotFound)
		}
		if _, err := tx.Exec(ctx, "DELETE FROM connector_topics WHERE connector_name = $1", connector); err != nil {
			return fmt.Errorf("reset topics of %q: %w", connector, err)
		}
		return notify(ctx, tx, "topics")
	})
}
