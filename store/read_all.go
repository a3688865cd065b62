package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// readAll runs a query of every row of a small table and scans each row with scan. A failure is wrapped in
// what was being done (e.g. "read restart requests").
func readAll[T any](ctx context.Context, s *Store, what, sql string, scan func(pgx.CollectableRow, *T) error) ([]T, error) {
	rows, err := s.pool.Query(ctx, sql)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) {
		var v T
		err := scan(r, &v)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}
