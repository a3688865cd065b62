package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// LoggerLevel is a logger level set for the whole cluster.
type LoggerLevel struct {
	Logger       string
	Level        string
	LastModified int64 // epoch milliseconds
}

// SetLoggerLevel stores a cluster-wide logger level and announces it to every worker.
func (s *Store) SetLoggerLevel(ctx context.Context, l LoggerLevel) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `
			INSERT INTO logger_levels (logger, level, last_modified) VALUES ($1, $2, $3)
			ON CONFLICT (logger) DO UPDATE SET level = EXCLUDED.level, last_modified = EXCLUDED.last_modified`,
			l.Logger, l.Level, l.LastModified)
		if err != nil {
			return fmt.Errorf("set logger level: %w", err)
		}
		return notify(ctx, tx, "loggers")
	})
}

// LoggerLevels returns the cluster-wide logger levels, sorted by logger.
func (s *Store) LoggerLevels(ctx context.Context) ([]LoggerLevel, error) {
	rows, err := s.pool.Query(ctx, "SELECT logger, level, last_modified FROM logger_levels ORDER BY logger")
	if err != nil {
		return nil, fmt.Errorf("read logger levels: %w", err)
	}
	ls, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (LoggerLevel, error) {
		var l LoggerLevel
		err := r.Scan(&l.Logger, &l.Level, &l.LastModified)
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("read logger levels: %w", err)
	}
	return ls, nil
}
