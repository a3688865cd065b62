package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/tern/v2/migrate"

	"github.com/kmirror/kmirror/migrations"
)

const versionTable = "kmirror_schema_version"

// MigrationStatus tells where the database schema stands relative to this binary.
type MigrationStatus struct {
	Current int32    // version applied to the database
	Latest  int32    // newest version this binary knows
	Pending []string // names of migrations not applied yet
}

// Migrate applies every pending migration, each in its own transaction, and returns how many it applied. It
// refuses a database whose schema is newer than this binary with ErrSchemaTooNew.
func (s *Store) Migrate(ctx context.Context) (int, error) {
	var applied int
	err := s.withMigrator(ctx, func(m *migrate.Migrator) error {
		st, err := status(ctx, m)
		if err != nil {
			return err
		}
		if st.Current > st.Latest {
			return schemaTooNew(st)
		}
		if err := m.Migrate(ctx); err != nil {
			return fmt.Errorf("apply migrations: %w", err)
		}
		applied = len(st.Pending)
		return nil
	})
	return applied, err
}

// MigrationStatus reports the applied and the pending migrations.
func (s *Store) MigrationStatus(ctx context.Context) (MigrationStatus, error) {
	var st MigrationStatus
	err := s.withMigrator(ctx, func(m *migrate.Migrator) error {
		var err error
		st, err = status(ctx, m)
		return err
	})
	return st, err
}

// CheckSchema returns ErrSchemaTooNew or an error naming the pending migrations unless the schema is exactly
// the one this binary expects.
func (s *Store) CheckSchema(ctx context.Context) error {
	st, err := s.MigrationStatus(ctx)
	if err != nil {
		return err
	}
	if st.Current > st.Latest {
		return schemaTooNew(st)
	}
	if len(st.Pending) > 0 {
		return fmt.Errorf("database schema is at version %d, %d migration(s) pending: run `kmirror migrate up`", st.Current, len(st.Pending))
	}
	return nil
}

func schemaTooNew(st MigrationStatus) error {
	return fmt.Errorf("%w: the database is at schema version %d but this binary knows versions up to %d; run a newer kmirror",
		ErrSchemaTooNew, st.Current, st.Latest)
}

func (s *Store) withMigrator(ctx context.Context, fn func(m *migrate.Migrator) error) error {
	return withPoolConn(ctx, s.pool, func(conn *pgxpool.Conn) error {
		m, err := migrate.NewMigrator(ctx, conn.Conn(), versionTable)
		if err != nil {
			return fmt.Errorf("create migrator: %w", err)
		}
		if err := m.LoadMigrations(migrations.FS); err != nil {
			return fmt.Errorf("load migrations: %w", err)
		}
		return fn(m)
	})
}

func status(ctx context.Context, m *migrate.Migrator) (MigrationStatus, error) {
	cur, err := m.GetCurrentVersion(ctx)
	if err != nil {
		return MigrationStatus{}, fmt.Errorf("read schema version: %w", err)
	}
	st := MigrationStatus{Current: cur, Latest: int32(len(m.Migrations))}
	for _, mig := range m.Migrations {
		if mig.Sequence > cur {
			st.Pending = append(st.Pending, mig.Name)
		}
	}
	return st, nil
}

func withPoolConn(ctx context.Context, pool *pgxpool.Pool, fn func(conn *pgxpool.Conn) error) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	return fn(conn)
}
