package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Channel is the LISTEN/NOTIFY channel on which every change of desired or runtime state is announced.
const Channel = "kmirror_changes"

// Store is a handle on kmirror's PostgreSQL database. It is safe for concurrent use.
type Store struct {
	pool        *pgxpool.Pool
	log         *slog.Logger
	historyKeep int // config versions kept per connector (OpenOptions.HistoryKeep)
	secrets     *Secrets
	isSecret    func(key string) bool
	hide        func(string) string // OpenOptions.Hide, never nil
}

// OpenOptions tunes Open.
type OpenOptions struct {
	// ConnectTimeout bounds how long Open keeps retrying an unreachable database. Zero means 30 seconds.
	ConnectTimeout time.Duration
	// MaxConns caps the pool size. Zero means pgxpool's default.
	MaxConns int32
	// HistoryKeep is how many recorded changes (config versions, passwords included) are kept per connector;
	// older ones are deleted as new ones come, and all of them with the connector. Zero means
	// DefaultHistoryKeep.
	HistoryKeep int
	// Secrets, when set, encrypts the secret values of connector configs at rest (see Secrets). Nil stores
	// them as given.
	Secrets *Secrets
	// IsSecret tells which config keys hold secrets, the ones Secrets seals (clientconfig.IsSecret). It is
	// needed with Secrets, and CheckSecrets uses it without: nil counts every key.
	IsSecret func(key string) bool
	// Hide, when set, is applied to every status trace and notice message before it is stored: it replaces the
	// values that must never be shown (config provider secrets that a client library wrote into an error).
	Hide func(string) string
}

// DefaultHistoryKeep is OpenOptions.HistoryKeep's default.
const DefaultHistoryKeep = 20

// Open connects to the database at url, retrying with backoff while it is unreachable, and returns a Store.
// It does not migrate: call Migrate.
func Open(ctx context.Context, url string, log *slog.Logger, opts OpenOptions) (*Store, error) {
	if url == "" {
		return nil, errors.New("database URL is empty: set --database-url or KMIRROR_DATABASE_URL")
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database URL: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	// A worker that stalls (SIGSTOP, a VM pause) inside a transaction keeps its row locks: the claim of a unit
	// it held would wait for it, and the unit's new owner would not start until the stalled worker resumed
	// (the fault suite saw a failover wait out a 12 s stall). kmirror's transactions send their statements back
	// to back, so a session idle inside one for seconds belongs to a stalled process; PostgreSQL ends it.
	if _, set := cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"]; !set {
		cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = "3000"
	}
	// kmirror's statements are short and many; the planner's cost estimate for a batched lookup (the checkpoint
	// task's offset-map query over thousands of positions) triggered JIT compilation that cost more than the
	// query itself (measured by the checkpoints benchmark).
	if _, set := cfg.ConnConfig.RuntimeParams["jit"]; !set {
		cfg.ConnConfig.RuntimeParams["jit"] = "off"
	}
	timeout := opts.ConnectTimeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("create connection pool: %w", err)
	}
	where := fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	attempt := 0
	_, err = backoff.Retry(ctx, func() (struct{}, error) {
		attempt++
		pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		err := pool.Ping(pingCtx)
		if err != nil {
			if !retryableConnectError(err) {
				return struct{}{}, backoff.Permanent(err)
			}
			log.Warn("database not reachable yet, retrying", "database", where, "attempt", attempt, "error", err)
		}
		return struct{}{}, err
	}, backoff.WithBackOff(backoff.NewExponentialBackOff()), backoff.WithMaxElapsedTime(timeout))
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to PostgreSQL at %s (gave up after %d attempts): %w", where, attempt, err)
	}
	keep := opts.HistoryKeep
	if keep <= 0 {
		keep = DefaultHistoryKeep
	}
	if opts.Secrets != nil && (opts.Secrets.Current.aead == nil || opts.IsSecret == nil) {
		pool.Close()
		return nil, errors.New("store secrets need a current key and IsSecret")
	}
	isSecret := opts.IsSecret
	if isSecret == nil {
		isSecret = func(string) bool { return true }
	}
	hide := opts.Hide
	if hide == nil {
		hide = func(s string) string { return s }
	}
	return &Store{pool: pool, log: log, historyKeep: keep, secrets: opts.Secrets, isSecret: isSecret, hide: hide}, nil
}

// retryableConnectError tells a database that is not up yet from one that refuses us for good (bad password,
// unknown database), which no amount of waiting fixes.
func retryableConnectError(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P03": // cannot_connect_now: the server is starting up
			return true
		default:
			return false
		}
	}
	return true
}

// Close releases every connection.
func (s *Store) Close() { s.pool.Close() }

// inTx runs fn in one transaction and commits it, or rolls back if fn fails.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, fn)
}

// txAttempts bounds inTxRetried: a deadlock needs two transactions locking in opposite orders at the same
// moment, so a third in a row means something else is wrong.
const txAttempts = 3

// inTxRetried is inTx for a transaction that PostgreSQL may end to break a deadlock (deadlock_detected) or a
// serialization conflict, where the answer is to run it again from the start, as PostgreSQL's documentation
// advises. A connector's DELETE locks its row and then, by cascade, its assignments, while the runtime's
// transactions hold an assignment and then update the connector row: each order is natural where it is, and
// the DELETE lost such a race in CI (a 500 for a valid request). fn must keep no state outside tx that a
// failed attempt could leave behind.
func (s *Store) inTxRetried(ctx context.Context, fn func(tx pgx.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := s.inTx(ctx, fn)
		if err == nil || attempt == txAttempts || !isRetriableTxConflict(err) || ctx.Err() != nil {
			return err
		}
	}
}

// isRetriableTxConflict tells whether err ended a transaction for a deadlock (40P01) or a serialization
// failure (40001).
func isRetriableTxConflict(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// notify announces a change to every kmirror process; inside a transaction it is delivered on commit.
func notify(ctx context.Context, tx pgx.Tx, what string) error {
	if _, err := tx.Exec(ctx, "SELECT pg_notify($1, $2)", Channel, what); err != nil {
		return fmt.Errorf("notify: %w", err)
	}
	return nil
}

// ClusterID returns the identity of this kmirror cluster (a Kafka-style Uuid string).
func (s *Store) ClusterID(ctx context.Context) (string, error) {
	var id string
	if err := s.pool.QueryRow(ctx, "SELECT cluster_id FROM kmirror_cluster").Scan(&id); err != nil {
		return "", fmt.Errorf("read cluster id: %w", err)
	}
	return id, nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	return s.pool.Ping(ctx)
}

func isForeignKeyViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23503"
}

func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}
