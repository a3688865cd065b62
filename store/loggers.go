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

// SetLoggerLevel stores a cluster-wide logger level and announces it to every worker. Workers apply the rows
// newer than the last one they applied, oldest first, so the stored time is later than every other row's, even
// when the requesting worker's clock is behind another's, and writers take turns so that rows commit in the
// order of their times.
func (s *Store) SetLoggerLevel(ctx context.Context, l LoggerLevel) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "LOCK TABLE logger_levels IN EXCLUSIVE MODE"); err != nil {
			return fmt.Errorf("set logger level: %w", err)
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO logger_levels (logger, level, last_modified)
			SELECT $1::text, $2::text, GREATEST($3::bigint, COALESCE(MAX(last_modified), 0) + 1) FROM logger_levels
			ON CONFLICT (logger) DO UPDATE SET level = EXCLUDED.level, last_modified = EXCLUDED.last_modified`,
			l.Logger, l.Level, l.LastModified)
		if err != nil {
			return fmt.Errorf("set logger level: %w", err)
		}
		return notify(ctx, tx, "loggers")
	})
}

// LoggerLevels returns the cluster-wide logger levels, oldest change first, so that applying them in order
// leaves a logger at the level of the newest change to it or to an ancestor.
func (s *Store) LoggerLevels(ctx context.Context) ([]LoggerLevel, error) {
	return readAll(ctx, s, "read logger levels", "SELECT logger, level, last_modified FROM logger_levels ORDER BY last_modified, logger",
		func(r pgx.CollectableRow, l *LoggerLevel) error { return r.Scan(&l.Logger, &l.Level, &l.LastModified) })
}
